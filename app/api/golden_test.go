package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// update rewrites the recorded responses (go test ./app/ -run TestGolden -update).
var update = flag.Bool("update", false, "rewrite app/testdata/golden from the current code")

// goldenStep is one request of a recorded session. Paths may name IDs saved
// by earlier steps as {name}.
type goldenStep struct {
	name    string
	method  string
	path    string
	as      string
	body    any
	headers map[string]string
	// save keeps the response's "id" under this name for later paths.
	save string
	// flush waits for the sync worker before the request (lists, search).
	flush bool
}

// goldenHeaders are the response headers recorded besides the status and
// body; Date and request IDs vary by nature and are left out.
var goldenHeaders = []string{
	"Allow", "Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Type", "ETag",
	"Last-Modified", "Link", "Location", "Retry-After", "Vary", "WWW-Authenticate",
	"X-WP-Total", "X-WP-TotalPages", "X-Cache", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods",
	"Access-Control-Expose-Headers", "Access-Control-Allow-Headers", "X-Content-Type-Options",
}

// TestGolden drives a fixed session of requests through the real server
// (every route of the interface, every role, JSON and iCalendar, the error
// paths) and compares status, headers and body bytes with the recorded ones
// in testdata/golden. The split of app (issue 22) must leave them unchanged.
func TestGolden(t *testing.T) {
	t.Parallel()
	sessions := []struct {
		name     string
		settings []string
		steps    []goldenStep
	}{
		{"main", nil, goldenMain()},
		{"writerate", []string{"WRITE_RATE", "0.001", "WRITE_BURST", "2"}, goldenWriteRate()},
	}
	for _, s := range sessions {
		t.Run(s.name, func(t *testing.T) {
			e := newEnv(t, s.settings...)
			got := runGolden(t, e, s.steps)
			file := filepath.Join("testdata", "golden", s.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update on the reference code)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("responses differ from %s:\n%s", file, firstDifference(want, got))
			}
		})
	}
}

// runGolden sends the steps and returns the transcript.
func runGolden(t *testing.T, e *env, steps []goldenStep) []byte {
	vars := map[string]string{}
	secrets := map[string]string{}
	for login, secret := range e.tokens {
		secrets[secret] = "<secret:" + login + ">"
		tok := &repository.Token{Hash: repository.HashToken(secret)}
		secrets[tok.ID()] = "<token-id:" + login + ">"
	}
	var out bytes.Buffer
	for i, st := range steps {
		if st.flush {
			e.flush()
		}
		path := st.path
		for k, v := range vars {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		reqBody := st.body
		switch b := reqBody.(type) {
		case map[string]any, []any:
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			for k, v := range vars {
				text = strings.ReplaceAll(text, `"{`+k+`}"`, v)
			}
			reqBody = text
		}
		e.t = t
		r := e.doWith(st.method, path, st.as, reqBody, st.headers)
		if st.save != "" {
			vars[st.save] = fmt.Sprint(r.id())
		}
		fmt.Fprintf(&out, "### %03d %s\n%s %s as %q\n%d\n", i, st.name, st.method, path, st.as, r.status)
		body := normaliseGolden(r.raw, secrets)
		for _, h := range goldenHeaders {
			if h == "ETag" && body != r.raw {
				continue // the tag of a body with random parts
			}
			if v := r.header.Values(h); len(v) > 0 {
				fmt.Fprintf(&out, "%s: %s\n", h, strings.Join(v, ", "))
			}
		}
		out.WriteString("\n")
		out.WriteString(body)
		out.WriteString("\n\n")
	}
	return out.Bytes()
}

var (
	goldenTokenSecret = regexp.MustCompile(`"(token|secret)":"[^"]*"`)
	goldenTokenID     = regexp.MustCompile(`"id":"[0-9a-f]{12,}"`)
	// goldenBatch is the sync worker's last batch: its size depends on how
	// the worker's wake-ups fell between the writes.
	goldenBatch = regexp.MustCompile(`"last_batch_size":[0-9]+`)
)

// normaliseGolden replaces what is random by nature (token secrets and the
// token IDs derived from them, generated webhook secrets) or depends on
// timing (the sync worker's last batch size).
func normaliseGolden(body string, secrets map[string]string) string {
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		body = strings.ReplaceAll(body, k, secrets[k])
	}
	body = goldenTokenSecret.ReplaceAllString(body, `"$1":"<random>"`)
	body = goldenTokenID.ReplaceAllString(body, `"id":"<random>"`)
	return goldenBatch.ReplaceAllString(body, `"last_batch_size":"<timing>"`)
}

