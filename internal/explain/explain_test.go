package explain

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want Spec
		bad  bool
	}{
		{arg: "HEAD", want: Spec{Kind: SpecCommit, Arg: "HEAD", Rev: "HEAD"}},
		{arg: "3f2a9c1", want: Spec{Kind: SpecCommit, Arg: "3f2a9c1", Rev: "3f2a9c1"}},
		{arg: "main..feature", want: Spec{Kind: SpecRange, Arg: "main..feature", Rev: "main..feature"}},
		{arg: "a...b", want: Spec{Kind: SpecRange, Arg: "a...b", Rev: "a...b"}},
		{arg: "src/auth.go:42", want: Spec{Kind: SpecPath, Arg: "src/auth.go:42", Path: "src/auth.go", Line: 42}},
		{arg: "a:b:7", want: Spec{Kind: SpecPath, Arg: "a:b:7", Path: "a:b", Line: 7}},
		{arg: "HEAD:README", want: Spec{Kind: SpecCommit, Arg: "HEAD:README", Rev: "HEAD:README"}}, // git decides
		{arg: "src/auth.go:0", bad: true},
		{arg: "src/auth.go:-3", bad: true},
		{arg: "", bad: true},
		{arg: "  ", bad: true},
		{arg: "--output=x", bad: true},
		{arg: "a\nb", bad: true},
		{arg: "a\x00b", bad: true},
		{arg: strings.Repeat("a", maxArg+1), bad: true},
	} {
		got, err := ParseSpec(tc.arg)
		if tc.bad {
			if !errors.Is(err, ErrSpec) {
				t.Errorf("ParseSpec(%.20q) = %+v, %v; want ErrSpec", tc.arg, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.arg, got, err, tc.want)
		}
	}
}

// TestLinkChain: quarantined records are linked by the cache's rule: the
// turns of a branch since its last commit record (of the commit record's
// session when it has one) go with the next commit record on that branch.
func TestLinkChain(t *testing.T) {
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	rec := func(hash, branch, session, commit string) Record {
		r := Record{Hash: hash, Branch: branch, Session: session, Summary: "turn " + hash}
		if commit != "" {
			r.Summary = "subject\n\nCommit: " + commit
		}
		return r
	}
	got := linkChain([]Record{
		rec("t1", "main", "s", ""), rec("x1", "other", "s", ""), rec("t2", "main", "q", ""),
		rec("k1", "main", "", c1), // all of main's since the start
		rec("t3", "main", "s", ""), rec("t4", "main", "q", ""),
		rec("k2", "main", "s", c2), // only session s
	})
	names := map[string][]string{}
	for c, rs := range got {
		for _, r := range rs {
			names[c[:1]] = append(names[c[:1]], r.Kind+":"+r.Hash)
		}
	}
	want := map[string][]string{"1": {"turn:t1", "turn:t2", "commit:k1"}, "2": {"turn:t3", "commit:k2"}}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("linkChain = %v, want %v", names, want)
	}
}
