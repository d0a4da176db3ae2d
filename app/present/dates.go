package present

import (
	"bytes"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/repository"
)

// localDate formats t in loc as "Y-m-d H:i:s" ("" for the zero time). It
// writes the digits itself (what Format(datetext.Layout) writes, for years 0 to
// 9999; other years go through Format): a rendered event has a dozen dates.
func localDate(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return ""
	}
	t = t.In(loc)
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format(datetext.Layout)
	}
	h, mi, sec := t.Clock()
	var b [19]byte
	put := func(at, n, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + n%10)
			n /= 10
		}
	}
	put(0, y, 4)
	b[4] = '-'
	put(5, int(mo), 2)
	b[7] = '-'
	put(8, d, 2)
	b[10] = ' '
	put(11, h, 2)
	b[13] = ':'
	put(14, mi, 2)
	b[16] = ':'
	put(17, sec, 2)
	return string(b[:])
}

// DateDetails is {year, month, day, hour, minutes, seconds} as
// zero-padded strings; {} for a date that does not parse (Year empty).
type DateDetails struct {
	Year, Month, Day, Hour, Minutes, Seconds string
}

func (d *DateDetails) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	if d.Year != "" {
		w.str("year", d.Year)
		w.str("month", d.Month)
		w.str("day", d.Day)
		w.str("hour", d.Hour)
		w.str("minutes", d.Minutes)
		w.str("seconds", d.Seconds)
	}
	return w.close()
}

// MarshalJSON writes the details.
func (d *DateDetails) MarshalJSON() ([]byte, error) { return marshal(d) }

// dateDetails splits a local date into its DateDetails.
func dateDetails(local string) DateDetails {
	t, err := time.Parse(datetext.Layout, local)
	if err != nil {
		return DateDetails{}
	}
	if plainLocalDate(local) {
		// Parse accepted exactly "dddd-dd-dd dd:dd:dd": the fields are
		// the digits as written, which is what Format writes back.
		return DateDetails{Year: local[0:4], Month: local[5:7], Day: local[8:10],
			Hour: local[11:13], Minutes: local[14:16], Seconds: local[17:19]}
	}
	return DateDetails{Year: t.Format("2006"), Month: t.Format("01"), Day: t.Format("02"),
		Hour: t.Format("15"), Minutes: t.Format("04"), Seconds: t.Format("05")}
}

// plainLocalDate reports whether s is "dddd-dd-dd dd:dd:dd" (digits and
// separators only, nothing more).
func plainLocalDate(s string) bool {
	if len(s) != len(datetext.Layout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := datetext.Layout[i]; c {
		case '-', ' ', ':':
			if s[i] != c {
				return false
			}
		default:
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
	}
	return true
}

// EventZone returns an event's time zone (the site zone when unset).
func (rn *Renderer) EventZone(e *repository.EventFields) (*time.Location, string) {
	if e.Timezone != "" {
		if loc, ok := datetext.LoadZone(e.Timezone); ok {
			return loc, e.Timezone
		}
	}
	return rn.cfg.Location, rn.cfg.TimezoneName
}

// zoneAbbr is the abbreviation of the zone at t (the name itself for UTC±N).
func zoneAbbr(name string, loc *time.Location, t time.Time) string {
	if strings.HasPrefix(name, "UTC") {
		return name
	}
	if t.IsZero() {
		t = time.Now()
	}
	abbr, _ := t.In(loc).Zone()
	return abbr
}
