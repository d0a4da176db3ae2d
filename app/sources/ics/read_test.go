package ics

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTimes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, props      string
		allDay           bool
		zone, start, end string
	}{
		{"all-day, exclusive DTEND", "DTSTART;VALUE=DATE:20260601\nDTEND;VALUE=DATE:20260603", true, "", "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z"},
		{"all-day, eight digits without VALUE", "DTSTART:20260601\nDTEND:20260602", true, "", "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"},
		{"all-day without DTEND lasts a day", "DTSTART;VALUE=DATE:20260601", true, "", "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"},
		{"all-day with DTEND on its own day lasts a day", "DTSTART;VALUE=DATE:20260601\nDTEND;VALUE=DATE:20260601", true, "", "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"},
		{"all-day DURATION", "DTSTART;VALUE=DATE:20260601\nDURATION:P2D", true, "", "2026-06-01T00:00:00Z", "2026-06-03T00:00:00Z"},
		{"all-day DURATION of a week", "DTSTART;VALUE=DATE:20260601\nDURATION:P1W", true, "", "2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z"},
		{"timed without DTEND is an instant", "DTSTART:20260601T100000Z", false, "UTC", "2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z"},
		{"DURATION in hours and minutes", "DTSTART:20260601T100000Z\nDURATION:PT1H30M", false, "UTC", "2026-06-01T10:00:00Z", "2026-06-01T11:30:00Z"},
		{"DURATION of a nominal day across DST", "DTSTART;TZID=Europe/Amsterdam:20260328T120000\nDURATION:P1D", false, "Europe/Amsterdam", "2026-03-28T11:00:00Z", "2026-03-29T10:00:00Z"},
		{"DURATION of 24 exact hours across DST", "DTSTART;TZID=Europe/Amsterdam:20260328T120000\nDURATION:PT24H", false, "Europe/Amsterdam", "2026-03-28T11:00:00Z", "2026-03-29T11:00:00Z"},
		{"DURATION with days and time", "DTSTART:20260601T100000Z\nDURATION:P1DT2H", false, "UTC", "2026-06-01T10:00:00Z", "2026-06-02T12:00:00Z"},
		{"DTEND in another zone", "DTSTART;TZID=Europe/London:20260601T100000\nDTEND;TZID=America/New_York:20260601T100000", false, "Europe/London", "2026-06-01T09:00:00Z", "2026-06-01T14:00:00Z"},
		{"DTEND equal to DTSTART", "DTSTART:20260601T100000Z\nDTEND:20260601T100000Z", false, "UTC", "2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z"},
		{"floating time", "DTSTART:20260601T100000\nDTEND:20260601T120000", false, "", "2026-06-01T10:00:00Z", "2026-06-01T12:00:00Z"},
		{"quoted TZID", "DTSTART;TZID=\"Europe/Paris\":20260601T100000", false, "Europe/Paris", "2026-06-01T08:00:00Z", "2026-06-01T08:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cal := parseString(t, wrap("UID:u1\n"+c.props))
			if len(cal.Events) != 1 {
				t.Fatalf("events %d problems %+v", len(cal.Events), cal.Problems)
			}
			ev := cal.Events[0]
			if ev.AllDay != c.allDay || ev.Zone != c.zone {
				t.Errorf("allday %v zone %q, want %v %q", ev.AllDay, ev.Zone, c.allDay, c.zone)
			}
			sameInstant(t, "start", ev.Start, c.start)
			sameInstant(t, "end", ev.End, c.end)
			if c.zone == "" && ev.Start.Location() != time.UTC {
				t.Errorf("a date or floating time is not in UTC: %s", ev.Start.Location())
			}
		})
	}
}

func TestFloatingTimesReadInCalendarZone(t *testing.T) {
	t.Parallel()
	body := strings.Replace(wrap("UID:f\nDTSTART:20260601T100000\nEXDATE:20260608T100000"), "VERSION:2.0\r\n", "VERSION:2.0\r\nX-WR-TIMEZONE:America/Chicago\r\n", 1)
	ev := parseString(t, body).Events[0]
	if ev.Zone != "America/Chicago" {
		t.Errorf("zone %q", ev.Zone)
	}
	sameInstant(t, "start", ev.Start, "2026-06-01T15:00:00Z")
	sameInstant(t, "exdate", ev.Exclusions[0], "2026-06-08T15:00:00Z")
}

