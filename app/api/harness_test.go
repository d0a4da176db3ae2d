package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/webhooks"
)

// env is one embedded stack for API scenarios: a SQLite store in a temp
// dir, the Fiber app, and a user with a token for every role.
type env struct {
	t      testing.TB
	app    *fiber.App
	store  repository.Store
	cfg    *config.Config
	tokens map[string]string // role (or login) -> bearer token
	users  map[string]*repository.User
	now    time.Time
	// clock is now for the worker's and the app's goroutines (Unix
	// nanoseconds): setNow changes both without a data race.
	clock  atomic.Int64
	docs   docValidator
	engine search.Engine
	worker *indexing.Worker
	// hooks queue webhook messages from the worker's batches; tests send
	// them with hooks.DeliverDue (no delivery loop runs).
	hooks *webhooks.Dispatcher
	// hookClock is the webhooks' clock (Unix nanoseconds), read by the
	// worker's goroutine too: tests move it with advanceHooks.
	hookClock atomic.Int64
}

// setNow moves the clock of the app and the worker to t.
func (e *env) setNow(t time.Time) {
	e.now = t
	e.clock.Store(t.UnixNano())
}

// clockNow is the clock of the app and the worker.
func (e *env) clockNow() time.Time { return time.Unix(0, e.clock.Load()).UTC() }

// advanceHooks moves the webhooks' clock forward.
func (e *env) advanceHooks(d time.Duration) { e.hookClock.Add(int64(d)) }

// flush waits (with a deadline) until the sync worker has indexed every
// write so far.
func (e *env) flush() {
	e.t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testdeadline.Of(e.t))
	defer cancel()
	if err := e.worker.Flush(ctx); err != nil {
		e.t.Fatalf("flush: %v", err)
	}
}

// root is the API root under the default settings.
const root = "/calendar/events/v1"

// newEnv starts a stack; extra settings override the defaults.
func newEnv(t testing.TB, settings ...string) *env {
	t.Helper()
	return newEnvIn(t, t.TempDir(), settings...)
}

// newMongoEnv is newEnv on a MongoDB store (openMongo): the same
// stack, users and tokens.
func newMongoEnv(t testing.TB, settings ...string) *env {
	t.Helper()
	return newEnvWith(t, t.TempDir(), envOptions{openStore: openMongo}, settings...)
}

// openMongo is an envOptions.openStore: a MongoDB store on a server of
// its own (an embedded FerretDB, or the server of TEST_MONGO_URI) in a
// database of its own, its look-ups by _id indexed as on MongoDB
// (indexIDs).
func openMongo(t testing.TB, _ *config.Config) repository.Store {
	t.Helper()
	uri, dir := mongotest.StartFiles(t)
	db := mongotest.Database(t)
	// A busy item's lock is waited for until the test's deadline, as every
	// operation is (the URI's timeoutMS): many writers of one item on a
	// busy machine (checkRaces) can outwait the default.
	st, err := mongo.Open(context.Background(), uri, db, mongo.WithLockWait(testdeadline.Timeout(t)))
	if err != nil {
		t.Fatal(err)
	}
	indexIDs(t, st, dir, db)
	return st
}

// indexIDs indexes the look-ups by _id of st (database db on the embedded
// FerretDB whose files are in dir) as MongoDB does (mongotest.IndexIDs),
// in every collection Open made: it first waits for the background build
// of the store's non-unique indexes, which makes most of the collections
// (posts, terms, tokens, slugs, index_marks and more), so that none is
// left without the index and scanned, every document decoded, on each
// look-up. Nothing on an external server (dir "").
func indexIDs(t testing.TB, st *mongo.Store, dir, db string) {
	t.Helper()
	if err := st.WaitIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	mongotest.IndexIDs(t, dir, db)
}

// newEnvIn starts a stack on an existing data directory.
func newEnvIn(t testing.TB, dir string, settings ...string) *env {
	t.Helper()
	return newEnvWith(t, dir, envOptions{}, settings...)
}

