package indexing

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// TestSeriesIndexedAsOccurrences: the worker indexes a series as one
// document per occurrence (the store keeps the series), applies the
// overrides to their occurrence, and replaces the documents on every
// write: fewer occurrences, an exclusion, a series that becomes a single
// event, a trashed series (kept, with its status, for the trash list)
// and a deleted one.
func TestSeriesIndexedAsOccurrences(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	venue := s.Post(t, repository.KindVenue, "Harbour hall", repository.StatusPublish, baseTime)
	lat, lng := 51.05, 3.72
	s.Update(t, venue, func(p *repository.Record) { p.Venue.GeoLat, p.Venue.GeoLng = &lat, &lng })
	p := s.Series(t, "Weekly class", "FREQ=WEEKLY;COUNT=6")
	s.flush(t)

	key := func(weeks int) string {
		return search.DocumentKey(p.ID, seriesStart.AddDate(0, 0, 7*weeks).Format("20060102T150405"))
	}
	keys := func(weeks ...int) []string {
		var out []string
		for _, w := range weeks {
			out = append(out, key(w))
		}
		return out
	}
	draft := repository.StatusDraft
	steps := []struct {
		name   string
		change func(p *repository.Record)
		q      search.EventQuery
		want   []string
	}{
		{"every occurrence is a document", nil, search.EventQuery{}, keys(0, 1, 2, 3, 4, 5)},
		{"the dates filter per occurrence", nil,
			search.EventQuery{StartGTE: search.Some(seriesStart.AddDate(0, 0, 14).Unix())}, keys(2, 3, 4, 5)},
		{"each series once", nil,
			search.EventQuery{StartGTE: search.Some(seriesStart.AddDate(0, 0, 10).Unix()), CollapseSeries: true}, keys(2)},
		{"an override moves one occurrence to a venue and renames it", func(p *repository.Record) {
			p.Event.Overrides = []repository.OccurrenceOverride{{Key: seriesStart.AddDate(0, 0, 14).Format("20060102T150405"),
				Title: repository.Text{"en": "Weekly class at the harbour"}, Venues: &[]int64{venue.ID}}}
		}, search.EventQuery{Query: "harbour"}, keys(2)},
		{"the override's venue and point", nil,
			search.EventQuery{Near: search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: lng}, RadiusKm: 1})}, keys(2)},
		{"an occurrence of another status", func(p *repository.Record) {
			p.Event.Overrides = []repository.OccurrenceOverride{{Key: seriesStart.AddDate(0, 0, 7).Format("20060102T150405"), Status: &draft}}
		}, search.EventQuery{}, keys(0, 2, 3, 4, 5)},
		{"fewer occurrences and an exclusion", func(p *repository.Record) {
			p.Event.Overrides = nil
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=4"},
				Exclusions: []string{seriesStart.AddDate(0, 0, 7).Format(time.DateTime)}}
		}, search.EventQuery{}, keys(0, 2, 3)},
		{"the series becomes a single event", func(p *repository.Record) { p.Event.Recurrence = nil },
			search.EventQuery{}, []string{search.DocumentKey(p.ID, "")}},
		{"and a series again", func(p *repository.Record) {
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=DAILY;COUNT=2"}}
		}, search.EventQuery{}, []string{
			search.DocumentKey(p.ID, seriesStart.Format("20060102T150405")),
			search.DocumentKey(p.ID, seriesStart.AddDate(0, 0, 1).Format("20060102T150405")),
		}},
		{"trashed: gone from published lists", func(p *repository.Record) { p.Status = repository.StatusTrash }, search.EventQuery{}, []string{}},
		// Trashed events stay indexed with their status (trash.go), so
		// the trash list shows the series' occurrences.
		{"trashed: in the trash list", nil, search.EventQuery{Statuses: []string{repository.StatusTrash}}, []string{
			search.DocumentKey(p.ID, seriesStart.Format("20060102T150405")),
			search.DocumentKey(p.ID, seriesStart.AddDate(0, 0, 1).Format("20060102T150405")),
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.change != nil {
				s.Update(t, p, st.change)
				s.flush(t)
			}
			if got := s.Listed(t, st.q); !slices.Equal(got, st.want) && !(len(got) == 0 && len(st.want) == 0) {
				t.Errorf("listed %v, want %v", got, st.want)
			}
		})
	}
	if err := s.store.DeleteRecord(t.Context(), p.ID); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	s.flush(t)
	if n := s.Counts(t)[0]; n != 0 {
		t.Errorf("%d event documents left after deleting the series", n)
	}
}

// writeRecorder records the document count and IDs of every event
// write.
type writeRecorder struct {
	search.Engine
	mu     sync.Mutex
	writes [][]int64
}

func (r *writeRecorder) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	ids := make([]int64, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	r.mu.Lock()
	r.writes = append(r.writes, ids)
	r.mu.Unlock()
	return r.Engine.IndexEvents(ctx, docs)
}

// TestSeriesWritesAreBounded: many long series reach the engine in
// writes of about batchDocs documents, each series whole in one write
// (IndexEvents replaces all the documents of an event with those of one
// call), and the batch's text budget counts a series' text once per
// occurrence.
func TestSeriesWritesAreBounded(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rec := &writeRecorder{Engine: s.engine}
	s.worker.Engine = rec
	s.worker.Docs.Now = func() time.Time { return seriesStart }
	const series, each = 7, 700
	var ids []int64
	for i := range series {
		ids = append(ids, s.Series(t, "Daily class "+string(rune('a'+i)), "FREQ=DAILY;COUNT=700").ID)
	}
	s.flush(t)
	if n := s.Counts(t)[0]; n != series*each {
		t.Fatalf("%d documents indexed, want %d", n, series*each)
	}
	writer := map[int64]int{}
	for i, w := range rec.writes {
		if len(w) > batchDocs+each {
			t.Errorf("write %d holds %d documents, more than %d + one series", i, len(w), batchDocs)
		}
		for _, id := range w {
			if at, ok := writer[id]; ok && at != i {
				t.Errorf("event %d split over writes %d and %d", id, at, i)
			}
			writer[id] = i
		}
	}
	if len(rec.writes) < series*each/(batchDocs+each) {
		t.Errorf("%d writes for %d documents", len(rec.writes), series*each)
	}

	p, err := s.store.GetRecord(t.Context(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.worker.documentBytes(p), (len("Daily class a")+docOverheadBytes)*each; got != want {
		t.Errorf("text of a series of %d occurrences counts %d bytes, want %d", each, got, want)
	}
}
