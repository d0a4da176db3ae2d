package tec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/app/sources/tec"
	"github.com/calendar/eventcal/app/wpimport/replay"
)

// opts are the tests' options: no rate limit, short backoffs.
func opts() tec.Options {
	return tec.Options{Rate: -1, RetryBase: time.Millisecond, Retries: 2}
}

func read(t *testing.T, rawURL string, o tec.Options) *feed.Calendar {
	t.Helper()
	cal, err := tec.Read(t.Context(), rawURL, o)
	if err != nil {
		t.Fatalf("Read(%s): %v", rawURL, err)
	}
	return cal
}

func byUID(cal *feed.Calendar) map[string]feed.Event {
	out := map[string]feed.Event{}
	for _, e := range cal.Events {
		out[e.UID] = e
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// TestRecordedSiteServesTheRecordedWindow shows that the test double's
// paged default window is the recorded one: its first page of 10 holds
// the events of the recorded default-window answer, in order, with the
// recorded total.
func TestRecordedSiteServesTheRecordedWindow(t *testing.T) {
	t.Parallel()
	site := newRecordedSite(t, nil)
	ids := func(rawURL string) ([]float64, float64) {
		res, err := http.Get(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b struct {
			Events []struct {
				ID float64 `json:"id"`
			} `json:"events"`
			Total float64 `json:"total"`
		}
		if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
			t.Fatal(err)
		}
		var out []float64
		for _, e := range b.Events {
			out = append(out, e.ID)
		}
		return out, b.Total
	}
	recorded, recTotal := ids(site.Root() + "/events")
	paged, total := ids(site.Root() + "/events?per_page=10&page=1")
	if !slices.Equal(recorded, paged) || recTotal != total || total != 46 {
		t.Fatalf("recorded window %v (total %v), served %v (total %v)", recorded, recTotal, paged, total)
	}
}

// TestReadRecordedSite reads the recorded site from each address a source
// may give: all 46 upcoming published events, no problem, the events list
// asked for in the default window (no start_date) 50 a page, anonymously.
func TestReadRecordedSite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		url  func(s *recordedSite) string
	}{
		{"namespace root", func(s *recordedSite) string { return s.Root() }},
		{"REST root", func(s *recordedSite) string { return s.URL + "/wp-json" }},
		{"site page announcing its REST API", func(s *recordedSite) string { return s.URL + "/" }},
		{"the events route", func(s *recordedSite) string { return s.Root() + "/events/" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			site := newRecordedSite(t, nil)
			cal := read(t, c.url(site), opts())
			if len(cal.Events) != 46 || len(cal.Problems) != 0 {
				t.Fatalf("%d events, problems %v; want 46 and none", len(cal.Events), cal.Problems)
			}
			var lists []string
			for _, r := range site.Requests() {
				if strings.Contains(r, "/events") {
					lists = append(lists, r)
				}
			}
			if len(lists) != 1 || !strings.Contains(lists[0], "per_page=50") || strings.Contains(lists[0], "start_date") || strings.Contains(lists[0], "status") {
				t.Errorf("list requests %v; want one, per_page=50, the default window", lists)
			}
			seen := map[string]bool{}
			for _, e := range cal.Events {
				if seen[e.UID] {
					t.Errorf("UID %s twice", e.UID)
				}
				seen[e.UID] = true
			}
			site.mu.Lock()
			for _, a := range site.agents {
				if !strings.HasPrefix(a, "eventcal-sources/") {
					t.Errorf("User-Agent %q; want eventcal-sources/<version> without a client of the runner's", a)
				}
			}
			site.mu.Unlock()
			// The order is the list's (by start).
			if cal.Events[0].UID != "342" || cal.Events[45].UID != "295" {
				t.Errorf("first %s, last %s; want 342 and 295", cal.Events[0].UID, cal.Events[45].UID)
			}
		})
	}
}

