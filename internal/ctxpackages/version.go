package ctxpackages

import (
	"strings"
)

// CompareVersions orders package versions "semver-ish" (for `pkg get NAME`
// and `pkg list`): a leading 'v' is ignored, build metadata after '+' only
// breaks ties; the release part (before the first '-') compares by
// dot-separated fields, numeric fields numerically and before alphanumeric
// ones, a missing field lowest; a version with a pre-release part ("-rc.1")
// is lower than the same release without one, pre-release parts compare
// field by field the same way. Remaining ties go by plain string order, so
// the order is total. It returns -1, 0 or +1.
func CompareVersions(a, b string) int {
	if a == b {
		return 0
	}
	ca, cb := splitVersion(a), splitVersion(b)
	if c := compareFields(ca.release, cb.release); c != 0 {
		return c
	}
	switch {
	case ca.pre == nil && cb.pre != nil:
		return 1
	case ca.pre != nil && cb.pre == nil:
		return -1
	}
	if c := compareFields(ca.pre, cb.pre); c != 0 {
		return c
	}
	if c := strings.Compare(ca.build, cb.build); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

type versionParts struct {
	release, pre []string
	build        string
}

func splitVersion(v string) versionParts {
	v, build, _ := strings.Cut(v, "+")
	if len(v) > 1 && (v[0] == 'v' || v[0] == 'V') && v[1] >= '0' && v[1] <= '9' {
		v = v[1:]
	}
	rel, pre, hasPre := strings.Cut(v, "-")
	p := versionParts{release: strings.Split(rel, "."), build: build}
	if hasPre {
		p.pre = strings.Split(pre, ".")
	}
	return p
}

func compareFields(a, b []string) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			return -1
		case i >= len(b):
			return 1
		}
		if c := compareField(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func compareField(a, b string) int {
	na, nb := isDigits(a), isDigits(b)
	switch {
	case na && nb:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
