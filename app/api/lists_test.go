package api_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// listIDs returns the IDs of a list response, in order.
func listIDs(r *resp, key string) []int64 {
	var out []int64
	items, _ := r.path(key).([]any)
	for _, it := range items {
		n, _ := it.(map[string]any)["id"].(json.Number).Int64()
		out = append(out, n)
	}
	return out
}

// ids formats IDs for comparison.
func ids(v ...int64) string { return fmt.Sprint(v) }

// listFixture creates events around e.now (2026-11-22 12:00 UTC) and
// returns their IDs by name.
func listFixture(t *testing.T, e *env) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	jazz := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz"}).id()
	bebop := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Bebop", "parent": jazz}).id()
	rock := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Rock"}).id()
	m["cat:jazz"], m["cat:bebop"], m["cat:rock"] = jazz, bebop, rock
	paris := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Paris Hall", "city": "Paris", "address": "100, Avenue du Temple", "geo_lat": 48.8566, "geo_lng": 2.3522}).id()
	london := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "London Hall", "city": "London", "geo_lat": 51.5072, "geo_lng": -0.1276}).id()
	nogeo := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Somewhere", "city": "London"}).id()
	m["venue:paris"], m["venue:london"], m["venue:nogeo"] = paris, london, nogeo
	org := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Org A", "email": "a@common.com"}).id()
	org2 := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Org B", "email": "b@common.com", "status": "draft"}).id()
	m["org:a"], m["org:b"] = org, org2
	mk := func(name string, as string, body map[string]any) {
		if _, ok := body["title"]; !ok {
			body["title"] = name
		}
		m[name] = e.must(201, "POST", "events", as, body).id()
	}
	mk("yesterday", "editor", map[string]any{"start_date": "2026-11-21 10:00", "end_date": "2026-11-21 12:00"})
	mk("today", "editor", map[string]any{"start_date": "2026-11-22 09:00", "end_date": "2026-11-22 10:00", "categories": []any{bebop}, "venue": paris, "featured": true})
	mk("dec1", "editor", map[string]any{"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 23:00", "categories": []any{jazz}, "tags": "late", "venue": london, "organizer": []any{org}})
	mk("dec1b", "editor", map[string]any{"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 21:00", "categories": []any{rock}, "venue": nogeo, "ticketed": true})
	mk("multi", "editor", map[string]any{"start_date": "2026-12-10 10:00", "end_date": "2026-12-12 18:00", "tags": "late,festival", "description": "A long festival with jazz"})
	mk("far", "editor", map[string]any{"start_date": "2029-01-01 10:00", "end_date": "2029-01-01 11:00"})
	mk("hidden", "editor", map[string]any{"start_date": "2026-12-02 10:00", "end_date": "2026-12-02 11:00", "hide_from_listings": true})
	mk("draft", "editor", map[string]any{"start_date": "2026-12-03 10:00", "end_date": "2026-12-03 11:00", "status": "draft", "organizer": []any{org2}})
	mk("secret", "editor", map[string]any{"start_date": "2026-12-04 10:00", "end_date": "2026-12-04 11:00", "password": "pw", "description": "hidden words here", "featured": true})
	mk("child", "editor", map[string]any{"start_date": "2026-12-05 10:00", "end_date": "2026-12-05 11:00"})
	e.flush()
	return m
}

// listCase is a list request (query, caller) and the IDs it must list.
type listCase struct {
	name, q, as string
	want        []int64
}

// runListCases runs each case as a subtest: get(q, as) must list want.
func runListCases(t *testing.T, e *env, get func(q, as string) []int64, cases []listCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			if got := get(c.q, c.as); ids(got...) != ids(c.want...) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	e.t = t
}

