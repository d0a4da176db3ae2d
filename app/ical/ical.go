// Package ical renders calendar events as an RFC 5545 iCalendar object.
//
// It knows nothing about the API's storage or visibility rules: the caller
// hands it Event values that already hold exactly what the caller may see
// (the same values the JSON renderer uses), and Write serialises them with
// github.com/arran4/golang-ical, which folds lines at 75 octets (never inside
// a UTF-8 sequence), escapes TEXT values and ends lines with CRLF.
//
// Timed events are written in their own zone (DTSTART;TZID=...) with one
// VTIMEZONE block per zone, built from Go's time zone database for the
// years the events span; events in UTC use the "Z" form and need no block.
// All-day events are written as VALUE=DATE with an exclusive end date.
package ical

import (
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
)

// ContentType is the media type of a calendar response.
const ContentType = "text/calendar; charset=utf-8"

// Calendar is one feed.
type Calendar struct {
	// ProdID identifies the product that made the feed (PRODID).
	ProdID string
	// Name is shown by calendar apps as the subscription's name
	// (NAME and X-WR-CALNAME); empty leaves it out.
	Name string
	// Events are written in the given order.
	Events []Event
}

// Status is an event's STATUS.
type Status string

// The statuses a feed uses.
const (
	StatusConfirmed Status = "CONFIRMED"
	StatusTentative Status = "TENTATIVE"
	StatusCancelled Status = "CANCELLED"
)

// Point is a geographic position in degrees.
type Point struct{ Lat, Lng float64 }

// Organizer is the event's ORGANIZER. It is written only when Email is set,
// since ORGANIZER's value must be a calendar address (mailto:).
type Organizer struct {
	Name  string
	Email string
}

// Event is one VEVENT.
type Event struct {
	// UID is stable across languages and updates of the same event.
	UID string
	// Modified is LAST-MODIFIED, and also DTSTAMP: in a feed without a
	// METHOD, RFC 5545 3.8.7.2 makes DTSTAMP the time the information was
	// last revised, which keeps a feed's bytes (and its ETag) stable until
	// an event changes.
	Modified time.Time
	// Start and End are instants.
	Start, End time.Time
	// Zone and ZoneName are the event's own time zone (DTSTART;TZID). A nil
	// Zone, or UTC, writes UTC times.
	Zone     *time.Location
	ZoneName string
	// AllDay writes dates (VALUE=DATE) taken from Start and End in Zone;
	// the end date is exclusive, so it is the day after End's date.
	AllDay bool
	// Summary, Description and Location are plain text.
	Summary, Description, Location string
	URL                            string
	Geo                            *Point
	Categories                     []string
	Organizer                      *Organizer
	Status                         Status
}

const (
	localFormat = "20060102T150405"
	dateFormat  = "20060102"
)

// Write serialises the calendar.
func Write(w io.Writer, c Calendar) error {
	cal := ics.NewCalendar()
	cal.CalendarProperties = nil
	cal.SetVersion("2.0")
	cal.SetProductId(c.ProdID)
	cal.SetCalscale("GREGORIAN")
	if c.Name != "" {
		cal.SetName(c.Name)
		cal.SetXWRCalName(c.Name)
	}
	for _, tz := range timezones(c.Events) {
		cal.AddVTimezone(tz)
	}
	for i := range c.Events {
		cal.AddVEvent(vevent(&c.Events[i]))
	}
	return cal.SerializeTo(w, ics.WithNewLine("\r\n"))
}

// vevent builds one VEVENT.
func vevent(e *Event) *ics.VEvent {
	v := ics.NewEvent(e.UID)
	v.SetDtStampTime(e.Modified)
	switch {
	case e.AllDay:
		loc := e.location()
		start := e.Start.In(loc)
		end := e.End.In(loc)
		if end.Before(start) {
			end = start
		}
		endDay := time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
		v.SetProperty(ics.ComponentPropertyDtStart, start.Format(dateFormat), ics.WithValue(string(ics.ValueDataTypeDate)))
		v.SetProperty(ics.ComponentPropertyDtEnd, endDay.Format(dateFormat), ics.WithValue(string(ics.ValueDataTypeDate)))
	case e.inUTC():
		v.SetStartAt(e.Start)
		v.SetEndAt(e.End)
	default:
		v.SetProperty(ics.ComponentPropertyDtStart, e.Start.In(e.Zone).Format(localFormat), ics.WithTZID(e.ZoneName))
		v.SetProperty(ics.ComponentPropertyDtEnd, e.End.In(e.Zone).Format(localFormat), ics.WithTZID(e.ZoneName))
	}
	v.SetSummary(text(e.Summary))
	if d := text(e.Description); d != "" {
		v.SetDescription(d)
	}
	if e.URL != "" {
		v.SetURL(e.URL)
	}
	if l := text(e.Location); l != "" {
		v.SetLocation(l)
	}
	if e.Geo != nil {
		v.SetProperty(ics.ComponentPropertyGeo, coord(e.Geo.Lat)+";"+coord(e.Geo.Lng))
	}
	for _, c := range e.Categories {
		// One property per category: the library escapes commas in TEXT
		// values, so a joined list would read as one category.
		if c = text(c); c != "" {
			v.AddProperty(ics.ComponentPropertyCategories, c)
		}
	}
	if o := e.Organizer; o != nil && o.Email != "" {
		var params []ics.PropertyParameter
		if cn := paramText(o.Name); cn != "" {
			params = append(params, ics.WithCN(cn))
		}
		v.SetOrganizer("mailto:"+o.Email, params...)
	}
	if !e.Modified.IsZero() {
		v.SetLastModifiedAt(e.Modified)
	}
	if e.Status != "" {
		v.SetStatus(ics.ObjectStatus(e.Status))
	}
	return v
}

