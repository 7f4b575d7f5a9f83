package fault

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestExitCode: the documented exit code of every kind, and 1 for a value
// that is not a kind.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		code int
	}{{Failed, 1}, {Usage, 2}, {Config, 3}, {Remote, 4}, {Conflict, 6}, {Refused, 7}, {0, 1}, {Kind(99), 1}} {
		if got := ExitCode(c.k); got != c.code {
			t.Errorf("ExitCode(%v) = %d, want %d", c.k, got, c.code)
		}
	}
	if got := len(Kinds()); got != 6 {
		t.Errorf("%d kinds, want 6", got)
	}
	for _, k := range Kinds() {
		if !k.Valid() || k.Describe() == "" || k.String() == "" {
			t.Errorf("kind %d: valid %v, words %q, name %q", int(k), k.Valid(), k.Describe(), k.String())
		}
	}
	if Kind(0).Valid() || Kind(0).Describe() != "" {
		t.Error("the zero Kind is a kind")
	}
}

var (
	errSentinel = Sentinel(Conflict, "moved")
	errOther    = Sentinel(Refused, "too large")
)

// TestKindOf: the kind is found through fmt wrapping, joins and
// multi-%w errors; the outermost kind wins; nil and foreign errors have
// none.
func TestKindOf(t *testing.T) {
	plain := errors.New("plain")
	for _, c := range []struct {
		name string
		err  error
		kind Kind
		ok   bool
	}{
		{"nil", nil, 0, false},
		{"plain", plain, 0, false},
		{"context", fmt.Errorf("fetch: %w", context.Canceled), 0, false},
		{"sentinel", errSentinel, Conflict, true},
		{"wrapped sentinel", fmt.Errorf("push: %w", errSentinel), Conflict, true},
		{"twice wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", errOther)), Refused, true},
		{"new", New(Usage, "bad flag %q", "x"), Usage, true},
		{"wrap", Wrap(Config, plain), Config, true},
		{"wrap overrides", Wrap(Failed, errSentinel), Failed, true},
		{"wrap nil", Wrap(Failed, nil), 0, false},
		{"default: no kind", Default(Failed, plain), Failed, true},
		{"default keeps a kind", Default(Failed, fmt.Errorf("x: %w", errOther)), Refused, true},
		{"default nil", Default(Failed, nil), 0, false},
		{"joined: first kinded branch", errors.Join(plain, errOther, errSentinel), Refused, true},
		{"joined: none", errors.Join(plain, context.DeadlineExceeded), 0, false},
		{"multi %w", fmt.Errorf("%w: %w", errSentinel, errOther), Conflict, true},
		{"multi %w, first unkinded", fmt.Errorf("%w: %w", plain, errOther), Refused, true},
		{"derived sentinel", fmt.Errorf("%w: no file", errOther), Refused, true},
		{"zero kind is none", &Error{Err: plain}, 0, false},
		{"zero kind outside a kind", &Error{Err: errSentinel}, Conflict, true},
	} {
		k, ok := KindOf(c.err)
		if k != c.kind || ok != c.ok {
			t.Errorf("%s: KindOf = %v, %v; want %v, %v", c.name, k, ok, c.kind, c.ok)
		}
	}
}

// TestErrorText: a kind adds nothing to the message, errors.Is sees
// through it, and sentinels are distinct even with the same text.
func TestErrorText(t *testing.T) {
	if got := New(Refused, "%s is %d bytes", "f", 3).Error(); got != "f is 3 bytes" {
		t.Errorf("New text %q", got)
	}
	inner := errors.New("inner")
	w := New(Remote, "fetch: %w", inner)
	if !errors.Is(w, inner) {
		t.Error("errors.Is does not see through New's %w")
	}
	if w.Error() != "fetch: inner" {
		t.Errorf("text %q", w.Error())
	}
	a, b := Sentinel(Failed, "not found"), Sentinel(Failed, "not found")
	if errors.Is(a, b) || !errors.Is(fmt.Errorf("x: %w", a), a) {
		t.Error("sentinels are not distinct, or not found through wrapping")
	}
	var fe *Error
	if !errors.As(fmt.Errorf("x: %w", a), &fe) || fe.Kind != Failed {
		t.Error("errors.As does not find the kinded error")
	}
	if got := (&Error{Kind: Usage}).Error(); got != "usage" {
		t.Errorf("empty error text %q", got)
	}
}
