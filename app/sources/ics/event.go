package ics

import (
	"fmt"
	"mime"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/app/sources/feed"
)

// item is one VEVENT read, before series and instances are put together.
type item struct {
	ev   feed.Event
	rid  string // RECURRENCE-ID as written; "" for none
	of   when   // RECURRENCE-ID read
	seq  int    // SEQUENCE
	line int
}

// readEvent reads one VEVENT. The error says what makes it unreadable;
// the item returned with it carries the UID when there was one.
func (p *parser) readEvent(c *goical.Component) (*item, error) {
	it := &item{}
	ev := &it.ev
	ev.UID = strings.TrimSpace(unescape(propValue(c, "UID")))
	if ev.UID == "" {
		return it, fmt.Errorf("no UID")
	}
	ds := c.Props.Get("DTSTART")
	if ds == nil || strings.TrimSpace(ds.Value) == "" {
		return it, fmt.Errorf("no DTSTART")
	}
	start, err := p.readTime(ds, ds.Value)
	if err != nil {
		return it, fmt.Errorf("DTSTART: %w", err)
	}
	ev.Start, ev.Zone, ev.AllDay = start.t, start.zone, start.date
	switch de, du := c.Props.Get("DTEND"), c.Props.Get("DURATION"); {
	case de != nil:
		end, err := p.readTime(de, de.Value)
		if err != nil {
			return it, fmt.Errorf("DTEND: %w", err)
		}
		ev.End = end.t
		if ev.AllDay {
			y, m, d := end.t.Date()
			ev.End = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		} else if end.date {
			y, m, d := end.t.Date()
			ev.End = time.Date(y, m, d, 0, 0, 0, 0, ev.Start.Location())
		}
		if ev.End.Before(ev.Start) {
			return it, fmt.Errorf("DTEND %s is before DTSTART %s", strings.TrimSpace(de.Value), strings.TrimSpace(ds.Value))
		}
	case du != nil:
		days, exact, err := parseDuration(du.Value)
		if err != nil {
			return it, fmt.Errorf("DURATION: %w", err)
		}
		if ev.AllDay && exact > 0 {
			days += int((exact + 24*time.Hour - 1) / (24 * time.Hour))
			exact = 0
		}
		ev.End = ev.Start.AddDate(0, 0, days).Add(exact)
	default:
		ev.End = ev.Start
	}
	if ev.AllDay && !ev.End.After(ev.Start) {
		// a date without an end (or ending on its own day) lasts that day
		ev.End = ev.Start.AddDate(0, 0, 1)
	}
	if ev.End.Location() != ev.Start.Location() {
		ev.End = ev.End.In(ev.Start.Location())
	}

	for _, r := range c.Props.Values("RRULE") {
		v := strings.TrimSpace(r.Value)
		if len(v) >= 6 && strings.EqualFold(v[:6], "RRULE:") {
			v = v[6:]
		}
		if v == "" {
			continue
		}
		if err := checkRule(v); err != nil {
			return it, fmt.Errorf("RRULE %q: %w", v, err)
		}
		ev.Rules = append(ev.Rules, v)
	}
	if ev.Exclusions, err = p.instants(c, "EXDATE", start); err != nil {
		return it, err
	}
	if ev.Additions, err = p.instants(c, "RDATE", start); err != nil {
		return it, err
	}
	if rid := c.Props.Get("RECURRENCE-ID"); rid != nil && strings.TrimSpace(rid.Value) != "" {
		it.rid = strings.TrimSpace(rid.Value)
		if it.of, err = p.readTime(rid, rid.Value); err != nil {
			return it, fmt.Errorf("RECURRENCE-ID: %w", err)
		}
	}

	switch strings.ToUpper(propValue(c, "STATUS")) {
	case "CANCELLED", "CANCELED":
		ev.Cancelled = true
	case "TENTATIVE":
		ev.Tentative = true
	}
	ev.Title = textProp(c, "SUMMARY")
	ev.Description = plain(textProp(c, "DESCRIPTION"))
	ev.URL = httpURL(propValue(c, "URL"))
	ev.Location = readPlace(c)
	ev.Organizer = readPerson(c)
	ev.Categories = readCategories(c)
	ev.Image = readImage(c)
	if lm := c.Props.Get("LAST-MODIFIED"); lm != nil {
		if w, err := p.readTime(lm, lm.Value); err == nil {
			ev.Modified = w.t.UTC()
		}
	}
	if s, err := strconv.Atoi(propValue(c, "SEQUENCE")); err == nil {
		it.seq = s
	}
	return it, nil
}

// propValue returns a property's raw value, trimmed ("" for none).
func propValue(c *goical.Component, name string) string {
	if p := c.Props.Get(name); p != nil {
		return strings.TrimSpace(p.Value)
	}
	return ""
}

