// Package ical renders calendar events as an RFC 5545 iCalendar object.
//
// It knows nothing about the API's storage or visibility rules: the caller
// hands it Event values that already hold exactly what the caller may see
// (the same values the JSON renderer uses), and Write serialises them
// through contentline.go, the one place that escapes each value by its
// RFC 5545 type (values as stored, whatever they hold: CR and LF never
// reach a line), folds lines at 75 octets (never inside a UTF-8 sequence)
// and ends lines with CRLF.
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

// Organizer is the event's ORGANIZER. It is written only when Email is one
// plain e-mail address, since ORGANIZER's value must be a calendar address
// (mailto:); Name is its CN parameter.
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
	// StartWall, when not zero, is the start as written: a wall time in
	// Zone (read from its fields) that does not exist there, in a
	// daylight-saving gap, and that RFC 5545 reads as Start. DTSTART then
	// holds it, so that the series' RRULE repeats that wall time.
	StartWall time.Time
	// Zone and ZoneName are the event's own time zone (DTSTART;TZID). A nil
	// Zone, or UTC, writes UTC times.
	Zone     *time.Location
	ZoneName string
	// AllDay writes dates (VALUE=DATE) taken from Start and End in Zone;
	// the end date is exclusive, so it is the day after End's date.
	AllDay bool
	// Summary, Description and Location are plain text, written as
	// escaped TEXT.
	Summary, Description, Location string
	// URL is written only when it is an absolute http or https URL.
	URL        string
	Geo        *Point
	Categories []string
	Organizer  *Organizer
	Status     Status
	// Rules are RRULE values (RFC 5545 RECUR, UNTIL in UTC, or a date for
	// an all-day event); a value with other characters than RECUR's is
	// left out. ExDates and RDates are occurrence starts (EXDATE, RDATE),
	// written like DTSTART.
	Rules           []string
	ExDates, RDates []time.Time
	// RecurrenceID, when set, makes this VEVENT the changed occurrence of
	// the series with the same UID that originally started then.
	RecurrenceID time.Time
	// Until is the end of the series' last occurrence (zero for a single
	// event): VTIMEZONE blocks cover it.
	Until time.Time
}

const (
	localFormat = "20060102T150405"
	utcFormat   = "20060102T150405Z"
	dateFormat  = "20060102"
)

// Write serialises the calendar. Every value goes through the encoders of
// contentline.go, the one place where output is escaped.
func Write(w io.Writer, c Calendar) error {
	cw := &contentWriter{w: w}
	cw.line("BEGIN", "VCALENDAR")
	cw.line("VERSION", "2.0")
	cw.line("PRODID", textValue(c.ProdID))
	cw.line("CALSCALE", "GREGORIAN")
	if name := textValue(c.Name); name != "" {
		cw.line("NAME", name)
		cw.line("X-WR-CALNAME", name)
	}
	for _, tz := range timezones(c.Events) {
		tz.write(cw)
	}
	for i := range c.Events {
		writeEvent(cw, &c.Events[i])
	}
	cw.line("END", "VCALENDAR")
	return cw.err
}

