package ics

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// manyEvents writes a feed of n events, each in one of a few zones.
func manyEvents(n int) []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nX-WR-CALNAME:Many\r\n")
	zones := []string{"Europe/Amsterdam", "W. Europe Standard Time", "America/New_York", "/mozilla.org/20050126_1/Asia/Tokyo"}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:ev-%d@example.org\r\nDTSTAMP:20261120T000000Z\r\n", i)
		fmt.Fprintf(&b, "DTSTART;TZID=%s:2026%02d%02dT%02d0000\r\nDURATION:PT2H\r\n", zones[i%len(zones)], 1+i%12, 1+i%28, 8+i%12)
		fmt.Fprintf(&b, "SUMMARY:Event number %d\r\nDESCRIPTION:Line one\\nline two\\, with a comma\r\nLOCATION:Hall %d\\, Main Street %d\\, Springfield\r\n", i, i%50, i)
		fmt.Fprintf(&b, "CATEGORIES:Cat%d,Common\r\nEND:VEVENT\r\n", i%7)
	}
	b.WriteString("END:VCALENDAR\r\n")
	return b.Bytes()
}

func TestTenThousandEvents(t *testing.T) {
	t.Parallel()
	body := manyEvents(10000)
	p := newParser(Options{})
	cal, err := p.parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Events) != 10000 || len(cal.Problems) != 0 || cal.Name != "Many" {
		t.Fatalf("%d events, %d problems, name %q", len(cal.Events), len(cal.Problems), cal.Name)
	}
	for i, ev := range []int{0, 4999, 9999} {
		if got, want := cal.Events[ev].UID, fmt.Sprintf("ev-%d@example.org", ev); got != want {
			t.Errorf("event %d: UID %q, want %q (feed order)", i, got, want)
		}
	}
	// Bounded work: every line is read once, every component decoded
	// once (the calendar's own properties plus one per event), and each
	// TZID resolved once whatever the number of events.
	if want := bytes.Count(body, []byte("\r\n")); p.scanned.lines != want {
		t.Errorf("lines scanned %d, want %d", p.scanned.lines, want)
	}
	if p.decodes != 10001 {
		t.Errorf("components decoded %d, want 10001", p.decodes)
	}
	if len(p.zones.cache) != 4 || p.zones.loads > 8 {
		t.Errorf("%d TZIDs resolved with %d zone loads; want 4 with at most 8", len(p.zones.cache), p.zones.loads)
	}
}

