package app

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/olebedev/when"
	"github.com/olebedev/when/rules/common"
	"github.com/olebedev/when/rules/en"
)

// wpLayout is the date layout of every date string in responses.
const wpLayout = "2006-01-02 15:04:05"

// errBadDate is returned for strings that are not a date.
var errBadDate = errors.New("not a date")

// relativeParser reads English relative phrases ("tomorrow 9am", "next
// wednesday 4pm", "in 2 weeks"); github.com/olebedev/when does the work.
var relativeParser = func() *when.Parser {
	p := when.New(nil)
	p.Add(en.All...)
	p.Add(common.All...)
	return p
}()

var (
	// signedOffset matches strtotime-style offsets: "+2 weeks", "-3 days".
	signedOffset = regexp.MustCompile(`^([+-])\s*(\d+)\s*([a-z]+)$`)
	absLayouts   = []string{
		"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04",
		"2006-01-02", "2006/01/02", "2006/01/02 15:04:05", "2006/01/02 15:04",
	}
	offsetLayouts = []string{time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 Z07:00", "2006-01-02T15:04Z07:00"}
)

// parseDate reads a date the way the API accepts them (decisions.md,
// "Reads"): a Unix timestamp (an instant), YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS]
// (wall-clock time in loc), RFC 3339 with an offset (an instant), or an
// English relative phrase evaluated at now in loc. The result is in loc.
func parseDate(raw string, loc *time.Location, now time.Time) (time.Time, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return time.Time{}, errBadDate
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "@"), "-")
	if digits != "" && strings.Trim(digits, "0123456789") == "" && len(digits) >= 5 {
		n, err := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
		if err != nil {
			return time.Time{}, errBadDate
		}
		return time.Unix(n, 0).In(loc), nil
	}
	for _, l := range absLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	for _, l := range offsetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.In(loc), nil
		}
	}
	return parseRelative(s, loc, now)
}

// parseRelative evaluates an English relative phrase. The whole string must
// be understood: "before my birthday" is not a date.
func parseRelative(s string, loc *time.Location, now time.Time) (time.Time, error) {
	base := now.In(loc)
	lower := strings.ToLower(strings.Join(strings.Fields(s), " "))
	switch lower {
	case "now":
		return base.Truncate(time.Second), nil
	case "today", "midnight":
		return midnight(base), nil
	case "tomorrow":
		return midnight(base).AddDate(0, 0, 1), nil
	case "yesterday":
		return midnight(base).AddDate(0, 0, -1), nil
	case "noon":
		return midnight(base).Add(12 * time.Hour), nil
	}
	if m := signedOffset.FindStringSubmatch(lower); m != nil {
		// strtotime's "+2 weeks" is "in 2 weeks"; "-2 weeks" is "2 weeks ago".
		if m[1] == "+" {
			lower = "in " + m[2] + " " + m[3]
		} else {
			lower = m[2] + " " + m[3] + " ago"
		}
	}
	r, err := relativeParser.Parse(lower, base)
	if err != nil || r == nil || r.Index != 0 || len(strings.TrimSpace(r.Text)) != len(lower) {
		return time.Time{}, errBadDate
	}
	return r.Time.In(loc).Truncate(time.Second), nil
}

// midnight returns 00:00:00 of t's day in t's location.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// endOfDay returns 23:59:59 of t's day in t's location.
func endOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 23, 59, 59, 0, t.Location())
}

// isDate reports whether s parses as a date ("is time" validator).
func isDate(v any) bool {
	s, ok := asString(v)
	if !ok {
		return false
	}
	_, err := parseDateInRange(s, time.UTC, time.Now())
	return err == nil
}

// utcOffsetZone matches event time zones written as UTC±N[:MM] or UTC±N.5.
var utcOffsetZone = regexp.MustCompile(`^UTC([+-])(\d{1,2})(?:[:.](\d{1,2}))?$`)

// loadZone resolves an event time zone: an IANA name, "UTC", or UTC±N.
func loadZone(name string) (*time.Location, bool) {
	if name == "UTC" || name == "UTC+0" || name == "UTC-0" {
		return time.FixedZone(name, 0), true
	}
	if m := utcOffsetZone.FindStringSubmatch(name); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
			if strings.Contains(name, ".") {
				// UTC+5.5 means 5 h 30 min, as WordPress writes it.
				frac, _ := strconv.ParseFloat("0."+m[3], 64)
				mins = int(frac * 60)
			}
		}
		if h > 14 || mins >= 60 {
			return nil, false
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(name, off), true
	}
	if name == "" || name == "Local" || strings.ContainsAny(name, " \\") {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}