func (e *Event) location() *time.Location {
	if e.Zone == nil {
		return time.UTC
	}
	return e.Zone
}

// inUTC reports whether times are written in UTC (no TZID).
func (e *Event) inUTC() bool {
	return e.Zone == nil || e.Zone == time.UTC || e.ZoneName == "" || e.ZoneName == "UTC"
}

// coord formats a coordinate with at most six decimals (about 0.1 m).
func coord(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// text normalises line breaks to LF (the library escapes LF as \n and
// would pass a CR through raw) and drops other control characters, which
// RFC 5545 forbids in TEXT values.
func text(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r':
			return '\n'
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// paramText makes a parameter value safe to write unquoted: RFC 5545 allows
// neither DQUOTE nor control characters in it, and the library escapes
// ",;:" with backslashes (which the grammar does not define), so those are
// replaced by spaces.
func paramText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == ',' || r == ';' || r == ':' || r == '"' || r == '\\' || r == '\'':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// timezones builds one VTIMEZONE per zone used by a timed event, covering
// the years from one before the earliest event to one after the latest.
func timezones(events []Event) []*ics.VTimezone {
	type span struct {
		loc      *time.Location
		from, to time.Time
	}
	zones := map[string]*span{}
	for i := range events {
		e := &events[i]
		if e.AllDay || e.inUTC() {
			continue
		}
		sp := zones[e.ZoneName]
		if sp == nil {
			sp = &span{loc: e.Zone, from: e.Start, to: e.End}
			zones[e.ZoneName] = sp
		}
		if e.Start.Before(sp.from) {
			sp.from = e.Start
		}
		if e.End.After(sp.to) {
			sp.to = e.End
		}
	}
	names := make([]string, 0, len(zones))
	for n := range zones {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*ics.VTimezone, 0, len(names))
	for _, n := range names {
		sp := zones[n]
		from := time.Date(sp.from.Year()-1, 1, 1, 0, 0, 0, 0, time.UTC)
		to := time.Date(sp.to.Year()+2, 1, 1, 0, 0, 0, 0, time.UTC)
		out = append(out, vtimezone(n, sp.loc, from, to))
	}
	return out
}

// maxTransitions bounds the observances written for one zone.
const maxTransitions = 400

// vtimezone describes loc between from and to: one observance for the
// rules in force at from, then one per transition (each with an explicit
// DTSTART rather than an RRULE, which RFC 5545 allows and every client
// reads the same way).
func vtimezone(name string, loc *time.Location, from, to time.Time) *ics.VTimezone {
	tz := ics.NewTimezone(name)
	t := from.In(loc)
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		// No earlier transition: the zone has always had this offset.
		start = time.Date(1970, 1, 1, 0, 0, 0, 0, loc)
	}
	_, offset := t.Zone()
	addObservance(tz, start, offsetBefore(start), offset, t)
	for range maxTransitions {
		_, end := t.ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		t = end.In(loc)
		_, now := t.Zone()
		addObservance(tz, t, offsetBefore(t), now, t)
	}
	return tz
}

// offsetBefore is the UTC offset just before instant t.
func offsetBefore(t time.Time) int {
	_, off := t.Add(-time.Second).Zone()
	return off
}

// addObservance appends a STANDARD or DAYLIGHT block starting at instant
// start; its DTSTART is local time in the offset in force before it.
func addObservance(tz *ics.VTimezone, start time.Time, fromOff, toOff int, at time.Time) {
	abbr, _ := at.Zone()
	var cb *ics.ComponentBase
	if at.IsDST() {
		d := &ics.Daylight{}
		tz.Components = append(tz.Components, d)
		cb = &d.ComponentBase
	} else {
		s := tz.AddStandard()
		cb = &s.ComponentBase
	}
	local := start.UTC().Add(time.Duration(fromOff) * time.Second)
	cb.SetProperty(ics.ComponentProperty(ics.PropertyDtstart), local.Format(localFormat))
	cb.SetProperty(ics.ComponentProperty(ics.PropertyTzoffsetfrom), utcOffset(fromOff))
	cb.SetProperty(ics.ComponentProperty(ics.PropertyTzoffsetto), utcOffset(toOff))
	if abbr != "" && !strings.ContainsAny(abbr, "+-") {
		cb.SetProperty(ics.ComponentProperty(ics.PropertyTzname), abbr)
	}
}

// utcOffset formats seconds east of UTC as RFC 5545's UTC-OFFSET (+HHMM or
// +HHMMSS).
func utcOffset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	s := sign + pad2(sec/3600) + pad2(sec/60%60)
	if sec%60 != 0 {
		s += pad2(sec % 60)
	}
	return s
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
