package ctxpackages

import (
	"sort"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.0.0", "1.0.1", -1},
		{"1.10.0", "1.9.0", 1},
		{"2", "10", -1},
		{"1.0", "1.0.0", -1},
		{"v1.2.0", "1.1.9", 1},
		{"1.0.0-rc.1", "1.0.0", -1},
		{"1.0.0-rc.2", "1.0.0-rc.10", -1},
		{"1.0.0-alpha", "1.0.0-1", 1},
		{"1.0.0+b2", "1.0.0+b1", 1},
		{"007", "7", -1}, // equal numerically: plain string order breaks the tie
		{"1.x", "1.2", 1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareVersions(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
		}
	}
	vs := []string{"1.10.0", "1.2.0", "1.2.0-rc.1", "0.9", "v1.3", "1.2.0+build"}
	sort.Slice(vs, func(i, j int) bool { return CompareVersions(vs[i], vs[j]) < 0 })
	want := []string{"0.9", "1.2.0-rc.1", "1.2.0", "1.2.0+build", "v1.3", "1.10.0"}
	for i := range want {
		if vs[i] != want[i] {
			t.Fatalf("sorted %v, want %v", vs, want)
		}
	}
}

func TestSplitSpec(t *testing.T) {
	for _, tc := range []struct{ spec, name, version string }{
		{"auth", "auth", ""},
		{"auth@1.0", "auth", "1.0"},
		{"@team/auth", "@team/auth", ""},
		{"@team/auth@2", "@team/auth", "2"},
		{"a@", "a", ""},
	} {
		if n, v := SplitSpec(tc.spec); n != tc.name || v != tc.version {
			t.Errorf("SplitSpec(%q) = %q, %q", tc.spec, n, v)
		}
	}
}