// TestReadRecordedEvents checks recorded events field by field: time
// zones (Europe/Amsterdam, Asia/Kathmandu, the manual offset UTC+2), an
// all-day event, a venue (with the coordinates Events Calendar Pro adds,
// put on the recorded venue here: the free plugin sends none), the first
// of two organizers, categories and tags by name, cost as shown, website,
// image, text made plain.
func TestReadRecordedEvents(t *testing.T) {
	t.Parallel()
	site := newRecordedSite(t, func(events map[int64]map[string]any) {
		// Pro writes the venue's coordinates into every event that
		// embeds it (a number, or a numeric string).
		for _, e := range events {
			if v, ok := e["venue"].(map[string]any); ok && v["id"] == float64(308) {
				v["geo_lat"], v["geo_lng"] = 52.3622, "4.8838"
			}
		}
	})
	got := byUID(read(t, site.Root(), opts()))
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	ktm, _ := time.LoadLocation("Asia/Kathmandu")
	utc := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	jazz := got["322"]
	want := feed.Event{
		UID: "322", Title: "FX Jazz Night at Paradiso",
		URL:  "https://jazz.example.com/night",
		Zone: "Europe/Amsterdam", Start: utc("2027-03-12 19:00:00").In(ams), End: utc("2027-03-12 22:30:00").In(ams),
		Location: &feed.Place{Name: "FX Paradiso", Address: "Weteringschans 6-8", City: "Amsterdam", Region: "Noord-Holland",
			PostalCode: "1017 SG", Country: "Netherlands", Lat: ptr(52.3622), Lng: ptr(4.8838)},
		Organizer:  &feed.Person{Name: "FX Jazz Society", Email: "hello@jazz-society.example", Phone: "+31 6 1234 5678", Website: "https://jazz-society.example"},
		Categories: []string{"FX Jazz"},
		Tags:       []string{"2027", "FX late night"},
		Cost:       "$5 – $15",
		Image:      "http://127.0.0.1:8088/wp-content/uploads/2026/11/fx-blue-jBqzc5.png",
		Modified:   utc("2026-11-25 17:15:48"),
	}
	want.Description = jazz.Description // checked below
	if jazz.Digest() != want.Digest() {
		a, _ := json.MarshalIndent(jazz, "", " ")
		b, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("event 322:\n%s\nwant\n%s", a, b)
	}
	if !jazz.Start.Equal(utc("2027-03-12 19:00:00")) || jazz.Start.Format("15:04 MST") != "20:00 CET" {
		t.Errorf("322 starts %v; want 20:00 CET", jazz.Start)
	}
	for _, part := range []string{"Programme & line-up\n", "Doors open at 19:30 – music from 20:00. Entrée via the side door “Zij-ingang”.",
		"Set 1: Trio\n\nSet 2: Quartet & guests", "Tickets: buy here.", "Café <open> © 2027 🎷 日本語 テキスト"} {
		if !strings.Contains(jazz.Description, part) {
			t.Errorf("322's description %q lacks %q", jazz.Description, part)
		}
	}
	if strings.Contains(jazz.Description, "<") && !strings.Contains(jazz.Description, "<open>") {
		t.Errorf("322's description holds markup: %q", jazz.Description)
	}

	cases := []struct {
		uid   string
		check func(e feed.Event) string
	}{
		{"335", func(e feed.Event) string { // all day, one day
			if !e.AllDay || e.Zone != "" || !e.Start.Equal(utc("2027-02-14 00:00:00")) || !e.End.Equal(utc("2027-02-15 00:00:00")) {
				return fmt.Sprintf("all-day %v zone %q %v .. %v; want 2027-02-14 .. 2027-02-15 (exclusive), no zone", e.AllDay, e.Zone, e.Start, e.End)
			}
			if e.Title != "FX Valentine’s Day Market (all day)" || e.Location == nil || e.Location.Name != "FX Café Müller" || e.Location.Lat != nil || e.Organizer != nil {
				return fmt.Sprintf("title %q, location %+v, organizer %+v", e.Title, e.Location, e.Organizer)
			}
			if !slices.Equal(e.Categories, []string{"FX Food & Drink"}) || !slices.Equal(e.Tags, []string{"FX family-friendly"}) || e.Cost != "Free" {
				return fmt.Sprintf("categories %q tags %q cost %q", e.Categories, e.Tags, e.Cost)
			}
			return ""
		}},
		{"355", func(e feed.Event) string { // a manual offset: TEC says 07:00 UTC for 10:00 at UTC+2; the site shows 10:00
			if e.Zone != "UTC+2" || !e.Start.Equal(utc("2027-05-08 08:00:00")) || e.Start.Format("15:04") != "10:00" || !e.End.Equal(utc("2027-05-08 09:00:00")) {
				return fmt.Sprintf("zone %q %v .. %v; want UTC+2 10:00 .. 11:00 local (08:00Z .. 09:00Z)", e.Zone, e.Start, e.End)
			}
			return ""
		}},
		{"354", func(e feed.Event) string { // +05:45
			if e.Zone != "Asia/Kathmandu" || !e.Start.Equal(utc("2027-05-07 04:15:00")) || e.Start.Location().String() != ktm.String() {
				return fmt.Sprintf("zone %q start %v", e.Zone, e.Start)
			}
			return ""
		}},
		{"338", func(e feed.Event) string { // overnight, UTC, the one organizer
			if e.Zone != "UTC" || !e.Start.Equal(utc("2026-12-31 21:00:00")) || !e.End.Equal(utc("2027-01-01 03:00:00")) || e.AllDay {
				return fmt.Sprintf("zone %q %v .. %v", e.Zone, e.Start, e.End)
			}
			if e.Title != "FX New Year’s Eve → New Year’s Day" || e.Cost != "€12" || e.Organizer == nil || e.Organizer.Name != "FX Zoë Ångström" || e.Organizer.Email != "zoe@example.se" {
				return fmt.Sprintf("title %q cost %q organizer %+v", e.Title, e.Cost, e.Organizer)
			}
			return ""
		}},
		{"342", func(e feed.Event) string { // no website of its own: its page at the site
			if e.URL != "http://127.0.0.1:8088/event/fx-yesterdays-quiz/" || e.Title != "FX Yesterday’s Quiz" || e.Description != "" {
				return fmt.Sprintf("url %q title %q description %q", e.URL, e.Title, e.Description)
			}
			return ""
		}},
		{"344", func(e feed.Event) string { // no venue, organizer, category, cost
			if e.Location != nil || e.Organizer != nil || e.Categories != nil || e.Tags != nil || e.Cost != "" || e.Image != "" {
				return fmt.Sprintf("%+v", e)
			}
			return ""
		}},
		{"351", func(e feed.Event) string { // entities decoded, markup removed as from a title
			if e.Title != "FX “Quoted” &  Title’s Test" || !slices.Equal(e.Categories, []string{"FX Théâtre & Danse"}) || e.Cost != "$10" {
				return fmt.Sprintf("title %q categories %q cost %q", e.Title, e.Categories, e.Cost)
			}
			return ""
		}},
	}
	for _, c := range cases {
		e, ok := got[c.uid]
		if !ok {
			t.Errorf("event %s not read", c.uid)
			continue
		}
		if e.Rules != nil || e.Overrides != nil || e.RecurrenceID != "" || e.Cancelled {
			t.Errorf("event %s: recurrence or status %+v", c.uid, e)
		}
		if msg := c.check(e); msg != "" {
			t.Errorf("event %s: %s", c.uid, msg)
		}
	}
}

