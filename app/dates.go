package app

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/datetext"
)

// wpLayout is the date layout of every date string in responses.
const wpLayout = "2006-01-02 15:04:05"

// errBadDate is returned for strings that are not a date.
var errBadDate = errors.New("not a date")

// parseDate reads a date the way the API accepts them (decisions.md,
// "Reads"): a Unix timestamp (an instant), YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS]
// (wall-clock time in loc), RFC 3339 with an offset (an instant), or a
// relative or written phrase in the request's language lang or in English
// ("+6 months", "next wednesday 4pm", "1 December 2026", "demain"),
// evaluated at now in loc (package datetext). The result is in loc.
func parseDate(raw string, loc *time.Location, now time.Time, lang string) (time.Time, error) {
	t, err := datetext.Parse(raw, lang, now, loc)
	if err != nil {
		return time.Time{}, errBadDate
	}
	return t, nil
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

// isDate reports whether v parses as a date for request r ("is time"
// validator): in r's language, site zone and clock.
func isDate(r *request, v any) bool {
	s, ok := asString(v)
	if !ok {
		return false
	}
	_, err := parseDateInRange(s, r.s.cfg.Location, r.s.now(), r.lang)
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
