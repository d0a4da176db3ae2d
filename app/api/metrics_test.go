package api_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config/testsupport"
)

// logBuffer collects the JSON log lines of an app; the server goroutine
// writes while the test reads.
type logBuffer struct{ testsupport.SyncBuffer }

// lines returns the decoded log lines whose msg is msg and whose request_id
// is id.
func (b *logBuffer) lines(t *testing.T, msg, id string) []map[string]any {
	t.Helper()
	raw := b.String()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Text())
		}
		if line["msg"] == msg && line["request_id"] == id {
			out = append(out, line)
		}
	}
	return out
}

// withLogger rebuilds e.app with a JSON logger writing to the returned
// buffer; mod may change the options (nil keeps those of newEnv).
func withLogger(t *testing.T, e *env, mod func(*api.Options)) *logBuffer {
	t.Helper()
	logs := &logBuffer{}
	opts := api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: e.worker,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	if mod != nil {
		mod(&opts)
	}
	a, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	return logs
}

// scrape returns the /metrics exposition.
func (e *env) scrape() string {
	e.t.Helper()
	r := e.must(200, "GET", "/metrics", "admin", nil)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		e.t.Fatalf("/metrics Content-Type %q", ct)
	}
	return r.raw
}

// metricValue reads one series (name with its labels in exposition order,
// e.g. `x_count{method="GET"}`) from a scrape; ok is false when absent.
func metricValue(scrape, series string) (v float64, ok bool) {
	for _, line := range strings.Split(scrape, "\n") {
		if rest, found := strings.CutPrefix(line, series+" "); found {
			f, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
			return f, err == nil
		}
	}
	return 0, false
}

// requestCount is the series of the request histogram's sample count.
func requestCount(method, route string, status int) string {
	return `eventcal_http_request_duration_seconds_count{method="` + method + `",route="` + route + `",status="` + strconv.Itoa(status) + `"}`
}