func TestHostileFeeds(t *testing.T) {
	t.Parallel()
	event := "BEGIN:VEVENT\r\nUID:ok\r\nDTSTART:20260601T100000Z\r\nEND:VEVENT\r\n"
	cal := func(inner string) string { return "BEGIN:VCALENDAR\r\n" + inner + "END:VCALENDAR\r\n" }
	random := make([]byte, 64<<10)
	rand.New(rand.NewSource(1)).Read(random)
	cases := []struct {
		name string
		body []byte
		opts Options
		says string // the error starts with it
	}{
		{"HTML", []byte("<!DOCTYPE html>\n<html><head><title>Calendar</title></head><body>BEGIN:VCALENDAR</body></html>"), Options{}, "not a calendar: the body is HTML"},
		{"JSON", []byte(`{"events":[{"title":"x"}]}`), Options{}, "not a calendar: the body is JSON"},
		{"empty", nil, Options{}, "not a calendar: the body is empty"},
		{"white space only", []byte(" \r\n\t\n"), Options{}, "not a calendar: the body is empty"},
		{"garbage bytes", random, Options{}, "not a calendar"},
		{"garbage after BEGIN:VCALENDAR", append([]byte("BEGIN:VCALENDAR\r\n"), random...), Options{}, "truncated: "},
		{"truncated mid-event", []byte(cal(event)[:len("BEGIN:VCALENDAR\r\n")+30]), Options{}, "truncated: the feed ends inside the VEVENT that begins on line 2"},
		{"truncated mid-line of END:VCALENDAR", []byte(strings.TrimSuffix(cal(event), "DAR\r\n")), Options{}, "truncated: "},
		{"no END:VCALENDAR", []byte("BEGIN:VCALENDAR\r\n" + event), Options{}, "truncated: the feed ends after line 5"},
		{"too large", []byte(cal(event + strings.Repeat("X-PAD:"+strings.Repeat("x", 1000)+"\r\n", 100))), Options{MaxBytes: 50 << 10}, "too large: "},
		{"60,000 events", manyEvents(60000), Options{}, "too many events: the feed has more than 50000"},
		{"more than MaxEvents", manyEvents(11), Options{MaxEvents: 10}, "too many events: the feed has more than 10"},
		{"one 2 MB line and nothing else", []byte("BEGIN:VCALENDAR" + strings.Repeat("x", 2<<20)), Options{}, "not a calendar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newParser(c.opts)
			got, err := p.parse(bytes.NewReader(c.body))
			if err == nil || !strings.HasPrefix(err.Error(), c.says) {
				t.Fatalf("Parse = %+v, %v; want an error starting %q", got, err, c.says)
			}
			if got != nil {
				t.Errorf("a failed parse returns a calendar")
			}
			if p.decodes != 0 {
				t.Errorf("%d components decoded before failing", p.decodes)
			}
		})
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestTooLargeReadsNoFurther(t *testing.T) {
	t.Parallel()
	// a never-ending body: the read stops one byte past the limit
	endless := io.MultiReader(strings.NewReader("BEGIN:VCALENDAR\r\n"), neverEnding('x'))
	cr := &countingReader{r: endless}
	_, err := Parse(cr, Options{MaxBytes: 1 << 20})
	if err == nil || !strings.HasPrefix(err.Error(), "too large: ") {
		t.Fatalf("err %v", err)
	}
	if cr.n > 1<<20+1 {
		t.Errorf("read %d bytes for a limit of %d", cr.n, 1<<20)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestHostileEvents(t *testing.T) {
	t.Parallel()
	good := "BEGIN:VEVENT\r\nUID:good\r\nDTSTART:20260601T100000Z\r\nEND:VEVENT\r\n"
	deep := "BEGIN:VEVENT\r\nUID:deep\r\nDTSTART:20260601T100000Z\r\n" + strings.Repeat("BEGIN:X\r\n", 100000) + strings.Repeat("END:X\r\n", 100000) + "END:VEVENT\r\n"
	long := "BEGIN:VEVENT\r\nUID:long\r\nDTSTART:20260601T100000Z\r\nDESCRIPTION:" + strings.Repeat("a", 2<<20) + "\r\nEND:VEVENT\r\n"
	folded := "BEGIN:VEVENT\r\nUID:folded\r\nDTSTART:20260601T100000Z\r\nDESCRIPTION:" + strings.Repeat("abcdefghij\r\n ", 120000) + "\r\nEND:VEVENT\r\n"
	many := "BEGIN:VEVENT\r\nUID:many\r\nDTSTART:20260601T100000Z\r\n" + strings.Repeat("CATEGORIES:a\r\n", MaxProperties+1) + "END:VEVENT\r\n"
	cases := []struct {
		name, event, uid, says string
	}{
		{"nesting 100,000 deep", deep, "deep", "components nested more than 8 deep"},
		{"a 2 MB line", long, "long", "DESCRIPTION is longer than 1048576 bytes"},
		{"a 1.3 MB line in 120,000 folds", folded, "folded", "DESCRIPTION is longer than 1048576 bytes"},
		{"too many properties", many, "many", "more than 10000 properties"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newParser(Options{})
			body := "BEGIN:VCALENDAR\r\n" + good + c.event + strings.ReplaceAll(good, "UID:good", "UID:after") + "END:VCALENDAR\r\n"
			cal, err := p.parse(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if len(cal.Events) != 2 || cal.Events[0].UID != "good" || cal.Events[1].UID != "after" {
				t.Errorf("the rest of the feed: %+v", cal.Events)
			}
			if len(cal.Problems) != 1 || cal.Problems[0].UID != c.uid || !strings.Contains(cal.Problems[0].Problem, c.says) {
				t.Errorf("problems %+v, want %q for %q", cal.Problems, c.says, c.uid)
			}
			if p.decodes != 3 { // the calendar and the two good events: the bad one never reaches the library
				t.Errorf("%d components decoded", p.decodes)
			}
		})
	}
}

func TestLongParameters(t *testing.T) {
	t.Parallel()
	// A parameter longer than MaxParamBytes is dropped before decoding;
	// the property and its other parameters stay.
	alt := `ALTREP="https://example.org/` + strings.Repeat("p", 10000) + `"`
	body := wrap("UID:p\nDTSTART;TZID=Europe/Paris:20260601T100000\nDESCRIPTION;" + alt + ";LANGUAGE=fr:Bonjour\\, monde\nORGANIZER;X-JUNK=" + strings.Repeat("j", 300) + ";CN=Anne:mailto:anne@example.org")
	cal := parseString(t, body)
	if len(cal.Events) != 1 {
		t.Fatalf("problems %+v", cal.Problems)
	}
	ev := cal.Events[0]
	if ev.Description != "Bonjour, monde" || ev.Organizer == nil || ev.Organizer.Name != "Anne" || ev.Zone != "Europe/Paris" {
		t.Errorf("event %+v organizer %+v", ev, ev.Organizer)
	}
	cases := []struct{ in, want string }{
		{"A:b", "A:b"},
		{"A;P=1;Q=2:v;w", "A;P=1;Q=2:v;w"},
		{"A;P=" + strings.Repeat("x", 300) + ";Q=2:v", "A;Q=2:v"},
		{"A;Q=2;P=" + strings.Repeat("x", 300) + ":v", "A;Q=2:v"},
		{`A;P="` + strings.Repeat(";", 300) + `";Q="a:b":v:w`, `A;Q="a:b":v:w`},
		{"A;P=1", "A;P=1"},
	}
	for _, c := range cases {
		if got := string(dropLongParams([]byte(c.in))); got != c.want {
			t.Errorf("dropLongParams(%.40q) = %.60q, want %q", c.in, got, c.want)
		}
	}
}

func TestManyCustomZones(t *testing.T) {
	t.Parallel()
	// Blocks whose yearly rule never occurs (February 30th): expanding
	// one runs to the year 9999 in the rule library, so only the first
	// maxCustomZones blocks are matched against IANA zones; the others
	// take their standard offset.
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\n")
	n := maxCustomZones + 4
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "BEGIN:VTIMEZONE\r\nTZID:Custom %d\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0100\r\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n", i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nUID:%d\r\nDTSTART;TZID=Custom %d:20260701T120000\r\nEND:VEVENT\r\n", i, i)
	}
	b.WriteString("END:VCALENDAR\r\n")
	cal := parseString(t, b.String())
	if len(cal.Events) != n {
		t.Fatalf("events %d problems %+v", len(cal.Events), cal.Problems)
	}
	for i, ev := range cal.Events {
		want := "Africa/Lagos" // the first CLDR zone at +01 all year, by name
		if i >= maxCustomZones {
			want = "Etc/GMT-1"
		}
		if ev.Zone != want {
			t.Errorf("event %d: zone %q, want %q", i, ev.Zone, want)
		}
		sameInstant(t, "start", ev.Start, "2026-07-01T11:00:00Z")
	}
}
