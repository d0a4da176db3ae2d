package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// stack is one in-process service on the embedded engines, listening on
// a loopback port, with a fixed clock: two stacks given the same writes
// hold the same data, byte for byte (IDs, slugs, dates).
type stack struct {
	t      *testing.T
	url    string
	app    *fiber.App
	store  repository.Store
	worker *indexing.Worker
}

// fixedNow is both stacks' clock.
var fixedNow = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

// Tokens of the stacks' users: the same on both services, as a load
// keeps them.
const (
	adminToken  = "admin-secret"
	editorToken = "ecal_editor0000000000000000000000000000000000000000000000000000000"
	contribTok  = "ecal_contrib000000000000000000000000000000000000000000000000000000"
)

// newStack starts a service with LANGUAGES en,fr,de, stopped when the
// test ends.
func newStack(t *testing.T) *stack {
	t.Helper()
	return startStack(t, t.TempDir(), t.Cleanup)
}

// startStack starts a service with LANGUAGES en,fr,de and its files in
// dir, a new one; cleanup registers what stops it.
func startStack(t *testing.T, dir string, cleanup func(func())) *stack {
	t.Helper()
	return openStack(t, dir, true, cleanup)
}

// openStack starts a service with LANGUAGES en,fr,de and its files in
// dir; cleanup registers what stops it. With fresh, dir is new and the
// service's editor and contributor (and their tokens) are made; without,
// dir holds a stack's files (a copy of the seeded template), users
// included.
func openStack(t *testing.T, dir string, fresh bool, cleanup func(func())) *stack {
	t.Helper()
	vars := map[string]string{"DATA_DIR": dir, "SITE_URL": "http://calendar.test", "ADMIN_TOKEN": adminToken,
		"LANGUAGES": "en,fr,de", "DEFAULT_LANGUAGE": "en", "WRITE_RATE": "10000", "WRITE_BURST": "10000"}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	cleanup(func() { st.Close(context.Background()) })
	raw, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	eng := search.NewCached(raw, time.Minute)
	if err := eng.Init(ctx); err != nil {
		t.Fatal(err)
	}
	cleanup(func() { eng.Close() })
	now := func() time.Time { return fixedNow }
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &indexing.Worker{Store: st, Engine: eng, Log: quiet, Now: now,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			MaxOccurrences: cfg.MaxSeriesOccurrences}}
	// Every write to a stack goes through its own API (or precedes its
	// first request), which makes every cached rendering stale at once, as
	// the index's write generation does: the TTL, which bounds the
	// staleness of writes by other processes, is never reached here. So
	// the shared stacks render each answer once for the package: most
	// comparisons ask them the same requests again.
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: eng, Indexer: w, Logger: quiet, Now: now, ResponseCacheTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		login, token string
		role         repository.Role
	}{{"editor1", editorToken, repository.RoleEditor}, {"contrib1", contribTok, repository.RoleContributor}} {
		if !fresh {
			break
		}
		user := &repository.User{Login: u.login, Role: u.role, Created: fixedNow}
		if err := st.CreateUser(ctx, user); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateToken(ctx, &repository.Token{Hash: repository.HashToken(u.token), UserID: user.ID, Created: fixedNow}); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = a.Listener(ln) }()
	cleanup(func() { _ = a.Shutdown(); <-served })
	return &stack{t: t, url: "http://" + ln.Addr().String(), app: a, store: st, worker: w}
}

// as returns the stack for test t: its requests fail t.
func (s *stack) as(t *testing.T) *stack {
	c := *s
	c.t = t
	return &c
}

// shared is the seeded pair of stacks the tests that change neither
// share (the "from" side of every comparison, and an equal "against"):
// built once, by the first test that asks, and stopped by TestMain.
var shared struct {
	once     sync.Once
	a, b     *stack
	d        seeded
	dir      string
	cleanups []func()
}

