package ical_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	goical "github.com/emersion/go-ical"

	"github.com/calendar/eventcal/app/ical"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// fixture is a calendar with every kind of event the service writes.
func fixture(t *testing.T) ical.Calendar {
	ams := mustZone(t, "Europe/Amsterdam")
	ny := mustZone(t, "America/New_York")
	mod := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	return ical.Calendar{ProdID: "-//eventcal//test//EN", Name: "example.test", Events: []ical.Event{
		{
			UID: "event-1@example.test", Modified: mod,
			Start: time.Date(2027, 7, 3, 18, 0, 0, 0, time.UTC), End: time.Date(2027, 7, 3, 21, 30, 0, 0, time.UTC),
			Zone: ams, ZoneName: "Europe/Amsterdam",
			Summary:     "Summer Jazz Night; outdoors, free",
			Description: "Line one\r\nLine two with a backslash \\ and a comma, and a semicolon; " + strings.Repeat("é", 80),
			Location:    "Paradiso, Weteringschans 6, Amsterdam", URL: "http://example.test/event/summer-jazz-night/",
			Geo:        &ical.Point{Lat: 52.362, Lng: 4.884},
			Categories: []string{"Concerts", "Jazz, Blues"},
			Organizer:  &ical.Organizer{Name: `Jazz Society, "Amsterdam"`, Email: "hello@jazz.example"},
			Status:     ical.StatusConfirmed,
		},
		{
			UID: "event-2@example.test", Modified: mod,
			Start: time.Date(2027, 12, 24, 23, 0, 0, 0, time.UTC), End: time.Date(2027, 12, 26, 22, 59, 59, 0, time.UTC),
			Zone: ams, ZoneName: "Europe/Amsterdam", AllDay: true,
			Summary: "Christmas market", Status: ical.StatusTentative,
		},
		{
			UID: "event-3@example.test", Modified: mod,
			Start: time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC), End: time.Date(2027, 1, 10, 16, 0, 0, 0, time.UTC),
			Zone: ny, ZoneName: "America/New_York", Summary: "Matinee", Status: ical.StatusCancelled,
		},
		{
			UID: "event-4@example.test", Modified: mod,
			Start: time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC), End: time.Date(2027, 3, 1, 13, 0, 0, 0, time.UTC),
			Zone: time.UTC, ZoneName: "UTC", Summary: "Lunch talk",
		},
	}}
}

