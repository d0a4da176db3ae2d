package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// panickyStore panics on one term ID, standing for any handler bug.
type panickyStore struct{ repository.Store }

const panicTermID = 424242

func (s panickyStore) GetLabel(ctx context.Context, id int64) (*repository.Label, error) {
	if id == panicTermID {
		var m map[string]int
		//lint:ignore SA5000 a nil-map write: a runtime panic, as a real bug would raise
		m["boom"]++
	}
	return s.Store.GetLabel(ctx, id)
}

// TestHandlerPanicIsLogged500 (issue 7, finding 1): a panicking handler
// answers 500 in the error envelope, is logged with its stack, and the
// next request is served.
func TestHandlerPanicIsLogged500(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	e := newEnvWith(t, t.TempDir(), envOptions{log: logs, wrapStore: func(s repository.Store) repository.Store { return panickyStore{s} }})
	r := e.do("GET", "categories/424242", "", nil)
	if r.status != 500 || r.str("code") != "internal_server_error" || r.num("data.status") != 500 {
		t.Fatalf("panic answered %d %s", r.status, r.raw)
	}
	if !strings.Contains(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	out := logs.String()
	if !strings.Contains(out, "handler panic") || !strings.Contains(out, "assignment to entry in nil map") || !strings.Contains(out, "status=500") {
		t.Errorf("panic not logged with its cause and request line:\n%s", out)
	}
	e.must(200, "GET", "categories?hide_empty=0", "", nil)
	e.must(201, "POST", "categories", "editor", map[string]any{"name": "After the panic"})
}

// TestOverflowingPages (issue 7, finding 1): page numbers whose offset
// overflows an int64 neither panic nor wrap around to page 1.
func TestOverflowingPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz"})
	e.must(201, "POST", "tags", "editor", map[string]any{"name": "Free"})
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Only", "start_date": "2026-12-01", "end_date": "2026-12-01"})
	e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall"})
	e.flush()
	const huge = "9223372036854775807"
	e.run(t, []scenario{
		{name: "categories past the end", method: "GET", url: "categories?page=" + huge + "&hide_empty=0", status: 200,
			want: map[string]any{"categories": []any{}, "total": 1}},
		{name: "tags past the end", method: "GET", url: "tags?page=" + huge + "&hide_empty=0", status: 200,
			want: map[string]any{"tags": []any{}, "total": 1}},
		{name: "tags with the largest per_page", method: "GET", url: "tags?page=" + huge + "&per_page=" + huge + "&hide_empty=0", status: 200,
			want: map[string]any{"tags": []any{}}},
		{name: "terms with the largest offset", method: "GET", url: "categories?offset=" + huge + "&hide_empty=0", status: 200,
			want: map[string]any{"categories": []any{}}},
		{name: "events past the end", method: "GET", url: "events?page=" + huge, status: 404,
			want: map[string]any{"code": "event-archive-page-not-found"}},
		{name: "events past the end with the largest per_page", method: "GET", url: "events?page=" + huge + "&per_page=" + huge, status: 404,
			want: map[string]any{"code": "event-archive-page-not-found"}},
		{name: "venues past the end", method: "GET", url: "venues?page=" + huge, status: 404,
			want: map[string]any{"code": "venue-archive-page-not-found"}},
		{name: "organizers past the end", method: "GET", url: "organizers?page=" + huge, status: 404,
			want: map[string]any{"code": "organizer-archive-page-not-found"}},
		{name: "page beyond int64 is invalid", method: "GET", url: "events?page=99999999999999999999", status: 400,
			want: map[string]any{"code": "rest_invalid_param"}},
		{name: "events page 1 still served", method: "GET", url: "events", status: 200, want: map[string]any{"total": 1}},
	})
}

