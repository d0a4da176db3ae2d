package memindex

import (
	"context"
	"testing"
	"unsafe"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// eventEngine is the index behind the event half of search.Engine, so that
// the conformance suite's series part runs on it directly.
type eventEngine struct{ x *Index }

func (e eventEngine) Init(context.Context) error { return nil }
func (e eventEngine) IndexEvents(_ context.Context, docs []search.EventDocument) error {
	e.x.Apply(docs)
	return nil
}
func (e eventEngine) IndexPlaces(context.Context, []search.PlaceDocument) error { return nil }
func (e eventEngine) DeleteEvents(_ context.Context, ids []int64) error {
	e.x.Remove(ids)
	return nil
}
func (e eventEngine) DeletePlaces(context.Context, search.PlaceKind, []int64) error { return nil }
func (e eventEngine) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	return e.x.Search(ctx, q)
}
func (e eventEngine) SearchPlaces(context.Context, search.PlaceQuery) (search.Result, error) {
	return search.Result{}, nil
}
func (e eventEngine) CountEvents(context.Context) (int, error)                   { return e.x.Count(), nil }
func (e eventEngine) CountPlaces(context.Context, search.PlaceKind) (int, error) { return 0, nil }
func (e eventEngine) Ping(context.Context) error                                 { return nil }
func (e eventEngine) Close() error                                               { return nil }

// TestSeriesConformance runs the suite's recurring-events part on the
// index: occurrences filtered, counted, collapsed and paged as the
// reference says, and writes replacing all the documents of an event,
// with the usual chunk sizes and with one word per chunk.
func TestSeriesConformance(t *testing.T) {
	for _, chunk := range []int{chunkWords, 1} {
		t.Run("chunk", func(t *testing.T) {
			defer func(c int) { chunkWords = c }(chunkWords)
			chunkWords = chunk
			searchtest.RunSeries(t, func(*testing.T) search.Engine { return eventEngine{New()} })
		})
	}
}

// TestEntryStays32Bytes: the series number lives in the entry's padding;
// the date order's memory does not grow with it.
func TestEntryStays32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 32 {
		t.Errorf("entry is %d bytes, want 32", n)
	}
}

// TestSeriesNumbersAreReused: a series that leaves gives its number back,
// so the collapsed lists' bit set stays as large as the series indexed at
// once, not all that ever were.
func TestSeriesNumbersAreReused(t *testing.T) {
	x := New()
	base := search.EventDocument{Status: "publish", Text: map[string]search.Text{"en": {Title: "Weekly"}}}
	for round := range 50 {
		a, b := base, base
		a.ID, b.ID = int64(2*round+1), int64(2*round+2)
		x.Apply(append(searchtest.Occurrences(a, 3, 7*86400), searchtest.Occurrences(b, 2, 86400)...))
		b.Occurrence = ""
		x.Apply([]search.EventDocument{b}) // series b becomes a single event
		x.Remove([]int64{a.ID})
		x.Remove([]int64{b.ID})
	}
	if x.seriesMax > 2 || len(x.seriesOf) != 0 {
		t.Errorf("after 100 series came and went: %d numbers given, %d held; want at most 2 and 0", x.seriesMax, len(x.seriesOf))
	}
}