func TestEventList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := listFixture(t, e)
	get := func(q string, as string) []int64 {
		t.Helper()
		return listIDs(e.must(200, "GET", "events"+q, as, nil), "events")
	}
	// Default: from today 00:00 to two years later, publish only, hidden excluded, by start then ID.
	runListCases(t, e, get, []listCase{
		{"default window", "", "", []int64{m["today"], m["dec1"], m["dec1b"], m["secret"], m["child"], m["multi"]}},
		{"editor sees drafts", "", "editor", []int64{m["today"], m["dec1"], m["dec1b"], m["draft"], m["secret"], m["child"], m["multi"]}},
		{"status draft", "?status=draft", "editor", []int64{m["draft"]}},
		{"start_date inclusive day", "?start_date=2026-12-01 22:00", "", []int64{m["dec1"], m["dec1b"], m["secret"], m["child"], m["multi"]}},
		{"strict start", "?start_date=2026-12-01 20:00:01&strict_dates=true", "", []int64{m["secret"], m["child"], m["multi"]}},
		{"end_date inclusive", "?start_date=2026-11-01&end_date=2026-12-01 08:00", "", []int64{m["yesterday"], m["today"], m["dec1"], m["dec1b"]}},
		{"strict end", "?start_date=2026-11-01&end_date=2026-12-01 22:00&strict_dates=1", "", []int64{m["yesterday"], m["today"], m["dec1b"]}},
		{"ends_after excludes same day", "?ends_after=2026-12-01", "", []int64{m["secret"], m["child"], m["multi"], m["far"]}},
		{"starts_before drops default window (whole day)", "?starts_before=2026-11-22", "", []int64{m["yesterday"], m["today"]}},
		{"strict starts_before", "?starts_before=2026-11-22 09:00&strict_dates=true", "", []int64{m["yesterday"]}},
		{"starts_after", "?starts_after=2026-12-04&starts_before=2026-12-31", "", []int64{m["child"], m["multi"]}},
		{"relative with explicit start", "?start_date=2026-12-01&ends_before=2026-12-04", "", []int64{m["dec1"], m["dec1b"], m["secret"]}},
		{"relative with explicit start strict", "?start_date=2026-12-01&ends_before=2026-12-04 10:30&strict_dates=on", "", []int64{m["dec1"], m["dec1b"]}},
		{"category parent matches child", "?categories=" + strconv.FormatInt(m["cat:jazz"], 10), "", []int64{m["today"], m["dec1"]}},
		{"category by slug OR", "?categories=bebop,rock", "", []int64{m["today"], m["dec1b"]}},
		{"category array", "?categories[]=rock", "", []int64{m["dec1b"]}},
		{"tags OR", "?tags=late,festival", "", []int64{m["dec1"], m["multi"]}},
		{"venue", "?venue=" + strconv.FormatInt(m["venue:paris"], 10) + "," + strconv.FormatInt(m["venue:nogeo"], 10), "", []int64{m["today"], m["dec1b"]}},
		{"organizer", "?organizer=" + strconv.FormatInt(m["org:a"], 10), "", []int64{m["dec1"]}},
		{"featured true", "?featured=true", "", []int64{m["today"], m["secret"]}},
		{"featured false", "?featured=0", "", []int64{m["dec1"], m["dec1b"], m["child"], m["multi"]}},
		{"ticketed", "?ticketed=true", "", []int64{m["dec1b"]}},
		{"geoloc", "?geoloc=true", "", []int64{m["today"], m["dec1"]}},
		{"geo radius paris", "?geoloc_lat=48.85&geoloc_lng=2.35", "", []int64{m["today"]}},
		{"geo radius wide", "?geoloc_lat=50&geoloc_lng=1&geoloc_radius=400", "", []int64{m["today"], m["dec1"]}},
		{"search", "?search=festival", "", []int64{m["multi"]}},
		{"search words in different fields", "?search=long+multi", "", []int64{m["multi"]}},
		{"anonymous search skips protected", "?search=hidden", "", nil},
		{"editor search finds protected", "?search=hidden", "editor", []int64{m["secret"]}},
		{"include ignores dates", "?include=" + strconv.FormatInt(m["far"], 10) + "," + strconv.FormatInt(m["yesterday"], 10), "", []int64{m["yesterday"], m["far"]}},
		{"include keeps hidden out", "?include=" + strconv.FormatInt(m["hidden"], 10), "", nil},
		{"and across filters", "?featured=true&venue=" + strconv.FormatInt(m["venue:paris"], 10), "", []int64{m["today"]}},
	})
	e.run(t, []scenario{
		{name: "redacted protected event", method: "GET", url: "events?featured=1", status: 200, want: map[string]any{
			"events.1.title": "secret", "events.1.description": "", "events.1.featured": nil, "events.1.categories": []any{}, "events.1.image": false}},
		{name: "password unlocks", method: "GET", url: "events?featured=1&password=pw", status: 200, want: map[string]any{"events.1.description": "hidden words here"}},
		{name: "paging", method: "GET", url: "events?per_page=2&page=2&search=x&categories=jazz,rock", status: 404},
		{name: "totals and links", method: "GET", url: "events?per_page=2&page=2", status: 200, want: map[string]any{
			"total": 6, "total_pages": 3,
			"rest_url":          "http://example.test" + root + "/events/?page=2&per_page=2",
			"next_rest_url":     "http://example.test" + root + "/events/?per_page=2&page=3",
			"previous_rest_url": "http://example.test" + root + "/events/?per_page=2"},
			check: func(t *testing.T, r *resp) {
				for _, h := range []string{"X-TEC-Total", "X-WP-Total"} {
					if r.header.Get(h) != "6" {
						t.Errorf("%s = %q", h, r.header.Get(h))
					}
				}
				if r.header.Get("X-WP-TotalPages") != "3" {
					t.Errorf("X-WP-TotalPages = %q", r.header.Get("X-WP-TotalPages"))
				}
			}},
		{name: "links carry every filter", method: "GET", url: "events?per_page=1&categories=jazz&search=a%20b&strict_dates=true", status: 200,
			check: func(t *testing.T, r *resp) {
				for _, k := range []string{"rest_url", "next_rest_url"} {
					for _, frag := range []string{"categories=jazz", "search=a+b", "strict_dates=true", "per_page=1"} {
						if s := r.str(k); s != "" && !strings.Contains(s, frag) {
							t.Errorf("%s = %q lacks %s", k, s, frag)
						}
					}
				}
			}},
		{name: "past last page", method: "GET", url: "events?page=99", status: 404, want: map[string]any{"code": "event-archive-page-not-found"}},
		{name: "empty first page", method: "GET", url: "events?search=nomatchatall", status: 200, want: map[string]any{"total": 0, "total_pages": 0, "events": []any{}}},
		{name: "per_page clamped", method: "GET", url: "events?per_page=100", status: 200, want: map[string]any{"total_pages": 1}},
		{name: "bad page", method: "GET", url: "events?page=0", status: 400, want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"page"}},
		{name: "bad page text", method: "GET", url: "events?page=1.5", status: 400},
		{name: "bad date", method: "GET", url: "events?start_date=before+my+birthday", status: 400, contains: []string{"start_date"}},
		{name: "empty search", method: "GET", url: "events?search=", status: 400},
		{name: "unknown category", method: "GET", url: "events?categories=nope", status: 400, contains: []string{"categories"}},
		{name: "unknown venue", method: "GET", url: "events?venue=23", status: 400, contains: []string{"venue"}},
		{name: "venue foo", method: "GET", url: "events?venue=foo", status: 400},
		{name: "bad include", method: "GET", url: "events?include=foo-bar,23", status: 400, contains: []string{"include"}},
		{name: "bad post_parent", method: "GET", url: "events?post_parent=23", status: 400},
		{name: "anonymous draft status", method: "GET", url: "events?status=draft", status: 400, contains: []string{"status"}},
		{name: "anonymous publish,draft", method: "GET", url: "events?status=publish,draft", status: 400},
		{name: "unknown status for editor", method: "GET", url: "events?status=foo,publish", as: "editor", status: 400},
		{name: "lat without lng", method: "GET", url: "events?geoloc_lat=48", status: 400, contains: []string{"geoloc_lng"}},
		{name: "bad featured", method: "GET", url: "events?featured=maybe", status: 400},
		{name: "bad language", method: "GET", url: "events?multilang_language=xx", status: 400},
	})
}

func TestEventListLanguageAndSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Summer Party", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	e.must(200, "POST", "events/"+strconv.FormatInt(id, 10)+"?multilang_language=fr", "editor", map[string]any{"title": "Fête estivale"})
	e.flush()
	e.run(t, []scenario{
		{name: "french search", method: "GET", url: "events?multilang_language=fr&search=estivale", status: 200, want: map[string]any{"total": 1, "events.0.title": "Fête estivale"}},
		{name: "german falls back to english text", method: "GET", url: "events?multilang_language=de&search=summer", status: 200, want: map[string]any{"total": 1, "events.0.title": "Summer Party"}},
		{name: "english does not match french", method: "GET", url: "events?search=estivale", status: 200, want: map[string]any{"total": 0}},
		{name: "links keep language prefix", method: "GET", url: "/fr" + root + "/events", status: 200, want: map[string]any{"rest_url": "http://example.test/fr" + root + "/events/?page=1"}},
	})
	// Updates and trash reach the index.
	e.must(200, "PATCH", "events/"+strconv.FormatInt(id, 10), "editor", map[string]any{"featured": true})
	e.flush()
	if got := listIDs(e.must(200, "GET", "events?featured=true", "", nil), "events"); ids(got...) != ids(id) {
		t.Errorf("featured update not indexed: %v", got)
	}
	e.must(200, "DELETE", "events/"+strconv.FormatInt(id, 10), "editor", nil)
	e.flush()
	if got := e.must(200, "GET", "events", "editor", nil); got.num("total") != 0 {
		t.Errorf("trashed event still listed: %s", got.raw)
	}
}

func TestPlaceLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := listFixture(t, e)
	sorted := func(v []int64) []int64 {
		out := append([]int64(nil), v...)
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	get := func(q, as string) []int64 {
		t.Helper()
		return sorted(listIDs(e.must(200, "GET", q, as, nil), strings.SplitN(q, "?", 2)[0]))
	}
	v := func(names ...string) []int64 {
		var out []int64
		for _, n := range names {
			out = append(out, m[n])
		}
		return sorted(out)
	}
	runListCases(t, e, get, []listCase{
		{"all venues", "venues", "", v("venue:paris", "venue:london", "venue:nogeo")},
		{"search two words one field", "venues?search=temple+avenue", "", v("venue:paris")},
		{"search city", "venues?search=london", "", v("venue:london", "venue:nogeo")},
		{"event", "venues?event=" + strconv.FormatInt(m["dec1"], 10), "", v("venue:london")},
		{"event without venue", "venues?event=" + strconv.FormatInt(m["multi"], 10), "", nil},
		{"has_events", "venues?has_events=true", "", v("venue:paris", "venue:london", "venue:nogeo")},
		{"only_with_upcoming", "venues?only_with_upcoming=1", "", v("venue:london", "venue:nogeo")},
		{"organizers anonymous", "organizers", "", v("org:a")},
		{"organizers editor", "organizers", "editor", v("org:a", "org:b")},
		{"organizer email search", "organizers?search=common.com", "editor", v("org:a", "org:b")},
		{"organizer has_events false", "organizers?has_events=no", "editor", v("org:b")},
	})
	e.run(t, []scenario{
		{name: "order newest first", method: "GET", url: "venues", status: 200, check: func(t *testing.T, r *resp) {
			got := listIDs(r, "venues")
			if len(got) != 3 || got[0] < got[1] || got[1] < got[2] {
				t.Errorf("venues not newest first: %v", got)
			}
		}},
		{name: "past last page", method: "GET", url: "venues?page=5", status: 404, want: map[string]any{"code": "venue-archive-page-not-found"}},
		{name: "organizer past last page", method: "GET", url: "organizers?page=5", status: 404, want: map[string]any{"code": "organizer-archive-page-not-found"}},
		{name: "bad event", method: "GET", url: "venues?event=23", status: 400},
		{name: "anonymous draft", method: "GET", url: "organizers?status=draft", status: 400},
		{name: "totals", method: "GET", url: "venues?per_page=2", status: 200, want: map[string]any{"total": 3, "total_pages": 2}},
	})
	// Trashing a venue removes it from the list.
	e.must(200, "DELETE", "venues/"+strconv.FormatInt(m["venue:nogeo"], 10), "editor", nil)
	e.flush()
	if got := get("venues", ""); ids(got...) != ids(v("venue:paris", "venue:london")...) {
		t.Errorf("after trash: %v", got)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.doWith("GET", "events", "", nil, map[string]string{"Origin": "https://front.test"})
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Allow-Origin = %q", got)
	}
	exposed := r.header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{"X-TEC-Total", "X-TEC-TotalPages", "X-WP-Total", "X-WP-TotalPages"} {
		if !strings.Contains(exposed, h) {
			t.Errorf("Expose-Headers %q lacks %s", exposed, h)
		}
	}
	pre := e.doWith("OPTIONS", "events", "", nil, map[string]string{"Origin": "https://front.test",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "Authorization, Content-Type"})
	if pre.status != 204 || !strings.Contains(pre.header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(pre.header.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Errorf("preflight: %d %v", pre.status, pre.header)
	}
	restricted := newEnv(t, "CORS_ALLOWED_ORIGINS", "https://ok.test")
	if got := restricted.doWith("GET", "events", "", nil, map[string]string{"Origin": "https://evil.test"}).header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("foreign origin allowed: %q", got)
	}
	if got := restricted.doWith("GET", "events", "", nil, map[string]string{"Origin": "https://ok.test"}).header.Get("Access-Control-Allow-Origin"); got != "https://ok.test" {
		t.Errorf("listed origin = %q", got)
	}
}

