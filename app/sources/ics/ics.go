// Package ics reads an iCalendar feed (RFC 5545) into a feed.Calendar:
// the events of Google Calendar, Outlook, Meetup and other producers'
// feeds, with their times resolved to instants and IANA zones (so the
// runner never sees a TZID), their series (RRULE, EXDATE, RDATE) and
// changed instances (RECURRENCE-ID), places, organizers and categories.
//
// Content lines and components are decoded by github.com/emersion/go-ical.
// Every body first goes through a bounded pre-pass of this package
// (scan.go): the UTF-8 byte order mark is removed, CRLF, LF and bare CR
// line endings are accepted, folded lines are joined, the size of the
// body, of a line, of a parameter, the nesting of components, the
// properties of a component and the number of events are bounded, a body
// that is not iCalendar or is cut short is refused, and each top-level
// component is handed to the library on its own, so that an event the
// library cannot read becomes a feed.Problem while the rest imports.
package ics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/calendar/eventcal/app/sources/feed"
)

// Defaults of Options.
const (
	// DefaultMaxBytes is the largest body Parse reads (20 MiB).
	DefaultMaxBytes = 20 << 20
	// DefaultMaxEvents is the most VEVENTs a feed may hold.
	DefaultMaxEvents = 50000
)

// Options bound one Parse.
type Options struct {
	// MaxEvents is the most VEVENT components (instances included) the
	// feed may hold; more fail the whole parse ("too many events: ...").
	// 0: DefaultMaxEvents.
	MaxEvents int
	// MaxBytes is the largest body read; a larger one fails ("too
	// large: ..."). 0: DefaultMaxBytes.
	MaxBytes int64
}

// Parse reads an iCalendar feed. It fails when the body is larger than
// Options.MaxBytes ("too large: ..."), is not iCalendar (HTML, JSON,
// empty: "not a calendar: ..."), is cut short (no END:VCALENDAR:
// "truncated: ..."), or holds more than Options.MaxEvents events ("too
// many events: ..."). An event it cannot read (no UID, no DTSTART, DTEND
// before DTSTART, an unknown time zone, a line it cannot decode) is a
// feed.Problem of the result; the rest of the feed is read.
//
// What is read of an event, and how, is told by the fields of
// feed.Event and the comments of this package's functions: times (see
// readTime and zones.resolve), all-day events, DURATION, RRULE, EXDATE,
// RDATE, RECURRENCE-ID (see assemble), STATUS, SUMMARY, DESCRIPTION,
// URL, LOCATION and GEO, ORGANIZER, CATEGORIES, IMAGE and ATTACH,
// LAST-MODIFIED; the calendar's name is X-WR-CALNAME, else NAME. A
// floating time (no TZID, no "Z") is read in the calendar's
// X-WR-TIMEZONE; without one it is its wall clock in UTC with Zone "",
// for the runner to read in the site's zone.
func Parse(r io.Reader, opts Options) (*feed.Calendar, error) {
	p := newParser(opts)
	return p.parse(r)
}

// parser is one Parse.
type parser struct {
	maxEvents int
	maxBytes  int64
	zones     *zones
	decodes   int // components handed to the library (tests: bounded work)
	scanned   *scanResult
}

func newParser(opts Options) *parser {
	p := &parser{maxEvents: opts.MaxEvents, maxBytes: opts.MaxBytes, zones: newZones()}
	if p.maxEvents <= 0 {
		p.maxEvents = DefaultMaxEvents
	}
	if p.maxBytes <= 0 {
		p.maxBytes = DefaultMaxBytes
	}
	return p
}