// writeEvent writes one VEVENT.
func writeEvent(cw *contentWriter, e *Event) {
	cw.line("BEGIN", "VEVENT")
	cw.line("UID", textValue(e.UID))
	cw.line("DTSTAMP", utcStamp(e.Modified))
	switch {
	case e.AllDay:
		loc := e.location()
		start := e.Start.In(loc)
		end := e.End.In(loc)
		if end.Before(start) {
			end = start
		}
		endDay := time.Date(end.Year(), end.Month(), end.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
		cw.line("DTSTART", start.Format(dateFormat), param{"VALUE", "DATE"})
		cw.line("DTEND", endDay.Format(dateFormat), param{"VALUE", "DATE"})
	case e.inUTC():
		cw.line("DTSTART", utcStamp(e.Start))
		cw.line("DTEND", utcStamp(e.End))
	default:
		start := e.Start.In(e.Zone).Format(localFormat)
		if !e.StartWall.IsZero() {
			start = e.StartWall.Format(localFormat)
		}
		cw.line("DTSTART", start, param{"TZID", e.ZoneName})
		cw.line("DTEND", e.End.In(e.Zone).Format(localFormat), param{"TZID", e.ZoneName})
	}
	if !e.RecurrenceID.IsZero() {
		e.writeTime(cw, "RECURRENCE-ID", e.RecurrenceID)
	}
	for _, r := range e.Rules {
		if recurValue(r) {
			cw.line("RRULE", r)
		}
	}
	for _, t := range e.RDates {
		e.writeTime(cw, "RDATE", t)
	}
	for _, t := range e.ExDates {
		e.writeTime(cw, "EXDATE", t)
	}
	cw.line("SUMMARY", textValue(e.Summary))
	if d := textValue(e.Description); d != "" {
		cw.line("DESCRIPTION", d)
	}
	if u, ok := uriValue(e.URL); ok {
		cw.line("URL", u)
	}
	if l := textValue(e.Location); l != "" {
		cw.line("LOCATION", l)
	}
	if e.Geo != nil {
		lat, okLat := floatValue(e.Geo.Lat)
		lng, okLng := floatValue(e.Geo.Lng)
		if okLat && okLng {
			cw.line("GEO", lat+";"+lng)
		}
	}
	for _, c := range e.Categories {
		// One property per category: a comma inside a category is
		// escaped, so a joined list would read as one category.
		if c = textValue(c); c != "" {
			cw.line("CATEGORIES", c)
		}
	}
	if o := e.Organizer; o != nil {
		if addr, ok := calAddressValue(o.Email); ok {
			var params []param
			if strings.TrimSpace(o.Name) != "" {
				params = append(params, param{"CN", o.Name})
			}
			cw.line("ORGANIZER", addr, params...)
		}
	}
	if !e.Modified.IsZero() {
		cw.line("LAST-MODIFIED", utcStamp(e.Modified))
	}
	if e.Status != "" {
		cw.line("STATUS", string(e.Status))
	}
	cw.line("END", "VEVENT")
}

// writeTime writes a DATE or DATE-TIME property in the form of DTSTART
// (RECURRENCE-ID, RDATE and EXDATE must match it, RFC 5545 3.8.4.4).
func (e *Event) writeTime(cw *contentWriter, name string, t time.Time) {
	switch {
	case e.AllDay:
		cw.line(name, t.In(e.location()).Format(dateFormat), param{"VALUE", "DATE"})
	case e.inUTC():
		cw.line(name, utcStamp(t))
	default:
		cw.line(name, t.In(e.Zone).Format(localFormat), param{"TZID", e.ZoneName})
	}
}

// recurValue reports whether r is made of RECUR characters only (so that
// it cannot break out of its content line).
func recurValue(r string) bool {
	if r == "" || len(r) > 500 {
		return false
	}
	for _, c := range r {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("=;,+-", c)) {
			return false
		}
	}
	return true
}

// utcStamp formats an instant as a UTC DATE-TIME.
func utcStamp(t time.Time) string { return t.UTC().Format(utcFormat) }

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

// timezones builds one VTIMEZONE per zone used by a timed event, covering
// the years from one before the earliest event to one after the latest.
func timezones(events []Event) []*vtimezoneBlock {
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
		if e.Until.After(sp.to) {
			sp.to = e.Until
		}
	}
	names := make([]string, 0, len(zones))
	for n := range zones {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*vtimezoneBlock, 0, len(names))
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
func vtimezone(name string, loc *time.Location, from, to time.Time) *vtimezoneBlock {
	tz := &vtimezoneBlock{id: name}
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

// vtimezoneBlock is one VTIMEZONE.
type vtimezoneBlock struct {
	id           string
	observations []observance
}

// observance is one STANDARD or DAYLIGHT block.
type observance struct {
	daylight       bool
	start          string // local DTSTART
	fromOff, toOff int
	abbr           string
}

// write writes the block.
func (tz *vtimezoneBlock) write(cw *contentWriter) {
	cw.line("BEGIN", "VTIMEZONE")
	cw.line("TZID", textValue(tz.id))
	for _, o := range tz.observations {
		kind := "STANDARD"
		if o.daylight {
			kind = "DAYLIGHT"
		}
		cw.line("BEGIN", kind)
		cw.line("DTSTART", o.start)
		cw.line("TZOFFSETFROM", utcOffset(o.fromOff))
		cw.line("TZOFFSETTO", utcOffset(o.toOff))
		if o.abbr != "" && !strings.ContainsAny(o.abbr, "+-") {
			cw.line("TZNAME", textValue(o.abbr))
		}
		cw.line("END", kind)
	}
	cw.line("END", "VTIMEZONE")
}

// addObservance appends a STANDARD or DAYLIGHT block starting at instant
// start; its DTSTART is local time in the offset in force before it.
func addObservance(tz *vtimezoneBlock, start time.Time, fromOff, toOff int, at time.Time) {
	abbr, _ := at.Zone()
	local := start.UTC().Add(time.Duration(fromOff) * time.Second)
	tz.observations = append(tz.observations, observance{daylight: at.IsDST(), start: local.Format(localFormat),
		fromOff: fromOff, toOff: toOff, abbr: abbr})
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