// TestCORSWordPressHeaders: preflights for the headers WordPress frontends
// send (wp.apiFetch's X-WP-Nonce, jQuery's X-Requested-With) pass, and Link
// is exposed.
func TestCORSWordPressHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, h := range []string{"X-WP-Nonce", "X-Requested-With", "X-WP-Nonce, X-Requested-With, Content-Type"} {
		pre := e.doWith("OPTIONS", "events", "", nil, map[string]string{"Origin": "https://front.test",
			"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": h})
		allowed := strings.ToLower(pre.header.Get("Access-Control-Allow-Headers"))
		for _, want := range strings.Split(h, ",") {
			if !strings.Contains(allowed, strings.ToLower(strings.TrimSpace(want))) {
				t.Errorf("preflight for %q: Allow-Headers %q", h, allowed)
			}
		}
	}
	r := e.doWith("GET", "events", "", nil, map[string]string{"Origin": "https://front.test"})
	if !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Link") {
		t.Errorf("Link not exposed: %q", r.header.Get("Access-Control-Expose-Headers"))
	}
}

// TestLinkHeader: lists send their next and previous pages as an RFC 8288
// Link header, the same URLs as the body's links.
func TestLinkHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 5 {
		e.must(201, "POST", "events", "editor", map[string]any{"title": "Linked " + strconv.Itoa(i), "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"})
		e.must(201, "POST", "tags", "editor", map[string]any{"name": "linked" + strconv.Itoa(i)})
	}
	e.flush()
	cases := []struct {
		url        string
		next, prev bool
	}{
		{"events?per_page=2&start_date=2027-01-01", true, false},
		{"events?per_page=2&page=2&start_date=2027-01-01", true, true},
		{"events?per_page=2&page=3&start_date=2027-01-01", false, true},
		{"events?per_page=10&start_date=2027-01-01", false, false},
		{"tags?per_page=2&hide_empty=0", true, false},
		{"tags?per_page=2&page=2&hide_empty=0", true, true},
		{"tags?per_page=2&page=3&hide_empty=0", false, true},
	}
	for _, c := range cases {
		r := e.must(200, "GET", c.url, "", nil)
		link := r.header.Get("Link")
		var want []string
		if (c.prev && r.str("previous_rest_url") == "") || (c.next && r.str("next_rest_url") == "") {
			t.Fatalf("%s: the body lacks its page links: %s", c.url, r.raw)
		}
		if c.prev {
			want = append(want, "<"+r.str("previous_rest_url")+`>; rel="prev"`)
		}
		if c.next {
			want = append(want, "<"+r.str("next_rest_url")+`>; rel="next"`)
		}
		if link != strings.Join(want, ", ") {
			t.Errorf("%s: Link %q, want %q", c.url, link, strings.Join(want, ", "))
		}
	}
}

// TestFieldsOnLists pins the _fields forms of docs/frontend.md on lists: dotted paths
// reach into each item; bare item keys name list-level keys.
func TestFieldsOnLists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Fielded", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"})
	e.flush()
	if r := e.must(200, "GET", "events?start_date=2027-01-01&_fields=events.id,events.title,total", "", nil); r.raw != `{"events":[{"id":1,"title":"Fielded"}],"total":1}` {
		t.Errorf("dotted form: %s", r.raw)
	}
	if r := e.must(200, "GET", "events?start_date=2027-01-01&_fields=id,title", "", nil); r.raw != `{}` {
		t.Errorf("bare form: %s", r.raw)
	}
}