// TestHTTPLayerErrorsInEnvelope (issue 7, finding 10): unknown methods,
// oversized bodies and oversized headers are answered in the error
// envelope and logged like every request.
func TestHTTPLayerErrorsInEnvelope(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	e := newEnvWith(t, t.TempDir(), envOptions{log: logs})
	for _, tt := range []struct {
		name, method, target string
		body                 string
		header               map[string]string
		status               int
		code                 string
	}{
		{"PROPFIND", "PROPFIND", root + "/events", "", nil, 404, "rest_no_route"},
		{"unknown method anywhere", "BREW", "/coffee", "", nil, 404, "rest_no_route"},
		{"body over the limit", "POST", root + "/events", `{"title":"` + strings.Repeat("a", 1<<20) + `"}`, nil, 413, "rest_request_too_large"},
		{"body over the limit on a route without body", "POST", root + "/nowhere", strings.Repeat("a", 2<<20), nil, 413, "rest_request_too_large"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", tt.target, strings.NewReader(tt.body))
			req.Method = tt.method
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.tokens["editor"])
			req.Header.Set("X-Request-ID", "req-"+strings.ReplaceAll(tt.name, " ", "-"))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			res, b := rawSend(t, e, req)
			if res.StatusCode != tt.status || !strings.Contains(string(b), `"code":"`+tt.code+`"`) {
				t.Fatalf("%d %s, want %d %s", res.StatusCode, b, tt.status, tt.code)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type %q", ct)
			}
			if !strings.Contains(logs.String(), "status="+res.Status[:3]) {
				t.Errorf("no request line with status %d:\n%s", tt.status, logs.String())
			}
		})
	}
}

// TestStreamedBodies: with bodies streamed, JSON, form and multipart
// bodies (small, and larger than fasthttp's 8 KiB read-ahead) still decode.
func TestStreamedBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("d", 50_000)
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	_ = w.WriteField("venue", "Multipart hall")
	_ = w.WriteField("description", long)
	_ = w.Close()
	for _, tt := range []struct {
		name, ct, body string
	}{
		{"json", "application/json", `{"venue":"JSON hall","description":"` + long + `"}`},
		{"form", "application/x-www-form-urlencoded", "venue=Form+hall&description=" + long},
		{"multipart", w.FormDataContentType(), mp.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", root+"/venues", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.ct)
			req.Header.Set("Authorization", "Bearer "+e.tokens["editor"])
			res, b := rawSend(t, e, req)
			if res.StatusCode != 201 || !strings.Contains(string(b), long) {
				t.Fatalf("%d %.200s", res.StatusCode, b)
			}
		})
	}
}

// TestRestrictedRoutesRefuseFirst: the admin routes (admins only) and the
// sources (editors and admins) refuse every other caller from the
// request's headers alone, 401 anonymous and 403 any lower role, reads
// and writes alike: the body is not parsed (invalid JSON is not
// reported), no parameter is validated (an invalid one is not reported)
// and a source URL is not checked (its host looked up: a contributor
// learns nothing of the addresses the service can reach). Nothing is
// stored.
func TestRestrictedRoutesRefuseFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	before := storeSnapshot(t, e)
	type target struct{ method, path, query, body string }
	admin := []target{
		{"POST", "admin/reindex", "multilang_language=zz", "{"},
		{"GET", "admin/reindex", "multilang_language=zz", "{"},
		{"DELETE", "admin/reindex", "multilang_language=zz", "{"},
		{"GET", "admin/sync", "multilang_language=zz", "{"},
		{"POST", "admin/backups", "multilang_language=zz", "{"},
		{"GET", "admin/backups", "multilang_language=zz", "{"},
		{"GET", "admin/webhooks", "multilang_language=zz", "{"},
		{"POST", "admin/webhooks", "", `{"url":"ftp://x","events":["nope"]}`},
		{"GET", "admin/webhooks/1", "multilang_language=zz", "{"},
		{"PATCH", "admin/webhooks/1", "", `{"url":"ftp://x"}`},
		{"DELETE", "admin/webhooks/1", "multilang_language=zz", "{"},
		{"POST", "admin/webhooks/1/ping", "multilang_language=zz", "{"},
		{"GET", "admin/webhooks/1/deliveries", "per_page=abc", "{"},
		{"GET", "admin/users", "multilang_language=zz", "{"},
		{"PATCH", "admin/users/1", "", `{"role":"emperor"}`},
		{"GET", "admin/tokens", "per_page=abc&user=x", "{"},
		{"POST", "admin/tokens", "", `{"user":"x","expires_in":-1}`},
		{"DELETE", "admin/tokens/abc", "multilang_language=zz", "{"},
	}
	sources := []target{
		{"GET", "sources", "multilang_language=zz", "{"},
		{"POST", "sources", "", `{"url":"http://localhost/feed.ics"}`},
		{"POST", "sources", "", `{"url":"http://localhost/feed.ics","schedule":"every now and then"}`},
		{"GET", "sources/1", "multilang_language=zz", "{"},
		{"PATCH", "sources/1", "", `{"url":"http://localhost/feed.ics"}`},
		{"DELETE", "sources/1", "multilang_language=zz", "{"},
		{"POST", "sources/1/run", "multilang_language=zz", "{"},
		{"GET", "sources/1/runs", "per_page=abc", "{"},
	}
	type refusal struct {
		as     string
		status int
	}
	var cases []scenario
	add := func(prefix string, targets []target, refused []refusal) {
		for _, tg := range targets {
			for _, rf := range refused {
				url := prefix + tg.path
				if tg.query != "" {
					url += "?" + tg.query
				}
				cases = append(cases, scenario{name: tg.method + " " + url + " as " + rf.as, method: tg.method, url: url, as: rf.as, body: tg.body,
					status: rf.status, want: map[string]any{"code": "rest_forbidden", "data": map[string]any{"status": rf.status}}})
			}
		}
	}
	lower := []refusal{{"", 401}, {"contributor", 403}, {"author", 403}}
	add("", admin, append(lower, refusal{"editor", 403}))
	add("/wp-json/tribe/events/v1/", admin, []refusal{{"", 401}, {"editor", 403}})
	add("/fr"+root+"/", admin, []refusal{{"", 401}, {"editor", 403}})
	add("", sources, lower)
	e.run(t, cases)
	if after := storeSnapshot(t, e); after != before {
		t.Errorf("refused requests changed the store:\n before %s\n after  %s", before, after)
	}
	// The callers the routes serve still get their answers, validation
	// first.
	e.run(t, []scenario{
		{name: "admin: invalid parameter", method: "GET", url: "admin/webhooks/1/deliveries?per_page=abc", as: "admin", status: 400, want: map[string]any{"code": "rest_invalid_param"}},
		{name: "admin: invalid JSON", method: "POST", url: "admin/tokens", as: "admin", body: "{", status: 400, want: map[string]any{"code": "rest_invalid_json"}},
		{name: "editor: private source host", method: "POST", url: "sources", as: "editor", body: `{"url":"http://localhost/feed.ics"}`, status: 400,
			want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"SOURCES_ALLOW_PRIVATE"}},
		{name: "editor: sources list", method: "GET", url: "sources", as: "editor", status: 200},
	})
}

