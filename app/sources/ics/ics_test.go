package ics

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/sources/feed"
)

// parseFile parses a fixture of testdata/.
func parseFile(t *testing.T, name string) *feed.Calendar {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := Parse(bytes.NewReader(b), Options{})
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	return cal
}

// parseString parses a feed written in a test.
func parseString(t *testing.T, body string) *feed.Calendar {
	t.Helper()
	cal, err := Parse(strings.NewReader(body), Options{})
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, body)
	}
	return cal
}

// wrap makes a calendar of VEVENT bodies.
func wrap(events ...string) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n")
	for _, e := range events {
		b.WriteString("BEGIN:VEVENT\r\n")
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(e), "\n", "\r\n"))
		b.WriteString("\r\nEND:VEVENT\r\n")
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.String()
}

func find(t *testing.T, cal *feed.Calendar, uid string) *feed.Event {
	t.Helper()
	for i := range cal.Events {
		if cal.Events[i].UID == uid {
			return &cal.Events[i]
		}
	}
	t.Fatalf("no event %q among %d events (problems: %+v)", uid, len(cal.Events), cal.Problems)
	return nil
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func sameInstant(t *testing.T, what string, got time.Time, want string) {
	t.Helper()
	if w := utc(want); !got.Equal(w) {
		t.Errorf("%s = %s, want %s", what, got.UTC().Format(time.RFC3339), w.UTC().Format(time.RFC3339))
	}
}

func TestGoogleExport(t *testing.T) {
	t.Parallel()
	cal := parseFile(t, "google.ics")
	if cal.Name != "Stadsagenda Amsterdam" || len(cal.Events) != 3 || len(cal.Problems) != 0 {
		t.Fatalf("name %q, %d events, problems %+v", cal.Name, len(cal.Events), cal.Problems)
	}
	jam := find(t, cal, "5v1q7k3h2m9c0r8t6b4n2j1l0a@google.com")
	if jam.Zone != "Europe/Amsterdam" || jam.AllDay || jam.Title != "Jazz jam" {
		t.Errorf("jam: zone %q allday %v title %q", jam.Zone, jam.AllDay, jam.Title)
	}
	sameInstant(t, "jam start", jam.Start, "2026-03-03T18:30:00Z")
	sameInstant(t, "jam end", jam.End, "2026-03-03T20:30:00Z")
	if jam.Start.Location().String() != "Europe/Amsterdam" {
		t.Errorf("start location %s", jam.Start.Location())
	}
	if want := []string{"FREQ=WEEKLY;WKST=MO;UNTIL=20260428T173000Z;BYDAY=TU"}; !reflect.DeepEqual(jam.Rules, want) {
		t.Errorf("rules %q", jam.Rules)
	}
	if len(jam.Exclusions) != 1 {
		t.Fatalf("exclusions %v", jam.Exclusions)
	}
	sameInstant(t, "exdate", jam.Exclusions[0], "2026-03-17T18:30:00Z")
	if jam.Description != "Weekly jam session. Bring your instrument, or just listen.\nDoors open at 19:00." {
		t.Errorf("description %q", jam.Description)
	}
	if jam.Location == nil || jam.Location.Name != "Café de Jaren" || jam.Location.Address != "Nieuwe Doelenstraat 20-22, 1012 CP Amsterdam, Netherlands" {
		t.Errorf("location %+v", jam.Location)
	}
	if !jam.Modified.Equal(utc("2026-02-20T12:00:00Z")) {
		t.Errorf("modified %s", jam.Modified)
	}
	if len(jam.Overrides) != 1 {
		t.Fatalf("overrides %+v", jam.Overrides)
	}
	o := jam.Overrides[0]
	sameInstant(t, "override of", o.Of, "2026-04-07T17:30:00Z") // CEST
	sameInstant(t, "override start", o.Start, "2026-04-07T18:00:00Z")
	sameInstant(t, "override end", o.End, "2026-04-07T20:00:00Z")
	if o.Title == nil || *o.Title != "Jazz jam (late start)" || o.Description != nil || o.Location != nil || o.Cancelled {
		t.Errorf("override %+v", o)
	}

	day := find(t, cal, "0k2j4h6g8f1d3s5a7p9o@google.com")
	if !day.AllDay || day.Zone != "" || !day.Start.Equal(utc("2026-04-27T00:00:00Z")) || !day.End.Equal(utc("2026-04-28T00:00:00Z")) {
		t.Errorf("all-day: %+v", day)
	}
	if day.Location != nil || day.Description != "" {
		t.Errorf("empty LOCATION and DESCRIPTION: %+v %q", day.Location, day.Description)
	}

	studio := find(t, cal, "7c9e2a4b6d8f0h1j3k5m@google.com")
	if studio.Zone != "UTC" || !studio.Tentative || studio.Cancelled {
		t.Errorf("studios: zone %q tentative %v", studio.Zone, studio.Tentative)
	}
	if studio.Description != "Open studios\nSee https://example.org/studios" {
		t.Errorf("HTML description read as %q", studio.Description)
	}
}

func TestOutlookExport(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/outlook.ics")
	if err != nil {
		t.Fatal(err)
	}
	// the fixture is what Outlook writes: a BOM, CRLF, lines folded at 75 octets
	if !bytes.HasPrefix(raw, bom) || bytes.Count(raw, []byte("\r\n")) != bytes.Count(raw, []byte("\n")) || !bytes.Contains(raw, []byte("\r\n ")) {
		t.Fatal("fixture lost its BOM, CRLF or folding")
	}
	for _, l := range bytes.Split(raw, []byte("\r\n")) {
		if len(l) > 75 {
			t.Fatalf("fixture line longer than 75 octets: %q", l)
		}
	}
	cal := parseFile(t, "outlook.ics")
	if cal.Name != "Conference Centre Rooms" || len(cal.Events) != 5 || len(cal.Problems) != 0 {
		t.Fatalf("name %q, %d events, problems %+v", cal.Name, len(cal.Events), cal.Problems)
	}
	cases := []struct {
		uidSuffix, zone, start, end string
	}{
		{"A1B2C3D4E5F60718293A4B5C6D7E8F90", "Europe/Berlin", "2026-04-14T08:00:00Z", "2026-04-14T09:30:00Z"},       // W. Europe Standard Time, CEST
		{"F0E1D2C3B4A5968778695A4B3C2D1E0F", "America/Los_Angeles", "2026-03-10T16:00:00Z", "2026-03-10T17:00:00Z"}, // Pacific Standard Time, PDT since March 8
		{"AABBCCDDEEFF00112233445566778899", "America/New_York", "2026-11-01T05:30:00Z", "2026-11-01T07:30:00Z"},    // Eastern, the night DST ends: 01:30 EDT to 02:30 EST
		{"CAFEBABE00112233445566778899AABB", "Europe/Bucharest", "2026-07-02T06:00:00Z", "2026-07-02T14:00:00Z"},    // "Customized Time Zone": +02/+03 on EU rules
	}
	for _, c := range cases {
		var ev *feed.Event
		for i := range cal.Events {
			if strings.HasSuffix(cal.Events[i].UID, c.uidSuffix) {
				ev = &cal.Events[i]
			}
		}
		if ev == nil {
			t.Fatalf("no event ...%s", c.uidSuffix)
		}
		if ev.Zone != c.zone {
			t.Errorf("%s: zone %q, want %q", ev.Title, ev.Zone, c.zone)
		}
		sameInstant(t, ev.Title+" start", ev.Start, c.start)
		sameInstant(t, ev.Title+" end", ev.End, c.end)
	}
	meeting := cal.Events[0]
	if meeting.Title != "Partneroverleg Q2" {
		t.Errorf("title %q", meeting.Title)
	}
	if meeting.Description != "Quarterly partner meeting.\n\nAgenda: budget, programme; room bookings. Please confirm by e-mail before Friday, thank you." {
		t.Errorf("description (X-ALT-DESC must not be read) %q", meeting.Description)
	}
	if meeting.Organizer == nil || meeting.Organizer.Name != "Jansen, Marieke" || meeting.Organizer.Email != "m.jansen@example.nl" {
		t.Errorf("organizer %+v", meeting.Organizer)
	}
	if meeting.Location == nil || meeting.Location.Name != "Zaal 3" || meeting.Location.Address != "Stationsplein 1, Utrecht" {
		t.Errorf("location %+v", meeting.Location)
	}
	conf := cal.Events[4]
	if !conf.AllDay || !conf.Start.Equal(utc("2026-09-22T00:00:00Z")) || !conf.End.Equal(utc("2026-09-25T00:00:00Z")) {
		t.Errorf("all-day conference: %+v", conf)
	}
}

func TestMeetupFeed(t *testing.T) {
	t.Parallel()
	cal := parseFile(t, "meetup.ics")
	if cal.Name != "Events - Go Amsterdam" || len(cal.Events) != 2 || len(cal.Problems) != 0 {
		t.Fatalf("name %q, %d events, problems %+v", cal.Name, len(cal.Events), cal.Problems)
	}
	dec := find(t, cal, "event_312345678@meetup.com")
	if dec.Zone != "UTC" || dec.Start.Location() != time.UTC {
		t.Errorf("zone %q location %s", dec.Zone, dec.Start.Location())
	}
	sameInstant(t, "start", dec.Start, "2026-12-10T17:30:00Z")
	sameInstant(t, "end", dec.End, "2026-12-10T20:30:00Z")
	if dec.Title != "Go Amsterdam December Meetup: generics, iterators & more" {
		t.Errorf("title %q", dec.Title)
	}
	for _, want := range []string{
		"Thursday, December 10 at 6:30 PM\n\nJoin us for two talks, pizza and drinks.",
		`"Profiling a 10k-QPS service; what we learned"`,
		"Venue details: https://example.com/venue?floor=3&room=b\n",
		"\n\nhttps://www.meetup.com/go-amsterdam/events/312345678/",
	} {
		if !strings.Contains(dec.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, dec.Description)
		}
	}
	if strings.Contains(dec.Description, `\`) {
		t.Errorf("description keeps escapes: %q", dec.Description)
	}
	if dec.URL != "https://www.meetup.com/go-amsterdam/events/312345678/" {
		t.Errorf("url %q", dec.URL)
	}
	if l := dec.Location; l == nil || l.Name != "Booking.com" || l.Address != "Oosterdokskade 163, Amsterdam, Netherlands" ||
		l.Lat == nil || *l.Lat != 52.366667 || l.Lng == nil || *l.Lng != 4.883333 {
		t.Errorf("location %+v", dec.Location)
	}
	if o := dec.Organizer; o == nil || o.Name != "Go Amsterdam" || o.Email != "noreply@meetup.com" {
		t.Errorf("organizer %+v", o)
	}
	jan := find(t, cal, "event_312345999@meetup.com")
	if jan.URL != "" {
		t.Errorf("a javascript: URL is kept: %q", jan.URL)
	}
	if want := []string{"Technology", "Go", "go,lang"}; !reflect.DeepEqual(jan.Categories, want) {
		t.Errorf("categories %q, want %q", jan.Categories, want)
	}
	if l := jan.Location; l == nil || l.Name != "Centrale Bibliotheek" || l.Address != "Oosterdokskade 143, 1011 DL Amsterdam" {
		t.Errorf("location %+v", l)
	}
}

func TestRecurringAcrossDST(t *testing.T) {
	t.Parallel()
	cal := parseFile(t, "dst.ics")
	if len(cal.Events) != 1 || len(cal.Problems) != 0 {
		t.Fatalf("%d events, problems %+v", len(cal.Events), cal.Problems)
	}
	ev := cal.Events[0]
	if ev.Zone != "Europe/Amsterdam" || ev.RecurrenceID != "" {
		t.Errorf("zone %q recurrence id %q", ev.Zone, ev.RecurrenceID)
	}
	sameInstant(t, "start", ev.Start, "2026-03-11T18:00:00Z")
	if want := []string{"FREQ=WEEKLY;UNTIL=20261118T180000Z;BYDAY=WE"}; !reflect.DeepEqual(ev.Rules, want) {
		t.Errorf("rules %q", ev.Rules)
	}
	// EXDATE: two on one line, one on another, one as a date (the
	// series' time of day on it); all in summer time.
	wantEx := []string{"2026-05-06T17:00:00Z", "2026-05-13T17:00:00Z", "2026-07-29T17:00:00Z", "2026-08-05T17:00:00Z"}
	if len(ev.Exclusions) != len(wantEx) {
		t.Fatalf("exclusions %v", ev.Exclusions)
	}
	for i, w := range wantEx {
		sameInstant(t, "exclusion", ev.Exclusions[i], w)
	}
	if len(ev.Additions) != 1 {
		t.Fatalf("additions %v", ev.Additions)
	}
	sameInstant(t, "rdate", ev.Additions[0], "2026-06-27T12:00:00Z")

	type want struct {
		of, start, end string // "" start: unchanged
		cancelled      bool
		title          string // "" unchanged
		place          string
	}
	wants := []want{
		{of: "2026-03-25T18:00:00Z", cancelled: true},                                                                 // CET, before the change of March 29
		{of: "2026-04-01T17:00:00Z", start: "2026-04-01T18:00:00Z", end: "2026-04-01T20:00:00Z"},                      // CEST; Mozilla-prefixed TZID
		{of: "2026-10-21T17:00:00Z", title: "Choir rehearsal: concert run-through"},                                   // CEST, before October 25
		{of: "2026-10-28T18:00:00Z", start: "2026-10-29T18:30:00Z", end: "2026-10-29T20:30:00Z", place: "Westerkerk"}, // CET; RECURRENCE-ID in UTC
	}
	if len(ev.Overrides) != len(wants) {
		t.Fatalf("overrides %+v", ev.Overrides)
	}
	for i, w := range wants {
		o := ev.Overrides[i]
		sameInstant(t, "of", o.Of, w.of)
		if o.Of.Location().String() != "Europe/Amsterdam" {
			t.Errorf("override %d: Of in %s", i, o.Of.Location())
		}
		if w.start == "" {
			if !o.Start.IsZero() || !o.End.IsZero() {
				t.Errorf("override %d moved: %s %s", i, o.Start, o.End)
			}
		} else {
			sameInstant(t, "override start", o.Start, w.start)
			sameInstant(t, "override end", o.End, w.end)
		}
		if o.Cancelled != w.cancelled {
			t.Errorf("override %d cancelled %v", i, o.Cancelled)
		}
		if (w.title == "") != (o.Title == nil) || o.Title != nil && *o.Title != w.title {
			t.Errorf("override %d title %v", i, o.Title)
		}
		if (w.place == "") != (o.Location == nil) || o.Location != nil && o.Location.Name != w.place {
			t.Errorf("override %d location %+v", i, o.Location)
		}
	}
}