func TestCalendarZoneNamesABlock(t *testing.T) {
	t.Parallel()
	block := "BEGIN:VTIMEZONE\r\nTZID:Office\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r\nTZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
	body := strings.Replace(wrap("UID:a\nDTSTART:20260601T100000", "UID:b\nDTSTART;TZID=Office:20260601T100000"),
		"VERSION:2.0\r\n", "VERSION:2.0\r\nX-WR-TIMEZONE:Office\r\n"+block, 1)
	cal := parseString(t, body)
	if len(cal.Events) != 2 {
		t.Fatalf("problems %+v", cal.Problems)
	}
	for _, ev := range cal.Events {
		sameInstant(t, ev.UID+" start", ev.Start, "2026-06-01T01:00:00Z")
		if ev.Zone != "Asia/Chita" { // the first CLDR zone at +09 all year, by name
			t.Errorf("%s: zone %q", ev.UID, ev.Zone)
		}
	}
}

func TestTimeZones(t *testing.T) {
	t.Parallel()
	// A VTIMEZONE with the observances of EU summer time at +01/+02,
	// under a name no table knows.
	euBlock := `BEGIN:VTIMEZONE
TZID:Amsterdam, Berlin, Bern, Rome
BEGIN:STANDARD
DTSTART:16010101T030000
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:16010101T020000
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3
END:DAYLIGHT
END:VTIMEZONE`
	// Observances no IANA zone has: summer time from the first Sunday of
	// February to the first Sunday of December, +04/+05.
	oddBlock := `BEGIN:VTIMEZONE
TZID:Odd Zone
BEGIN:STANDARD
DTSTART:20000101T020000
TZOFFSETFROM:+0500
TZOFFSETTO:+0400
RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=12
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:20000101T020000
TZOFFSETFROM:+0400
TZOFFSETTO:+0500
RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=2
END:DAYLIGHT
END:VTIMEZONE`
	// The same at +05:30/+06:30: no Etc zone either.
	oddHalf := strings.NewReplacer("Odd Zone", "Odd Half", "+0500", "+0630", "+0400", "+0530").Replace(oddBlock)
	// One fixed offset, +03, no daylight time.
	fixedBlock := `BEGIN:VTIMEZONE
TZID:Arabia
BEGIN:STANDARD
DTSTART:16010101T000000
TZOFFSETFROM:+0300
TZOFFSETTO:+0300
END:STANDARD
END:VTIMEZONE`
	// A block that names its IANA zone (libical writes X-LIC-LOCATION).
	licBlock := strings.NewReplacer("Amsterdam, Berlin, Bern, Rome", "My Zone", "END:STANDARD", "END:STANDARD\nX-LIC-LOCATION:Europe/Amsterdam").Replace(euBlock)
	licBlock = strings.Replace(licBlock, "\nX-LIC-LOCATION:Europe/Amsterdam", "", 1)
	licBlock = strings.Replace(licBlock, "TZID:My Zone", "TZID:My Zone\nX-LIC-LOCATION:Europe/Amsterdam", 1)
	blocks := strings.Join([]string{euBlock, oddBlock, oddHalf, fixedBlock, licBlock}, "\n")

	cases := []struct {
		tzid, zone, start string // start of 20260701T120000 in that zone
	}{
		{"Europe/Amsterdam", "Europe/Amsterdam", "2026-07-01T10:00:00Z"},
		{"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires", "2026-07-01T15:00:00Z"},
		{"UTC", "UTC", "2026-07-01T12:00:00Z"},
		{"W. Europe Standard Time", "Europe/Berlin", "2026-07-01T10:00:00Z"},
		{"Pacific Standard Time", "America/Los_Angeles", "2026-07-01T19:00:00Z"},
		{"Eastern Standard Time", "America/New_York", "2026-07-01T16:00:00Z"},
		{"India Standard Time", "Asia/Calcutta", "2026-07-01T06:30:00Z"},
		{"tokyo standard time", "Asia/Tokyo", "2026-07-01T03:00:00Z"},
		{"/mozilla.org/20050126_1/Europe/Berlin", "Europe/Berlin", "2026-07-01T10:00:00Z"},
		{"/mozilla.org/20070129_1/America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires", "2026-07-01T15:00:00Z"},
		{"/freeassociation.sourceforge.net/Tzfile/Europe/London", "Europe/London", "2026-07-01T11:00:00Z"},
		{"Amsterdam, Berlin, Bern, Rome", "Europe/Berlin", "2026-07-01T10:00:00Z"}, // the first CLDR zone (by name) on EU rules at +01/+02
		{"My Zone", "Europe/Amsterdam", "2026-07-01T10:00:00Z"},
		{"Arabia", "Africa/Nairobi", "2026-07-01T09:00:00Z"},
		{"Odd Zone", "Etc/GMT-4", "2026-07-01T08:00:00Z"},
		{"Odd Half", "UTC", "2026-07-01T06:30:00Z"},
	}
	for _, c := range cases {
		t.Run(c.tzid, func(t *testing.T) {
			body := wrap(fmt.Sprintf("UID:z\nDTSTART;TZID=%q:20260701T120000", c.tzid))
			body = strings.Replace(body, "BEGIN:VEVENT", strings.ReplaceAll(blocks, "\n", "\r\n")+"\r\nBEGIN:VEVENT", 1)
			cal := parseString(t, body)
			if len(cal.Events) != 1 {
				t.Fatalf("problems %+v", cal.Problems)
			}
			ev := cal.Events[0]
			if ev.Zone != c.zone {
				t.Errorf("zone %q, want %q", ev.Zone, c.zone)
			}
			sameInstant(t, "start", ev.Start, c.start)
		})
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	good := "UID:good\nDTSTART:20260601T100000Z\nSUMMARY:Fine"
	cases := []struct {
		name, event, uid, says string
	}{
		{"no UID", "DTSTART:20260601T100000Z\nSUMMARY:Anonymous", "", "no UID"},
		{"no DTSTART", "UID:p1\nSUMMARY:When?", "p1", "no DTSTART"},
		{"bad DTSTART", "UID:p2\nDTSTART:soon", "p2", `DTSTART: "soon" is not a date-time`},
		{"DTEND before DTSTART", "UID:p3\nDTSTART:20260601T100000Z\nDTEND:20260601T090000Z", "p3", "DTEND 20260601T090000Z is before DTSTART 20260601T100000Z"},
		{"unknown TZID without a block", "UID:p4\nDTSTART;TZID=Mars/Olympus_Mons:20260601T100000", "p4", `unknown time zone "Mars/Olympus_Mons"`},
		{"negative DURATION", "UID:p5\nDTSTART:20260601T100000Z\nDURATION:-PT1H", "p5", "DURATION"},
		{"bad RRULE", "UID:p6\nDTSTART:20260601T100000Z\nRRULE:FREQ=SOMETIMES", "p6", "RRULE"},
		{"bad EXDATE", "UID:p7\nDTSTART:20260601T100000Z\nEXDATE:20260608T100000Z,next week", "p7", "EXDATE"},
		{"unterminated quote", "UID:p8\nDTSTART:20260601T100000Z\nORGANIZER;CN=\"Ann:mailto:a@b.c", "p8", "line"},
		{"a quote where a parameter ends", "UID:p9\nDTSTART:20260601T100000Z\nORGANIZER;CN=\"Ann\"x:mailto:a@b.c", "p9", "malformed"},
		{"mismatched END", "UID:p10\nDTSTART:20260601T100000Z\nBEGIN:VALARM\nEND:VTODO", "p10", "END:VTODO where END:VALARM was expected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cal := parseString(t, wrap(good, c.event))
			if len(cal.Events) != 1 || cal.Events[0].UID != "good" {
				t.Errorf("the rest of the feed: %+v", cal.Events)
			}
			if len(cal.Problems) != 1 {
				t.Fatalf("problems %+v", cal.Problems)
			}
			p := cal.Problems[0]
			if p.UID != c.uid || !strings.Contains(p.Problem, c.says) || !strings.Contains(p.Problem, "the VEVENT on line ") {
				t.Errorf("problem %+v, want UID %q and %q", p, c.uid, c.says)
			}
		})
	}
}