func TestMetricsRequestHistogram(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Jazz", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	ids := strconv.FormatInt(id, 10)
	cases := []struct {
		name, method, url, as string
		body                  any
		status                int
		// series is the histogram series that must grow by one.
		series string
	}{
		{"read by id", "GET", "events/" + ids, "", nil, 200, requestCount("GET", root+"/events/:id", 200)},
		{"missing id", "GET", "events/999999", "", nil, 404, requestCount("GET", root+"/events/:id", 404)},
		{"language prefix", "GET", "/fr" + root + "/events/" + ids, "", nil, 200, requestCount("GET", root+"/events/:id", 200)},
		{"by slug", "GET", "events/by-slug/jazz", "", nil, 200, requestCount("GET", root+"/events/by-slug/:slug", 200)},
		{"create", "POST", "events", "editor", map[string]any{"title": "Blues", "start_date": "2026-12-02", "end_date": "2026-12-02"}, 201, requestCount("POST", root+"/events", 201)},
		{"anonymous write", "POST", "events", "", map[string]any{"title": "X"}, 401, requestCount("POST", root+"/events", 401)},
		{"no route", "GET", "/no/such/path", "", nil, 404, requestCount("GET", "unmatched", 404)},
		{"probe", "GET", "/healthz", "", nil, 200, requestCount("GET", "/healthz", 200)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			before, _ := metricValue(e.scrape(), tc.series)
			e.must(tc.status, tc.method, tc.url, tc.as, tc.body)
			after, ok := metricValue(e.scrape(), tc.series)
			if !ok || after != before+1 {
				t.Errorf("%s: %v -> %v (present %v), want +1", tc.series, before, after, ok)
			}
		})
	}
	t.Run("bounded labels", func(t *testing.T) {
		e.t = t
		s := e.scrape()
		for _, raw := range []string{`route="` + root + `/events/` + ids + `"`, `route="/no/such/path"`, `route="/fr`} {
			if strings.Contains(s, raw) {
				t.Errorf("a raw path is a label value: %s", raw)
			}
		}
		for _, want := range []string{
			"# TYPE eventcal_http_request_duration_seconds histogram",
			`eventcal_http_request_duration_seconds_bucket{method="GET",route="` + root + `/events/:id",status="200",le="+Inf"}`,
			"# TYPE go_goroutines gauge",
			"go_goroutines ",
			"process_cpu_seconds_total ",
			// The scrapes themselves are requests.
			`route="/metrics"`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

func TestMetricsSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.flush()
	series := []string{
		"eventcal_sync_batch_marks_count",
		"eventcal_sync_lag_seconds_count",
		`eventcal_search_documents{index="events"}`,
		`eventcal_search_documents{index="venues"}`,
	}
	before := map[string]float64{}
	s := e.scrape()
	for _, name := range series {
		v, ok := metricValue(s, name)
		if !ok {
			t.Fatalf("/metrics lacks %s:\n%s", name, s)
		}
		before[name] = v
	}
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Paradiso"})
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Jazz", "start_date": "2026-12-01", "end_date": "2026-12-01", "venue": v.id()})
	e.flush()
	s = e.scrape()
	cases := []struct {
		series string
		// grow is the minimum increase; exact when exact is set.
		grow  float64
		exact bool
	}{
		// The running worker may take the two writes in one batch or two.
		{"eventcal_sync_batch_marks_count", 1, false},
		{"eventcal_sync_lag_seconds_count", 2, false},
		{`eventcal_search_documents{index="events"}`, 1, true},
		{`eventcal_search_documents{index="venues"}`, 1, true},
	}
	for _, tc := range cases {
		got, _ := metricValue(s, tc.series)
		d := got - before[tc.series]
		if d < tc.grow || tc.exact && d != tc.grow {
			t.Errorf("%s grew by %v, want %v", tc.series, d, tc.grow)
		}
	}
	if got, ok := metricValue(s, "eventcal_sync_pending_marks"); !ok || got != 0 {
		t.Errorf("eventcal_sync_pending_marks = %v (present %v) after flush, want 0", got, ok)
	}
	if _, ok := metricValue(s, "eventcal_reindex_documents_total"); !ok {
		t.Errorf("/metrics lacks eventcal_reindex_documents_total")
	}
	for _, name := range []string{"eventcal_sync_failing_marks", "eventcal_sync_mark_failures_total"} {
		if got, ok := metricValue(s, name); !ok || got != 0 {
			t.Errorf("%s = %v (present %v) with nothing failing, want 0", name, got, ok)
		}
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := withLogger(t, e, nil)
	cases := []struct {
		name, method, url, id string
		status                int
		route                 string
	}{
		{"index", "GET", root, "log-index", 200, root},
		{"missing event", "GET", "events/424242", "log-missing", 404, root + "/events/:id"},
		{"invalid parameter", "GET", "events?per_page=abc", "log-invalid", 400, root + "/events"},
		{"no route", "GET", "/nowhere", "log-nowhere", 404, "unmatched"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			r := e.doWith(tc.method, tc.url, "", nil, map[string]string{"X-Request-ID": tc.id})
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			lines := logs.lines(t, "request", tc.id)
			if len(lines) != 1 {
				t.Fatalf("%d request lines for %s, want exactly 1", len(lines), tc.id)
			}
			l := lines[0]
			path := tc.url
			if !strings.HasPrefix(path, "/") {
				path = root + "/" + strings.SplitN(path, "?", 2)[0]
			}
			want := map[string]any{"level": "INFO", "method": tc.method, "route": tc.route, "path": path, "status": float64(tc.status)}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("%s = %#v, want %#v", k, l[k], v)
				}
			}
			if d, ok := l["duration_ms"].(float64); !ok || d < 0 {
				t.Errorf("duration_ms = %#v, want a non-negative number", l["duration_ms"])
			}
		})
	}
}

func TestRequestIDInErrorLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Without a search engine, lists answer 503 and the error handler logs.
	logs := withLogger(t, e, func(o *api.Options) { o.Search = nil })
	r := e.doWith("GET", "events", "", nil, map[string]string{"X-Request-ID": "err-503"})
	if r.status != 503 {
		t.Fatalf("status %d, want 503: %s", r.status, r.raw)
	}
	if n := len(logs.lines(t, "error response", "err-503")); n != 1 {
		t.Errorf("%d error-handler lines carry the request ID, want 1", n)
	}
	if n := len(logs.lines(t, "request", "err-503")); n != 1 {
		t.Errorf("%d request lines, want 1", n)
	}
}

func TestRequestIDHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("a", 129)
	cases := []struct {
		name, sent string
		// echoed: the response carries sent; else a new UUID.
		echoed bool
	}{
		{"none sent", "", false},
		{"uuid echoed", "3f1c2a9e-8d4b-4c7e-9a51-0b6d2e4f7a10", true},
		{"token echoed", "req_01HZX:abc/42+=", true},
		{"longest kept", long[:128], true},
		{"too long", long, false},
		{"space", "a b", false},
		{"non-ASCII", "café", false},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.t = t
			h := map[string]string{}
			if tc.sent != "" {
				h["X-Request-ID"] = tc.sent
			}
			for _, url := range []string{root, "/nowhere"} {
				got := e.doWith("GET", url, "", nil, h).header.Get("X-Request-ID")
				switch {
				case tc.echoed && got != tc.sent:
					t.Errorf("%s: X-Request-ID %q, want %q echoed", url, got, tc.sent)
				case !tc.echoed && (len(got) != 36 || strings.Count(got, "-") != 4):
					t.Errorf("%s: X-Request-ID %q, want a new UUID", url, got)
				case !tc.echoed && seen[got]:
					t.Errorf("%s: X-Request-ID %q generated twice", url, got)
				}
				seen[got] = true
			}
		})
	}
}

// TestRequestLogFields: request lines carry the client address (from
// X-Forwarded-For only when the peer is a trusted proxy), the user agent and
// the user ID; probes log at debug level.
func TestRequestLogFields(t *testing.T) {
	t.Parallel()
	// Requests made with api.Test come from 0.0.0.0.
	for _, tc := range []struct {
		name, trusted, xff, want string
	}{
		{"no proxy trusted: the peer", "", "203.0.113.9", "0.0.0.0"},
		{"trusted proxy: the client it names", "0.0.0.0/32", "203.0.113.9", "203.0.113.9"},
		{"trusted chain: the right-most untrusted hop", "0.0.0.0/32,10.0.0.0/8", "198.51.100.1, 203.0.113.9, 10.1.1.1", "203.0.113.9"},
		{"garbage in the header: the peer", "0.0.0.0/32", "not-an-ip", "0.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "TRUSTED_PROXIES", tc.trusted)
			logs := withLogger(t, e, nil)
			id := "fields-" + strconv.Itoa(len(tc.name))
			e.doWith("GET", "events", "editor", nil, map[string]string{"X-Request-ID": id, "X-Forwarded-For": tc.xff,
				"User-Agent": "calendar-widget/2.1\x01x"})
			lines := logs.lines(t, "request", id)
			if len(lines) != 1 {
				t.Fatalf("%d lines", len(lines))
			}
			l := lines[0]
			if l["client"] != tc.want {
				t.Errorf("client = %v, want %s", l["client"], tc.want)
			}
			if l["user_agent"] != "calendar-widget/2.1?x" {
				t.Errorf("user_agent = %q", l["user_agent"])
			}
			if l["user_id"] != float64(e.users["editor"].ID) {
				t.Errorf("user_id = %v, want %d", l["user_id"], e.users["editor"].ID)
			}
		})
	}
	t.Run("probes at debug level", func(t *testing.T) {
		e := newEnv(t)
		logs := &logBuffer{}
		a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: e.worker,
			Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		e.app = a
		for _, p := range []string{"/healthz", "/readyz", "/metrics", root + "/events"} {
			e.doWith("GET", p, "admin", nil, map[string]string{"X-Request-ID": "probe" + p})
			lines := logs.lines(t, "request", "probe"+p)
			want := "DEBUG"
			if p == root+"/events" {
				want = "INFO"
			}
			if len(lines) != 1 || lines[0]["level"] != want {
				t.Errorf("%s: lines %v, want one at %s", p, lines, want)
			}
		}
	})
}

// TestMetricsBuildInfoAndInFlight: the build is named, and the request
// being served is counted in flight.
func TestMetricsBuildInfoAndInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := e.doWith("GET", "/metrics", "admin", nil, nil).raw
	if !strings.Contains(out, `eventcal_build_info{go="go`) {
		t.Errorf("no eventcal_build_info with the Go version")
	}
	if v, ok := metricValue(out, "eventcal_http_requests_in_flight"); !ok || v != 1 {
		t.Errorf("in flight during the scrape = %v, %v; want 1 (the scrape itself)", v, ok)
	}
}