// TestErrorsDoNotEchoWhatWasSent: an error answer quotes at most a short
// excerpt of what the caller sent, wherever the value sat (a body field,
// a list item, a key of a nested object, a query parameter, a slug or an
// occurrence key in the path): a 100 kB value (6 kB in the address) gets
// a short answer in the envelope, never one that grows with it.
func TestErrorsDoNotEchoWhatWasSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	long := strings.Repeat("Z", 100_000)
	short := strings.Repeat("k", 6000)
	spaced := strings.Repeat("Z ", 3000)
	body := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	series := fmt.Sprintf("events/%d", ev)
	occ := func(key string) string { return fmt.Sprintf("%s/occurrences/%s", series, key) }
	for _, tt := range []struct {
		name, method, url string
		body              any
		status            int
		code              string
	}{
		{"event venue reference", "PATCH", series, body("venue", long), 400, "rest_invalid_param"},
		{"event organizer reference", "PATCH", series, body("organizer", long), 400, "rest_invalid_param"},
		{"occurrence venue reference", "PATCH", occ("20270325T190000"), body("venue", long), 400, "rest_invalid_param"},
		{"unknown recurrence key", "PATCH", series, body("recurrence", body(long, 1)), 400, "rest_invalid_param"},
		{"recurrence rule", "PATCH", series, body("recurrence", body("rules", []any{"FREQ=DAILY;" + long})), 400, "rest_invalid_param"},
		{"words with spaces", "PATCH", series, body("venue", spaced), 400, "rest_invalid_param"},
		{"source schedule", "POST", "sources", body("url", "https://example.com/x.ics", "schedule", long), 400, "rest_invalid_param"},
		{"source category", "POST", "sources", body("url", "https://example.com/x.ics", "categories", long), 400, "rest_invalid_param"},
		{"webhook message type", "POST", "admin/webhooks", body("url", "https://example.com/x", "events", long), 400, "rest_invalid_param"},
		{"event slug", "GET", "events/by-slug/" + short, nil, 404, "rest-event-not-found"},
		{"venue slug", "GET", "venues/by-slug/" + short, nil, 404, "rest-venue-not-found"},
		{"organizer slug update", "PATCH", "organizers/by-slug/" + short[:190], body(), 404, "rest-organizer-not-found"},
		{"occurrence key", "GET", occ(short), nil, 404, "rest-occurrence-not-found"},
		{"occurrence key with a date", "GET", occ("2027" + short), nil, 404, "rest-occurrence-not-found"},
		{"occurrence key update", "PATCH", occ(short), body(), 404, "rest-occurrence-not-found"},
		{"occurrence key delete", "DELETE", occ(short), nil, 404, "rest-occurrence-not-found"},
		{"occurrence key split", "POST", occ(short) + "/split", body(), 404, "rest-occurrence-not-found"},
		{"list status", "GET", "events?status=" + short, nil, 400, "rest_invalid_param"},
		{"list category", "GET", "events?categories=" + short, nil, 400, "rest_invalid_param"},
		{"list venue", "GET", "events?venue=" + short, nil, 400, "rest_invalid_param"},
		{"feed category", "GET", "events.ics?categories=" + short, nil, 400, "rest_invalid_param"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.method, tt.url, "admin", tt.body)
			if r.status != tt.status || r.str("code") != tt.code || r.num("data.status") != float64(tt.status) {
				t.Fatalf("%d %.300s, want %d %s", r.status, r.raw, tt.status, tt.code)
			}
			if len(r.raw) > 4000 {
				t.Errorf("answer of %d bytes: %.300s", len(r.raw), r.raw)
			}
		})
	}
}

