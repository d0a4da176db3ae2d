package schedule

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/internal/testkit/indexkit"
)

// stack is an embedded store and index with an indexing worker that the
// tests drive by hand (flush); nothing runs in the background. The shared
// helpers of package testkit (Post, Update, Series, Titles, Counts) are
// its methods on the same store and engine.
type stack struct {
	testkit.Kit
	store  repository.Store
	engine *embedded.Engine
	worker *indexing.Worker
}

func newStack(t *testing.T) *stack {
	t.Helper()
	st, eng, _ := indexkit.Open(t)
	return &stack{Kit: testkit.NewKit(st, eng), store: st, engine: eng, worker: &indexing.Worker{Store: st, Engine: eng, Log: testkit.Quiet,
		Docs: &indexing.DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}}
}

// flush indexes everything marked.
func (s *stack) flush(t *testing.T) {
	t.Helper()
	if err := s.worker.Flush(testdeadline.Context(t)); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}