// sharedPair returns the shared seeded stacks for test t, and what the
// seed made.
func sharedPair(t *testing.T) (a, b *stack, d seeded) {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "verify-shared-")
		if err != nil {
			t.Fatal(err)
		}
		shared.dir = dir
		cleanup := func(f func()) { shared.cleanups = append(shared.cleanups, f) }
		var pair [2]*stack
		for i := range pair {
			sub := filepath.Join(dir, fmt.Sprint(i))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			pair[i] = startStack(t, sub, cleanup)
		}
		a, b := pair[0], pair[1]
		shared.d = seed(t, a, b)
		shared.a, shared.b = a, b
	})
	if shared.b == nil {
		t.Fatal("the shared stacks could not be built (see the first test that asked)")
	}
	return shared.a.as(t), shared.b.as(t), shared.d
}

// againstShared returns a new stack seeded as the shared ones, for a
// test to change, with the shared "from" stack and what the seed made:
// a service on a copy of the files of the seeded template (seededTemplate).
func againstShared(t *testing.T) (a, b *stack, d seeded) {
	t.Helper()
	a, _, d = sharedPair(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(seededTemplate(t))); err != nil {
		t.Fatal(err)
	}
	return a, openStack(t, dir, false, t.Cleanup), d
}

// template is the directory of a stack seeded as the shared ones and
// stopped: againstShared starts each of its stacks on a copy, instead of
// seeding a new one through the API (about a fifth of the package's
// CPU). Made once, by the first test that asks; TestMain removes it.
var template struct {
	once sync.Once
	dir  string // removed by TestMain
	made bool   // the seeded stack stopped in dir
}

// seededTemplate returns template's directory, made the first time: a
// stack started there, seeded (the same IDs as the shared stacks: the
// same writes on the same clock), its index flushed, then stopped, so
// that its files hold all of it.
func seededTemplate(t *testing.T) string {
	t.Helper()
	_, _, d := sharedPair(t)
	template.once.Do(func() {
		dir, err := os.MkdirTemp("", "verify-template-")
		if err != nil {
			t.Fatal(err)
		}
		template.dir = dir
		var stops []func()
		s := startStack(t, dir, func(f func()) { stops = append(stops, f) })
		got := seed(t, s)
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		if fmt.Sprint(got) != fmt.Sprint(d) {
			t.Fatalf("the template got other IDs than the shared stacks: %+v, %+v", got, d)
		}
		template.made = true
	})
	if !template.made {
		t.Fatal("the seeded template could not be made (see the first test that asked)")
	}
	return template.dir
}

// testGCPercent is the collector's target (GOGC) of the package's test
// binary (testsupport.CollectLessOften): the comparisons allocate much
// and keep little. At the default 100 the collector's mark took about 8 %
// of the binary's CPU (0.7-0.8 s in its profile); at 400 about two thirds
// of that (the shared stacks' kept answers are live), for a peak RSS of
// about 0.4-0.46 GB instead of 0.3.
const testGCPercent = 400

// TestMain runs the tests with the collector running less often
// (testGCPercent), then stops the shared stacks and removes the template.
func TestMain(m *testing.M) {
	testsupport.CollectLessOften(testGCPercent)
	code := m.Run()
	for i := len(shared.cleanups) - 1; i >= 0; i-- {
		shared.cleanups[i]()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	if template.dir != "" {
		os.RemoveAll(template.dir)
	}
	os.Exit(code)
}

// send sends a request with a token and a JSON body to the stack's API
// root and returns the status and the decoded answer.
func (s *stack) send(token, method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+"/calendar/events/v1"+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

// write sends an admin write that must succeed and returns the new ID.
func (s *stack) write(method, path string, body any) int64 {
	s.t.Helper()
	status, out := s.send(adminToken, method, path, body)
	if status >= 300 {
		s.t.Fatalf("%s %s: %d %v", method, path, status, out)
	}
	id, _ := out["id"].(float64)
	return int64(id)
}

// flush waits until the stack's index holds every write.
func (s *stack) flush() {
	s.t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), testdeadline.Of(s.t))
	defer cancel()
	if err := s.worker.Flush(ctx); err != nil {
		s.t.Fatal(err)
	}
}

