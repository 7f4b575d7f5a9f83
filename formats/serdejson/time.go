package serdejson

import (
	"strconv"
	"time"
)

// FormatTime returns t in UTC as chrono's serde form of DateTime<Utc>:
// YYYY-MM-DDTHH:MM:SS[.frac]Z with the AutoSi fraction (none when the
// nanoseconds are 0, else 3, 6 or 9 digits, whichever is exact).
func FormatTime(t time.Time) string {
	return string(append(appendTime(nil, t), 'Z'))
}

// FormatRFC3339 returns t in UTC as chrono's DateTime<Utc>::to_rfc3339:
// FormatTime's form with the offset written "+00:00" instead of "Z".
func FormatRFC3339(t time.Time) string {
	return string(append(appendTime(nil, t), "+00:00"...))
}

func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year := t.Year()
	if year >= 0 && year <= 9999 {
		dst = appendPadded(dst, year, 4)
	} else {
		// Rust {:+05}: explicit sign, zero-padded to five characters in all.
		if year < 0 {
			dst = append(dst, '-')
			year = -year
		} else {
			dst = append(dst, '+')
		}
		dst = appendPadded(dst, year, 4)
	}
	dst = append(dst, '-')
	dst = appendPadded(dst, int(t.Month()), 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, t.Day(), 2)
	dst = append(dst, 'T')
	dst = appendPadded(dst, t.Hour(), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, t.Minute(), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, t.Second(), 2)
	switch ns := t.Nanosecond(); {
	case ns == 0:
	case ns%1_000_000 == 0:
		dst = append(dst, '.')
		dst = appendPadded(dst, ns/1_000_000, 3)
	case ns%1_000 == 0:
		dst = append(dst, '.')
		dst = appendPadded(dst, ns/1_000, 6)
	default:
		dst = append(dst, '.')
		dst = appendPadded(dst, ns, 9)
	}
	return dst
}

// appendPadded appends the non-negative v in decimal, zero-padded to width.
func appendPadded(dst []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
