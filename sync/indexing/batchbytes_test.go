package indexing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// byteCounter is an engine that records, for every IndexEvents call, the
// events it carries and the size of their JSON encoding (what a
// Meilisearch write sends), so a test can tell which batch indexed what
// and how much.
type byteCounter struct {
	search.Engine
	mu     sync.Mutex
	writes []indexWrite
}

// indexWrite is one recorded IndexEvents call.
type indexWrite struct {
	ids   []int64
	bytes int
}

func (c *byteCounter) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	raw, err := json.Marshal(docs)
	if err != nil {
		return err
	}
	w := indexWrite{bytes: len(raw)}
	for _, d := range docs {
		if !slices.Contains(w.ids, d.ID) {
			w.ids = append(w.ids, d.ID)
		}
	}
	c.mu.Lock()
	c.writes = append(c.writes, w)
	c.mu.Unlock()
	return c.Engine.IndexEvents(ctx, docs)
}

// take returns the writes recorded since the last take: one batch's,
// when called after each Step.
func (c *byteCounter) take() (ids []int64, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.writes {
		ids = append(ids, w.ids...)
		bytes += w.bytes
	}
	c.writes = nil
	return ids, bytes
}

// hugeSeries writes a weekly series of 100 occurrences, each changed with
// a description of 4,000 bytes: 400 KB of override text, which the old
// budget (the series' own text times its occurrences) did not see.
func hugeSeries(t *testing.T, s *stack) *repository.Record {
	t.Helper()
	p, err := s.store.GetRecord(t.Context(), s.Series(t, "Rehearsal", "FREQ=WEEKLY;COUNT=100").ID)
	if err != nil {
		t.Fatal(err)
	}
	occs, err := recurrence.Expand(recurrence.SeriesOf(p.Event, time.UTC), time.Time{}, time.Time{}, recurrence.Limits{Now: seriesStart})
	if err != nil || len(occs) != 100 {
		t.Fatalf("expand: %d occurrences, %v", len(occs), err)
	}
	s.Update(t, p, func(p *repository.Record) {
		for i, o := range occs {
			text := strings.Repeat(string(rune('a'+i%26))+"word ", 800)
			p.Event.Overrides = append(p.Event.Overrides, repository.OccurrenceOverride{Key: o.Key, Content: repository.Text{"en": text}})
		}
	})
	return p
}

// TestHugeSeriesBatchedAlone: a series whose documents exceed the batch
// budget (by the text of its changed occurrences) is never indexed in the
// batch of another write. The small event written after it is indexed
// first, in a batch of its own within the budget; the series follows
// alone in the next batch, before a small event written meanwhile (it is
// not starved by a stream of small writes). Counted in encoded bytes per
// batch by a recording engine; no clock is involved.
func TestHugeSeriesBatchedAlone(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const budget = 64 << 10
	s.worker.BatchBytes = budget
	s.worker.Docs.Now = func() time.Time { return seriesStart }
	rec := &byteCounter{Engine: s.engine}
	s.worker.Engine = rec

	huge := hugeSeries(t, s)
	small := s.Post(t, repository.KindEvent, "Harbour concert", repository.StatusPublish, baseTime)

	s.step(t)
	ids, bytes := rec.take()
	if !slices.Equal(ids, []int64{small.ID}) {
		t.Fatalf("first batch indexed %v, want only the small event %d (not the series %d)", ids, small.ID, huge.ID)
	}
	if bytes > budget {
		t.Errorf("first batch sent %d bytes, more than the budget %d", bytes, budget)
	}
	if got := s.Titles(t, "harbour"); !slices.Equal(got, []int64{small.ID}) {
		t.Fatalf("after one batch: search harbour = %v", got)
	}

	later := s.Post(t, repository.KindEvent, "Quay recital", repository.StatusPublish, baseTime)
	s.step(t)
	ids, bytes = rec.take()
	if !slices.Equal(ids, []int64{huge.ID}) {
		t.Fatalf("second batch indexed %v, want the series %d alone", ids, huge.ID)
	}
	if bytes <= budget {
		t.Errorf("the series' batch sent %d bytes: not over the budget %d, the test proves nothing", bytes, budget)
	}
	s.step(t)
	if ids, _ = rec.take(); !slices.Equal(ids, []int64{later.ID}) {
		t.Fatalf("third batch indexed %v, want the later small event %d", ids, later.ID)
	}
	if n := s.step(t); n != 0 {
		t.Errorf("%d marks left", n)
	}
}

// TestFitBatch: the choice of a batch's marks by size, oldest first.
func TestFitBatch(t *testing.T) {
	t.Parallel()
	mark := func(id int64) repository.IndexMark {
		return repository.IndexMark{Kind: repository.MarkPost, ID: id, Seq: id}
	}
	sizes := map[int64]int{1: 10, 2: 10, 3: 500, 4: 30, 5: 200}
	size := func(m repository.IndexMark) int { return sizes[m.ID] }
	ids := func(ms []repository.IndexMark) []int64 {
		var out []int64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	for _, c := range []struct {
		name      string
		marks     []int64
		deferred  markVersion
		want      []int64
		wantDefer int64
	}{
		{"all fit", []int64{1, 2, 4}, markVersion{}, []int64{1, 2, 4}, 0},
		{"oldest, then smallest first", []int64{5, 4, 3, 1}, markVersion{}, []int64{5, 1, 4}, 0},
		{"large not oldest waits", []int64{1, 3, 2}, markVersion{}, []int64{1, 2}, 0},
		{"over-budget oldest deferred once", []int64{3, 1, 2}, markVersion{}, []int64{1, 2}, 3},
		{"deferred one goes alone", []int64{3, 1, 2}, markVersion{repository.MarkPost, 3, 3}, []int64{3}, 0},
		{"over budget alone", []int64{3}, markVersion{}, []int64{3}, 0},
		{"nothing else fits", []int64{3, 3}, markVersion{}, []int64{3}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ms []repository.IndexMark
			for _, id := range c.marks {
				ms = append(ms, mark(id))
			}
			got, def := fitBatch(ms, size, 250, c.deferred)
			if !slices.Equal(ids(got), c.want) || def.id != c.wantDefer {
				t.Errorf("fitBatch = %v, deferred %d; want %v, %d", ids(got), def.id, c.want, c.wantDefer)
			}
		})
	}
}
