package store

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzSplitIndex: the index parser never panics, and whatever it accepts is
// consistent and formats back to the same bytes.
func FuzzSplitIndex(f *testing.F) {
	sum := strings.Repeat("ab", 32)
	good := formatSplitIndex(wholeCheck{size: 5, sha256: sum}, []partRef{{size: 3, sha256: sum}, {size: 2, sha256: sum}})
	f.Add(good)
	f.Add([]byte("git-ctx split object v1\nsize 01\nsha256 " + sum + "\nparts 1\npart 01 " + sum + "\n"))
	f.Add([]byte("git-ctx split object v1\nsize 9223372036854775807\nsha256 " + sum + "\nparts 2\npart 9223372036854775807 " + sum + "\npart 1 " + sum + "\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, text []byte) {
		whole, parts, err := parseSplitIndex(text)
		if err != nil {
			return
		}
		var total int64
		for _, p := range parts {
			if p.size < 0 || len(p.sha256) != 64 {
				t.Fatalf("accepted part %+v", p)
			}
			total += p.size
		}
		if total != whole.size || total < 0 {
			t.Fatalf("accepted sizes adding to %d for %d", total, whole.size)
		}
		if again := formatSplitIndex(*whole, parts); !bytes.Equal(again, text) {
			t.Fatalf("not canonical:\n%q\n%q", text, again)
		}
	})
}

// FuzzValidKey: an accepted key never escapes the store's root.
func FuzzValidKey(f *testing.F) {
	for _, k := range []string{"profiles/p/manifest.age", "a/../b", "/x", "a\\b", "a//b", "..", "a/.b", "ä/b"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidKey(key) != nil {
			return
		}
		if strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || strings.Contains(key, "//") || strings.HasSuffix(key, "/") {
			t.Fatalf("accepted %q", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
				t.Fatalf("accepted %q", key)
			}
		}
	})
}