// TestReadTwiceSameDigests: an unchanged site reads the same twice (the
// runner's "unchanged": same ContentHash, same digests), and a change of
// one event changes the ContentHash and that event's digest only.
func TestReadTwiceSameDigests(t *testing.T) {
	t.Parallel()
	digests := func(modify func(map[int64]map[string]any)) map[string]string {
		site := newRecordedSite(t, modify)
		out := map[string]string{}
		for _, e := range read(t, site.Root(), opts()).Events {
			out[e.UID] = e.Digest()
		}
		return out
	}
	hash := func(modify func(map[int64]map[string]any)) string {
		return tec.ContentHash(read(t, newRecordedSite(t, modify).Root(), opts()))
	}
	if h1, h2, h3 := hash(nil), hash(nil), hash(func(ev map[int64]map[string]any) { ev[294]["cost"] = "$3" }); h1 != h2 || h1 == h3 || len(h1) != 64 {
		t.Errorf("ContentHash: %s, %s (unchanged), %s (one cost changed)", h1, h2, h3)
	}
	a, b := digests(nil), digests(nil)
	c := digests(func(ev map[int64]map[string]any) { ev[329]["title"] = "FX Thanksgiving Parade Watch (moved)" })
	if len(a) != 46 || !maps.Equal(a, b) {
		t.Fatalf("two reads of the same site differ")
	}
	for uid, d := range a {
		if (d != c[uid]) != (uid == "329") {
			t.Errorf("event %s: digest changed %v", uid, d != c[uid])
		}
	}
}