func TestDuplicateUIDs(t *testing.T) {
	t.Parallel()
	ev := func(summary, extra string) string {
		return "UID:dup\nDTSTART:20260601T100000Z\nSUMMARY:" + summary + "\n" + extra
	}
	cases := []struct {
		name   string
		events []string
		want   string
	}{
		{"higher SEQUENCE first", []string{ev("new", "SEQUENCE:2"), ev("old", "SEQUENCE:1")}, "new"},
		{"higher SEQUENCE last", []string{ev("old", "SEQUENCE:1"), ev("new", "SEQUENCE:2")}, "new"},
		{"same SEQUENCE, later LAST-MODIFIED", []string{ev("old", "SEQUENCE:1\nLAST-MODIFIED:20260101T000000Z"), ev("new", "SEQUENCE:1\nLAST-MODIFIED:20260301T000000Z")}, "new"},
		{"later LAST-MODIFIED first", []string{ev("new", "LAST-MODIFIED:20260301T000000Z"), ev("old", "LAST-MODIFIED:20260101T000000Z")}, "new"},
		{"a tie keeps the first", []string{ev("first", ""), ev("second", "")}, "first"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cal := parseString(t, wrap(append(c.events, "UID:other\nDTSTART:20260601T100000Z")...))
			if len(cal.Events) != 2 || cal.Events[0].UID != "dup" || cal.Events[1].UID != "other" {
				t.Fatalf("events %+v", cal.Events)
			}
			if cal.Events[0].Title != c.want {
				t.Errorf("kept %q, want %q", cal.Events[0].Title, c.want)
			}
		})
	}
}

