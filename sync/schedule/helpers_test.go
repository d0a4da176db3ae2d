package schedule

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// stack is an embedded store and index with an indexing worker that the
// tests drive by hand (flush); nothing runs in the background. Its
// methods are the shared helpers of package testkit on its store and
// engine.
type stack struct {
	store  repository.Store
	engine *embedded.Engine
	worker *indexing.Worker
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st, eng, _ := testkit.Open(t)
	return &stack{store: st, engine: eng, worker: &indexing.Worker{Store: st, Engine: eng, Log: testkit.Quiet,
		Docs: &indexing.DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}}
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

// flush indexes everything marked.
func (s *stack) flush(t *testing.T) {
	t.Helper()
	if err := s.worker.Flush(testdeadline.Context(t)); err != nil {
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