func (p *parser) parse(r io.Reader) (*feed.Calendar, error) {
	body, err := io.ReadAll(io.LimitReader(r, p.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the feed: %w", err)
	}
	if int64(len(body)) > p.maxBytes {
		return nil, fmt.Errorf("too large: the feed is larger than %d bytes", p.maxBytes)
	}
	body = bytes.TrimPrefix(body, bom)
	if !Looks(body) {
		return nil, notCalendar(body)
	}
	body = bareCR(body)
	sc, err := scan(body, p.maxEvents)
	if err != nil {
		return nil, err
	}
	p.scanned = sc
	cal := &feed.Calendar{}
	calProps, err := p.decode(sc.calendar)
	if err == nil {
		if v := textProp(calProps, "X-WR-CALNAME"); v != "" {
			cal.Name = v
		} else {
			cal.Name = textProp(calProps, "NAME")
		}
	}
	for _, b := range sc.blocks {
		if b.name != "VTIMEZONE" || b.problem != "" {
			continue
		}
		c, err := p.decode(b.text)
		if err != nil || len(c.Children) != 1 {
			continue
		}
		tz := c.Children[0]
		if id := tz.Props.Get("TZID"); id != nil {
			if key := strings.TrimSpace(id.Value); p.zones.blocks[key] == nil {
				p.zones.blocks[key] = tz
			}
		}
	}
	// X-WR-TIMEZONE once every VTIMEZONE is known: it may name one
	if calProps != nil {
		if tz := calProps.Props.Get("X-WR-TIMEZONE"); tz != nil && strings.TrimSpace(tz.Value) != "" {
			if z := p.zones.resolve(tz.Value); z.err == nil {
				p.zones.cal = &z
			}
		}
	}
	var items []*item
	for _, b := range sc.blocks {
		if b.name != "VEVENT" {
			continue
		}
		if b.problem != "" {
			cal.Problems = append(cal.Problems, feed.Problem{UID: b.uid, Problem: fmt.Sprintf("the VEVENT on line %d: %s", b.line, b.problem)})
			continue
		}
		c, err := p.decode(b.text)
		if err != nil {
			cal.Problems = append(cal.Problems, feed.Problem{UID: b.uid, Problem: fmt.Sprintf("the VEVENT on line %d: %s", b.line, err)})
			continue
		}
		it, err := p.readEvent(c.Children[0])
		if err != nil {
			uid := b.uid
			if it != nil && it.ev.UID != "" {
				uid = it.ev.UID
			}
			cal.Problems = append(cal.Problems, feed.Problem{UID: uid, Problem: fmt.Sprintf("the VEVENT on line %d: %s", b.line, err)})
			continue
		}
		it.line = b.line
		items = append(items, it)
	}
	cal.Events = assemble(items)
	return cal, nil
}

// bareCR turns the line endings of a body written with bare CRs (no LF)
// into LFs; other bodies are returned as they are.
func bareCR(body []byte) []byte {
	i := bytes.IndexByte(body, '\r')
	for i >= 0 && i+1 < len(body) && body[i+1] == '\n' {
		j := bytes.IndexByte(body[i+1:], '\r')
		if j < 0 {
			return body
		}
		i += 1 + j
	}
	if i < 0 {
		return body
	}
	out := bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(out, []byte("\r"), []byte("\n"))
}

// decode hands one wrapped component to the library. The library can
// panic on some malformed parameters; that is an error of the component.
func (p *parser) decode(text []byte) (c *goical.Component, err error) {
	p.decodes++
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("malformed content line (%v)", r)
		}
	}()
	cal, err := goical.NewDecoder(bytes.NewReader(text)).Decode()
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "ical: "))
	}
	return cal.Component, nil
}

// unescape reads an iCalendar TEXT value: \n and \N are line breaks,
// \, \; \\ the characters themselves (any other escaped character stands
// for itself); invalid UTF-8 becomes U+FFFD.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n', 'N':
			b.WriteByte('\n')
		default:
			b.WriteByte(s[i])
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// splitText splits a TEXT list at its unescaped commas and unescapes
// each part.
func splitText(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			out = append(out, unescape(s[start:i]))
			start = i + 1
		}
	}
	return append(out, unescape(s[start:]))
}

