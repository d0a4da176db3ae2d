package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/schedule"
)

// fakeRunner is a SourceRunner whose runs end when the test says
// (finish): Start records a running run, or answers ErrRunning while
// the source's last run is still running.
type fakeRunner struct {
	mu      sync.Mutex
	store   repository.SourceStore
	running map[int64]*repository.SourceRun
	now     func() time.Time
}

func (f *fakeRunner) Start(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[id] != nil {
		return nil, sources.ErrRunning
	}
	run := &repository.SourceRun{SourceID: id, Status: repository.RunRunning, Trigger: trigger, Started: f.now()}
	if err := f.store.CreateSourceRun(ctx, run); err != nil {
		return nil, err
	}
	f.running[id] = run
	c := *run
	return &c, nil
}

// finish ends the running run of source id as done says.
func (f *fakeRunner) finish(t *testing.T, id int64, done func(r *repository.SourceRun)) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	run := f.running[id]
	if run == nil {
		t.Fatalf("source %d is not running", id)
	}
	done(run)
	run.Finished = f.now()
	if err := f.store.SaveSourceRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	delete(f.running, id)
}

// sourcesEnv is an env with a fakeRunner; mongo picks the MongoDB store.
func sourcesEnv(t *testing.T, mongo bool, settings ...string) (*env, *fakeRunner) {
	t.Helper()
	fr := &fakeRunner{running: map[int64]*repository.SourceRun{}}
	opts := envOptions{sourceRunner: fr}
	if mongo {
		opts.openStore = openMongo
	}
	e := newEnvWith(t, t.TempDir(), opts, settings...)
	fr.store, fr.now = e.store, e.clockNow
	return e, fr
}

// sourceBody is a valid source to create.
func sourceBody(url string) map[string]any {
	return map[string]any{"url": url, "schedule": "@daily", "categories": []any{"concerts"}}
}

// newSource creates a source as the admin and returns its ID.
func (e *env) newSource(t *testing.T, url string) int64 {
	t.Helper()
	e.t = t
	return e.must(201, "POST", "sources", "admin", map[string]any{"url": url}).id()
}

