package api_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"
	goical "github.com/emersion/go-ical"
)

// feedFixture creates the events the feed tests read: a timed event in
// Amsterdam at a venue with a point and an organizer with an email, an
// all-day event, a draft, a password-protected event and one in another
// category.
type feedFixture struct {
	jazz, allDay, draft, secret, talk int64
	jazzCat                           string
}

func newFeedFixture(t *testing.T, e *env) feedFixture {
	t.Helper()
	venue := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Paradiso", "address": "Weteringschans 6",
		"city": "Amsterdam", "country": "Netherlands", "geo_lat": 52.362, "geo_lng": 4.884}).id()
	org := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Jazz Society", "email": "hello@jazz.example"}).id()
	cat := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Concerts"}).id()
	var f feedFixture
	f.jazzCat = strconv.FormatInt(cat, 10)
	f.jazz = e.must(201, "POST", "events", "editor", map[string]any{"title": "Summer Jazz Night",
		"description": "<p>Three bands, <strong>one</strong> night.</p><script>x()</script>",
		"start_date":  "2027-07-03 20:00", "end_date": "2027-07-03 23:30", "timezone": "Europe/Amsterdam",
		"venue": venue, "organizer": []int64{org}, "categories": []int64{cat}}).id()
	f.allDay = e.must(201, "POST", "events", "editor", map[string]any{"title": "Christmas Market",
		"start_date": "2027-12-25", "end_date": "2027-12-26", "all_day": true, "timezone": "Europe/Amsterdam"}).id()
	f.draft = e.must(201, "POST", "events", "editor", map[string]any{"title": "Draft Gig", "status": "draft",
		"start_date": "2027-08-01 20:00", "end_date": "2027-08-01 22:00"}).id()
	f.secret = e.must(201, "POST", "events", "editor", map[string]any{"title": "Secret Show", "description": "hidden words",
		"password": "s3cret", "start_date": "2027-09-01 20:00", "end_date": "2027-09-01 22:00"}).id()
	f.talk = e.must(201, "POST", "events", "editor", map[string]any{"title": "Lunch Talk",
		"start_date": "2027-03-01 12:00", "end_date": "2027-03-01 13:00"}).id()
	e.flush()
	return f
}

// parseFeed checks the response is a calendar and parses it with both
// libraries, returning the events by UID.
func parseFeed(t *testing.T, r *resp) map[string]*ics.VEvent {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
		t.Fatalf("Content-Type %q", ct)
	}
	for i, line := range strings.Split(strings.TrimSuffix(r.raw, "\r\n"), "\r\n") {
		if len(line) > 75 || strings.ContainsAny(line, "\r\n") {
			t.Errorf("line %d is not a folded CRLF line: %q", i, line)
		}
	}
	if _, err := goical.NewDecoder(strings.NewReader(r.raw)).Decode(); err != nil {
		t.Fatalf("second parser: %v", err)
	}
	cal, err := ics.ParseCalendar(strings.NewReader(r.raw))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ics.VEvent{}
	for _, ev := range cal.Events() {
		out[ev.Id()] = ev
	}
	return out
}

func uid(id int64) string { return "event-" + strconv.FormatInt(id, 10) + "@example.test" }

func prop(ev *ics.VEvent, p ics.ComponentProperty) string {
	if x := ev.GetProperty(p); x != nil {
		if x.GetValueType() == ics.ValueDataTypeText {
			return ics.FromText(x.Value)
		}
		return x.Value
	}
	return ""
}

func TestEventFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := newFeedFixture(t, e)
	window := "start_date=2027-01-01&end_date=2027-12-31"

	t.Run("fields", func(t *testing.T) {
		evs := parseFeed(t, e.do("GET", "events.ics?"+window, "", nil))
		jazz := evs[uid(f.jazz)]
		if jazz == nil {
			t.Fatalf("jazz event missing: %v", evs)
		}
		want := map[ics.ComponentProperty]string{
			ics.ComponentPropertySummary:     "Summer Jazz Night",
			ics.ComponentPropertyDescription: "Three bands, one night.",
			ics.ComponentPropertyDtStart:     "20270703T200000",
			ics.ComponentPropertyDtEnd:       "20270703T233000",
			ics.ComponentPropertyLocation:    "Paradiso, Weteringschans 6, Amsterdam, Netherlands",
			ics.ComponentPropertyGeo:         "52.362;4.884",
			ics.ComponentPropertyCategories:  "Concerts",
			ics.ComponentPropertyOrganizer:   "mailto:hello@jazz.example",
			ics.ComponentPropertyStatus:      "CONFIRMED",
			ics.ComponentPropertyUrl:         "http://example.test/event/summer-jazz-night/",
		}
		for p, w := range want {
			if got := prop(jazz, p); got != w {
				t.Errorf("%s = %q, want %q", p, got, w)
			}
		}
		if tz := jazz.GetProperty(ics.ComponentPropertyDtStart).ICalParameters["TZID"]; len(tz) != 1 || tz[0] != "Europe/Amsterdam" {
			t.Errorf("TZID = %v", tz)
		}
		for _, p := range []ics.ComponentProperty{ics.ComponentPropertyDtstamp, ics.ComponentPropertyLastModified} {
			if _, err := time.Parse("20060102T150405Z", prop(jazz, p)); err != nil {
				t.Errorf("%s = %q: %v", p, prop(jazz, p), err)
			}
		}
		if !strings.Contains(e.do("GET", "events.ics?"+window, "", nil).raw, "BEGIN:VTIMEZONE\r\nTZID:Europe/Amsterdam\r\n") {
			t.Error("no VTIMEZONE block for Europe/Amsterdam")
		}
		day := evs[uid(f.allDay)]
		if day == nil {
			t.Fatal("all-day event missing")
		}
		if s, en := prop(day, ics.ComponentPropertyDtStart), prop(day, ics.ComponentPropertyDtEnd); s != "20271225" || en != "20271227" {
			t.Errorf("all-day dates %s..%s, want 20271225..20271227", s, en)
		}
	})

	t.Run("same events as the JSON list", func(t *testing.T) {
		for _, q := range []string{window, window + "&categories=" + f.jazzCat, window + "&search=jazz", window + "&per_page=2&page=2"} {
			for _, as := range []string{"", "editor"} {
				list := e.must(200, "GET", "events?"+q, as, nil)
				feed := parseFeed(t, e.do("GET", "events.ics?"+q, as, nil))
				var ids []string
				for i := 0; ; i++ {
					id := list.path("events." + strconv.Itoa(i) + ".id")
					if id == nil {
						break
					}
					ids = append(ids, id.(interface{ String() string }).String())
				}
				if len(ids) != len(feed) {
					t.Errorf("%q as %q: feed has %d events, JSON %d", q, as, len(feed), len(ids))
				}
				for _, id := range ids {
					n, _ := strconv.ParseInt(id, 10, 64)
					if feed[uid(n)] == nil {
						t.Errorf("%q as %q: event %s in JSON but not in the feed", q, as, id)
					}
				}
			}
		}
	})

	t.Run("visibility and redaction", func(t *testing.T) {
		anon := parseFeed(t, e.do("GET", "events.ics?"+window, "", nil))
		if anon[uid(f.draft)] != nil {
			t.Error("anonymous feed lists a draft")
		}
		sec := anon[uid(f.secret)]
		if sec == nil {
			t.Fatal("protected event missing from the anonymous feed")
		}
		if d := prop(sec, ics.ComponentPropertyDescription); d != "" {
			t.Errorf("protected description leaked: %q", d)
		}
		ed := parseFeed(t, e.do("GET", "events.ics?"+window, "editor", nil))
		if d := ed[uid(f.draft)]; d == nil || prop(d, ics.ComponentPropertyStatus) != "TENTATIVE" {
			t.Errorf("editor feed: draft missing or not tentative")
		}
	})

	t.Run("accept header on /events", func(t *testing.T) {
		r := e.doWith("GET", root+"/events?"+window, "", nil, map[string]string{"Accept": "text/calendar"})
		evs := parseFeed(t, r)
		if len(evs) != len(parseFeed(t, e.do("GET", "events.ics?"+window, "", nil))) {
			t.Error("Accept: text/calendar lists other events than /events.ics")
		}
		varies := func(r *resp) bool {
			for _, v := range strings.Split(r.header.Get("Vary"), ",") {
				if strings.EqualFold(strings.TrimSpace(v), "Accept") {
					return true
				}
			}
			return false
		}
		if !varies(r) {
			t.Errorf("Vary = %q", r.header.Get("Vary"))
		}
		// The same query as JSON right after: the response cache keeps the
		// two representations apart, both ways round.
		for range 2 {
			j := e.doWith("GET", root+"/events?"+window, "", nil, map[string]string{"Accept": "application/json, text/calendar;q=0.5"})
			if !strings.HasPrefix(j.header.Get("Content-Type"), "application/json") || !varies(j) {
				t.Errorf("JSON preferred, got %q (Vary %q)", j.header.Get("Content-Type"), j.header.Get("Vary"))
			}
			c := e.doWith("GET", root+"/events?"+window, "", nil, map[string]string{"Accept": "text/calendar"})
			if !strings.HasPrefix(c.header.Get("Content-Type"), "text/calendar") || !varies(c) {
				t.Errorf("calendar asked for, got %q (Vary %q)", c.header.Get("Content-Type"), c.header.Get("Vary"))
			}
		}
	})

	t.Run("paging", func(t *testing.T) {
		r := e.do("GET", "events.ics?"+window+"&per_page=2", "", nil)
		if evs := parseFeed(t, r); len(evs) != 2 {
			t.Errorf("per_page=2 gave %d events", len(evs))
		}
		if r.header.Get("X-WP-Total") != "4" || r.header.Get("X-WP-TotalPages") != "2" {
			t.Errorf("totals %q/%q", r.header.Get("X-WP-Total"), r.header.Get("X-WP-TotalPages"))
		}
		e.must(404, "GET", "events.ics?"+window+"&page=9", "", nil)
		e.must(400, "GET", "events.ics?start_date=whenever", "", nil)
	})

	t.Run("single event", func(t *testing.T) {
		evs := parseFeed(t, e.do("GET", "events/"+strconv.FormatInt(f.jazz, 10)+".ics", "", nil))
		if len(evs) != 1 || evs[uid(f.jazz)] == nil {
			t.Fatalf("single feed = %v", evs)
		}
		cases := []struct {
			url, as string
			status  int
			code    string
		}{
			{"events/" + strconv.FormatInt(f.draft, 10) + ".ics", "", 403, "event-not-accessible"},
			{"events/" + strconv.FormatInt(f.secret, 10) + ".ics", "", 403, "event-password-protected"},
			{"events/999999.ics", "", 404, "rest-event-not-found"},
			{"events/" + strconv.FormatInt(f.draft, 10) + ".ics", "editor", 200, ""},
			{"events/" + strconv.FormatInt(f.secret, 10) + ".ics?password=s3cret", "", 200, ""},
		}
		for _, c := range cases {
			r := e.do("GET", c.url, c.as, nil)
			if r.status != c.status || (c.code != "" && r.str("code") != c.code) {
				t.Errorf("%s as %q: %d %s, want %d %s", c.url, c.as, r.status, r.str("code"), c.status, c.code)
			}
		}
		sec := parseFeed(t, e.do("GET", "events/"+strconv.FormatInt(f.secret, 10)+".ics?password=s3cret", "", nil))
		if d := prop(sec[uid(f.secret)], ics.ComponentPropertyDescription); d != "hidden words" {
			t.Errorf("unlocked description = %q", d)
		}
	})

	t.Run("ETag, 304 and freshness after a write", func(t *testing.T) {
		for _, url := range []string{"events.ics?" + window, "events/" + strconv.FormatInt(f.jazz, 10) + ".ics"} {
			first := e.do("GET", url, "", nil)
			tag := first.header.Get("ETag")
			if first.status != 200 || tag == "" || !strings.Contains(first.header.Get("Cache-Control"), "public") {
				t.Fatalf("%s: %d, ETag %q, Cache-Control %q", url, first.status, tag, first.header.Get("Cache-Control"))
			}
			if r := e.doWith("GET", root+"/"+url, "", nil, map[string]string{"If-None-Match": tag}); r.status != 304 || r.raw != "" {
				t.Errorf("%s revalidation: %d %q", url, r.status, r.raw)
			}
		}
		e.must(200, "PATCH", "events/"+strconv.FormatInt(f.jazz, 10), "editor", map[string]any{"title": "Summer Jazz Night II"})
		e.flush()
		for _, url := range []string{"events.ics?" + window, "events/" + strconv.FormatInt(f.jazz, 10) + ".ics"} {
			if got := prop(parseFeed(t, e.do("GET", url, "", nil))[uid(f.jazz)], ics.ComponentPropertySummary); got != "Summer Jazz Night II" {
				t.Errorf("%s after the write: SUMMARY %q", url, got)
			}
		}
	})

	t.Run("language", func(t *testing.T) {
		e.must(200, "PATCH", "events/"+strconv.FormatInt(f.talk, 10)+"?multilang_language=fr", "editor", map[string]any{"title": "Conférence du midi"})
		e.flush()
		evs := parseFeed(t, e.do("GET", "/fr"+root+"/events.ics?"+window, "", nil))
		if got := prop(evs[uid(f.talk)], ics.ComponentPropertySummary); got != "Conférence du midi" {
			t.Errorf("French summary = %q", got)
		}
	})
}
