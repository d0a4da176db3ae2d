package indexing

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// Short names for the shared fixtures of package testkit.
var (
	quiet       = testkit.Quiet
	baseTime    = testkit.BaseTime
	seriesStart = testkit.SeriesStart
)

// stack is an embedded store and index with a worker that the tests drive
// by hand (Flush); nothing runs in the background. Its methods are the
// shared helpers of package testkit on its store and engine.
type stack struct {
	store  repository.Store
	engine *embedded.Engine
	dir    string
	worker *Worker
}

// newStackWithEvents is newStack with n published events, indexed.
func newStackWithEvents(t *testing.T, n int) *stack {
	t.Helper()
	s := newStack(t)
	for range n {
		s.post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, testkit.BaseTime)
	}
	s.flush(t)
	return s
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st, eng, dir := testkit.Open(t)
	s := &stack{store: st, engine: eng, dir: dir}
	s.worker = &Worker{Store: st, Engine: eng, Log: testkit.Quiet,
		Docs: &DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}
	return s
}

// post creates a post of kind with a title and status through the store.
func (s *stack) post(t *testing.T, kind repository.Kind, title, status string, date time.Time) *repository.Record {
	t.Helper()
	return testkit.Post(t, s.store, kind, title, status, date)
}

// update changes the post p through the store.
func (s *stack) update(t *testing.T, p *repository.Record, change func(e *repository.Record)) {
	t.Helper()
	testkit.Update(t, s.store, p, change)
}

// series returns an event post of the test stack starting at
// testkit.SeriesStart with the given rules (none: a single event).
func (s *stack) series(t *testing.T, title string, rules ...string) *repository.Record {
	t.Helper()
	return testkit.Series(t, s.store, title, rules...)
}

// listed returns the documents a query lists, as "id/key" strings.
func (s *stack) listed(t *testing.T, q search.EventQuery) []string {
	t.Helper()
	return testkit.Listed(t, s.engine, q)
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
	return testkit.Titles(t, s.engine, word)
}

// counts returns the indexed events, venues and organizers.
func (s *stack) counts(t *testing.T) [3]int {
	t.Helper()
	return testkit.Counts(t, s.engine)
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
	once  sync.Once
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