// countSources is how many sources the store holds.
func (e *env) countSources(t *testing.T) int {
	t.Helper()
	all, err := e.store.ListSources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// TestSourceRoutesWhoMay sends every source route as every role:
// anonymous callers get 401, contributors and authors 403 (the admin
// routes' envelope, rest_forbidden), editors and administrators are
// served; a refused request changes nothing.
func TestSourceRoutesWhoMay(t *testing.T) {
	e, fr := sourcesEnv(t, false)
	e.must(201, "POST", "categories", "admin", map[string]any{"name": "Concerts"})
	routes := []struct {
		name, method, path string
		body               any
		ok                 int
		// after ends what an allowed call started (a run).
		after func(t *testing.T, id int64)
	}{
		{"list", "GET", "sources", nil, 200, nil},
		{"create", "POST", "sources", sourceBody("https://feeds.example/new.ics"), 201, nil},
		{"get", "GET", "sources/%d", nil, 200, nil},
		{"update", "PATCH", "sources/%d", map[string]any{"name": "Renamed"}, 200, nil},
		{"update by POST", "POST", "sources/%d", map[string]any{"name": "Renamed again"}, 200, nil},
		{"run", "POST", "sources/%d/run", nil, 202, func(t *testing.T, id int64) {
			fr.finish(t, id, func(r *repository.SourceRun) { r.Status = repository.RunSucceeded })
		}},
		{"runs", "GET", "sources/%d/runs", nil, 200, nil},
		{"delete", "DELETE", "sources/%d", nil, 200, nil},
	}
	roles := []struct {
		as     string
		status int
	}{{"", 401}, {"contributor", 403}, {"author", 403}, {"editor", 0}, {"admin", 0}}
	for _, rt := range routes {
		for _, role := range roles {
			name := role.as
			if name == "" {
				name = "anonymous"
			}
			t.Run(rt.name+" as "+name, func(t *testing.T) {
				id := e.newSource(t, "https://feeds.example/"+strings.ReplaceAll(rt.name+name, " ", "-")+".ics")
				path := rt.path
				if strings.Contains(path, "%d") {
					path = fmt.Sprintf(path, id)
				}
				before := e.countSources(t)
				want := role.status
				if want == 0 {
					want = rt.ok
				}
				r := e.do(rt.method, path, role.as, rt.body)
				if r.status != want {
					t.Fatalf("status %d, want %d: %s", r.status, want, r.raw)
				}
				if role.status != 0 {
					if r.str("code") != "rest_forbidden" || r.num("data.status") != float64(role.status) {
						t.Errorf("envelope %s", r.raw)
					}
					if n := e.countSources(t); n != before {
						t.Errorf("a refused request changed the sources: %d, was %d", n, before)
					}
					got := e.must(200, "GET", fmt.Sprintf("sources/%d", id), "admin", nil)
					if got.str("name") != "feeds.example" || got.path("last_run") != nil {
						t.Errorf("a refused request changed the source: %s", got.raw)
					}
					return
				}
				if rt.after != nil {
					rt.after(t, id)
				}
			})
		}
	}
}

// TestSourceRoutesRefuseBadInput sends every kind of bad value to POST
// and PATCH: each is a 400 rest_invalid_param naming the field in
// data.params (a missing url: rest_missing_callback_param), and the
// store is unchanged.
func TestSourceRoutesRefuseBadInput(t *testing.T) {
	e, _ := sourcesEnv(t, false)
	e.must(201, "POST", "categories", "admin", map[string]any{"name": "Concerts"})
	e.must(201, "POST", "tags", "admin", map[string]any{"name": "Jazz"})
	id := e.must(201, "POST", "sources", "editor", sourceBody("https://feeds.example/a.ics")).id()
	stored := e.must(200, "GET", fmt.Sprintf("sources/%d", id), "editor", nil).raw
	ok := "https://feeds.example/b.ics"
	with := func(k string, v any) map[string]any { return map[string]any{"url": ok, k: v} }
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"ftp url", with("url", "ftp://feeds.example/a.ics"), "url"},
		{"javascript url", with("url", "javascript:alert(1)"), "url"},
		{"loopback url", with("url", "http://127.0.0.1:9/cal.ics"), "url"},
		{"private url", with("url", "http://192.168.1.10/cal.ics"), "url"},
		{"localhost url", with("url", "http://localhost/cal.ics"), "url"},
		{"metadata url", with("url", "http://169.254.169.254/latest/"), "url"},
		{"credentials in the url", with("url", "https://me:pw@feeds.example/a.ics"), "url"},
		{"url not a string", with("url", []any{"https://feeds.example/a.ics"}), "url"},
		{"unknown format", with("format", "json"), "format"},
		{"schedule @monthly", with("schedule", "@monthly"), "schedule"},
		{"schedule every 5m", with("schedule", "every 5m"), "schedule"},
		{"schedule @every 5", with("schedule", "@every 5"), "schedule"},
		{"schedule @every 30s", with("schedule", "@every 30s"), "schedule"},
		{"schedule four fields", with("schedule", "0 * * *"), "schedule"},
		{"schedule minute 60", with("schedule", "60 * * * *"), "schedule"},
		{"schedule never fires", with("schedule", "0 0 31 2 *"), "schedule"},
		{"unknown status", with("status", "live"), "status"},
		{"unknown category", with("categories", []any{"concerts", "Opera"}), "categories"},
		{"unknown category ID", with("categories", []any{9999}), "categories"},
		{"unknown tag", with("tags", []any{"jazz", "blues"}), "tags"},
		{"bad on_removed", with("on_removed", "delete"), "on_removed"},
		{"name too long", with("name", strings.Repeat("x", sources.MaxSourceName+1)), "name"},
	}
	for _, c := range cases {
		for _, write := range []struct{ method, path string }{{"POST", "sources"}, {"PATCH", fmt.Sprintf("sources/%d", id)}} {
			t.Run(write.method+" "+c.name, func(t *testing.T) {
				e.t = t
				r := e.do(write.method, write.path, "editor", c.body)
				if r.status != 400 || r.str("code") != "rest_invalid_param" {
					t.Fatalf("status %d: %s", r.status, r.raw)
				}
				params, _ := r.path("data.params").(map[string]any)
				if _, named := params[c.field]; !named || len(params) != 1 {
					t.Errorf("data.params %v, want %s only", params, c.field)
				}
				if n := e.countSources(t); n != 1 {
					t.Errorf("%d sources stored", n)
				}
				if got := e.must(200, "GET", fmt.Sprintf("sources/%d", id), "editor", nil).raw; got != stored {
					t.Errorf("the source changed:\n%s\nwas\n%s", got, stored)
				}
			})
		}
	}
	t.Run("no url", func(t *testing.T) {
		e.t = t
		r := e.do("POST", "sources", "editor", map[string]any{"name": "x"})
		if r.status != 400 || r.str("code") != "rest_missing_callback_param" || !strings.Contains(r.raw, `"url"`) {
			t.Errorf("status %d: %s", r.status, r.raw)
		}
	})
	t.Run("the schedule's 400 says what is accepted", func(t *testing.T) {
		e.t = t
		r := e.do("POST", "sources", "editor", with("schedule", "@monthly"))
		if msg := r.str("data.params.schedule"); !strings.Contains(msg, "@every <duration>") || !strings.Contains(msg, "five-field cron") {
			t.Errorf("message %q", msg)
		}
	})
}

