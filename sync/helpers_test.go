package sync

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stack is an embedded store and index with a worker that the tests drive
// by hand (Flush); nothing runs in the background.
type stack struct {
	store  repository.Store
	engine *embedded.Engine
	dir    string
	worker *Worker
}

// openTestStore opens an embedded store in dir, closed when the test ends.
func openTestStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// newStackWithEvents is newStack with n published events, indexed.
func newStackWithEvents(t *testing.T, n int) *stack {
	t.Helper()
	s := newStack(t)
	for range n {
		s.post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, baseTime)
	}
	s.flush(t)
	return s
}

func newStack(t *testing.T) *stack {
	t.Helper()
	dir := t.TempDir()
	st := openTestStore(t, dir)
	eng, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	s := &stack{store: st, engine: eng, dir: filepath.Join(dir, "index")}
	s.worker = &Worker{Store: st, Engine: eng, Log: quiet,
		Docs: &DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}
	return s
}

// baseTime is the publish date of the test posts.
var baseTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// post creates a post of kind with a title and status through the store.
func (s *stack) post(t *testing.T, kind repository.PostKind, title, status string, date time.Time) *repository.Post {
	t.Helper()
	p := &repository.Post{Kind: kind, Author: 1, Status: status, Date: date, Modified: date,
		Title: repository.Text{"en": title}, Slug: repository.Text{"en": repository.Slugify(title)}}
	switch kind {
	case repository.KindEvent:
		start := baseTime.Add(30 * 24 * time.Hour)
		p.Event = &repository.EventFields{StartLocal: start.Format(time.DateTime), EndLocal: start.Add(time.Hour).Format(time.DateTime),
			StartUTC: start, EndUTC: start.Add(time.Hour), Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}
	case repository.KindVenue:
		p.Venue = &repository.VenueFields{City: "Gent"}
	case repository.KindOrganizer:
		p.Organizer = &repository.OrganizerFields{Email: "info@example.org"}
	}
	if err := s.store.CreatePost(t.Context(), p); err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	return p
}

func (s *stack) flush(t *testing.T) {
	t.Helper()
	ctx := testdeadline.Context(t)
	if err := s.worker.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// titles returns the IDs of the published events whose title has word.
func (s *stack) titles(t *testing.T, word string) []int64 {
	t.Helper()
	res, err := s.engine.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: word, Statuses: []string{repository.StatusPublish}, Limit: 1000})
	if err != nil {
		t.Fatalf("SearchEvents: %v", err)
	}
	return res.IDs
}

// counts returns the indexed events, venues and organizers.
func (s *stack) counts(t *testing.T) [3]int {
	t.Helper()
	var out [3]int
	var errs [3]error
	out[0], errs[0] = s.engine.CountEvents(t.Context())
	out[1], errs[1] = s.engine.CountPlaces(t.Context(), search.Venues)
	out[2], errs[2] = s.engine.CountPlaces(t.Context(), search.Organizers)
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	return out
}

// gatedEngine is a Bleve engine whose rebuilds block their first
// IndexEvents (the scan's first page, after its documents were built from
// the store) until release is closed, and whose rebuild writes fail with
// fail (when set) for the calls failOn selects.
type gatedEngine struct {
	*embedded.Engine
	reached chan struct{}
	release chan struct{}
	fail    error
	failOn  string // "delete": rebuild deletes fail (only the dual write deletes)
	// begun counts rebuilds: only the first one is gated.
	begun atomic.Int32
}

func newGate(e *embedded.Engine) *gatedEngine {
	return &gatedEngine{Engine: e, reached: make(chan struct{}), release: make(chan struct{})}
}

// BeginRebuild wraps the engine's rebuild.
func (g *gatedEngine) BeginRebuild(ctx context.Context) (search.Rebuild, error) {
	r, err := g.Engine.BeginRebuild(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedRebuild{Rebuild: r, g: g, gated: g.begun.Add(1) == 1}, nil
}

// waitReached waits until the scan is blocked.
func (g *gatedEngine) waitReached(t *testing.T) {
	t.Helper()
	select {
	case <-g.reached:
	case <-testdeadline.After(t):
		t.Fatal("the rebuild's scan never reached the gate")
	}
}

type gatedRebuild struct {
	search.Rebuild
	g     *gatedEngine
	gated bool
	once  gosync.Once
}

func (r *gatedRebuild) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	first := false
	r.once.Do(func() { first = r.gated })
	if first {
		close(r.g.reached)
		select {
		case <-r.g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.Rebuild.IndexEvents(ctx, docs)
}

func (r *gatedRebuild) DeleteEvents(ctx context.Context, ids []int64) error {
	if r.g.fail != nil && r.g.failOn == "delete" {
		return r.g.fail
	}
	return r.Rebuild.DeleteEvents(ctx, ids)
}

// fakeLease is a lease the test holds or loses by hand; it counts the
// IsLeader calls.
type fakeLease struct {
	mu      gosync.Mutex
	held    bool
	changed chan struct{}
	calls   int
}

func newFakeLease(held bool) *fakeLease { return &fakeLease{held: held, changed: make(chan struct{})} }

func (f *fakeLease) set(held bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held != held {
		f.held = held
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

func (f *fakeLease) IsLeader(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.held {
		return nil
	}
	return errors.New("fake lease: held elsewhere")
}

func (f *fakeLease) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeLease) Keep(ctx context.Context)      { <-ctx.Done() }
func (f *fakeLease) Release(context.Context) error { f.set(false); return nil }

func (f *fakeLease) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := testdeadline.Of(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never true", what)
		}
		time.Sleep(5 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}

// waitJob waits for the reindexer's job to end.
func waitJob(t *testing.T, r *Reindexer) Job {
	t.Helper()
	ctx := testdeadline.Context(t)
	job, err := r.Wait(ctx)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return job
}

func ids(ps ...*repository.Post) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}