// seeded holds the IDs the seed made (the same on both stacks).
type seeded struct {
	venue, organizer, parentCat, childCat, tag int64
	events                                     []int64 // published, in order
	series, hidden, draft, protected, trashed  int64
}

// seed writes the same calendar on every stack given: terms, a venue, an
// organizer, 55 published events (two pages of 50; every fifth with a
// French title, from the fourth on), a series of 60 occurrences, an
// event hidden from listings, a draft, a password-protected event and a
// trashed one.
func seed(t *testing.T, stacks ...*stack) seeded {
	t.Helper()
	var ids []seeded
	for _, s := range stacks {
		var d seeded
		d.parentCat = s.write("POST", "/categories", map[string]any{"name": "Music"})
		d.childCat = s.write("POST", "/categories", map[string]any{"name": "Jazz", "parent": d.parentCat})
		s.write("POST", fmt.Sprintf("/categories/%d?multilang_language=fr", d.childCat), map[string]any{"name": "Jazz (fr)"})
		d.tag = s.write("POST", "/tags", map[string]any{"name": "outdoor"})
		s.write("POST", "/tags", map[string]any{"name": "unused"})
		d.venue = s.write("POST", "/venues", map[string]any{"venue": "Town Hall", "city": "Lyon"})
		s.write("POST", fmt.Sprintf("/venues/%d?multilang_language=fr", d.venue), map[string]any{"venue": "Hôtel de ville"})
		d.organizer = s.write("POST", "/organizers", map[string]any{"organizer": "Jazz Club", "email": "club@example.org"})
		for i := range 55 {
			id := s.write("POST", "/events", map[string]any{
				"title": fmt.Sprintf("Concert %02d", i), "description": "<p>Live music</p>",
				"start_date": fmt.Sprintf("2027-01-%02d 20:00:00", i%28+1), "end_date": fmt.Sprintf("2027-01-%02d 22:00:00", i%28+1),
				"venue": d.venue, "organizer": d.organizer, "categories": []int64{d.childCat}, "tags": []int64{d.tag}, "cost": "10",
			})
			if i%5 == 3 {
				s.write("POST", fmt.Sprintf("/events/%d?multilang_language=fr", id), map[string]any{"title": fmt.Sprintf("Concert %02d (fr)", i)})
			}
			d.events = append(d.events, id)
		}
		d.series = s.write("POST", "/events", map[string]any{"title": "Weekly class", "start_date": "2027-02-02 19:00:00",
			"end_date": "2027-02-02 21:00:00", "recurrence": map[string]any{"rules": []string{"FREQ=WEEKLY;COUNT=60"}}})
		d.hidden = s.write("POST", "/events", map[string]any{"title": "Hidden rehearsal", "start_date": "2027-03-01 10:00:00",
			"end_date": "2027-03-01 12:00:00", "hide_from_listings": true})
		d.draft = s.write("POST", "/events", map[string]any{"title": "Draft gala", "status": "draft", "start_date": "2027-04-01 20:00:00",
			"end_date": "2027-04-01 23:00:00"})
		d.protected = s.write("POST", "/events", map[string]any{"title": "Members night", "password": "s3cret",
			"start_date": "2027-05-01 20:00:00", "end_date": "2027-05-01 23:00:00", "description": "Secret programme"})
		d.trashed = s.write("POST", "/events", map[string]any{"title": "Old fair", "start_date": "2027-06-01 10:00:00", "end_date": "2027-06-01 18:00:00"})
		s.write("DELETE", fmt.Sprintf("/events/%d", d.trashed), nil)
		s.flush()
		ids = append(ids, d)
	}
	for i := 1; i < len(ids); i++ {
		if fmt.Sprint(ids[i]) != fmt.Sprint(ids[0]) {
			t.Fatalf("the stacks gave other IDs: %+v, %+v", ids[0], ids[i])
		}
	}
	return ids[0]
}
