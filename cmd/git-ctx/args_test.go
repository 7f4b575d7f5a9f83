package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestPermuteArgs(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	cases := []struct{ in, want string }{
		{"git-ctx show abc --json", "git-ctx show --json -- abc"},
		{"git-ctx log -n1", "git-ctx log -n 1"},
		{"git-ctx log -n 20 --device d", "git-ctx log -n 20 --device d"},
		{"git-ctx search a --n=3 b", "git-ctx search --n=3 -- a b"},
		{"git-ctx checkpoint -m -x --file f", "git-ctx checkpoint -m -x --file f"},
		{"git-ctx search -- --json x", "git-ctx search -- --json x"},
		{"git-ctx verify a.json --key k.pem b.json", "git-ctx verify --key k.pem -- a.json b.json"},
		{"git-ctx nosuch --json", "git-ctx nosuch --json"},
		{"git-ctx", "git-ctx"},
	}
	for _, c := range cases {
		got := permuteArgs(app, strings.Fields(c.in))
		if !reflect.DeepEqual(got, strings.Fields(c.want)) {
			t.Errorf("%q: got %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}