func TestRecurrenceIDs(t *testing.T) {
	t.Parallel()
	t.Run("lone instance", func(t *testing.T) {
		cal := parseString(t, wrap(
			"UID:s\nRECURRENCE-ID:20260610T100000Z\nDTSTART:20260610T120000Z\nSUMMARY:moved",
			"UID:s\nRECURRENCE-ID;VALUE=DATE:20260617\nDTSTART;VALUE=DATE:20260617\nSTATUS:CANCELLED",
		))
		if len(cal.Events) != 2 {
			t.Fatalf("events %+v", cal.Events)
		}
		a, b := cal.Events[0], cal.Events[1]
		if a.RecurrenceID != "20260610T100000Z" || a.UID != "s" || a.Title != "moved" || len(a.Overrides) != 0 {
			t.Errorf("first instance %+v", a)
		}
		sameInstant(t, "lone start", a.Start, "2026-06-10T12:00:00Z")
		if b.RecurrenceID != "20260617" || !b.Cancelled || !b.AllDay {
			t.Errorf("second instance %+v", b)
		}
	})
	t.Run("all-day series", func(t *testing.T) {
		cal := parseString(t, wrap(
			"UID:d\nDTSTART;VALUE=DATE:20260601\nRRULE:FREQ=DAILY;COUNT=5\nEXDATE;VALUE=DATE:20260602,20260603",
			"UID:d\nRECURRENCE-ID;VALUE=DATE:20260604\nDTSTART;VALUE=DATE:20260605\nDTEND;VALUE=DATE:20260606",
		))
		ev := cal.Events[0]
		if len(ev.Exclusions) != 2 || !ev.Exclusions[1].Equal(time.Date(2026, 6, 3, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("exclusions %v", ev.Exclusions)
		}
		if len(ev.Overrides) != 1 {
			t.Fatalf("overrides %+v", ev.Overrides)
		}
		o := ev.Overrides[0]
		sameInstant(t, "of", o.Of, "2026-06-04T00:00:00Z")
		sameInstant(t, "start", o.Start, "2026-06-05T00:00:00Z")
		sameInstant(t, "end", o.End, "2026-06-06T00:00:00Z")
	})
	t.Run("a floating instance of a zoned series", func(t *testing.T) {
		cal := parseString(t, wrap(
			"UID:z\nDTSTART;TZID=Europe/Amsterdam:20260601T100000\nDTEND;TZID=Europe/Amsterdam:20260601T110000\nRRULE:FREQ=WEEKLY",
			"UID:z\nRECURRENCE-ID:20260608T100000\nDTSTART:20260608T120000\nDTEND:20260608T130000",
		))
		o := cal.Events[0].Overrides[0]
		sameInstant(t, "of", o.Of, "2026-06-08T08:00:00Z")
		sameInstant(t, "start", o.Start, "2026-06-08T10:00:00Z")
		sameInstant(t, "end", o.End, "2026-06-08T11:00:00Z")
	})
	t.Run("the instance's times unchanged", func(t *testing.T) {
		cal := parseString(t, wrap(
			"UID:w\nDTSTART:20260601T100000Z\nDTEND:20260601T110000Z\nRRULE:FREQ=WEEKLY\nSUMMARY:Weekly\nDESCRIPTION:d",
			"UID:w\nRECURRENCE-ID:20260608T100000Z\nDTSTART:20260608T100000Z\nDTEND:20260608T110000Z\nSUMMARY:Weekly\nDESCRIPTION:changed\nURL:https://example.org/x",
			"UID:w\nRECURRENCE-ID:20260608T100000Z\nSEQUENCE:1\nDTSTART:20260608T100000Z\nDTEND:20260608T110000Z\nSUMMARY:Weekly\nDESCRIPTION:changed again",
		))
		ev := cal.Events[0]
		if len(ev.Overrides) != 1 {
			t.Fatalf("two instances of one Of must be one: %+v", ev.Overrides)
		}
		o := ev.Overrides[0]
		if !o.Start.IsZero() || !o.End.IsZero() || o.Title != nil || o.URL != nil || o.Description == nil || *o.Description != "changed again" {
			t.Errorf("override %+v", o)
		}
	})
}

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`plain`, "plain"},
		{`a\, b\; c\\d`, `a, b; c\d`},
		{`line\nbreak\Nthere`, "line\nbreak\nthere"},
		{`C:\\path\\file`, `C:\path\file`},
		{`odd \: escape`, "odd : escape"},
		{`trailing \`, `trailing \`},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, c := range cases {
		if got := unescape(c.in); got != c.want {
			t.Errorf("unescape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := splitText(`a,b\,c,, d `), []string{"a", "b,c", "", " d "}; !reflect.DeepEqual(got, want) {
		t.Errorf("splitText = %q, want %q", got, want)
	}
	cal := parseString(t, wrap(`UID:t
DTSTART:20260601T100000Z
SUMMARY:Rock\, paper\; scissors
DESCRIPTION:One\ntwo\, three\; four \\ five
X-ALT-DESC;FMTTYPE=text/html:<p>ignored</p>
CATEGORIES:Music, Jazz
CATEGORIES:jazz,Outdoor\,Free
CATEGORIES:
ORGANIZER:mailto:someone@example.org
URL:ftp://example.org/file`))
	ev := cal.Events[0]
	if ev.Title != "Rock, paper; scissors" || ev.Description != "One\ntwo, three; four \\ five" {
		t.Errorf("title %q description %q", ev.Title, ev.Description)
	}
	if want := []string{"Music", "Jazz", "Outdoor,Free"}; !reflect.DeepEqual(ev.Categories, want) {
		t.Errorf("categories %q, want %q", ev.Categories, want)
	}
	if ev.Organizer == nil || ev.Organizer.Name != "someone@example.org" || ev.Organizer.Email != "someone@example.org" {
		t.Errorf("organizer without CN: %+v", ev.Organizer)
	}
	if ev.URL != "" {
		t.Errorf("an ftp URL is kept: %q", ev.URL)
	}
}

