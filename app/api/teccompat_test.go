package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// statusFields matches the event fields only our root writes
// (event_status, event_status_reason and source).
var statusFields = regexp.MustCompile(`,"event_status":"[a-z_]*","event_status_reason":"(?:[^"\\]|\\.)*","source":(?:null|\{"id":[0-9]+,"uid":"(?:[^"\\]|\\.)*"\})`)

// tecRoot is The Events Calendar's own root, served too with TEC_COMPAT.
const tecRoot = "/wp-json/tribe/events/v1"

// TestTECCompat: with TEC_COMPAT=true every route answers under
// /wp-json/tribe/events/v1 as well, with the same body except that its
// links use that root (and its json_ld has the original's performer);
// without it that root is no route.
func TestTECCompat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	venue := e.must(http.StatusCreated, "POST", tecRoot+"/venues", "editor", map[string]any{"venue": "Paradiso", "city": "Amsterdam"})
	cat := e.must(http.StatusCreated, "POST", root+"/categories", "editor", map[string]any{"name": "Concerts"})
	ev := e.must(http.StatusCreated, "POST", tecRoot+"/events", "editor", map[string]any{
		"title": "Jazz night", "start_date": "2030-03-12 20:00", "end_date": "2030-03-12 23:00",
		"venue": venue.id(), "categories": []any{cat.id()}, "tags": []any{"jazz"}})
	if got := ev.str("rest_url"); got != fmt.Sprintf("http://example.test%s/events/%d", tecRoot, ev.id()) {
		t.Errorf("rest_url of an event created under the TEC root = %q", got)
	}
	e.flush()
	// Nested venues and organizers name their author as the original's
	// do: the user ID as a string.
	single := e.must(http.StatusOK, "GET", fmt.Sprintf("%s/events/%d", tecRoot, ev.id()), "", nil)
	if a, ok := single.path("venue.author").(string); !ok || a == "" || a == "0" {
		t.Errorf("nested venue author %v, want the user ID as a string", single.path("venue.author"))
	}
	same := func(t *testing.T, path, as string) {
		t.Helper()
		ours := e.must(http.StatusOK, "GET", root+path, as, nil)
		theirs := e.must(http.StatusOK, "GET", tecRoot+path, as, nil)
		if !strings.Contains(theirs.raw, "http://example.test"+tecRoot+"/") && strings.Contains(ours.raw, "http://example.test"+root+"/") {
			t.Errorf("GET %s under the TEC root has no link under it:\n%s", path, theirs.raw)
		}
		if strings.Contains(theirs.raw, "http://example.test"+root) {
			t.Errorf("GET %s under the TEC root links to the other root:\n%s", path, theirs.raw)
		}
		// Events under our root carry event_status,
		// event_status_reason and source; the original's have no such
		// fields.
		if strings.Contains(theirs.raw, `"event_status"`) || strings.Contains(theirs.raw, `"source"`) {
			t.Errorf("GET %s under the TEC root has event_status or source:\n%s", path, theirs.raw)
		}
		got := strings.ReplaceAll(theirs.raw, tecRoot, root)
		// The other difference by design: the TEC root's json_ld has the
		// original's performer (single reads of events).
		if strings.HasPrefix(path, "/events/") {
			const performer = `,"performer":"Organization"`
			if !strings.Contains(got, performer) || strings.Contains(ours.raw, performer) {
				t.Errorf("GET %s: performer under the TEC root only, as the original has it:\n%s\n%s", path, ours.raw, got)
			}
			got = strings.Replace(got, performer, "", 1)
		}
		if want := statusFields.ReplaceAllString(ours.raw, ""); got != want {
			t.Errorf("GET %s: the bodies differ beyond the links:\n%s\n%s", path, want, got)
		}
		for _, h := range []string{"Link", "X-WP-Total", "X-TEC-Total", "Content-Type"} {
			if got := strings.ReplaceAll(theirs.header.Get(h), tecRoot, root); got != ours.header.Get(h) {
				t.Errorf("GET %s: header %s %q under the TEC root, %q under ours", path, h, theirs.header.Get(h), ours.header.Get(h))
			}
		}
	}
	for _, path := range []string{
		fmt.Sprintf("/events/%d", ev.id()),
		"/events/by-slug/jazz-night",
		"/events?start_date=2030-01-01&end_date=2030-12-31&per_page=1",
		fmt.Sprintf("/venues/%d", venue.id()),
		"/venues",
		fmt.Sprintf("/categories/%d", cat.id()),
		"/categories?hide_empty=false",
		"/tags?hide_empty=false",
	} {
		t.Run(path, func(t *testing.T) {
			same(t, path, "")
			same(t, path, "editor")
		})
	}
	// The namespace index under the TEC root describes that namespace; the
	// interface document names both roots; OPTIONS answers under both.
	idx := e.must(http.StatusOK, "GET", tecRoot, "", nil)
	if idx.str("namespace") != "tribe/events/v1" || !strings.Contains(idx.raw, `"`+tecRoot+`/events"`) {
		t.Errorf("namespace index under the TEC root: namespace %q\n%.400s", idx.str("namespace"), idx.raw)
	}
	doc := e.must(http.StatusOK, "GET", root+"/doc", "", nil)
	if !strings.Contains(doc.raw, `"url":"http://example.test`+root+`"`) || !strings.Contains(doc.raw, `"url":"http://example.test`+tecRoot+`"`) {
		t.Errorf("the interface document does not name both roots: %.300s", doc.raw)
	}
	for _, p := range []string{root + "/events", tecRoot + "/events", tecRoot + "/events/1"} {
		if r := e.do("OPTIONS", p, "", nil); r.status != http.StatusNoContent || !strings.Contains(r.header.Get("Allow"), "GET") {
			t.Errorf("OPTIONS %s: %d, Allow %q", p, r.status, r.header.Get("Allow"))
		}
	}
	// The other language's prefix works in front of either root.
	e.must(http.StatusOK, "GET", fmt.Sprintf("/fr%s/events/%d", tecRoot, ev.id()), "", nil)

	off := newEnv(t)
	if r := off.do("GET", tecRoot+"/events", "", nil); r.status != http.StatusNotFound {
		t.Errorf("without TEC_COMPAT the TEC root answers %d, want 404", r.status)
	}
}
