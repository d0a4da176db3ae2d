package api_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/calendar/eventcal/app/api"
)

// newCacheEnv is newEnv with a rendered-response cache whose TTL outlives
// the test: whatever a test sees fresh after a write was made fresh by the
// write, never by the clock.
func newCacheEnv(t *testing.T, maxBytes int64) *env {
	t.Helper()
	e := newEnv(t)
	a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: e.worker,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clockNow,
		ResponseCacheTTL: time.Hour, ResponseCacheBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	return e
}

// cacheMetric reads one eventcal_http_cache_* figure from /metrics.
func (e *env) cacheMetric(name string) float64 {
	e.t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+e.tokens["admin"])
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				e.t.Fatal(err)
			}
			return f
		}
	}
	e.t.Fatalf("/metrics lacks %s", name)
	return 0
}

// cacheHits reads the hit counter.
func (e *env) cacheHits() float64 { return e.cacheMetric("eventcal_http_cache_hits_total") }

// TestResponseCacheFreshAfterWrites checks every write route: the list and
// item responses it affects are cached before the write (a second read is
// a hit) and show the write right after it (lists once the index has it).
func TestResponseCacheFreshAfterWrites(t *testing.T) {
	t.Parallel()
	type read struct {
		url, as string
		// want and not are substrings of the body after the write; status
		// is the status after the write (200 when 0).
		want, not string
		status    int
		// kept: want is shown before the write too (a response the write
		// must leave as it was).
		kept bool
	}
	type fixture struct{ ev, venue, org, cat, tag int64 }
	cases := []struct {
		name  string
		reads func(f fixture) []read
		write func(e *env, f fixture)
	}{
		{"create", func(f fixture) []read {
			return []read{{url: "events", want: "Brand New Gig"}, {url: "events?search=brand", want: "Brand New Gig"}}
		}, func(e *env, f fixture) {
			e.must(201, "POST", "events", "editor", map[string]any{"title": "Brand New Gig", "start_date": "2026-12-06 10:00", "end_date": "2026-12-06 11:00"})
		}},
		{"update", func(f fixture) []read {
			return []read{{url: ev(f.ev), want: "Renamed Concert"}, {url: "events", want: "Renamed Concert"}, {url: ev(f.ev), as: "editor", want: "Renamed Concert"}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", ev(f.ev), "editor", map[string]any{"title": "Renamed Concert"})
		}},
		{"trash", func(f fixture) []read {
			return []read{{url: ev(f.ev), status: 403, want: "event-no-longer-available"}, {url: "events", not: "Cached Concert"}}
		}, func(e *env, f fixture) { e.must(200, "DELETE", ev(f.ev), "editor", nil) }},
		{"delete", func(f fixture) []read {
			return []read{{url: ev(f.ev), status: 404}, {url: "events", not: "Cached Concert"}, {url: "venues?event=" + id(f.ev), status: 400}}
		}, func(e *env, f fixture) { e.must(200, "DELETE", ev(f.ev)+"?force=true", "editor", nil) }},
		{"term rename", func(f fixture) []read {
			return []read{{url: ev(f.ev), want: "Free Jazz"}, {url: "events", want: "Free Jazz"}, {url: "categories", want: "Free Jazz"},
				{url: "categories/" + id(f.cat), want: "Free Jazz"}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", "categories/"+id(f.cat), "editor", map[string]any{"name": "Free Jazz"})
		}},
		{"tag delete", func(f fixture) []read {
			return []read{{url: ev(f.ev), not: "Loud"}, {url: "tags", not: "Loud"}}
		}, func(e *env, f fixture) { e.must(200, "DELETE", "tags/"+id(f.tag)+"?force=true", "editor", nil) }},
		{"venue change seen through its events", func(f fixture) []read {
			return []read{{url: ev(f.ev), want: "Lyon"}, {url: "events", want: "Lyon"}, {url: "venues/" + id(f.venue), want: "Lyon"}, {url: "venues", want: "Lyon"}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", "venues/"+id(f.venue), "editor", map[string]any{"city": "Lyon"})
		}},
		{"organizer trash seen through its events", func(f fixture) []read {
			return []read{{url: ev(f.ev), not: "Cached Org"}, {url: "organizers", not: "Cached Org"}}
		}, func(e *env, f fixture) { e.must(200, "DELETE", "organizers/"+id(f.org), "editor", nil) }},
		{"password", func(f fixture) []read {
			return []read{{url: ev(f.ev), status: 403, want: "event-password-protected"}, {url: "events", not: "Cached description"}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", ev(f.ev), "editor", map[string]any{"password": "pw"})
		}},
		{"status", func(f fixture) []read {
			return []read{{url: ev(f.ev), status: 403, want: "event-not-accessible"}, {url: "events", not: "Cached Concert"},
				{url: "events", as: "editor", want: `"status":"draft"`}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", ev(f.ev), "editor", map[string]any{"status": "draft"})
		}},
		{"language update", func(f fixture) []read {
			return []read{{url: ev(f.ev) + "?multilang_language=fr", want: "Concert en cache"}, {url: "/fr" + root + "/" + ev(f.ev), want: "Concert en cache"},
				{url: "events?multilang_language=fr", want: "Concert en cache"}, {url: ev(f.ev), want: "Cached Concert", kept: true}}
		}, func(e *env, f fixture) {
			e.must(200, "PATCH", ev(f.ev)+"?multilang_language=fr", "editor", map[string]any{"title": "Concert en cache"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCacheEnv(t, 0)
			var f fixture
			f.cat = e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz"}).id()
			f.tag = e.must(201, "POST", "tags", "editor", map[string]any{"name": "Loud"}).id()
			f.venue = e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Cached Hall", "city": "Paris"}).id()
			f.org = e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Cached Org"}).id()
			f.ev = e.must(201, "POST", "events", "editor", map[string]any{"title": "Cached Concert", "description": "Cached description",
				"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00", "categories": []any{f.cat}, "tags": []any{f.tag},
				"venue": f.venue, "organizer": []any{f.org}}).id()
			e.flush()
			reads := tc.reads(f)
			before := make([]string, len(reads))
			for i, r := range reads {
				before[i] = e.must(200, "GET", r.url, r.as, nil).raw
				if r.status == 0 && !r.kept && r.want != "" && strings.Contains(before[i], r.want) {
					t.Fatalf("%s shows %q before the write", r.url, r.want)
				}
				hits := e.cacheHits()
				if again := e.must(200, "GET", r.url, r.as, nil).raw; again != before[i] {
					t.Fatalf("%s: second read differs", r.url)
				}
				if e.cacheHits() != hits+1 {
					t.Fatalf("%s: second read was not a cache hit", r.url)
				}
			}
			tc.write(e, f)
			check := func(lists bool) {
				t.Helper()
				for _, r := range reads {
					if isList(r.url) != lists {
						continue
					}
					got := e.do("GET", r.url, r.as, nil)
					want := r.status
					if want == 0 {
						want = 200
					}
					if got.status != want || !strings.Contains(got.raw, r.want) || (r.not != "" && strings.Contains(got.raw, r.not)) {
						t.Errorf("%s as %q after the write: status %d (want %d), want %q, not %q; body %.300s", r.url, r.as, got.status, want, r.want, r.not, got.raw)
					}
				}
			}
			// Items are read from the store: fresh at once, without waiting
			// for the index.
			check(false)
			// A list read before the index has the write may cache the old
			// page; the index write must make it stale.
			for _, r := range reads {
				if isList(r.url) {
					e.do("GET", r.url, r.as, nil)
				}
			}
			e.flush()
			check(true)
		})
	}
}

func ev(n int64) string { return "events/" + id(n) }
func id(n int64) string { return strconv.FormatInt(n, 10) }

// isList reports whether a test URL names a list (served from the index).
func isList(u string) bool {
	p, _, _ := strings.Cut(u, "?")
	p = strings.TrimPrefix(p, "/fr"+root+"/")
	return !strings.Contains(p, "/")
}

// TestResponseCacheCallers: what one caller was served never reaches
// another who may see more or less.
func TestResponseCacheCallers(t *testing.T) {
	t.Parallel()
	e := newCacheEnv(t, 0)
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Public Show", "start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"})
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Draft Show", "status": "draft", "start_date": "2026-12-02 20:00", "end_date": "2026-12-02 22:00"})
	mine := e.must(201, "POST", "events", "author", map[string]any{"title": "Author Draft", "status": "draft", "start_date": "2026-12-03 20:00", "end_date": "2026-12-03 22:00"}).id()
	e.flush()
	steps := []struct {
		as, url  string
		status   int
		has, not string
		control  string
	}{
		{"", "events", 200, "Public Show", "Draft Show", "public, max-age=0, must-revalidate"},
		{"editor", "events", 200, "Draft Show", "", "private, max-age=0, must-revalidate"},
		{"", "events", 200, "Public Show", "Draft Show", "public, max-age=0, must-revalidate"},
		{"editor", "events?page=1", 200, "Draft Show", "", "private, max-age=0, must-revalidate"},
		{"", "events?page=1", 200, "Public Show", "Draft Show", "public, max-age=0, must-revalidate"},
		{"author", ev(mine), 200, "Author Draft", "", "private, max-age=0, must-revalidate"},
		{"author2", ev(mine), 403, "event-not-accessible", "", ""},
		{"", ev(mine), 403, "event-not-accessible", "", ""},
		{"author", ev(mine), 200, "Author Draft", "", "private, max-age=0, must-revalidate"},
	}
	for i, st := range steps {
		r := e.do("GET", st.url, st.as, nil)
		if r.status != st.status || !strings.Contains(r.raw, st.has) || (st.not != "" && strings.Contains(r.raw, st.not)) {
			t.Errorf("step %d (%s as %q): status %d, want %d with %q and without %q: %.300s", i, st.url, st.as, r.status, st.status, st.has, st.not, r.raw)
		}
		if got := r.header.Get("Cache-Control"); st.control != "" && got != st.control {
			t.Errorf("step %d: Cache-Control %q, want %q", i, got, st.control)
		}
		if st.status == 200 && !strings.Contains(strings.Join(r.header.Values("Vary"), ","), "Authorization") {
			t.Errorf("step %d: Vary %q lacks Authorization", i, r.header.Values("Vary"))
		}
	}
}

// TestResponseCacheKeyNormalised: parameter order and spelled-out defaults
// name the same cached response.
func TestResponseCacheKeyNormalised(t *testing.T) {
	t.Parallel()
	e := newCacheEnv(t, 0)
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Show", "start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"})
	e.flush()
	e.must(200, "GET", "events?featured=false&per_page=8", "", nil)
	hits := e.cacheHits()
	for _, u := range []string{"events?per_page=8&featured=false", "events?featured=false&per_page=8&page=1&strict_dates=false",
		"events?context=view&featured=false&per_page=8"} {
		e.must(200, "GET", u, "", nil)
	}
	if got := e.cacheHits() - hits; got != 3 {
		t.Errorf("hits = %v, want 3 (one rendering for all spellings)", got)
	}
	// A different value is a different response.
	e.must(200, "GET", "events?featured=true&per_page=8", "", nil)
	if got := e.cacheHits() - hits; got != 3 {
		t.Errorf("featured=true was served from featured=false's entry")
	}
}

// TestRevalidation: a 304 for an unchanged resource, a 200 after a write.
func TestRevalidation(t *testing.T) {
	t.Parallel()
	e := newCacheEnv(t, 0)
	evID := e.must(201, "POST", "events", "editor", map[string]any{"title": "Show", "start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"}).id()
	e.flush()
	for _, u := range []string{ev(evID), "events", "categories", "", "doc"} {
		first := e.must(200, "GET", u, "", nil)
		tag := first.header.Get("ETag")
		if tag == "" || strings.HasPrefix(tag, "W/") {
			t.Fatalf("%s: ETag %q, want a strong one", u, tag)
		}
		r := e.doWith("GET", u, "", nil, map[string]string{"If-None-Match": tag})
		if r.status != 304 || r.raw != "" {
			t.Errorf("%s: revalidation status %d with %d bytes, want an empty 304", u, r.status, len(r.raw))
		}
		if r.header.Get("ETag") != tag {
			t.Errorf("%s: 304 ETag %q, want %q", u, r.header.Get("ETag"), tag)
		}
	}
	// HEAD shares GET's entry and validator, without a body.
	get := e.must(200, "GET", ev(evID), "", nil)
	if head := e.must(200, "HEAD", ev(evID), "", nil); head.raw != "" || head.header.Get("ETag") != get.header.Get("ETag") {
		t.Errorf("HEAD: %d bytes, ETag %q (GET %q)", len(head.raw), head.header.Get("ETag"), get.header.Get("ETag"))
	}
	tags := map[string]string{}
	for _, u := range []string{ev(evID), "events"} {
		tags[u] = e.must(200, "GET", u, "", nil).header.Get("ETag")
	}
	e.must(200, "PATCH", ev(evID), "editor", map[string]any{"title": "Show, revised"})
	e.flush()
	for u, tag := range tags {
		r := e.doWith("GET", u, "", nil, map[string]string{"If-None-Match": tag})
		if r.status != 200 || !strings.Contains(r.raw, "Show, revised") || r.header.Get("ETag") == tag {
			t.Errorf("%s after a write: status %d, ETag %q (old %q)", u, r.status, r.header.Get("ETag"), tag)
		}
	}
}

// TestCompressedResponses: gzip and brotli bodies decode to the identity
// body, cached or not, and say how they are encoded.
func TestCompressedResponses(t *testing.T) {
	t.Parallel()
	e := newCacheEnv(t, 0)
	for i := 0; i < 12; i++ {
		e.must(201, "POST", "events", "editor", map[string]any{"title": "Show " + strconv.Itoa(i), "description": strings.Repeat("A fine evening. ", 20),
			"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"})
	}
	e.flush()
	for _, u := range []string{root + "/events?per_page=12", root + "/events/1", root + "/doc"} {
		identity := e.must(200, "GET", u, "", nil)
		for _, enc := range []string{"gzip", "br", "gzip", "br"} { // the second time from the entry
			req := httptest.NewRequest("GET", u, nil)
			req.Header.Set("Accept-Encoding", enc)
			res, err := e.app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.Header.Get("Content-Encoding") != enc {
				t.Fatalf("%s: Content-Encoding %q, want %s", u, res.Header.Get("Content-Encoding"), enc)
			}
			var rd io.Reader
			if enc == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				rd = zr
			} else {
				rd = brotli.NewReader(bytes.NewReader(raw))
			}
			plain, err := io.ReadAll(rd)
			if err != nil {
				t.Fatalf("%s %s: %v", u, enc, err)
			}
			var a, b any
			if json.Unmarshal(plain, &a) != nil || json.Unmarshal([]byte(identity.raw), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("%s: %s body decodes to different JSON", u, enc)
			}
			if len(raw) >= len(identity.raw) {
				t.Errorf("%s: %s body %d bytes, identity %d", u, enc, len(raw), len(identity.raw))
			}
		}
	}
}

// TestResponseCacheByteBound: the cache never holds more than its bound.
func TestResponseCacheByteBound(t *testing.T) {
	t.Parallel()
	const bound = 40 << 10
	e := newCacheEnv(t, bound)
	for i := 0; i < 8; i++ {
		e.must(201, "POST", "events", "editor", map[string]any{"title": "Show " + strconv.Itoa(i), "description": strings.Repeat("words ", 100),
			"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"})
	}
	e.flush()
	for i := 1; i <= 40; i++ {
		e.must(200, "GET", "events?per_page="+strconv.Itoa(i%9+1)+"&search=show&featured="+strconv.FormatBool(i%2 == 0)+"&geoloc_radius="+strconv.Itoa(i), "", nil)
		if b := e.cacheMetric("eventcal_http_cache_bytes"); b > bound || b <= 0 {
			t.Fatalf("after %d pages: %v bytes, bound %d", i, b, bound)
		}
	}
	if e.cacheMetric("eventcal_http_cache_evictions_total") == 0 {
		t.Error("no evictions: the test did not reach the bound")
	}
	if e.cacheMetric("eventcal_http_cache_misses_total") < 40 {
		t.Error("misses not counted")
	}
}

// TestTermCountsOnAPage: a page whose terms' counts all expired at once is
// counted with one grouped count per taxonomy; the figures equal the
// per-term ones (published events only, direct links).
func TestTermCountsOnAPage(t *testing.T) {
	t.Parallel()
	e := newCacheEnv(t, -1)
	cat := map[string]int64{}
	for _, n := range []string{"A", "B", "C", "D"} {
		cat[n] = e.must(201, "POST", "categories", "editor", map[string]any{"name": "Cat " + n}).id()
	}
	tag := e.must(201, "POST", "tags", "editor", map[string]any{"name": "T"}).id()
	mk := func(status string, cats ...string) {
		var ids []any
		for _, c := range cats {
			ids = append(ids, cat[c])
		}
		e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "status": status, "categories": ids, "tags": []any{tag},
			"start_date": "2026-12-01 20:00", "end_date": "2026-12-01 22:00"})
	}
	mk("publish", "A", "B", "C", "D")
	mk("publish", "A")
	mk("draft", "C", "D")
	e.flush()
	want := map[int64]int64{cat["A"]: 2, cat["B"]: 1, cat["C"]: 1, cat["D"]: 1}
	r := e.must(200, "GET", "events", "", nil)
	for _, it := range r.path("events").([]any) {
		for _, c := range it.(map[string]any)["categories"].([]any) {
			m := c.(map[string]any)
			n, _ := m["id"].(json.Number).Int64()
			got, _ := m["count"].(json.Number).Int64()
			if got != want[n] {
				t.Errorf("category %d: count %d, want %d", n, got, want[n])
			}
		}
	}
	if got := r.path("events.0.tags.0.count"); got != json.Number("2") {
		t.Errorf("tag count %v, want 2", got)
	}
}