func TestStatusPlaceAndImage(t *testing.T) {
	t.Parallel()
	cal := parseString(t, wrap(
		"UID:c\nDTSTART:20260601T100000Z\nSTATUS:CANCELLED\nLOCATION:Town hall\nGEO:91;5\nIMAGE;VALUE=URI:https://example.org/a.jpg",
		"UID:d\nDTSTART:20260601T100000Z\nSTATUS:confirmed\nGEO:52.1;5.1\nATTACH;FMTTYPE=image/png:https://example.org/b.png",
		"UID:e\nDTSTART:20260601T100000Z\nLOCATION:Main hall\\nHigh Street 1\\nSpringfield",
	))
	c, d, e := cal.Events[0], cal.Events[1], cal.Events[2]
	if !c.Cancelled || c.Tentative || c.Location == nil || c.Location.Name != "Town hall" || c.Location.Address != "" || c.Location.Lat != nil {
		t.Errorf("cancelled event, out-of-range GEO: %+v %+v", c, c.Location)
	}
	if c.Image != "https://example.org/a.jpg" || d.Image != "https://example.org/b.png" {
		t.Errorf("images %q %q", c.Image, d.Image)
	}
	if d.Cancelled || d.Location != nil {
		t.Errorf("GEO without LOCATION: %+v", d.Location)
	}
	if e.Location == nil || e.Location.Name != "Main hall" || e.Location.Address != "High Street 1, Springfield" {
		t.Errorf("multi-line LOCATION: %+v", e.Location)
	}
}

