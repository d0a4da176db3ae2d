package memindex

import (
	"context"
	"testing"

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