// instants reads every value of every EXDATE or RDATE line, in feed
// order without duplicates. For an all-day event they are dates at
// midnight UTC; for a timed one instants in its zone, a date being the
// event's start time on that day.
func (p *parser) instants(c *goical.Component, name string, start when) ([]time.Time, error) {
	var out []time.Time
	seen := map[int64]bool{}
	for i := range c.Props.Values(name) {
		prop := &c.Props.Values(name)[i]
		for _, v := range strings.Split(prop.Value, ",") {
			if strings.TrimSpace(v) == "" {
				continue
			}
			w, err := p.readTime(prop, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			t := align(w, start)
			if k := t.UnixNano(); !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// align gives a date or time the form of the event's start: a date for
// an all-day event, the start's time of day on a date for a timed one,
// the start's location.
func align(w when, start when) time.Time {
	switch {
	case start.date:
		y, m, d := w.t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case w.date:
		y, m, d := w.t.Date()
		s := start.t
		return time.Date(y, m, d, s.Hour(), s.Minute(), s.Second(), 0, s.Location())
	case w.zone == "" && start.zone != "":
		// a floating instance of a zoned event: its wall clock in the zone
		t := w.t
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, start.t.Location())
	}
	return w.t.In(start.t.Location())
}

// readPlace reads LOCATION (the name up to the first comma or line
// break, the rest the address; "Name (address)" as Meetup writes it is
// read as such) and GEO ("lat;lng", within range). GEO without LOCATION
// gives no place.
func readPlace(c *goical.Component) *feed.Place {
	loc := textProp(c, "LOCATION")
	if loc == "" {
		return nil
	}
	pl := &feed.Place{Name: loc}
	if i := strings.Index(loc, " ("); i > 0 && strings.HasSuffix(loc, ")") && !strings.ContainsAny(loc[:i], ",\n") {
		// "Venue (street, city, country)", as Meetup writes it
		pl.Name, pl.Address = strings.TrimSpace(loc[:i]), strings.TrimSpace(loc[i+2:len(loc)-1])
	} else if i := strings.IndexAny(loc, ",\n"); i >= 0 {
		pl.Name = strings.TrimSpace(loc[:i])
		pl.Address = strings.Join(strings.Fields(strings.ReplaceAll(loc[i+1:], "\n", ", ")), " ")
	}
	if g := propValue(c, "GEO"); g != "" {
		parts := strings.FieldsFunc(g, func(r rune) bool { return r == ';' || r == ',' })
		if len(parts) == 2 {
			lat, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
			lng, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
			if err1 == nil && err2 == nil && lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180 {
				pl.Lat, pl.Lng = &lat, &lng
			}
		}
	}
	return pl
}

// readPerson reads ORGANIZER: CN is the name, a mailto: value the
// e-mail; without CN the e-mail is the name.
func readPerson(c *goical.Component) *feed.Person {
	o := c.Props.Get("ORGANIZER")
	if o == nil {
		return nil
	}
	per := &feed.Person{Name: strings.TrimSpace(unescape(o.Params.Get("CN")))}
	if v := strings.TrimSpace(o.Value); len(v) > 7 && strings.EqualFold(v[:7], "mailto:") {
		if addr := strings.TrimSpace(v[7:]); strings.Contains(addr, "@") {
			per.Email = addr
		}
	}
	if per.Name == "" {
		per.Name = per.Email
	}
	if per.Name == "" {
		return nil
	}
	return per
}

// readCategories reads every CATEGORIES line, each a comma-separated
// list: trimmed, in feed order, without empty names and without
// duplicates (the first spelling of names equal but for case is kept).
func readCategories(c *goical.Component) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Props.Values("CATEGORIES") {
		for _, name := range splitText(p.Value) {
			name = strings.TrimSpace(name)
			if k := strings.ToLower(name); name != "" && !seen[k] {
				seen[k] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// readImage reads IMAGE (RFC 7986), else an ATTACH whose FMTTYPE is an
// image: its http or https URL.
func readImage(c *goical.Component) string {
	for _, p := range c.Props.Values("IMAGE") {
		if u := httpURL(p.Value); u != "" {
			return u
		}
	}
	for _, p := range c.Props.Values("ATTACH") {
		mt, _, _ := mime.ParseMediaType(p.Params.Get("FMTTYPE"))
		if strings.HasPrefix(mt, "image/") {
			if u := httpURL(p.Value); u != "" {
				return u
			}
		}
	}
	return ""
}

// better reports whether a is to be kept over b, two VEVENTs of the same
// identity: the higher SEQUENCE, then the later LAST-MODIFIED; on a tie
// the first in the feed (b) stays.
func better(a, b *item) bool {
	if a.seq != b.seq {
		return a.seq > b.seq
	}
	return a.ev.Modified.After(b.ev.Modified)
}

// assemble puts series and their changed instances together: a VEVENT
// with a RECURRENCE-ID whose series (same UID, no RECURRENCE-ID) the
// feed holds becomes one of its Overrides; one whose series is absent
// is an Event of its own with RecurrenceID set. Two VEVENTs of the same
// identity (UID, or UID and RECURRENCE-ID) are one: see better. Events
// are in the order their identities first appear in the feed.
func assemble(items []*item) []feed.Event {
	masters := map[string]bool{}
	for _, it := range items {
		if it.rid == "" {
			masters[it.ev.UID] = true
		}
	}
	type slot struct{ it *item }
	var order []string
	slots := map[string]*slot{}
	children := map[string][]*item{}
	for _, it := range items {
		key := it.ev.UID + "\x00"
		if it.rid != "" {
			if masters[it.ev.UID] {
				children[it.ev.UID] = append(children[it.ev.UID], it)
				continue
			}
			key += it.rid
			it.ev.RecurrenceID = it.rid
		}
		s := slots[key]
		if s == nil {
			slots[key] = &slot{it}
			order = append(order, key)
		} else if better(it, s.it) {
			s.it = it
		}
	}
	out := make([]feed.Event, 0, len(order))
	for _, key := range order {
		ev := slots[key].it.ev
		if ev.RecurrenceID == "" {
			ev.Overrides = overrides(&ev, children[ev.UID])
		}
		out = append(out, ev)
	}
	return out
}

// overrides turns a series' changed instances into Overrides: Of is the
// instance's original start in the series' form (see align); Start and
// End are set when the instance does not keep its original times (Of
// and Of plus the series' length); Title, Description, URL and Location
// when they differ from the series'. Two instances of the same Of are
// one (see better).
func overrides(master *feed.Event, kids []*item) []feed.Override {
	var out []feed.Override
	var picked []*item
	index := map[int64]int{}
	startForm := when{t: master.Start, zone: master.Zone, date: master.AllDay}
	for _, k := range kids {
		of := align(k.of, startForm)
		key := of.UnixNano()
		if i, ok := index[key]; ok {
			if better(k, picked[i]) {
				picked[i] = k
				out[i] = override(master, k, of)
			}
			continue
		}
		index[key] = len(out)
		picked = append(picked, k)
		out = append(out, override(master, k, of))
	}
	return out
}

func override(master *feed.Event, k *item, of time.Time) feed.Override {
	o := feed.Override{Of: of, Cancelled: k.ev.Cancelled}
	loc := master.Start.Location()
	start, end := k.ev.Start.In(loc), k.ev.End.In(loc)
	switch {
	case master.AllDay:
		start, end = k.ev.Start, k.ev.End
	case k.ev.Zone == "" && master.Zone != "":
		// an instance in floating time (or dates) of a zoned series:
		// its wall clock in the series' zone
		start = align(when{t: k.ev.Start, date: k.ev.AllDay}, when{t: master.Start, zone: master.Zone})
		end = start.Add(k.ev.End.Sub(k.ev.Start))
	}
	var origEnd time.Time
	if master.AllDay {
		origEnd = of.AddDate(0, 0, int(master.End.Sub(master.Start)/(24*time.Hour)))
	} else {
		origEnd = of.Add(master.End.Sub(master.Start))
	}
	if !start.Equal(of) || !end.Equal(origEnd) {
		o.Start, o.End = start, end
	}
	if k.ev.Title != master.Title {
		o.Title = ptr(k.ev.Title)
	}
	if k.ev.Description != master.Description {
		o.Description = ptr(k.ev.Description)
	}
	if k.ev.URL != master.URL {
		o.URL = ptr(k.ev.URL)
	}
	if k.ev.Location != nil && !reflect.DeepEqual(k.ev.Location, master.Location) {
		o.Location = k.ev.Location
	}
	return o
}

func ptr(s string) *string { return &s }

// htmlTag finds the tags of an HTML description (Google Calendar writes
// its rich text as HTML in DESCRIPTION).
var htmlTag = regexp.MustCompile(`(?i)</?(a|b|i|u|p|br|div|span|ul|ol|li|strong|em|h[1-6])(\s[^<>]*)?/?>`)

// plain returns a description as plain text: one written as HTML is
// turned into text (tags removed, entities decoded, paragraphs and
// breaks kept as line breaks); an alternative HTML description
// (X-ALT-DESC) is never read.
func plain(s string) string {
	if !htmlTag.MatchString(s) {
		return s
	}
	return ical.PlainText(s)
}