// TestReadFollowsPages reads every page the list announces.
func TestReadFollowsPages(t *testing.T) {
	t.Parallel()
	site := &replay.Site{}
	for i := range 120 {
		site.Events = append(site.Events, replay.Event(int64(1000+i), fmt.Sprintf("Event %d", i)))
	}
	srv := replay.NewSite(t, site)
	cal := read(t, srv.URL, opts())
	if len(cal.Events) != 120 || cal.Events[0].UID != "1000" || cal.Events[119].UID != "1119" {
		t.Fatalf("%d events; want 120 in order", len(cal.Events))
	}
	// The home page, the REST index, three pages.
	if n := srv.Requests(); n != 5 {
		t.Errorf("%d requests; want 5", n)
	}
}

// TestReadProblems: an event the import's rules refuse is a problem of
// the feed, with its UID; the others read.
func TestReadProblems(t *testing.T) {
	t.Parallel()
	site := newRecordedSite(t, func(ev map[int64]map[string]any) {
		ev[329]["timezone"] = "Mars/Olympus_Mons"
		ev[324]["utc_start_date"] = "next tuesday"
		ev[322]["venue"].(map[string]any)["phone"] = "+31\n20" // the venue is left out, the event stays
	})
	cal := read(t, site.Root(), opts())
	if len(cal.Events) != 44 || len(cal.Problems) != 2 {
		t.Fatalf("%d events, problems %+v; want 44 and 2", len(cal.Events), cal.Problems)
	}
	want := map[string]string{"329": "timezone: ", "324": "utc_start_date: "}
	for _, p := range cal.Problems {
		if !strings.HasPrefix(p.Problem, want[p.UID]) || want[p.UID] == "" {
			t.Errorf("problem %+v", p)
		}
	}
	if e := byUID(cal)["322"]; e.Location != nil || e.Organizer == nil {
		t.Errorf("322: location %+v organizer %+v; want no location (its venue refused), the organizer", e.Location, e.Organizer)
	}
}

