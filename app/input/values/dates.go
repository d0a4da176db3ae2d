package values

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/config/limits"
)

// errBadDate is returned for strings that are not a date.
var errBadDate = errors.New("not a date")

// ParseDate reads a date the way the API accepts them (docs/decisions.md,
// "Reads"): a Unix timestamp (an instant), YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS]
// (wall-clock time in loc), RFC 3339 with an offset (an instant), or a
// relative or written phrase in the request's language lang or in English
// ("+6 months", "next wednesday 4pm", "1 December 2026", "demain"),
// evaluated at now in loc (package datetext). The result is in loc.
func ParseDate(raw string, loc *time.Location, now time.Time, lang string) (time.Time, error) {
	t, err := datetext.Parse(raw, lang, now, loc)
	if err != nil {
		return time.Time{}, errBadDate
	}
	return t, nil
}

// Midnight returns 00:00:00 of t's day in t's location.
func Midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// EndOfDay returns 23:59:59 of t's day in t's location.
func EndOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 23, 59, 59, 0, t.Location())
}

// DateForms says which date forms the API accepts (docs/decisions.md,
// "Reads"),
// for the messages of refused dates.
const DateForms = `a date: YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339 with an offset (2027-12-03T19:30:00+01:00), a Unix timestamp, or a phrase such as "tomorrow 9am" or "+2 weeks"`

var (
	// slashDate matches day/month or month/day dates: "03/12/2027 19:30".
	slashDate = regexp.MustCompile(`^(\d{1,2})[/.](\d{1,2})[/.](\d{4})(.*)$`)
	// isoDayPrefix matches the start of a YYYY-MM-DD date.
	isoDayPrefix = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})(?:$|[ T])`)
)

// DateProblem is the message for a date parameter ReadDate or DateIn
// refused (raw as sent, read in loc): the accepted forms, and what is wrong
// with raw when that can be told (a day that does not exist, an ambiguous
// day/month order, a year out of range).
func DateProblem(raw string, loc *time.Location, now time.Time, lang string) string {
	msg := "Must be " + DateForms + "."
	s := strings.TrimSpace(raw)
	if s == "" {
		return "Must be " + DateForms + "; it is empty."
	}
	if _, err := ParseDate(s, loc, now, lang); err == nil {
		return fmt.Sprintf("Must be a date from the year %d to %d.", limits.MinYear, limits.MaxYear)
	}
	if m := isoDayPrefix.FindStringSubmatch(s); m != nil {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		d, _ := strconv.Atoi(m[3])
		if why := NoSuchDay(y, mo, d); why != "" {
			return strings.TrimSuffix(msg, ".") + "; " + why + "."
		}
		return msg
	}
	if m := slashDate.FindStringSubmatch(s); m != nil {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		rest := m[4]
		var readings []string
		for _, md := range [][2]int{{b, a}, {a, b}} { // day/month first, then month/day
			if NoSuchDay(y, md[0], md[1]) == "" {
				t := time.Date(y, time.Month(md[0]), md[1], 0, 0, 0, 0, time.UTC)
				reading := fmt.Sprintf("%s%s for %d %s", t.Format("2006-01-02"), rest, md[1], t.Month())
				if !slices.Contains(readings, reading) {
					readings = append(readings, reading)
				}
			}
		}
		switch len(readings) {
		case 0:
			return strings.TrimSuffix(msg, ".") + "; it is no date in either day/month or month/day order."
		case 1:
			return strings.TrimSuffix(msg, ".") + "; day/month order is not accepted: write " + readings[0] + "."
		default:
			return strings.TrimSuffix(msg, ".") + "; day/month order is ambiguous: write " + strings.Join(readings, " or ") + "."
		}
	}
	return msg
}

// NoSuchDay says why year y, month mo, day d is not a calendar day, or "".
func NoSuchDay(y, mo, d int) string {
	if mo < 1 || mo > 12 {
		return fmt.Sprintf("there is no month %d", mo)
	}
	last := time.Date(y, time.Month(mo)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if d < 1 || d > last {
		return fmt.Sprintf("%s %d has %d days", time.Month(mo), y, last)
	}
	return ""
}

// errDateOutOfRange is returned for a date outside the years the stores hold.
var errDateOutOfRange = errors.New("date out of range")

// ReadDate reads a date parameter once (datetext.Read: the forms
// ParseDate accepts) in loc at now, in lang, and refuses a date outside
// the years both stores hold as read in loc. The value keeps what the
// text means (an instant, a wall-clock time, a phrase): DateIn gives its
// instant in the zone the write settles on without reading the text again.
// Every date a request sends, in a write or a list filter, is read through
// it, so "99999999999999" (year 3170843) is 400 rest_invalid_param
// everywhere.
func ReadDate(raw string, loc *time.Location, now time.Time, lang string) (datetext.Value, error) {
	d, err := datetext.Read(raw, lang, now, loc)
	if err != nil {
		return datetext.Value{}, errBadDate
	}
	if _, err := DateIn(d, loc); err != nil {
		return datetext.Value{}, err
	}
	return d, nil
}

// DateIn returns the instant a date read by ReadDate means in loc (in
// loc), limited to the years both stores hold (limits.MinYear to
// limits.MaxYear, in loc and in UTC).
func DateIn(d datetext.Value, loc *time.Location) (time.Time, error) {
	t, err := d.In(loc)
	if err != nil {
		return time.Time{}, errBadDate
	}
	for _, y := range []int{t.Year(), t.UTC().Year()} {
		if y < limits.MinYear || y > limits.MaxYear {
			return time.Time{}, errDateOutOfRange
		}
	}
	return t, nil
}