// firstDifference shows the recorded step where got first departs from want.
func firstDifference(want, got []byte) string {
	ws, gs := strings.Split(string(want), "\n### "), strings.Split(string(got), "\n### ")
	for i := 0; i < len(ws) || i < len(gs); i++ {
		var w, g string
		if i < len(ws) {
			w = ws[i]
		}
		if i < len(gs) {
			g = gs[i]
		}
		if w != g {
			return fmt.Sprintf("want:\n%.3000s\n\ngot:\n%.3000s", w, g)
		}
	}
	return "(equal?)"
}

// goldenMain is the main session: every route, every role.
func goldenMain() []goldenStep {
	roles := []string{"", "contributor", "author", "editor", "admin"}
	ev := func(title, start string, extra map[string]any) map[string]any {
		m := map[string]any{"title": title, "start_date": start, "end_date": start[:10] + " 23:00"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	steps := []goldenStep{
		{name: "index", method: "GET", path: ""},
		{name: "index fr", method: "GET", path: "?multilang_language=fr"},
		{name: "doc", method: "GET", path: "doc"},
		{name: "options events", method: "OPTIONS", path: "events"},
		{name: "options event", method: "OPTIONS", path: "events/12"},
		{name: "options nothing", method: "OPTIONS", path: "nothing/here"},
		{name: "no route", method: "GET", path: "nothing"},
		{name: "id not digits", method: "GET", path: "events/abc"},

		// Terms.
		{name: "create category", method: "POST", path: "categories", as: "editor", body: map[string]any{"name": "Music", "description": "<b>Live</b> music"}, save: "cat"},
		{name: "create child category", method: "POST", path: "categories", as: "admin", body: map[string]any{"name": "Jazz", "parent": "{cat}"}, save: "cat2"},
		{name: "create tag", method: "POST", path: "tags", as: "editor", body: map[string]any{"name": "Free", "slug": "free"}, save: "tag"},
		{name: "create tag author", method: "POST", path: "tags", as: "author", body: map[string]any{"name": "Outdoor"}},
		{name: "create category contributor", method: "POST", path: "categories", as: "contributor", body: map[string]any{"name": "Nope"}},
		{name: "create category anonymous", method: "POST", path: "categories", body: map[string]any{"name": "Nope"}},
		{name: "create category no name", method: "POST", path: "categories", as: "editor", body: map[string]any{"description": "x"}},

		// Venues and organizers.
		{name: "create venue", method: "POST", path: "venues", as: "editor", body: map[string]any{"venue": "Town Hall", "address": "1 Main St", "city": "Utrecht", "country": "Netherlands", "zip": "3511", "phone": "+31 30 123 4567", "website": "https://hall.example"}, save: "venue"},
		{name: "create venue author", method: "POST", path: "venues", as: "author", body: map[string]any{"venue": "Barn", "city": "Gouda", "status": "draft"}, save: "venue2"},
		{name: "create venue duplicate", method: "POST", path: "venues", as: "editor", body: map[string]any{"venue": "Town Hall", "address": "1 Main St", "city": "Utrecht", "country": "Netherlands", "zip": "3511", "phone": "+31 30 123 4567", "website": "https://hall.example"}},
		{name: "create venue bad phone", method: "POST", path: "venues", as: "editor", body: map[string]any{"venue": "X", "phone": "call me"}},
		{name: "create organizer", method: "POST", path: "organizers", as: "editor", body: map[string]any{"organizer": "Friends of Jazz", "email": "jazz@example.org", "phone": "123", "website": "https://jazz.example"}, save: "org"},
		{name: "create organizer contributor", method: "POST", path: "organizers", as: "contributor", body: map[string]any{"organizer": "Cora"}, save: "org2"},
		{name: "create organizer bad email", method: "POST", path: "organizers", as: "editor", body: map[string]any{"organizer": "X", "email": "nope"}},

		// Events.
		{name: "create event", method: "POST", path: "events", as: "editor", body: ev("Jazz night", "2026-12-05 20:00", map[string]any{
			"description": "<p>Swing <script>alert(1)</script></p>", "excerpt": "Swing", "venue": "{venue}", "organizer": []any{"{org}"},
			"categories": []any{"{cat}", "{cat2}"}, "tags": []any{"{tag}"}, "cost": "10", "featured": true, "website": "https://jazz.example/night",
			"timezone": "Europe/Amsterdam", "image": "https://img.example/a.jpg"}), save: "ev"},
		{name: "create all-day event", method: "POST", path: "events", as: "editor", body: ev("Fair", "2026-12-10 00:00", map[string]any{
			"all_day": true, "cost": []any{"5", "15"}, "slug": "fair", "tags": []any{"Outdoor", "new tag"}}), save: "ev2"},
		{name: "create event author", method: "POST", path: "events", as: "author", body: ev("Author show", "2026-12-12 18:00", map[string]any{"venue": "{venue2}"}), save: "ev3"},
		{name: "create event contributor draft", method: "POST", path: "events", as: "contributor", body: ev("Contrib draft", "2026-12-14 18:00", map[string]any{"organizer": "{org2}"}), save: "ev4"},
		{name: "create event contributor publish", method: "POST", path: "events", as: "contributor", body: ev("Contrib pub", "2026-12-14 18:00", map[string]any{"status": "publish"})},
		{name: "create event password", method: "POST", path: "events", as: "editor", body: ev("Secret", "2026-12-20 10:00", map[string]any{"password": "s3cret", "description": "hidden", "slug": "secret"}), save: "ev5"},
		{name: "create event past", method: "POST", path: "events", as: "admin", body: ev("Past", "2026-10-01 10:00", map[string]any{"cost": "free"}), save: "ev6"},
		{name: "create event anonymous", method: "POST", path: "events", body: ev("Anon", "2026-12-01 10:00", nil)},
		{name: "create event bad token", method: "POST", path: "events", as: "token:nope", body: ev("Anon", "2026-12-01 10:00", nil)},
		{name: "create event missing", method: "POST", path: "events", as: "editor", body: map[string]any{"title": "x"}},
		{name: "create event end before start", method: "POST", path: "events", as: "editor", body: map[string]any{"title": "x", "start_date": "2026-12-02", "end_date": "2026-12-01"}},
		{name: "create event bad date", method: "POST", path: "events", as: "editor", body: map[string]any{"title": "x", "start_date": "2026-02-30", "end_date": "2026-03-01"}},
		{name: "create event bad json", method: "POST", path: "events", as: "editor", body: `{"title": `},
		{name: "create event 415", method: "POST", path: "events", as: "editor", body: "title=x", headers: map[string]string{"Content-Type": "text/plain"}},
		{name: "create event form", method: "POST", path: "events", as: "editor", body: url.Values{"title": {"Form"}, "start_date": {"2026-12-24 10:00"}, "end_date": {"2026-12-24 12:00"}}, save: "ev7"},
		{name: "create event unknown venue", method: "POST", path: "events", as: "editor", body: ev("x", "2026-12-01 10:00", map[string]any{"venue": 999999})},
		{name: "create event fr", method: "POST", path: "events?multilang_language=fr", as: "editor", body: ev("Fête", "2026-12-06 10:00", nil), save: "ev8"},
		{name: "translate event", method: "POST", path: "events/{ev}?multilang_language=fr", as: "editor", body: map[string]any{"title": "Soirée jazz"}},
	}
	for _, as := range roles {
		steps = append(steps,
			goldenStep{name: "read event " + as, method: "GET", path: "events/{ev}", as: as},
			goldenStep{name: "read draft " + as, method: "GET", path: "events/{ev4}", as: as},
			goldenStep{name: "read author event " + as, method: "GET", path: "events/{ev3}", as: as},
			goldenStep{name: "list events " + as, method: "GET", path: "events", as: as, flush: true},
			goldenStep{name: "list draft events " + as, method: "GET", path: "events?status=draft", as: as},
			goldenStep{name: "read draft venue " + as, method: "GET", path: "venues/{venue2}", as: as},
			goldenStep{name: "list venues " + as, method: "GET", path: "venues", as: as},
			goldenStep{name: "list organizers " + as, method: "GET", path: "organizers", as: as},
			goldenStep{name: "update draft " + as, method: "PATCH", path: "events/{ev4}", as: as, body: map[string]any{"excerpt": "edited by " + as}},
			goldenStep{name: "update author event " + as, method: "POST", path: "events/{ev3}", as: as, body: map[string]any{"featured": true}},
			goldenStep{name: "admin users " + as, method: "GET", path: "admin/users", as: as},
		)
	}
	steps = append(steps, []goldenStep{
		{name: "language prefix", method: "GET", path: "/fr" + root + "/events/{ev}"},
		{name: "language prefix list", method: "GET", path: "/fr" + root + "/events?per_page=2"},
		{name: "language prefix and parameter", method: "GET", path: "/fr" + root + "/events/{ev}?multilang_language=en"},
		{name: "fields", method: "GET", path: "events/{ev}?_fields=id,title,venue.venue"},
		{name: "envelope", method: "GET", path: "events?_envelope=1&per_page=1"},
		{name: "method override query", method: "POST", path: "events/{ev}?_method=GET"},
		{name: "form update", method: "PATCH", path: "events/{ev2}", as: "editor", body: url.Values{"excerpt": {"Form excerpt"}, "tags[]": {"Free", "Outdoor"}}},
		{name: "read by slug", method: "GET", path: "events/by-slug/fair"},
		{name: "read by slug missing", method: "GET", path: "events/by-slug/none"},
		{name: "read missing", method: "GET", path: "events/999999"},
		{name: "read fr", method: "GET", path: "events/{ev}?multilang_language=fr"},
		{name: "read bad language", method: "GET", path: "events/{ev}?multilang_language=xx"},
		{name: "head event", method: "HEAD", path: "events/{ev}"},
		{name: "read again (cache)", method: "GET", path: "events/{ev}"},
		{name: "conditional read", method: "GET", path: "events/{ev}", headers: map[string]string{"If-None-Match": "*"}},
		{name: "password none", method: "GET", path: "events/{ev5}"},
		{name: "password wrong", method: "GET", path: "events/{ev5}?password=nope"},
		{name: "password right", method: "GET", path: "events/{ev5}?password=s3cret"},
		{name: "password slug", method: "GET", path: "events/by-slug/secret?password=s3cret"},
		{name: "read venue", method: "GET", path: "venues/{venue}"},
		{name: "read venue slug", method: "GET", path: "venues/by-slug/town-hall"},
		{name: "read organizer", method: "GET", path: "organizers/{org}"},
		{name: "read organizer slug", method: "GET", path: "organizers/by-slug/friends-of-jazz"},
		{name: "read category", method: "GET", path: "categories/{cat}"},
		{name: "read tag", method: "GET", path: "tags/{tag}"},
		{name: "read tag missing", method: "GET", path: "tags/999999"},
		{name: "list categories", method: "GET", path: "categories", flush: true},
		{name: "list categories hide_empty", method: "GET", path: "categories?hide_empty=true&orderby=count&order=desc"},
		{name: "list tags", method: "GET", path: "tags?per_page=2&page=2"},
		{name: "list tags search", method: "GET", path: "tags?search=fr"},
		{name: "list tags bad page", method: "GET", path: "tags?page=0"},

		// Event lists and search.
		{name: "list page 2", method: "GET", path: "events?per_page=2&page=2", flush: true},
		{name: "list page too far", method: "GET", path: "events?per_page=2&page=50"},
		{name: "list start_date", method: "GET", path: "events?start_date=2026-12-08&end_date=2026-12-31"},
		{name: "list phrase dates", method: "GET", path: "events?start_date=tomorrow&end_date=next month"},
		{name: "list past", method: "GET", path: "events?start_date=2026-01-01&end_date=2026-11-01"},
		{name: "list bad date", method: "GET", path: "events?start_date=someday"},
		{name: "list search", method: "GET", path: "events?search=jazz"},
		{name: "list search facets", method: "GET", path: "events?search=jazz&facets=categories,tags"},
		{name: "list categories filter", method: "GET", path: "events?categories={cat}"},
		{name: "list tags filter slug", method: "GET", path: "events?tags=free"},
		{name: "list unknown tag", method: "GET", path: "events?tags=nope"},
		{name: "list venue filter", method: "GET", path: "events?venue={venue}"},
		{name: "list organizer filter", method: "GET", path: "events?organizer={org}"},
		{name: "list featured", method: "GET", path: "events?featured=true"},
		{name: "list geo", method: "GET", path: "events?geoloc=1&geoloc_lat=52&geoloc_lng=5"},
		{name: "list bad per_page", method: "GET", path: "events?per_page=abc"},
		{name: "list fr", method: "GET", path: "events?multilang_language=fr"},
		{name: "list status any editor", method: "GET", path: "events?status=publish,draft,pending", as: "editor"},
		{name: "list venues search", method: "GET", path: "venues?search=hall"},
		{name: "list organizers page", method: "GET", path: "organizers?per_page=1"},

		// iCalendar.
		{name: "feed", method: "GET", path: "events.ics"},
		{name: "feed editor", method: "GET", path: "events.ics", as: "editor"},
		{name: "feed dates", method: "GET", path: "events.ics?start_date=2026-12-08"},
		{name: "feed one", method: "GET", path: "events/{ev}.ics"},
		{name: "feed one all-day", method: "GET", path: "events/{ev2}.ics"},
		{name: "feed draft anonymous", method: "GET", path: "events/{ev4}.ics"},
		{name: "feed password", method: "GET", path: "events/{ev5}.ics"},
		{name: "feed accept", method: "GET", path: "events", headers: map[string]string{"Accept": "text/calendar"}},

		// Updates by slug and deletes.
		{name: "update by slug", method: "PUT", path: "events/by-slug/fair", as: "editor", body: map[string]any{"featured": false, "excerpt": "All day"}},
		{name: "update venue by slug", method: "PATCH", path: "venues/by-slug/town-hall", as: "editor", body: map[string]any{"city": "Amersfoort"}},
		{name: "update organizer", method: "POST", path: "organizers/{org}", as: "editor", body: map[string]any{"phone": "456"}},
		{name: "update organizer slug author", method: "POST", path: "organizers/by-slug/friends-of-jazz", as: "author", body: map[string]any{"phone": "789"}},
		{name: "update category", method: "POST", path: "categories/{cat2}", as: "editor", body: map[string]any{"description": "Cool"}},
		{name: "update category self parent", method: "POST", path: "categories/{cat2}", as: "editor", body: map[string]any{"parent": "{cat2}"}},
		{name: "update tag author", method: "PATCH", path: "tags/{tag}", as: "author", body: map[string]any{"name": "Gratis"}},
		{name: "update event bad status", method: "POST", path: "events/{ev}", as: "editor", body: map[string]any{"status": "weird"}},
		{name: "delete event contributor", method: "DELETE", path: "events/{ev}", as: "contributor"},
		{name: "delete event anonymous", method: "DELETE", path: "events/{ev}"},
		{name: "trash event", method: "DELETE", path: "events/{ev7}", as: "editor"},
		{name: "trash event again", method: "DELETE", path: "events/{ev7}", as: "editor"},
		{name: "force delete event", method: "DELETE", path: "events/{ev7}?force=true", as: "editor"},
		{name: "delete by slug", method: "DELETE", path: "events/by-slug/fair?force=true", as: "admin"},
		{name: "trash venue by slug", method: "DELETE", path: "venues/by-slug/barn", as: "editor"},
		{name: "delete organizer", method: "DELETE", path: "organizers/{org2}?force=true", as: "editor"},
		{name: "delete organizer slug", method: "DELETE", path: "organizers/by-slug/nobody", as: "editor"},
		{name: "delete tag", method: "DELETE", path: "tags/{tag}", as: "editor"},
		{name: "delete category author", method: "DELETE", path: "categories/{cat2}", as: "author"},
		{name: "delete category", method: "DELETE", path: "categories/{cat2}?force=true", as: "editor"},
		{name: "list after deletes", method: "GET", path: "events", flush: true},
		{name: "list trash editor", method: "GET", path: "events?status=trash", as: "editor"},

		// Admin.
		{name: "reindex start", method: "POST", path: "admin/reindex", as: "admin"},
		{name: "reindex get", method: "GET", path: "admin/reindex", as: "admin"},
		{name: "reindex cancel", method: "DELETE", path: "admin/reindex", as: "admin"},
		{name: "reindex editor", method: "POST", path: "admin/reindex", as: "editor"},
		{name: "sync status", method: "GET", path: "admin/sync", as: "admin", flush: true},
		{name: "sync status editor", method: "GET", path: "admin/sync", as: "editor"},
		{name: "users", method: "GET", path: "admin/users", as: "admin"},
		{name: "user role", method: "PATCH", path: "admin/users/1", as: "admin", body: map[string]any{"role": "author"}},
		{name: "user bad role", method: "PATCH", path: "admin/users/1", as: "admin", body: map[string]any{"role": "king"}},
		{name: "user missing", method: "PATCH", path: "admin/users/999", as: "admin", body: map[string]any{"disabled": true}},
		{name: "user editor", method: "PATCH", path: "admin/users/1", as: "editor", body: map[string]any{"role": "admin"}},
		{name: "tokens of user", method: "GET", path: "admin/tokens?user=5", as: "admin"},
		{name: "tokens of another user", method: "GET", path: "admin/tokens?user=6", as: "admin"},
		{name: "tokens editor", method: "GET", path: "admin/tokens", as: "editor"},
		{name: "token create", method: "POST", path: "admin/tokens", as: "admin", body: map[string]any{"user": 2, "name": "ci", "expires_in": 3600}},
		{name: "token create no user", method: "POST", path: "admin/tokens", as: "admin", body: map[string]any{"user": 999}},
		{name: "token create short", method: "POST", path: "admin/tokens", as: "admin", body: map[string]any{"user": 2, "expires_in": 5}},
		{name: "token revoke missing", method: "DELETE", path: "admin/tokens/abc", as: "admin"},
		{name: "webhooks", method: "GET", path: "admin/webhooks", as: "admin"},
		{name: "webhook create", method: "POST", path: "admin/webhooks", as: "admin", body: map[string]any{"url": "https://hooks.example/in", "events": []any{"event.created"}, "secret": "whsec_MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIz", "description": "CI"}, save: "hook"},
		{name: "webhook create private", method: "POST", path: "admin/webhooks", as: "admin", body: map[string]any{"url": "http://127.0.0.1/x"}},
		{name: "webhook create bad event", method: "POST", path: "admin/webhooks", as: "admin", body: map[string]any{"url": "https://hooks.example/in", "events": []any{"nope"}}},
		{name: "webhook create editor", method: "POST", path: "admin/webhooks", as: "editor", body: map[string]any{"url": "https://hooks.example/in"}},
		{name: "webhook get", method: "GET", path: "admin/webhooks/{hook}", as: "admin"},
		{name: "webhook update", method: "PATCH", path: "admin/webhooks/{hook}", as: "admin", body: map[string]any{"active": false, "description": "off"}},
		{name: "webhook deliveries", method: "GET", path: "admin/webhooks/{hook}/deliveries", as: "admin"},
		{name: "webhook deliveries bad", method: "GET", path: "admin/webhooks/{hook}/deliveries?per_page=0", as: "admin"},
		{name: "webhook ping missing", method: "POST", path: "admin/webhooks/999/ping", as: "admin"},
		{name: "webhook missing", method: "GET", path: "admin/webhooks/999", as: "admin"},
		{name: "webhook delete", method: "DELETE", path: "admin/webhooks/{hook}", as: "admin"},
		{name: "webhooks after", method: "GET", path: "admin/webhooks", as: "admin"},
		{name: "method override", method: "POST", path: "events/{ev3}", as: "editor", headers: map[string]string{"X-HTTP-Method-Override": "DELETE"}},
		{name: "unknown method", method: "PROPFIND", path: "events"},
		{name: "wrong method", method: "PUT", path: "events", as: "editor"},
	}...)
	return steps
}

// goldenWriteRate records the 429 of the write bound.
func goldenWriteRate() []goldenStep {
	v := func(n string) map[string]any { return map[string]any{"venue": n} }
	return []goldenStep{
		{name: "first", method: "POST", path: "venues", as: "author", body: v("A1")},
		{name: "second", method: "POST", path: "venues", as: "author", body: v("A2")},
		{name: "third refused", method: "POST", path: "venues", as: "author", body: v("A3")},
		{name: "editor unbounded", method: "POST", path: "venues", as: "editor", body: v("E1")},
	}
}