// envOptions change how newEnvWith builds the stack.
type envOptions struct {
	// openStore replaces the SQLite store (a MongoDB store, for example).
	openStore func(t testing.TB, cfg *config.Config) repository.Store
	// wrapStore wraps the store the app sees (fault injection).
	wrapStore func(repository.Store) repository.Store
	// log receives the app's log lines (discarded when nil).
	log io.Writer
	// recurrenceCache is the app's expansion cache (a new one when nil).
	recurrenceCache *recurrence.Cache
	// noWorker leaves the sync worker stopped: the store changes only by
	// the requests (tests that compare dumps of the store).
	noWorker bool
	// sourceRunner starts source runs (POST /sources/{id}/run; nil: 503).
	sourceRunner api.SourceRunner
}

// newEnvWith starts a stack with options.
func newEnvWith(t testing.TB, dir string, opts envOptions, settings ...string) *env {
	t.Helper()
	vars := map[string]string{"DATA_DIR": dir, "SITE_URL": "http://example.test", "ADMIN_TOKEN": "admin-secret"}
	for i := 0; i+1 < len(settings); i += 2 {
		vars[settings[i]] = settings[i+1]
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var st repository.Store
	if opts.openStore != nil {
		st = opts.openStore(t, cfg)
	} else {
		path := filepath.Join(cfg.DataDir, "calendar.db")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			sqlitetest.Create(t, path) // a new store, made from a copy
		}
		sq, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		st = sq
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	rawEngine, err := embedded.Open(filepath.Join(cfg.DataDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	// The service wraps its engine in the result cache (app); so do the
	// scenarios, so that every list assertion after a write checks that the
	// cache was invalidated.
	eng := search.NewCached(rawEngine, time.Minute)
	if err := eng.Init(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{t: t, store: st, cfg: cfg, tokens: map[string]string{}, users: map[string]*repository.User{},
		now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), engine: eng}
	e.clock.Store(e.now.UnixNano())
	e.worker = &indexing.Worker{Store: st, Engine: eng, Log: quiet, Now: e.clockNow,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			MaxOccurrences: cfg.MaxSeriesOccurrences}}
	e.hookClock.Store(e.now.UnixNano())
	e.hooks = &webhooks.Dispatcher{Store: st, Log: quiet, AllowPrivate: cfg.WebhookAllowPrivate,
		Now:    func() time.Time { return time.Unix(0, e.hookClock.Load()).UTC() },
		Render: api.NewItemRenderer(api.Options{Config: cfg, Store: st})}
	e.worker.Changes = e.hooks
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	if opts.noWorker {
		close(done)
	} else {
		go func() { defer close(done); e.worker.Run(runCtx) }()
	}
	t.Cleanup(func() { stop(); <-done; eng.Close() })
	appStore, appLog := st, quiet
	if opts.wrapStore != nil {
		appStore = opts.wrapStore(st)
	}
	if opts.log != nil {
		appLog = slog.New(slog.NewTextHandler(opts.log, nil))
	}
	a, err := api.New(api.Options{Config: cfg, Store: appStore, Search: eng, Indexer: e.worker, Logger: appLog,
		Now: e.clockNow, Webhooks: e.hooks, Identity: scenarioIdentity(), RecurrenceCache: opts.recurrenceCache,
		SourceRunner: opts.sourceRunner})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	for _, role := range []string{"contributor", "author", "editor"} {
		e.addUser(role, role)
	}
	e.addUser("admin1", "admin")
	e.tokens["admin"] = e.tokens["admin1"]
	e.addUser("contributor2", "contributor")
	e.addUser("author2", "author")
	return e
}

// scenarioIdentity is the build the scenarios' app reports: a fixed
// version, so that a release (config.Version) does not change the
// interface document's info.version, its ETag and the recorded sessions
// (TestGolden); a fresh instance, as NewIdentity draws.
func scenarioIdentity() api.Identity {
	id := api.NewIdentity()
	id.Version = "0.0.0-test"
	return id
}

// addUser creates a user with a token.
func (e *env) addUser(login, role string) *repository.User {
	e.t.Helper()
	r, ok := repository.ParseRole(role)
	if !ok {
		e.t.Fatalf("bad role %q", role)
	}
	u := &repository.User{Login: login, Role: r, Created: e.now}
	if err := e.store.CreateUser(context.Background(), u); err != nil {
		e.t.Fatal(err)
	}
	secret, _ := repository.NewTokenSecret()
	if err := e.store.CreateToken(context.Background(), &repository.Token{Hash: repository.HashToken(secret), UserID: u.ID, Created: e.now}); err != nil {
		e.t.Fatal(err)
	}
	e.tokens[login] = secret
	e.users[login] = u
	return u
}

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	raw    string
	body   any
}

// path reads a dotted path ("venue.id", "events.0.title") from the body.
func (r *resp) path(p string) any { return jsonPath(r.body, p) }

// jsonPath walks a decoded JSON value.
func jsonPath(v any, p string) any {
	if p == "" {
		return v
	}
	for _, part := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i := -1
			for j, c := range part {
				if c < '0' || c > '9' {
					i = -1
					break
				}
				if j == 0 {
					i = 0
				}
				i = i*10 + int(c-'0')
			}
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// do sends a request as a caller ("" for anonymous; a role or login name,
// or "token:<secret>"). body may be nil, a map/slice (sent as JSON), a
// url.Values (sent as a form) or a string (sent as JSON text as is).
func (e *env) do(method, target, as string, body any) *resp {
	e.t.Helper()
	return e.doWith(method, target, as, body, nil)
}

// doWith is do with extra request headers.
func (e *env) doWith(method, target, as string, body any, headers map[string]string) *resp {
	e.t.Helper()
	var rdr io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rdr, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		rdr, ct = strings.NewReader(b), "application/json"
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rdr, ct = bytes.NewReader(raw), "application/json"
	}
	if !strings.HasPrefix(target, "/") {
		target = root + "/" + target
	}
	req := httptest.NewRequest(method, strings.ReplaceAll(target, " ", "%20"), rdr)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	switch {
	case as == "":
	case strings.HasPrefix(as, "token:"):
		req.Header.Set("Authorization", "Bearer "+strings.TrimPrefix(as, "token:"))
	default:
		tok, ok := e.tokens[as]
		if !ok {
			e.t.Fatalf("no user %q", as)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_ = dec.Decode(&out.body)
	}
	e.validateResponse(e.t, req, out)
	return out
}

// must sends a request and fails unless the status is want.
func (e *env) must(want int, method, target, as string, body any) *resp {
	e.t.Helper()
	r := e.do(method, target, as, body)
	if r.status != want {
		e.t.Fatalf("%s %s as %q: status %d, want %d; body %s", method, target, as, r.status, want, r.raw)
	}
	return r
}

// id reads the "id" of a response as an int.
func (r *resp) id() int64 {
	n, _ := r.path("id").(json.Number).Int64()
	return n
}

// str reads a path as a string ("" when not a string).
func (r *resp) str(p string) string {
	s, _ := r.path(p).(string)
	return s
}

// num reads a path as a number (json.Number), -1 when not a number.
func (r *resp) num(p string) float64 {
	n, ok := r.path(p).(json.Number)
	if !ok {
		return -1
	}
	f, _ := n.Float64()
	return f
}

// scenario is one table-driven API case (PocketBase's ApiScenario).
type scenario struct {
	name   string
	method string
	url    string
	as     string
	body   any
	status int
	// want maps dotted paths to expected values (compared as JSON text).
	want map[string]any
	// contains lists substrings the raw body must contain.
	contains []string
	// absent lists dotted paths that must not exist.
	absent []string
	// check runs extra assertions.
	check func(t *testing.T, r *resp)
}

// run executes scenarios as subtests.
func (e *env) run(t *testing.T, cases []scenario) {
	t.Helper()
	for _, sc := range cases {
		t.Run(sc.name, func(t *testing.T) {
			e.t = t
			r := e.do(sc.method, sc.url, sc.as, sc.body)
			if r.status != sc.status {
				t.Fatalf("status %d, want %d; body %s", r.status, sc.status, r.raw)
			}
			for p, want := range sc.want {
				got := r.path(p)
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s = %s, want %s", p, gj, wj)
				}
			}
			for _, s := range sc.contains {
				if !strings.Contains(r.raw, s) {
					t.Errorf("body lacks %q: %s", s, r.raw)
				}
			}
			for _, p := range sc.absent {
				if m, ok := parentOf(r.body, p); ok {
					if _, has := m[lastPart(p)]; has {
						t.Errorf("%s present, want absent", p)
					}
				}
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

func parentOf(v any, p string) (map[string]any, bool) {
	i := strings.LastIndex(p, ".")
	if i < 0 {
		m, ok := v.(map[string]any)
		return m, ok
	}
	m, ok := jsonPath(v, p[:i]).(map[string]any)
	return m, ok
}

func lastPart(p string) string { return p[strings.LastIndex(p, ".")+1:] }