func write(t *testing.T, c ical.Calendar) string {
	t.Helper()
	var buf bytes.Buffer
	if err := ical.Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var update = flag.Bool("update", false, "rewrite testdata/fixture.ics")

// TestWriteFixture compares the fixture feed with testdata/fixture.ics (a
// file that can be imported by hand into a calendar app; -update rewrites
// it) and checks its lines: CRLF endings, at most 75 octets, never a UTF-8
// sequence cut by a fold.
func TestWriteFixture(t *testing.T) {
	out := write(t, fixture(t))
	golden := filepath.Join("testdata", "fixture.ics")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != out {
		t.Errorf("feed differs from %s (run with -update after checking the change):\n%s", golden, out)
	}
	if !strings.HasSuffix(out, "END:VCALENDAR\r\n") {
		t.Fatalf("feed does not end with CRLF: %q", out[len(out)-20:])
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		if strings.ContainsAny(line, "\r\n") {
			t.Errorf("line %d holds a bare line break: %q", i, line)
		}
		if len(line) > 75 {
			t.Errorf("line %d is %d octets: %q", i, len(line), line)
		}
		if !isUTF8Start(line) {
			t.Errorf("line %d starts inside a UTF-8 sequence: %q", i, line)
		}
	}
}

func isUTF8Start(line string) bool {
	if line == "" {
		return true
	}
	s := strings.TrimPrefix(line, " ")
	return s == "" || s[0]&0xC0 != 0x80
}

// TestRoundTripArran4 parses the feed with the library that wrote it.
func TestRoundTripArran4(t *testing.T) {
	fx := fixture(t)
	cal, err := ics.ParseCalendar(strings.NewReader(write(t, fx)))
	if err != nil {
		t.Fatal(err)
	}
	evs := cal.Events()
	if len(evs) != len(fx.Events) {
		t.Fatalf("%d events, want %d", len(evs), len(fx.Events))
	}
	e := evs[0]
	checks := map[ics.ComponentProperty]string{
		ics.ComponentPropertyUniqueId:     "event-1@example.test",
		ics.ComponentPropertySummary:      "Summer Jazz Night; outdoors, free",
		ics.ComponentPropertyLocation:     "Paradiso, Weteringschans 6, Amsterdam",
		ics.ComponentPropertyUrl:          "http://example.test/event/summer-jazz-night/",
		ics.ComponentPropertyGeo:          "52.362;4.884",
		ics.ComponentPropertyStatus:       "CONFIRMED",
		ics.ComponentPropertyDtStart:      "20270703T200000",
		ics.ComponentPropertyDtEnd:        "20270703T233000",
		ics.ComponentPropertyLastModified: "20261120T093000Z",
		ics.ComponentPropertyDtstamp:      "20261120T093000Z",
		ics.ComponentPropertyOrganizer:    "mailto:hello@jazz.example",
	}
	for prop, want := range checks {
		p := e.GetProperty(prop)
		if p == nil {
			t.Errorf("%s missing", prop)
			continue
		}
		got := p.Value
		if p.GetValueType() == ics.ValueDataTypeText {
			got = ics.FromText(got)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", prop, got, want)
		}
	}
	if tz := e.GetProperty(ics.ComponentPropertyDtStart).ICalParameters["TZID"]; len(tz) != 1 || tz[0] != "Europe/Amsterdam" {
		t.Errorf("DTSTART TZID = %v", tz)
	}
	if cn := e.GetProperty(ics.ComponentPropertyOrganizer).ICalParameters["CN"]; len(cn) != 1 || cn[0] != "Jazz Society, 'Amsterdam'" {
		t.Errorf("ORGANIZER CN = %v", cn)
	}
	desc := ics.FromText(e.GetProperty(ics.ComponentPropertyDescription).Value)
	if !strings.HasPrefix(desc, "Line one\nLine two with a backslash \\ and a comma, and a semicolon; éé") {
		t.Errorf("DESCRIPTION = %q", desc)
	}
	var cats []string
	for _, p := range e.GetProperties(ics.ComponentPropertyCategories) {
		cats = append(cats, ics.FromText(p.Value))
	}
	if strings.Join(cats, "|") != "Concerts|Jazz, Blues" {
		t.Errorf("CATEGORIES = %q", cats)
	}

	allDay := evs[1]
	if p := allDay.GetProperty(ics.ComponentPropertyDtStart); p.Value != "20271225" || p.ICalParameters["VALUE"][0] != "DATE" {
		t.Errorf("all-day DTSTART = %q %v", p.Value, p.ICalParameters)
	}
	if p := allDay.GetProperty(ics.ComponentPropertyDtEnd); p.Value != "20271227" {
		t.Errorf("all-day DTEND = %q, want the day after the last day", p.Value)
	}
	if p := evs[3].GetProperty(ics.ComponentPropertyDtStart); p.Value != "20270301T120000Z" || len(p.ICalParameters) != 0 {
		t.Errorf("UTC DTSTART = %q %v", p.Value, p.ICalParameters)
	}
	var zones []string
	for _, tz := range cal.Timezones() {
		zones = append(zones, tz.GetProperty(ics.ComponentPropertyTzid).Value)
	}
	if strings.Join(zones, ",") != "America/New_York,Europe/Amsterdam" {
		t.Errorf("VTIMEZONE blocks = %v", zones)
	}
}

// TestImportWithEmersion imports the fixture with a second, independent
// parser, re-encodes it with that library's validating encoder, and checks
// that every event's start resolves through the VTIMEZONE to the instant
// written.
func TestImportWithEmersion(t *testing.T) {
	fx := fixture(t)
	cal, err := goical.NewDecoder(strings.NewReader(write(t, fx))).Decode()
	if err != nil {
		t.Fatal(err)
	}
	if err := goical.NewEncoder(&bytes.Buffer{}).Encode(cal); err != nil {
		t.Fatalf("the validating encoder refuses the feed: %v", err)
	}
	evs := cal.Events()
	if len(evs) != len(fx.Events) {
		t.Fatalf("%d events, want %d", len(evs), len(fx.Events))
	}
	for i, ev := range evs {
		want := fx.Events[i]
		start, err := ev.DateTimeStart(time.UTC)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if want.AllDay {
			if got := start.Format("2006-01-02"); got != "2027-12-25" {
				t.Errorf("event %d all-day start %s", i, got)
			}
			continue
		}
		if !start.Equal(want.Start) {
			t.Errorf("event %d start %s, want %s", i, start, want.Start)
		}
		end, err := ev.DateTimeEnd(time.UTC)
		if err != nil || !end.Equal(want.End) {
			t.Errorf("event %d end %s (%v), want %s", i, end, err, want.End)
		}
	}
}

// TestTimezoneObservances pins the VTIMEZONE transitions against known
// dates: Amsterdam's 2027 changes and a zone without DST.
func TestTimezoneObservances(t *testing.T) {
	cases := []struct {
		name, zone string
		start      time.Time
		want       []string // "KIND DTSTART FROM TO" lines that must appear
		none       string   // a kind that must not appear
	}{
		{"amsterdam", "Europe/Amsterdam", time.Date(2027, 7, 3, 18, 0, 0, 0, time.UTC), []string{
			"DAYLIGHT 20270328T020000 +0100 +0200",
			"STANDARD 20271031T030000 +0200 +0100",
			"DAYLIGHT 20260329T020000 +0100 +0200",
		}, ""},
		{"new york", "America/New_York", time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC), []string{
			"DAYLIGHT 20270314T020000 -0500 -0400",
			"STANDARD 20271107T020000 -0400 -0500",
		}, ""},
		{"no dst", "Asia/Tokyo", time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC), []string{
			"STANDARD 19510909T010000 +1000 +0900",
		}, "DAYLIGHT"},
		{"half hours", "Asia/Kolkata", time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC), []string{"STANDARD 19451015T000000 +0630 +0530"}, "DAYLIGHT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ical.Calendar{ProdID: "x", Events: []ical.Event{{UID: "u", Start: tc.start, End: tc.start.Add(time.Hour),
				Zone: mustZone(t, tc.zone), ZoneName: tc.zone, Summary: "s"}}}
			cal, err := ics.ParseCalendar(strings.NewReader(write(t, c)))
			if err != nil {
				t.Fatal(err)
			}
			tzs := cal.Timezones()
			if len(tzs) != 1 {
				t.Fatalf("%d VTIMEZONE blocks", len(tzs))
			}
			var got []string
			for _, sub := range tzs[0].Components {
				kind := "STANDARD"
				var base *ics.ComponentBase
				switch x := sub.(type) {
				case *ics.Standard:
					base = &x.ComponentBase
				case *ics.Daylight:
					kind, base = "DAYLIGHT", &x.ComponentBase
				default:
					t.Fatalf("unexpected %T", sub)
				}
				got = append(got, kind+" "+base.GetProperty(ics.ComponentProperty(ics.PropertyDtstart)).Value+" "+
					base.GetProperty(ics.ComponentProperty(ics.PropertyTzoffsetfrom)).Value+" "+
					base.GetProperty(ics.ComponentProperty(ics.PropertyTzoffsetto)).Value)
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("missing %q in\n%s", w, all)
				}
			}
			if tc.none != "" && strings.Contains(all, tc.none) {
				t.Errorf("unexpected %s in\n%s", tc.none, all)
			}
		})
	}
}

func TestPlainText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"  spaced  ", "spaced"},
		{"<p>Three bands, <strong>one</strong> night.</p>", "Three bands, one night."},
		{"<p>One</p><p>Two</p>", "One\n\nTwo"},
		{"a<br>b<br/>c", "a\nb\nc"},
		{"Caf&eacute; &amp; bar &lt;3", "Café & bar <3"},
		{"<script>alert(1)</script>visible<style>p{}</style>", "visible"},
		{"<ul><li>x</li><li>y</li></ul>", "x\ny"},
		{"unclosed <b>bold", "unclosed bold"},
		{"a <img src=x onerror=alert(1)> b", "a b"},
	}
	for _, tc := range cases {
		if got := ical.PlainText(tc.in); got != tc.want {
			t.Errorf("PlainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
