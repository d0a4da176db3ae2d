package indexing

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// scanReads counts, safely for the scan's read-ahead goroutine, the
// reads of each post through GetRecords and the pages of events
// FindRecords returned.
type scanReads struct {
	repository.Store
	mu    sync.Mutex
	reads map[int64]int
	pages int
}

func (c *scanReads) GetRecords(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	c.mu.Lock()
	for _, id := range ids {
		c.reads[id]++
	}
	c.mu.Unlock()
	return c.Store.GetRecords(ctx, ids)
}

func (c *scanReads) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	page, err := c.Store.FindRecords(ctx, q)
	if len(page) > 0 && q.Kind == repository.KindEvent {
		c.mu.Lock()
		c.pages++
		c.mu.Unlock()
	}
	return page, err
}

// TestScanReadsEventsOnce: a full scan writes each page of events from
// the records its page read returned (built while the previous page is
// written), without reading them again by ID, and reads a venue linked
// from several pages once; every event is indexed. Its pages hold page
// posts instead of scanPageSize (500): the same three pages, the last
// one short, each one engine write as at 500 (under batchDocs), from 27
// events instead of 1,007.
func TestScanReadsEventsOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const page = 10
	const n = 2*page + 7 // three pages
	venue := testkit.Post(t, s.store, repository.KindVenue, "Hall", repository.StatusPublish, baseTime)
	s.Events(t, n)
	all, err := s.store.FindRecords(t.Context(), repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*repository.Record{all[0], all[len(all)-1]} { // the first page and the last
		s.Update(t, p, func(e *repository.Record) { e.Event.Venues = []int64{venue.ID} })
	}
	reads := &scanReads{Store: s.store, reads: map[int64]int{}}
	w := &Worker{Store: reads, Engine: s.engine, Log: quiet, Docs: &DocBuilder{Store: reads, Languages: []string{"en"}, DefaultLanguage: "en", Location: s.worker.Docs.Location},
		scanPage: page}
	var progress []int
	if err := w.IndexAll(testdeadline.Context(t), func(done int) { progress = append(progress, done) }); err != nil {
		t.Fatalf("IndexAll: %v", err)
	}
	if got := s.Counts(t)[0]; got != n {
		t.Errorf("%d events indexed, want %d", got, n)
	}
	events, err := s.store.FindRecords(t.Context(), repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range events {
		if r := reads.reads[p.ID]; r != 0 {
			t.Errorf("event %d read %d times by ID, want 0 (its page's read is enough)", p.ID, r)
		}
	}
	if r := reads.reads[venue.ID]; r != 2 {
		// Once for the events' pages, once as a venue to index.
		t.Errorf("the venue read %d times by ID, want 2", r)
	}
	if reads.pages != 3 {
		t.Errorf("%d pages of events read, want 3", reads.pages)
	}
	if want := []int{page, 2 * page, n, n + 1}; !slices.Equal(progress, want) {
		t.Errorf("progress %v, want %v", progress, want)
	}
}
