package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/repository"
)

// fuzzRoute is one route the fuzzer drives.
type fuzzRoute struct{ method, path string }

// fuzzRoles are the callers: anonymous, then each role.
var fuzzRoles = []string{"", "contributor", "author", "editor", "admin"}

// fuzzContentTypes are the body encodings sent.
var fuzzContentTypes = []string{"application/json", "application/x-www-form-urlencoded", "", "text/plain"}

// markup matches an HTML tag opening, closing or comment.
var markup = regexp.MustCompile(`<[a-zA-Z/!?]`)

// unsafeHTML matches a script element, an event handler attribute or a
// javascript: URL in an attribute.
var unsafeHTML = regexp.MustCompile(`(?i)<script|<[^>]*\son[a-z]+\s*=|<[^>]*(href|src|action)\s*=\s*["']?\s*javascript:`)

// FuzzRequests drives the request decoding (JSON, form and query
// parameters) and the parameter validation of every write route and every
// list with arbitrary input, as every role. Whatever is sent, the answer is
// a success or a 4xx in the error envelope (never a 5xx: a recovered panic
// is a 500), always JSON; and what a contributor or author stores keeps no
// script and no markup in plain fields (docs/editors.md, "HTML policy").
//
// The seed corpus runs in go test ./...; fuzz with
//
//	go test ./app -run XXX -fuzz FuzzRequests -fuzztime 5m
func FuzzRequests(f *testing.F) {
	e := newEnv(f)
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Base", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	ve := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Base hall"}).id()
	or := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Base org"}).id()
	cat := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Base cat"}).id()
	tag := e.must(201, "POST", "tags", "editor", map[string]any{"name": "Base tag"}).id()
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	routes := []fuzzRoute{
		{"GET", "/events"}, {"GET", "/venues"}, {"GET", "/organizers"}, {"GET", "/categories"}, {"GET", "/tags"},
		{"POST", "/events"}, {"POST", "/venues"}, {"POST", "/organizers"}, {"POST", "/categories"}, {"POST", "/tags"},
		{"PATCH", "/events/" + id(ev)}, {"PUT", "/venues/" + id(ve)}, {"POST", "/organizers/" + id(or)},
		{"PATCH", "/categories/" + id(cat)}, {"PATCH", "/tags/" + id(tag)},
		{"PATCH", "/events/by-slug/base"}, {"PATCH", "/venues/by-slug/base-hall"}, {"PATCH", "/organizers/by-slug/base-org"},
		{"DELETE", "/events/" + id(ev)}, {"DELETE", "/venues/" + id(ve)}, {"DELETE", "/categories/" + id(cat)},
		{"GET", "/events/" + id(ev)}, {"GET", "/venues/by-slug/base-hall"},
	}
	seeds := []struct {
		route       int
		query, body string
	}{
		{0, "page=2&per_page=3&start_date=2026-01-01&search=jazz&categories=base-cat&geoloc_lat=1&geoloc_lng=2", ""},
		{0, "page=9223372036854775807&per_page=9223372036854775807", ""},
		{0, "start_date=99999999999999&include=1,2,3", ""},
		{1, "search=hall&has_events=1&only_with_upcoming=yes", ""},
		{3, "page=9223372036854775807&hide_empty=0&orderby=count&order=desc", ""},
		{4, "offset=9223372036854775807&include=" + id(tag) + "&hide_empty=0", ""},
		{5, "", `{"title":"<b>T</b><script>x</script>","description":"<p onclick=x>d</p><a href=\"javascript:x\">l</a>","start_date":"2026-12-01","end_date":"2026-12-02","categories":["New","` + id(cat) + `"],"venue":{"venue":"<i>V</i>"},"organizer":[` + id(or) + `],"cost":["1","<b>2</b>"]}`},
		{5, "", `{"title":"T","start_date":"99999999999999","end_date":"2026-12-01"}`},
		{5, "", `title=Form&start_date=tomorrow&end_date=%2B2+days&tags[]=a&tags[]=b&venue[venue]=Inline`},
		{5, "", `{"title":"T","start_date":"2026-12-01","end_date":"2026-12-01","venue":[1,2,3,4,5,6,7,8,9,10,11]}`},
		{6, "", `{"venue":"Hall","address":"<b>1</b> Main","geo_lat":"91","geo_lng":-181,"website":"https://x.test"}`},
		{7, "", `{"organizer":"O","email":"a@b.test","phone":"<script>1</script>"}`},
		{8, "", `{"name":"<b>C</b>","description":"<script>x</script>d","parent":` + id(cat) + `}`},
		{9, "", `{"name":"T","slug":"` + strings.Repeat("s", 300) + `"}`},
		{10, "", `{"date":"1000-01-01","excerpt":"<iframe src=x></iframe>e","all_day":true}`},
		{11, "_method=PATCH", `{"venue":"` + strings.Repeat("v", 1001) + `"}`},
		{13, "", `{"parent":` + id(cat) + `}`},
		{15, "", `{"title":"Renamed","status":"publish"}`},
		{18, "force=true", ""},
		{21, "password=x&context=edit", ""},
		{5, "", `{"title":`},
		{5, "", `[1,2]`},
		{5, "", "{\"title\":\"\x00\",\"start_date\":\"\",\"end_date\":null}"},
	}
	for _, s := range seeds {
		for role := range fuzzRoles {
			f.Add(uint8(s.route), uint8(role), uint8(0), s.query, []byte(s.body))
		}
		if strings.Contains(s.body, "&") && !strings.HasPrefix(s.body, "{") {
			f.Add(uint8(s.route), uint8(3), uint8(1), s.query, []byte(s.body))
		}
	}
	f.Fuzz(func(t *testing.T, route, role, ctype uint8, query string, body []byte) {
		rt := routes[int(route)%len(routes)]
		as := fuzzRoles[int(role)%len(fuzzRoles)]
		ct := fuzzContentTypes[int(ctype)%len(fuzzContentTypes)]
		req, err := http.NewRequest(rt.method, "http://example.test"+root+rt.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = escapeQuery(query)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if as != "" {
			req.Header.Set("Authorization", "Bearer "+e.tokens[as])
		}
		res, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s?%s as %q: %d, not a JSON object: %.300s", rt.method, rt.path, req.URL.RawQuery, as, res.StatusCode, raw)
		}
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s?%s as %q body %.300q: %d %.300s", rt.method, rt.path, req.URL.RawQuery, as, body, res.StatusCode, raw)
		}
		if res.StatusCode >= 400 {
			if code, _ := out["code"].(string); code == "" {
				t.Fatalf("%d without the error envelope: %.300s", res.StatusCode, raw)
			}
			return
		}
		if rt.method == "GET" || rt.method == "DELETE" || (as != "contributor" && as != "author") {
			return
		}
		for _, field := range []string{"title", "venue", "organizer", "name", "address", "city", "phone", "email"} {
			if s, ok := out[field].(string); ok && markup.MatchString(s) {
				t.Fatalf("%s by %s kept markup: %q", field, as, s)
			}
		}
		for _, field := range []string{"description", "excerpt"} {
			if s, ok := out[field].(string); ok && unsafeHTML.MatchString(s) {
				t.Fatalf("%s by %s kept a script: %q", field, as, s)
			}
		}
	})
}

