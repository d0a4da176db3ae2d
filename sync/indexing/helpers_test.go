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
	"github.com/calendar/eventcal/sync/internal/testkit/indexkit"
)

// Short names for the shared fixtures of package testkit.
var (
	quiet       = testkit.Quiet
	baseTime    = testkit.BaseTime
	seriesStart = testkit.SeriesStart
)

// stack is an embedded store and index with a worker that the tests drive
// by hand (Flush); nothing runs in the background. The shared helpers of
// package testkit (Post, Update, Series, Listed, Titles, Counts) are its
// methods on the same store and engine.
type stack struct {
	testkit.Kit
	store  repository.Store
	engine *embedded.Engine
	dir    string
	worker *Worker
}

// newStackWithEvents is newStack with n published events, indexed.
func newStackWithEvents(t *testing.T, n int) *stack {
	t.Helper()
	s := newStack(t)
	s.Events(t, n)
	s.flush(t)
	return s
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st, eng, dir := indexkit.Open(t)
	s := &stack{Kit: testkit.NewKit(st, eng), store: st, engine: eng, dir: dir}
	s.worker = &Worker{Store: st, Engine: eng, Log: testkit.Quiet,
		Docs: &DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}
	return s
}

func (s *stack) flush(t *testing.T) {
	t.Helper()
	ctx := testdeadline.Context(t)
	if err := s.worker.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
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