// TestReadFailures: a site that fails, or is not a TEC site, fails the
// read with a clear error and nothing else.
func TestReadFailures(t *testing.T) {
	t.Parallel()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wp-json/tribe/events/v1/events":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data":[{"id":1,"name":"not an event"}],"next":null}`)
		case "/html/wp-json/tribe/events/v1/events":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Maintenance</title>`)
		case "/wp/wp-json/":
			fmt.Fprint(w, `{"name":"Blog","namespaces":["oembed/1.0","wp/v2"]}`)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><html><head><title>Not WordPress</title></head><body>hello</body></html>`)
		}
	}))
	t.Cleanup(plain.Close)
	failing := newRecordedSite(t, nil)
	failing.mu.Lock()
	failing.status = http.StatusInternalServerError
	failing.mu.Unlock()
	for _, c := range []struct {
		name, url, reason, says string
	}{
		{"HTTP 500 after retries", failing.Root(), "status", "the site answered HTTP 500: GET " + failing.Root() + "/events?page=1&per_page=50: HTTP 500 internal_server_error: <p>There has been a critical error on this website.</p> (gave up after 3 attempts)"},
		{"JSON that is not a TEC list", plain.URL + "/wp-json/tribe/events/v1", "not_a_calendar", `not a calendar: list events page 1: the answer has no "events" list`},
		{"HTML where the list should be", plain.URL + "/html/wp-json/tribe/events/v1", "not_a_calendar", "not a calendar: list events page 1: the answer is not a JSON object"},
		{"a page that is not WordPress", plain.URL + "/", "not_a_calendar", "not a calendar: found no WordPress REST API at " + plain.URL + ": give the source URL as the address"},
		{"WordPress without the calendar", plain.URL + "/wp/wp-json", "not_a_calendar", "not a calendar: the WordPress site at " + plain.URL + "/wp/wp-json has no tribe/events/v1 REST namespace"},
		{"not http", "ftp://example.org/", "", "the source URL must be an http(s) URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(failing.Requests())
			cal, err := tec.Read(t.Context(), c.url, opts())
			if cal != nil || err == nil || !strings.HasPrefix(err.Error(), c.says) {
				t.Fatalf("Read = %v, %v; want an error starting %q", cal, err, c.says)
			}
			var te *tec.Error
			if c.reason != "" && (!errors.As(err, &te) || te.Reason != c.reason) {
				t.Errorf("error %#v; want reason %s", err, c.reason)
			}
			if c.reason == "status" {
				if n := len(failing.Requests()) - before; n != 3 {
					t.Errorf("%d requests; want 3 (two retries)", n)
				}
			}
		})
	}
}

// TestReadCaps: a read that reaches a cap fails (the run fails, nothing
// is written) after bounded work.
func TestReadCaps(t *testing.T) {
	t.Parallel()
	endless := replay.NewSite(t, &replay.Site{Endless: "events"})
	var many replay.Site
	for i := range 120 {
		many.Events = append(many.Events, replay.Event(int64(1000+i), fmt.Sprintf("Event %d", i)))
	}
	big := replay.NewSite(t, &many)
	for _, c := range []struct {
		name   string
		srv    *replay.SiteServer
		caps   tec.Caps
		reason string
		says   string
		maxReq int
	}{
		{"pages that never end", endless, tec.Caps{Pages: 4}, "too_large", "too large: the site's events list has more than 4 pages", 4},
		{"pages that never end, default caps", endless, tec.Caps{}, "too_many_events", "too many events: the site lists more than 10000", tec.DefaultMaxEvents/50 + 1},
		{"more events than allowed", big, tec.Caps{Events: 60}, "too_many_events", "too many events: the site lists more than 60", 2},
		{"requests", big, tec.Caps{Requests: 2}, "too_large", "too large: reading the site took more than 2 requests", 2},
		{"bytes of the read", big, tec.Caps{Bytes: 40_000}, "too_large", "too large: the site sent more than 40000 bytes", 3},
		{"one response", big, tec.Caps{Response: 10_000}, "too_large", "too large: GET " + big.Root() + "/events?page=1&per_page=50: the source sent too much: one response larger than 10000 bytes", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := c.srv.Requests()
			o := opts()
			o.Caps = c.caps
			cal, err := tec.Read(t.Context(), c.srv.Root(), o)
			var te *tec.Error
			if cal != nil || !errors.As(err, &te) || te.Reason != c.reason || !strings.HasPrefix(err.Error(), c.says) {
				t.Fatalf("Read = %v, %v; want %s: %q", cal, err, c.reason, c.says)
			}
			if n := c.srv.Requests() - before; n > c.maxReq {
				t.Errorf("%d requests; want at most %d", n, c.maxReq)
			}
		})
	}
}

// TestReadUsesTheGivenClient: every request goes through Options.Client
// (the fetcher's guarded client), anonymously.
func TestReadUsesTheGivenClient(t *testing.T) {
	t.Parallel()
	site := newRecordedSite(t, nil)
	var seen []string
	o := opts()
	o.Client = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.URL.String())
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Errorf("request %s sends credentials", r.URL)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	read(t, site.URL, o)
	if len(seen) != 3 || len(site.Requests()) != 3 {
		t.Errorf("client saw %v, site %v; want the same 3 requests", seen, site.Requests())
	}
	// A client that refuses (as the guarded one refuses a private address)
	// fails the read.
	o.Client = &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("blocked: 127.0.0.1 is a private address")
	})}
	o.Retries = -1
	_, err := tec.Read(t.Context(), site.Root(), o)
	var te *tec.Error
	if !errors.As(err, &te) || te.Reason != "network" || !strings.Contains(err.Error(), "blocked: 127.0.0.1 is a private address") {
		t.Errorf("Read = %v; want the client's refusal", err)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLooks tells a TEC site from other answers.
func TestLooks(t *testing.T) {
	t.Parallel()
	rec := replay.Load(t)
	root := rec["namespace-index"]
	list := rec["events-list-anonymous-default-window"]
	wpLink := http.Header{"Link": {`<https://example.org/wp-json/>; rel="https://api.w.org/"`}}
	for _, c := range []struct {
		name        string
		contentType string
		header      http.Header
		body        string
		want        bool
	}{
		{"TEC namespace root (recorded)", "application/json; charset=UTF-8", nil, string(root.Body), true},
		{"TEC events list (recorded)", "application/json; charset=UTF-8", nil, string(list.Body), true},
		{"WordPress REST index naming TEC", "application/json", nil, `{"name":"FX","namespaces":["oembed/1.0","tribe/events/v1","wp/v2"]}`, true},
		{"WordPress page, link in the head", "text/html; charset=UTF-8", nil, "<!DOCTYPE html>\n<html><head><title>FX</title>\n<link rel=\"https://api.w.org/\" href=\"https://example.org/wp-json/\" />\n</head><body>x</body></html>", true},
		{"WordPress page, Link header", "text/html; charset=UTF-8", wpLink, "<!doctype html><title>FX</title>", true},
		{"WordPress page, no content type", "", nil, "<html><head><link href='https://example.org/wp-json/' rel='https://api.w.org/'></head></html>", true},
		{"plain HTML page", "text/html", nil, "<!doctype html><html><head><title>Events</title><link rel=\"stylesheet\" href=\"/s.css\"></head><body><p>rel=\"https://api.w.org/\"</p></body></html>", false},
		{"iCalendar", "text/calendar", nil, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y//EN\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:20270101T100000Z\r\nSUMMARY:<link rel=\"https://api.w.org/\" href=\"x\">\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", false},
		{"iCalendar with the WordPress Link header", "text/calendar", wpLink, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", false},
		{"WordPress without TEC", "application/json", nil, `{"name":"Blog","namespaces":["oembed/1.0","wp/v2"]}`, false},
		{"other JSON", "application/json", nil, `{"events":[{"id":1}]}`, false},
		{"a JSON list", "application/json", nil, `[{"namespace":"tribe/events/v1"}]`, false},
		{"empty", "", nil, "", false},
	} {
		if got := tec.Looks(c.contentType, c.header, []byte(c.body)); got != c.want {
			t.Errorf("%s: Looks = %v; want %v", c.name, got, c.want)
		}
	}
}

// TestReadThroughTheFetcher reads with the fetcher's guarded client, as
// the runner does: its User-Agent, its address rules (a loopback site is
// refused unless private addresses are allowed) and its size bound, whose
// refusals stop the read at once (no retry) in the fetcher's words.
func TestReadThroughTheFetcher(t *testing.T) {
	t.Parallel()
	site := newRecordedSite(t, nil)
	cal := read(t, site.URL, tec.Options{Client: fetch.New(fetch.Options{AllowPrivate: true}).Client(), Rate: -1})
	if len(cal.Events) != 46 {
		t.Fatalf("%d events; want 46", len(cal.Events))
	}
	site.mu.Lock()
	agents := slices.Clone(site.agents)
	site.mu.Unlock()
	for _, a := range agents {
		if a != fetch.DefaultUserAgent() {
			t.Errorf("User-Agent %q; want the fetcher's %q", a, fetch.DefaultUserAgent())
		}
	}
	for _, c := range []struct {
		name     string
		o        fetch.Options
		reason   string
		says     string
		requests int
	}{
		{"a loopback site", fetch.Options{}, fetch.ReasonBlocked, "the site's address 127.0.0.1 is refused: private, loopback", 0},
		{"a page past the fetcher's bound", fetch.Options{AllowPrivate: true, MaxBytes: 10_000}, fetch.ReasonTooLarge, "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(site.Requests())
			_, err := tec.Read(t.Context(), site.Root(), tec.Options{Client: fetch.New(c.o).Client(), Rate: -1, Retries: 5, RetryBase: time.Millisecond})
			var te *tec.Error
			if !errors.As(err, &te) || te.Reason != c.reason || strings.Contains(err.Error(), "gave up") || !strings.HasPrefix(err.Error(), c.says) {
				t.Fatalf("Read = %v; want %s at the first attempt", err, c.reason)
			}
			if n := len(site.Requests()) - before; n != c.requests {
				t.Errorf("%d requests reached the site; want %d", n, c.requests)
			}
		})
	}
}