// textProp returns a component's first property of that name as text.
func textProp(c *goical.Component, name string) string {
	if p := c.Props.Get(name); p != nil {
		return strings.TrimSpace(unescape(p.Value))
	}
	return ""
}

// httpURL returns s when it is an absolute http or https URL, else "".
func httpURL(s string) string {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return s
}

// when is one DATE or DATE-TIME value read.
type when struct {
	t    time.Time
	zone string // feed.Event.Zone
	date bool
}

// readTime reads one DATE or DATE-TIME value of a property (DTSTART,
// DTEND, RECURRENCE-ID, one value of EXDATE or RDATE): a date
// (VALUE=DATE or eight digits) is midnight UTC of that day; a UTC time
// ("Z") is in UTC, zone "UTC"; a time with a TZID is in its zone (see
// zones.resolve); a floating time is read in the calendar's
// X-WR-TIMEZONE when it has one, else kept as its wall clock in UTC with
// zone "" (the runner reads it in the site's zone). A PERIOD value is
// read as its start.
func (p *parser) readTime(prop *goical.Prop, raw string) (when, error) {
	v := strings.TrimSpace(raw)
	if i := strings.IndexByte(v, '/'); i >= 0 && strings.EqualFold(prop.Params.Get("VALUE"), "PERIOD") {
		v = v[:i]
	}
	if strings.EqualFold(prop.Params.Get("VALUE"), "DATE") || len(v) == 8 {
		t, err := time.Parse("20060102", v)
		if err != nil {
			return when{}, fmt.Errorf("%q is not a date", v)
		}
		return when{t: t, date: true}, nil
	}
	if strings.HasSuffix(v, "Z") || strings.HasSuffix(v, "z") {
		t, err := time.Parse("20060102T150405", v[:len(v)-1])
		if err != nil {
			return when{}, fmt.Errorf("%q is not a date-time", v)
		}
		return when{t: t, zone: "UTC"}, nil
	}
	z := zone{parse: time.UTC, out: time.UTC}
	if tzid := prop.Params.Get("TZID"); tzid != "" {
		z = p.zones.resolve(tzid)
		if z.err != nil {
			return when{}, z.err
		}
	} else if p.zones.cal != nil {
		z = *p.zones.cal
	}
	t, err := time.ParseInLocation("20060102T150405", v, z.parse)
	if err != nil {
		return when{}, fmt.Errorf("%q is not a date-time", v)
	}
	return when{t: t.In(z.out), zone: z.name}, nil
}

// parseDuration reads a DURATION value: nominal days (D, W: the same
// wall-clock time that many days later) and exact hours, minutes and
// seconds.
func parseDuration(s string) (days int, exact time.Duration, err error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	bad := fmt.Errorf("%q is not a duration", s)
	if strings.HasPrefix(s, "-") {
		return 0, 0, fmt.Errorf("%q is negative", s)
	}
	s = strings.TrimPrefix(s, "+")
	if !strings.HasPrefix(s, "P") || len(s) < 3 {
		return 0, 0, bad
	}
	s = s[1:]
	inTime := false
	for s != "" {
		if s[0] == 'T' {
			if inTime {
				return 0, 0, bad
			}
			inTime, s = true, s[1:]
			continue
		}
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 6 || i == len(s) {
			return 0, 0, bad
		}
		n, _ := strconv.Atoi(s[:i])
		switch unit := s[i]; {
		case !inTime && unit == 'W':
			days += 7 * n
		case !inTime && unit == 'D':
			days += n
		case inTime && unit == 'H':
			exact += time.Duration(n) * time.Hour
		case inTime && unit == 'M':
			exact += time.Duration(n) * time.Minute
		case inTime && unit == 'S':
			exact += time.Duration(n) * time.Second
		default:
			return 0, 0, bad
		}
		s = s[i+1:]
	}
	return days, exact, nil
}

// checkRule checks an RRULE value (written without "RRULE:").
func checkRule(v string) error {
	if _, err := rrule.StrToROption(v); err != nil {
		return err
	}
	return nil
}