// escapeQuery percent-encodes the bytes a request line cannot carry.
func escapeQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= 0x20 || c >= 0x7f || c == '#' || c == '%' && !validEscape(q, i) {
			b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// validEscape reports whether q[i:] starts with %XX.
func validEscape(q string, i int) bool {
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	return i+2 < len(q) && isHex(q[i+1]) && isHex(q[i+2])
}

// FuzzEventFeed writes an event whose title, description, venue, category
// and organizer name are arbitrary (as an editor, whose text is stored as
// sent), stores an arbitrary organizer e-mail directly (as data from before
// write validation), optionally makes the venue and organizer drafts, and
// reads the event's single and list iCalendar feeds as a fuzzed role. Each
// feed holds exactly one VEVENT, its lines are folded CRLF lines of at
// most 75 octets, SUMMARY reads back as the stored title, ORGANIZER is
// never anything but one mailto: address, and a draft venue or organizer
// shows only to a reader who may read it.
//
// The seed corpus runs in go test ./...; fuzz with
//
//	go test ./app -run XXX -fuzz FuzzEventFeed -fuzztime 2m
func FuzzEventFeed(f *testing.F) {
	e := newEnv(f)
	for _, h := range append([]string{"plain", "", "\x00\xff"}, hostileTexts...) {
		f.Add(h, h, h, h, h, "a@b.c\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged", false, uint8(0))
		f.Add("T"+h, "D"+h, "V"+h, "K"+h, "O"+h, "ok@example.test", true, uint8(3))
	}
	f.Add("T", "D", "V", "K", "O", "ok@example.test", true, uint8(0))
	n := 0
	f.Fuzz(func(t *testing.T, title, desc, venue, cat, org, email string, draft bool, role uint8) {
		// The harness reports through e.t: this iteration's t (iterations
		// of one process run one at a time).
		e.t = t
		n++
		as := feedRoles[int(role)%len(feedRoles)]
		status := "publish"
		if draft {
			status = "draft"
		}
		mark := "#" + strconv.Itoa(n)
		v := e.do("POST", "venues", "editor", map[string]any{"venue": "V" + mark + venue, "status": status})
		o := e.do("POST", "organizers", "editor", map[string]any{"organizer": "O" + mark + org, "status": status, "email": "ok@example.test"})
		if v.status != 201 || o.status != 201 {
			t.Skipf("venue %d, organizer %d", v.status, o.status) // refused input: nothing to render
		}
		if _, err := e.store.UpdateRecord(context.Background(), o.id(), func(p *repository.Record) error {
			p.Organizer.Email = email
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ev := e.do("POST", "events", "editor", map[string]any{"title": "T" + mark + title, "description": desc,
			"start_date": "2027-04-01 10:00", "end_date": "2027-04-01 11:00", "venue": v.id(), "organizer": []int64{o.id()},
			"categories": []string{"K" + mark + cat}})
		if ev.status != 201 {
			t.Skipf("event %d", ev.status)
		}
		id := strconv.FormatInt(ev.id(), 10)
		e.flush()
		item := e.must(200, "GET", "events/"+id, as, nil)
		sees := !draft || as == "editor" || as == "admin"
		for _, url := range []string{"events/" + id + ".ics", "events.ics?include=" + id} {
			r := e.do("GET", url, as, nil)
			if r.status != 200 {
				t.Fatalf("%s as %q: %d %s", url, as, r.status, r.raw)
			}
			got := parseStrict(t, r.raw, 1)[uidOf(ev.id())]
			if got == nil {
				t.Fatalf("%s: event missing", url)
			}
			if s, err := got.Props.Text("SUMMARY"); err != nil || s != feedText(ical.PlainText(item.str("title"))) {
				t.Errorf("%s: SUMMARY %q (%v), stored %q", url, s, err, item.str("title"))
			}
			if loc, _ := got.Props.Text("LOCATION"); strings.Contains(loc, "V"+mark) != sees {
				t.Errorf("%s as %q: LOCATION %q; draft %v", url, as, loc, draft)
			}
			for _, p := range got.Props.Values("ORGANIZER") {
				if !sees || !strings.HasPrefix(p.Value, "mailto:") || strings.ContainsFunc(p.Value, func(r rune) bool { return r <= ' ' || r == '"' }) {
					t.Errorf("%s as %q: ORGANIZER %q (draft %v, stored %q)", url, as, p.Value, draft, email)
				}
			}
		}
	})
}