// TestReadMissingPage: a page the list announced that answers 404 fails
// the read (its events would otherwise look removed); a 404 past the
// announced pages ends the list.
func TestReadMissingPage(t *testing.T) {
	t.Parallel()
	var events []map[string]any
	for i := range 120 {
		events = append(events, replay.Event(int64(2000+i), fmt.Sprintf("Event %d", i)))
	}
	for _, c := range []struct {
		name    string
		pages   int // total_pages announced
		missing int // the page that answers 404
		want    int // events read, -1: an error
	}{
		{"page 2 of 3 missing", 3, 2, -1},
		{"page 3 of 3 missing", 3, 3, -1},
		{"no pages announced: a 404 ends the list", 0, 3, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				page := 1
				fmt.Sscan(r.URL.Query().Get("page"), &page)
				if page == c.missing || page > 3 {
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"code":"event-archive-page-not-found","message":"The requested event archive page does not exist","data":{"status":404}}`)
					return
				}
				body := map[string]any{"events": events[(page-1)*50 : min(page*50, len(events))]}
				if c.pages > 0 {
					body["total"], body["total_pages"] = 120, c.pages
				}
				_ = json.NewEncoder(w).Encode(body)
			}))
			t.Cleanup(srv.Close)
			cal, err := tec.Read(t.Context(), srv.URL+replay.Namespace, opts())
			switch {
			case c.want < 0:
				var te *tec.Error
				if !errors.As(err, &te) || te.Reason != "status" || !strings.Contains(err.Error(), fmt.Sprintf("list events page %d: HTTP 404 event-archive-page-not-found", c.missing)) {
					t.Fatalf("Read = %v; want a status error for page %d", err, c.missing)
				}
			case err != nil || len(cal.Events) != c.want:
				t.Fatalf("Read = %v; want %d events", err, c.want)
			}
		})
	}
}

// TestReadTimeout: a site that does not answer within the client's time
// limit, or within the run's, fails the read as timed out.
func TestReadTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(srv.Close)
	o := opts()
	o.Retries = -1
	o.Client = &http.Client{Timeout: 50 * time.Millisecond}
	_, err := tec.Read(t.Context(), srv.URL+replay.Namespace, o)
	var te *tec.Error
	if !errors.As(err, &te) || te.Reason != "timeout" || !strings.HasPrefix(err.Error(), "timed out: ") {
		t.Errorf("client time limit: Read = %v; want timed out", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = tec.Read(ctx, srv.URL+replay.Namespace, opts())
	if !errors.As(err, &te) || te.Reason != "timeout" || err.Error() != "timed out: the site was not read within the run's time limit" {
		t.Errorf("run's time limit: Read = %v; want timed out", err)
	}
}
