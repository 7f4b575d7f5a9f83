package pretty

import (
	"fmt"
	"strings"
)

// The colours git-ctx uses, as git writes them (SGR sequences; Reset is
// git's short "\x1b[m").
const (
	Red    = "\x1b[31m"
	Green  = "\x1b[32m"
	Yellow = "\x1b[33m"
	Blue   = "\x1b[34m"
	Bold   = "\x1b[1m"
	Reset  = "\x1b[m"
)

// ColorWhen is a colour setting: git's always, never or auto.
type ColorWhen int

// The colour settings; ColorUnset means not given (the next source decides).
const (
	ColorUnset ColorWhen = iota
	ColorAuto
	ColorAlways
	ColorNever
)

// ParseColorWhen reads a --color value or a color.ui/color.ctx value as git
// does: always; never (or false, no, off, 0); auto (or true, yes, on, 1:
// since git 1.8.4 "true" means auto).
func ParseColorWhen(s string) (ColorWhen, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "always":
		return ColorAlways, nil
	case "never", "false", "no", "off", "0":
		return ColorNever, nil
	case "auto", "true", "yes", "on", "1", "":
		return ColorAuto, nil
	}
	return ColorUnset, fmt.Errorf("%q is not a colour setting (always, never or auto)", s)
}

// ColorInputs is everything the colour decision depends on.
type ColorInputs struct {
	// Flag is --color[=WHEN] or --no-color (ColorNever); ColorUnset when
	// neither was given.
	Flag ColorWhen
	// NoColor is $NO_COLOR: any non-empty value turns colour off unless a
	// flag asks for it.
	NoColor string
	// Config looks up git configuration (color.ctx, color.ui,
	// color.pager); nil is an empty configuration.
	Config func(key string) (string, bool)
	// Terminal: standard output is a terminal. Paging: it is a pager
	// (git-ctx's own or one git started around it).
	Terminal, Paging bool
	// Term is $TERM: "dumb" turns auto colour off.
	Term string
}

// UseColor decides whether text output is coloured, in this order:
// --color=always or --no-color; NO_COLOR; --color=auto; color.ctx;
// color.ui; auto. Auto colours a terminal, or
// a pager when color.pager is not false, never a dumb terminal. An
// unreadable configured value is an error naming its key.
func UseColor(in ColorInputs) (bool, error) {
	when := in.Flag
	if in.NoColor != "" && when != ColorAlways {
		return false, nil
	}
	for _, key := range []string{"color.ctx", "color.ui"} {
		if when != ColorUnset {
			break
		}
		if v, ok := lookup(in.Config, key); ok {
			w, err := ParseColorWhen(v)
			if err != nil {
				return false, fmt.Errorf("git config %s: %w", key, err)
			}
			when = w
		}
	}
	switch when {
	case ColorAlways:
		return true, nil
	case ColorNever:
		return false, nil
	}
	if in.Term == "dumb" {
		return false, nil
	}
	if in.Terminal {
		return true, nil
	}
	if !in.Paging {
		return false, nil
	}
	if v, ok := lookup(in.Config, "color.pager"); ok {
		if w, err := ParseColorWhen(v); err == nil && w == ColorNever {
			return false, nil
		}
	}
	return true, nil
}

func lookup(config func(string) (string, bool), key string) (string, bool) {
	if config == nil {
		return "", false
	}
	return config(key)
}

// Paint wraps s in code and Reset when on; else returns s.
func Paint(on bool, code, s string) string {
	if !on || code == "" || s == "" {
		return s
	}
	return code + s + Reset
}

// StatusColor is the colour of a verification status: green for
// "verified", red for "unverified" and for an alarm (a status whose first
// word is in capitals: UNVERIFIED, CHANGED KEY, MODIFIED …), none for the
// rest.
func StatusColor(status string) string {
	switch status {
	case "verified":
		return Green
	case "unverified":
		return Red
	}
	word, _, _ := strings.Cut(status, " ")
	if word != "" && strings.ToUpper(word) == word && strings.ToLower(word) != word {
		return Red
	}
	return ""
}