// TestCompressedBodyRefused: a body sent with a Content-Encoding (gzip,
// deflate, br...) is refused unread with 415
// rest_unsupported_content_encoding and Accept-Encoding: identity, for
// JSON and form bodies alike, and stores nothing; an anonymous write is
// still 401 first; identity, and a Content-Encoding on a request without
// a body, pass.
func TestCompressedBodyRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Kept", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		_ = w.Close()
		return b.String()
	}
	event := `{"title":"Zipped","start_date":"2026-12-02","end_date":"2026-12-02"}`
	for _, tt := range []struct {
		name, method, target, as, ct, encoding, body string
		status                                       int
		code                                         string
	}{
		{"gzip JSON", "POST", "events", "editor", "application/json", "gzip", gz(event), 415, "rest_unsupported_content_encoding"},
		{"gzip form", "POST", "venues", "editor", "application/x-www-form-urlencoded", "gzip", gz("venue=Zipped+hall"), 415, "rest_unsupported_content_encoding"},
		{"deflate update", "PATCH", fmt.Sprintf("events/%d", id), "editor", "application/json", "deflate", gz(`{"title":"Changed"}`), 415, "rest_unsupported_content_encoding"},
		{"two codings", "POST", "categories", "editor", "application/json", "gzip, br", gz(`{"name":"Zipped"}`), 415, "rest_unsupported_content_encoding"},
		{"a coding on a plain body", "POST", "tags", "admin", "application/json", "br", `{"name":"Plain"}`, 415, "rest_unsupported_content_encoding"},
		{"admin route", "POST", "admin/tokens", "admin", "application/json", "gzip", gz(`{"user":1}`), 415, "rest_unsupported_content_encoding"},
		{"anonymous first", "POST", "events", "", "application/json", "gzip", gz(event), 401, "rest_forbidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := storeSnapshot(t, e)
			status, raw, header := sendAttack(t, e, attack{method: tt.method, target: tt.target, as: tt.as, body: tt.body, ct: tt.ct,
				header: map[string]string{"Content-Encoding": tt.encoding}})
			if status != tt.status || !strings.Contains(raw, `"code":"`+tt.code+`"`) || !strings.Contains(raw, fmt.Sprintf(`"status":%d`, tt.status)) {
				t.Fatalf("%d %.300s, want %d %s", status, raw, tt.status, tt.code)
			}
			if tt.status == 415 && header.Get("Accept-Encoding") != "identity" {
				t.Errorf("Accept-Encoding %q", header.Get("Accept-Encoding"))
			}
			if after := storeSnapshot(t, e); after != before {
				t.Errorf("the refused write changed the store:\n before %s\n after  %s", before, after)
			}
		})
	}
	e.run(t, []scenario{
		{name: "identity passes", method: "POST", url: "tags", as: "editor", body: map[string]any{"name": "Identity"}, status: 201},
	})
	status, raw, _ := sendAttack(t, e, attack{method: "POST", target: "tags", as: "editor", body: `{"name":"Named identity"}`, header: map[string]string{"Content-Encoding": "identity"}})
	if status != 201 {
		t.Errorf("Content-Encoding identity: %d %.300s", status, raw)
	}
	status, raw, _ = sendAttack(t, e, attack{method: "DELETE", target: fmt.Sprintf("events/%d", id), as: "editor", header: map[string]string{"Content-Encoding": "gzip"}})
	if status != 200 {
		t.Errorf("a coding without a body: %d %.300s", status, raw)
	}
}