// TestSourceRoutesRoundTrip creates, reads, lists, changes and deletes
// sources through the API on both stores: the defaults, the field order
// of a source, labels named by slug or name stored as IDs, a partial
// PATCH, and 404 source_not_found once deleted.
func TestSourceRoutesRoundTrip(t *testing.T) {
	for _, engine := range []string{"sqlite", "mongo"} {
		t.Run(engine, func(t *testing.T) {
			e, _ := sourcesEnv(t, engine == "mongo")
			cat := e.must(201, "POST", "categories", "admin", map[string]any{"name": "Concerts"}).id()
			tag := e.must(201, "POST", "tags", "admin", map[string]any{"name": "Jazz"}).id()
			editor := e.users["editor"].ID
			created := e.must(201, "POST", "sources", "editor", map[string]any{"url": "https://feeds.example/cal.ics",
				"categories": []any{"concerts", cat}, "tags": []any{"Jazz"}})
			if got := strings.Join(keysOf(t, created.raw), " "); got != "id name url format detected_format schedule status categories tags on_removed author created updated last_run" {
				t.Errorf("keys %s", got)
			}
			id := created.id()
			want := map[string]any{"id": id, "name": "feeds.example", "url": "https://feeds.example/cal.ics", "format": "auto",
				"detected_format": nil, "schedule": "", "status": "draft", "categories": []any{cat}, "tags": []any{tag},
				"on_removed": "trash", "author": editor, "created": "2026-11-22T12:00:00Z", "updated": "2026-11-22T12:00:00Z", "last_run": nil}
			// A scheduled source shows when it runs next, by the spread
			// rule of the replicas' schedule (in TIMEZONE).
			next, ok := schedule.SourceNext(id, "@every 2h", time.UTC, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
			if !ok {
				t.Fatal("no next run of @every 2h")
			}
			e.run(t, []scenario{
				{name: "get", method: "GET", url: fmt.Sprintf("sources/%d", id), as: "admin", status: 200, want: want},
				{name: "list", method: "GET", url: "sources", as: "editor", status: 200, want: map[string]any{"sources.0.id": id, "sources.1": nil}},
				{name: "patch", method: "PATCH", url: fmt.Sprintf("sources/%d", id), as: "admin",
					body:   map[string]any{"name": "Partner", "schedule": "@every 2h", "status": "publish", "format": "ics", "on_removed": "keep", "tags": []any{}},
					status: 200, want: map[string]any{"name": "Partner", "schedule": "@every 2h", "status": "publish", "format": "ics", "on_removed": "keep",
						"tags": []any{}, "categories": []any{cat}, "url": "https://feeds.example/cal.ics", "author": editor}},
				{name: "get after patch", method: "GET", url: fmt.Sprintf("sources/%d", id), as: "editor", status: 200,
					want: map[string]any{"name": "Partner", "schedule": "@every 2h", "categories": []any{cat}, "tags": []any{},
						"next_run": next.UTC().Format(time.RFC3339)}},
				{name: "delete", method: "DELETE", url: fmt.Sprintf("sources/%d", id), as: "editor", status: 200,
					want: map[string]any{"deleted": true, "previous.id": id, "previous.name": "Partner"}},
				{name: "gone", method: "GET", url: fmt.Sprintf("sources/%d", id), as: "editor", status: 404, want: map[string]any{"code": "source_not_found"}},
				{name: "patch gone", method: "PATCH", url: fmt.Sprintf("sources/%d", id), as: "editor", body: map[string]any{"name": "x"}, status: 404},
				{name: "runs of gone", method: "GET", url: fmt.Sprintf("sources/%d/runs", id), as: "editor", status: 404},
				{name: "run gone", method: "POST", url: fmt.Sprintf("sources/%d/run", id), as: "editor", status: 404},
				{name: "list empty", method: "GET", url: "sources", as: "editor", status: 200, want: map[string]any{"sources": []any{}}},
			})
		})
	}
}

// TestSourceRunRoute runs a source through the API: 202 with the run as
// recorded (running), the run in GET /sources/{id}/runs (newest first,
// per_page bounded) and as the source's last_run, 409 source_running
// while it runs, and 503 when the service runs without a runner.
func TestSourceRunRoute(t *testing.T) {
	e, fr := sourcesEnv(t, false)
	id := e.newSource(t, "https://feeds.example/cal.ics")
	e.t = t
	first := e.must(202, "POST", fmt.Sprintf("sources/%d/run", id), "editor", nil)
	if got := strings.Join(keysOf(t, first.raw), " "); got != "id source_id status trigger started finished created updated unchanged removed failed error problems" {
		t.Errorf("run keys %s", got)
	}
	e.run(t, []scenario{
		{name: "the run as recorded", method: "GET", url: fmt.Sprintf("sources/%d/runs", id), as: "editor", status: 200,
			want: map[string]any{"runs.0.id": first.id(), "runs.0.status": "running", "runs.0.trigger": "api", "runs.0.finished": nil, "runs.1": nil}},
		{name: "409 while it runs", method: "POST", url: fmt.Sprintf("sources/%d/run", id), as: "admin", status: 409,
			want: map[string]any{"code": "source_running", "data.status": 409}},
		{name: "last_run", method: "GET", url: fmt.Sprintf("sources/%d", id), as: "editor", status: 200,
			want: map[string]any{"last_run.id": first.id(), "last_run.status": "running"}},
	})
	// The runner records runs outside any write route: the source
	// routes are never answered from the response cache, so a run that
	// ended shows at once.
	fr.finish(t, id, func(r *repository.SourceRun) {
		r.Status, r.Created, r.Failed = repository.RunSucceeded, 3, 1
		r.Problems = []repository.RunProblem{{UID: "x@feed", Problem: "no start date"}}
	})
	e.t = t
	if got := e.must(200, "GET", fmt.Sprintf("sources/%d/runs", id), "editor", nil); got.str("runs.0.status") != "succeeded" {
		t.Errorf("a run that ended still shows as %s (a cached answer)", got.str("runs.0.status"))
	}
	if got := e.must(200, "GET", fmt.Sprintf("sources/%d", id), "editor", nil); got.str("last_run.status") != "succeeded" {
		t.Errorf("last_run of a run that ended still shows as %s (a cached answer)", got.str("last_run.status"))
	}
	second := e.must(202, "POST", fmt.Sprintf("sources/%d/run", id), "admin", nil)
	fr.finish(t, id, func(r *repository.SourceRun) {
		r.Status, r.Error = repository.RunFailed, "the source answered HTTP 500"
	})
	e.run(t, []scenario{
		{name: "newest first", method: "GET", url: fmt.Sprintf("sources/%d/runs", id), as: "editor", status: 200,
			want: map[string]any{"runs.0.id": second.id(), "runs.0.status": "failed", "runs.0.error": "the source answered HTTP 500",
				"runs.1.id": first.id(), "runs.1.status": "succeeded", "runs.1.created": 3, "runs.1.failed": 1,
				"runs.1.problems": []any{map[string]any{"uid": "x@feed", "problem": "no start date"}}, "runs.1.error": nil}},
		{name: "per_page", method: "GET", url: fmt.Sprintf("sources/%d/runs?per_page=1", id), as: "editor", status: 200,
			want: map[string]any{"runs.0.id": second.id(), "runs.1": nil}},
		{name: "per_page 0", method: "GET", url: fmt.Sprintf("sources/%d/runs?per_page=0", id), as: "editor", status: 400,
			want: map[string]any{"code": "rest_invalid_param"}},
		{name: "last_run is the newest", method: "GET", url: fmt.Sprintf("sources/%d", id), as: "editor", status: 200,
			want: map[string]any{"last_run.id": second.id(), "last_run.status": "failed"}},
	})
	// per_page is bounded as the webhook delivery log's is.
	for range sources.MaxRunList + 3 {
		e.t = t
		e.must(202, "POST", fmt.Sprintf("sources/%d/run", id), "editor", nil)
		fr.finish(t, id, func(r *repository.SourceRun) { r.Status = repository.RunSucceeded })
	}
	e.t = t
	all := e.must(200, "GET", fmt.Sprintf("sources/%d/runs?per_page=100000", id), "editor", nil)
	if n := len(all.path("runs").([]any)); n != sources.MaxRunList {
		t.Errorf("%d runs, want %d", n, sources.MaxRunList)
	}
	if n := len(e.must(200, "GET", fmt.Sprintf("sources/%d/runs", id), "editor", nil).path("runs").([]any)); n != sources.DefaultRunList {
		t.Errorf("%d runs by default, want %d", n, sources.DefaultRunList)
	}

	t.Run("without a runner", func(t *testing.T) {
		bare := newEnv(t)
		sid := bare.newSource(t, "https://feeds.example/cal.ics")
		bare.t = t
		r := bare.do("POST", fmt.Sprintf("sources/%d/run", sid), "editor", nil)
		if r.status != 503 || r.str("code") != "sources_unavailable" || !strings.Contains(r.str("message"), "runner") {
			t.Errorf("status %d: %s", r.status, r.raw)
		}
	})
}

// TestEventSourceField checks the source field of our root's events:
// null for an event made here, {id, uid} for one whose record links a
// source (written through the store), in single reads, lists,
// occurrences and the answers of writes; under The Events Calendar's
// root events have no source field and there are no /sources routes.
func TestEventSourceField(t *testing.T) {
	e, _ := sourcesEnv(t, false, "TEC_COMPAT", "true")
	event := func(title string, extra map[string]any) map[string]any {
		b := map[string]any{"title": title, "status": "publish", "start_date": "2027-03-18 19:00:00", "end_date": "2027-03-18 21:00:00"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	local := e.must(201, "POST", "events", "admin", event("Local", nil))
	if got := local.raw; !strings.Contains(got, `"event_status_reason":"","source":null`) {
		t.Errorf("create answer: no source null after event_status_reason: %s", got)
	}
	imported := e.must(201, "POST", "events", "admin", event("Imported", map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=3"}}}))
	if _, err := e.store.UpdateRecord(context.Background(), imported.id(), func(p *repository.Record) error {
		p.Source = &repository.SourceLink{SourceID: 7, UID: "abc-123@partner.example", Hash: "h"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A write through the API after the store's: the caches start over
	// and the answer of the write shows the link.
	patched := e.must(200, "PATCH", fmt.Sprintf("events/%d", imported.id()), "admin", map[string]any{"excerpt": "From a partner"})
	link := map[string]any{"id": 7, "uid": "abc-123@partner.example"}
	if got := patched.path("source"); fmt.Sprint(got) != fmt.Sprint(map[string]any{"id": json.Number("7"), "uid": "abc-123@partner.example"}) {
		t.Errorf("update answer: source %v", got)
	}
	e.flush()
	tec := "/wp-json/tribe/events/v1/"
	e.run(t, []scenario{
		{name: "local single", method: "GET", url: fmt.Sprintf("events/%d", local.id()), status: 200, want: map[string]any{"source": nil}},
		{name: "imported single", method: "GET", url: fmt.Sprintf("events/%d", imported.id()), status: 200, want: map[string]any{"source": link}},
		{name: "list", method: "GET", url: "events?start_date=2027-03-01&per_page=50", status: 200, check: func(t *testing.T, r *resp) {
			seen := map[string]any{}
			for _, it := range r.path("events").([]any) {
				ev := it.(map[string]any)
				if _, has := ev["source"]; !has {
					t.Errorf("event %v has no source field", ev["id"])
				}
				seen[ev["title"].(string)] = ev["source"]
			}
			if seen["Local"] != nil || seen["Imported"] == nil {
				t.Errorf("sources %v", seen)
			}
		}},
		{name: "occurrences", method: "GET", url: fmt.Sprintf("events/%d/occurrences?start_date=2027-03-01", imported.id()), status: 200,
			want: map[string]any{"events.0.source": link, "events.2.source": link}},
		{name: "TEC root single", method: "GET", url: tec + fmt.Sprintf("events/%d", imported.id()), status: 200,
			absent: []string{"source", "event_status"}},
		{name: "TEC root list", method: "GET", url: tec + "events?start_date=2027-03-01", status: 200,
			absent: []string{"events.0.source", "events.1.source"}},
		{name: "TEC root has no sources", method: "GET", url: tec + "sources", as: "admin", status: 404, want: map[string]any{"code": "rest_no_route"}},
		{name: "TEC root has no source run", method: "POST", url: tec + "sources/1/run", as: "admin", status: 404},
	})
	for path, want := range map[string]int{root + "/sources": 204, root + "/sources/1/runs": 204, tec + "sources": 404, tec + "sources/1/run": 404} {
		if r := e.do("OPTIONS", path, "", nil); r.status != want {
			t.Errorf("OPTIONS %s: %d, want %d", path, r.status, want)
		}
	}
	// The iCalendar feed is unchanged: no source in it.
	ics := e.do("GET", fmt.Sprintf("events/%d.ics", imported.id()), "", nil)
	if ics.status != 200 || strings.Contains(ics.raw, "partner.example") {
		t.Errorf("ics %d: %s", ics.status, ics.raw)
	}
}

// lateRunner is a SourceRunner made after the env (the runner needs the
// env's store).
type lateRunner struct {
	r atomic.Pointer[sources.Runner]
}

func (l *lateRunner) Start(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error) {
	return l.r.Load().Start(ctx, id, trigger)
}

// TestSourceFirstSession is the README's first session through the API
// with the real runner and a feed served by a local server: register a
// source, run it (202, running), follow its run to the end, review the
// drafts it imported (each with its source), publish one, and find it in
// the public list.
func TestSourceFirstSession(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		_, _ = io.WriteString(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//partner//EN\r\n"+
			"BEGIN:VEVENT\r\nUID:spring-concert@partner.example\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20270318T190000Z\r\nDTEND:20270318T210000Z\r\nSUMMARY:Spring concert\r\nLOCATION:Town Hall, 1 Main St, Springfield\r\nEND:VEVENT\r\n"+
			"BEGIN:VEVENT\r\nUID:lecture@partner.example\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20270319T180000Z\r\nDTEND:20270319T200000Z\r\nSUMMARY:Lecture\r\nEND:VEVENT\r\n"+
			"END:VCALENDAR\r\n")
	}))
	defer feedSrv.Close()
	lr := &lateRunner{}
	e := newEnvWith(t, t.TempDir(), envOptions{sourceRunner: lr}, "SOURCES_ALLOW_PRIVATE", "true")
	cal := calendar.New(calendar.Deps{Config: e.cfg, Store: e.store, Logger: slog.New(slog.DiscardHandler), Now: e.clockNow})
	runner := sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: cal, Config: e.cfg, Logger: slog.New(slog.DiscardHandler), Now: e.clockNow,
		Reader: sources.NewReader(sources.ReaderOptions{Fetcher: fetch.New(fetch.Options{AllowPrivate: true})})})
	t.Cleanup(runner.Close)
	lr.r.Store(runner)

	e.must(201, "POST", "categories", "admin", map[string]any{"name": "Partners"})
	src := e.must(201, "POST", "sources", "editor", map[string]any{"url": feedSrv.URL + "/calendar.ics", "name": "Partner venue",
		"schedule": "@daily", "categories": []any{"partners"}})
	run := e.must(202, "POST", fmt.Sprintf("sources/%d/run", src.id()), "editor", nil)
	if run.str("status") != "running" || run.str("trigger") != "api" || run.path("finished") != nil {
		t.Errorf("run as started: %s", run.raw)
	}
	var runs *resp
	for deadline := testdeadline.After(t); ; {
		runs = e.must(200, "GET", fmt.Sprintf("sources/%d/runs", src.id()), "editor", nil)
		if runs.str("runs.0.status") != "running" {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the run did not end: %s", runs.raw)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if runs.str("runs.0.status") != "succeeded" || runs.num("runs.0.created") != 2 || runs.num("runs.0.id") != float64(run.id()) {
		t.Fatalf("run: %s", runs.raw)
	}
	e.flush()
	// The drafts, for review: not public, with their source.
	if pub := e.must(200, "GET", "events?start_date=2027-03-01", "", nil); pub.num("total") != 0 {
		t.Errorf("imported drafts are public: %s", pub.raw)
	}
	drafts := e.must(200, "GET", "events?status=draft&start_date=2027-03-01", "editor", nil)
	if drafts.num("total") != 2 {
		t.Fatalf("drafts: %s", drafts.raw)
	}
	var concert int64
	for _, it := range drafts.path("events").([]any) {
		ev := it.(map[string]any)
		s, _ := ev["source"].(map[string]any)
		if s == nil || fmt.Sprint(s["id"]) != fmt.Sprint(src.id()) || !strings.HasSuffix(fmt.Sprint(s["uid"]), "@partner.example") {
			t.Errorf("event %v: source %v", ev["id"], ev["source"])
		}
		if cats, _ := ev["categories"].([]any); len(cats) != 1 {
			t.Errorf("event %v: categories %v", ev["id"], ev["categories"])
		}
		if ev["title"] == "Spring concert" {
			concert, _ = ev["id"].(json.Number).Int64()
		}
	}
	e.must(200, "PATCH", fmt.Sprintf("events/%d", concert), "editor", map[string]any{"status": "publish"})
	e.flush()
	pub := e.must(200, "GET", "events?start_date=2027-03-01", "", nil)
	if pub.num("total") != 1 || pub.str("events.0.title") != "Spring concert" || pub.str("events.0.source.uid") != "spring-concert@partner.example" {
		t.Errorf("public list: %s", pub.raw)
	}
	if got := e.must(200, "GET", fmt.Sprintf("sources/%d", src.id()), "editor", nil); got.str("last_run.status") != "succeeded" || got.str("detected_format") != "ics" {
		t.Errorf("source after its run: %s", got.raw)
	}
}

// runnerFunc is a SourceRunner of one function.
type runnerFunc func(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error)

func (f runnerFunc) Start(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error) {
	return f(ctx, id, trigger)
}

// TestSourceRunOfADeletedSource: a source deleted between the route's
// read and the runner's claim is 404 source_not_found, not a failure of
// the service.
func TestSourceRunOfADeletedSource(t *testing.T) {
	e := newEnvWith(t, t.TempDir(), envOptions{sourceRunner: runnerFunc(func(context.Context, int64, string) (*repository.SourceRun, error) {
		return nil, repository.ErrNotFound
	})})
	id := e.newSource(t, "https://feeds.example/cal.ics")
	e.t = t
	if r := e.do("POST", fmt.Sprintf("sources/%d/run", id), "editor", nil); r.status != 404 || r.str("code") != "source_not_found" {
		t.Errorf("status %d: %s", r.status, r.raw)
	}
}