func TestLineForms(t *testing.T) {
	t.Parallel()
	base := "BEGIN:VCALENDAR\nX-WR-CALNAME:Forms\nBEGIN:VEVENT\nUID:f\nDTSTART:20260601T100000Z\nSUMMARY:Long tit\n le folded\nDESCRIPTION:tab\n\tfolded\nEND:VEVENT\nEND:VCALENDAR\n"
	cases := []struct{ name, body string }{
		{"LF", base},
		{"CRLF", strings.ReplaceAll(base, "\n", "\r\n")},
		{"bare CR", strings.ReplaceAll(base, "\n", "\r")},
		{"BOM", "\xef\xbb\xbf" + strings.ReplaceAll(base, "\n", "\r\n")},
		{"blank lines and no final line break", "\n\n" + strings.TrimSuffix(strings.ReplaceAll(base, "\nEND:VEVENT", "\n  \nEND:VEVENT"), "\n")},
		{"lower-case names", strings.NewReplacer("BEGIN:VEVENT", "begin:vevent", "SUMMARY", "Summary", "END:VEVENT", "End:VEvent").Replace(base)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cal := parseString(t, c.body)
			if cal.Name != "Forms" || len(cal.Events) != 1 {
				t.Fatalf("name %q events %+v problems %+v", cal.Name, cal.Events, cal.Problems)
			}
			if ev := cal.Events[0]; ev.Title != "Long title folded" || ev.Description != "tabfolded" {
				t.Errorf("title %q description %q", ev.Title, ev.Description)
			}
		})
	}
	t.Run("raw line break inside a text value", func(t *testing.T) {
		cal := parseString(t, wrap("UID:r\nDTSTART:20260601T100000Z\nDESCRIPTION:first line\nsecond line, no property\nSUMMARY:ok"))
		if ev := cal.Events[0]; ev.Description != "first line\nsecond line, no property" || ev.Title != "ok" {
			t.Errorf("description %q title %q", ev.Description, ev.Title)
		}
	})
	t.Run("several calendars in one body", func(t *testing.T) {
		one := wrap("UID:a\nDTSTART:20260601T100000Z")
		two := wrap("UID:b\nDTSTART:20260601T100000Z")
		cal := parseString(t, one+two)
		if len(cal.Events) != 2 {
			t.Errorf("events %+v", cal.Events)
		}
	})
}

func TestLooks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		want bool
	}{
		{"BEGIN:VCALENDAR\r\n", true},
		{"\xef\xbb\xbf \r\n\tbegin:vcalendar\n", true},
		{"BEGIN:VCALENDA", false},
		{"<!DOCTYPE html><html>", false},
		{`{"events":[]}`, false},
		{"", false},
		{"BEGIN:VEVENT\nEND:VEVENT", false},
	}
	for _, c := range cases {
		if got := Looks([]byte(c.body)); got != c.want {
			t.Errorf("Looks(%q) = %v", c.body, got)
		}
	}
}

func TestCalendarName(t *testing.T) {
	t.Parallel()
	cases := []struct{ props, want string }{
		{"X-WR-CALNAME:Concerts\\, Amsterdam", "Concerts, Amsterdam"},
		{"NAME:Theatre", "Theatre"},
		{"NAME:Theatre\r\nX-WR-CALNAME:Stage", "Stage"},
		{"PRODID:-//x//EN", ""},
	}
	for _, c := range cases {
		body := strings.Replace(wrap("UID:a\nDTSTART:20260601T100000Z"), "VERSION:2.0\r\n", "VERSION:2.0\r\n"+c.props+"\r\n", 1)
		if got := parseString(t, body).Name; got != c.want {
			t.Errorf("%q: name %q, want %q", c.props, got, c.want)
		}
	}
}
