package pretty

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DateMode is how a record's time is shown: git's --date modes.
type DateMode string

// The date modes, named as git names them. DateDefault is git's default
// format; ISOStrict is what git-ctx shows when no mode is asked for.
const (
	DateDefault   DateMode = "default"    // Thu Dec 3 09:15:02 2026 +0100
	DateLocal     DateMode = "local"      // Thu Dec 3 09:15:02 2026
	DateISO       DateMode = "iso"        // 2026-12-03 09:15:02 +0100
	DateISOStrict DateMode = "iso-strict" // 2026-12-03T09:15:02+01:00 (Z at UTC)
	DateRFC       DateMode = "rfc"        // Thu, 3 Dec 2026 09:15:02 +0100
	DateShort     DateMode = "short"      // 2026-12-03
	DateUnix      DateMode = "unix"       // 1764749702
	DateRelative  DateMode = "relative"   // 3 hours ago
)

// dateModes lists the modes ParseDateMode accepts, with git's aliases.
var dateModes = map[string]DateMode{
	"default": DateDefault, "local": DateLocal, "iso": DateISO, "iso8601": DateISO,
	"iso-strict": DateISOStrict, "iso8601-strict": DateISOStrict, "rfc": DateRFC, "rfc2822": DateRFC,
	"short": DateShort, "unix": DateUnix, "relative": DateRelative,
}

// ParseDateMode reads a --date value; "" is ISOStrict (git-ctx's default).
func ParseDateMode(s string) (DateMode, error) {
	if s == "" {
		return DateISOStrict, nil
	}
	if m, ok := dateModes[strings.ToLower(s)]; ok {
		return m, nil
	}
	return "", fmt.Errorf("unknown date format %q (relative, local, iso, iso-strict, rfc, short, unix or default)", s)
}

// Clock is where times are shown: the viewer's zone and, for relative
// dates, the present. The zero Clock is UTC at the real present.
type Clock struct {
	Loc *time.Location
	Now time.Time
}

func (c Clock) loc() *time.Location {
	if c.Loc == nil {
		return time.UTC
	}
	return c.Loc
}

func (c Clock) now() time.Time {
	if c.Now.IsZero() {
		return time.Now()
	}
	return c.Now
}

// FormatDate shows t in mode, in the clock's zone.
func FormatDate(t time.Time, mode DateMode, c Clock) string {
	t = t.In(c.loc())
	switch mode {
	case DateDefault:
		return t.Format("Mon Jan 2 15:04:05 2006 -0700")
	case DateLocal:
		return t.Format("Mon Jan 2 15:04:05 2006")
	case DateISO:
		return t.Format("2006-01-02 15:04:05 -0700")
	case DateRFC:
		return t.Format("Mon, 2 Jan 2006 15:04:05 -0700")
	case DateShort:
		return t.Format("2006-01-02")
	case DateUnix:
		return fmt.Sprint(t.Unix())
	case DateRelative:
		return Relative(t, c.now())
	}
	// iso-strict, git's way: Z for a zero offset.
	if _, off := t.Zone(); off == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05-07:00")
}

// Relative says how long before now t was, in git's words and with git's
// rounding ("5 minutes ago", "3 weeks ago", "1 year, 2 months ago").
func Relative(t, now time.Time) string {
	if t.After(now) {
		return "in the future"
	}
	diff := int64(now.Sub(t) / time.Second)
	if diff < 90 {
		return plural(diff, "second") + " ago"
	}
	diff = (diff + 30) / 60 // minutes
	if diff < 90 {
		return plural(diff, "minute") + " ago"
	}
	diff = (diff + 30) / 60 // hours
	if diff < 36 {
		return plural(diff, "hour") + " ago"
	}
	diff = (diff + 12) / 24 // days
	switch {
	case diff < 14:
		return plural(diff, "day") + " ago"
	case diff < 70:
		return plural((diff+3)/7, "week") + " ago"
	case diff < 365:
		return plural((diff+15)/30, "month") + " ago"
	case diff < 1825:
		years := diff / 365
		months := (diff%365 + 15) / 30
		if months == 0 {
			return plural(years, "year") + " ago"
		}
		return plural(years, "year") + ", " + plural(months, "month") + " ago"
	}
	return plural((diff+183)/365, "year") + " ago"
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Location is the zone a process shows local times in, from the value of
// TZ as the C library reads it: unset is time.Local (the system zone), ""
// UTC, ":NAME" or "NAME" a zone of the system's database (a path to a
// zone file too); a value no zone matches is UTC, as in libc. The caller
// passes TZ, so it can come from any environment (a test's, not only the
// process's).
func Location(tz string, set bool) *time.Location {
	if !set {
		return time.Local
	}
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" {
		return time.UTC
	}
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	if loc, err := loadZoneFile(tz); err == nil {
		return loc
	}
	return time.UTC
}

// maxZoneFile bounds a zone file TZ names by path (real ones are a few KiB).
const maxZoneFile = 1 << 20

// loadZoneFile reads the zone file at an absolute path.
func loadZoneFile(path string) (*time.Location, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("not a path: %q", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxZoneFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxZoneFile {
		return nil, fmt.Errorf("zone file %s: too large", path)
	}
	return time.LoadLocationFromTZData(path, b)
}
