package sync

import (
	"context"
	"slices"
	gosync "sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// seriesStart is the first occurrence of the test series: a Monday.
var seriesStart = time.Date(2026, 4, 6, 19, 0, 0, 0, time.UTC)

// update changes the post p through the store.
func (s *stack) update(t *testing.T, p *repository.Post, change func(e *repository.Post)) {
	t.Helper()
	if _, err := s.store.UpdatePost(t.Context(), p.ID, func(p *repository.Post) error {
		change(p)
		return nil
	}); err != nil {
		t.Fatalf("UpdatePost: %v", err)
	}
}

// series returns an event post of the test stack starting at seriesStart
// with the given rules (none: a single event).
func (s *stack) series(t *testing.T, title string, rules ...string) *repository.Post {
	t.Helper()
	p := s.post(t, repository.KindEvent, title, repository.StatusPublish, baseTime)
	s.update(t, p, func(p *repository.Post) {
		p.Event.StartUTC, p.Event.EndUTC = seriesStart, seriesStart.Add(90*time.Minute)
		p.Event.StartLocal, p.Event.EndLocal = seriesStart.Format(time.DateTime), seriesStart.Add(90*time.Minute).Format(time.DateTime)
		if len(rules) > 0 {
			p.Event.Recurrence = &repository.Recurrence{Rules: rules}
		}
	})
	return p
}

// listed returns the documents a query lists, as "id/key" strings.
func (s *stack) listed(t *testing.T, q search.EventQuery) []string {
	t.Helper()
	q.Lang, q.Limit = "en", 10000
	if q.Statuses == nil {
		q.Statuses = []string{repository.StatusPublish}
	}
	res, err := s.engine.SearchEvents(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchEvents: %v", err)
	}
	out := make([]string, len(res.IDs))
	for i, id := range res.IDs {
		out[i] = search.DocumentKey(id, res.Occurrence(i))
	}
	return out
}

// TestSeriesIndexedAsOccurrences: the worker indexes a series as one
// document per occurrence (the store keeps the series), applies the
// overrides to their occurrence, and replaces the documents on every
// write: fewer occurrences, an exclusion, a series that becomes a single
// event, a trashed series (kept, with its status, for the trash list)
// and a deleted one.
func TestSeriesIndexedAsOccurrences(t *testing.T) {
	s := newStack(t)
	venue := s.post(t, repository.KindVenue, "Harbour hall", repository.StatusPublish, baseTime)
	lat, lng := 51.05, 3.72
	s.update(t, venue, func(p *repository.Post) { p.Venue.GeoLat, p.Venue.GeoLng = &lat, &lng })
	p := s.series(t, "Weekly class", "FREQ=WEEKLY;COUNT=6")
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
		change func(p *repository.Post)
		q      search.EventQuery
		want   []string
	}{
		{"every occurrence is a document", nil, search.EventQuery{}, keys(0, 1, 2, 3, 4, 5)},
		{"the dates filter per occurrence", nil,
			search.EventQuery{StartGTE: search.Some(seriesStart.AddDate(0, 0, 14).Unix())}, keys(2, 3, 4, 5)},
		{"each series once", nil,
			search.EventQuery{StartGTE: search.Some(seriesStart.AddDate(0, 0, 10).Unix()), CollapseSeries: true}, keys(2)},
		{"an override moves one occurrence to a venue and renames it", func(p *repository.Post) {
			p.Event.Overrides = []repository.OccurrenceOverride{{Key: seriesStart.AddDate(0, 0, 14).Format("20060102T150405"),
				Title: repository.Text{"en": "Weekly class at the harbour"}, Venues: &[]int64{venue.ID}}}
		}, search.EventQuery{Query: "harbour"}, keys(2)},
		{"the override's venue and point", nil,
			search.EventQuery{Near: search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: lat, Lng: lng}, RadiusKm: 1})}, keys(2)},
		{"an occurrence of another status", func(p *repository.Post) {
			p.Event.Overrides = []repository.OccurrenceOverride{{Key: seriesStart.AddDate(0, 0, 7).Format("20060102T150405"), Status: &draft}}
		}, search.EventQuery{}, keys(0, 2, 3, 4, 5)},
		{"fewer occurrences and an exclusion", func(p *repository.Post) {
			p.Event.Overrides = nil
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=4"},
				Exclusions: []string{seriesStart.AddDate(0, 0, 7).Format(time.DateTime)}}
		}, search.EventQuery{}, keys(0, 2, 3)},
		{"the series becomes a single event", func(p *repository.Post) { p.Event.Recurrence = nil },
			search.EventQuery{}, []string{search.DocumentKey(p.ID, "")}},
		{"and a series again", func(p *repository.Post) {
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=DAILY;COUNT=2"}}
		}, search.EventQuery{}, []string{
			search.DocumentKey(p.ID, seriesStart.Format("20060102T150405")),
			search.DocumentKey(p.ID, seriesStart.AddDate(0, 0, 1).Format("20060102T150405")),
		}},
		{"trashed: gone from published lists", func(p *repository.Post) { p.Status = repository.StatusTrash }, search.EventQuery{}, []string{}},
		// Trashed events stay indexed with their status (sync/trash.go), so
		// the trash list shows the series' occurrences.
		{"trashed: in the trash list", nil, search.EventQuery{Statuses: []string{repository.StatusTrash}}, []string{
			search.DocumentKey(p.ID, seriesStart.Format("20060102T150405")),
			search.DocumentKey(p.ID, seriesStart.AddDate(0, 0, 1).Format("20060102T150405")),
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.change != nil {
				s.update(t, p, st.change)
				s.flush(t)
			}
			if got := s.listed(t, st.q); !slices.Equal(got, st.want) && !(len(got) == 0 && len(st.want) == 0) {
				t.Errorf("listed %v, want %v", got, st.want)
			}
		})
	}
	if err := s.store.DeletePost(t.Context(), p.ID); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	s.flush(t)
	if n := s.counts(t)[0]; n != 0 {
		t.Errorf("%d event documents left after deleting the series", n)
	}
}

// writeRecorder records the document count and IDs of every event
// write.
type writeRecorder struct {
	search.Engine
	mu     gosync.Mutex
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
	s := newStack(t)
	rec := &writeRecorder{Engine: s.engine}
	s.worker.Engine = rec
	s.worker.Docs.Now = func() time.Time { return seriesStart }
	const series, each = 7, 700
	var ids []int64
	for i := range series {
		ids = append(ids, s.series(t, "Daily class "+string(rune('a'+i)), "FREQ=DAILY;COUNT=700").ID)
	}
	s.flush(t)
	if n := s.counts(t)[0]; n != series*each {
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

	p, err := s.store.GetPost(t.Context(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.worker.documentBytes(p), (len("Daily class a")+docOverheadBytes)*each; got != want {
		t.Errorf("text of a series of %d occurrences counts %d bytes, want %d", each, got, want)
	}
}

// TestRollHorizon: the daily job marks the series whose occurrences up to
// the horizon changed since its last run (the horizon's end passed a new
// occurrence), and nothing else: not a single event, not a finished
// series, not a series whose next occurrence is still beyond the horizon.
func TestRollHorizon(t *testing.T) {
	s := newStack(t)
	s.worker.Docs.Horizon = 10 * 24 * time.Hour
	weekly := s.series(t, "Open weekly", "FREQ=WEEKLY")
	finished := s.series(t, "Two weeks", "FREQ=WEEKLY;COUNT=2")
	single := s.series(t, "Once")
	s.flush(t)
	_, _ = finished, single // never marked
	// The horizon ends 10 days after now: from T+1h (end T+10d+1h) to
	// T+4d+1h (end T+14d+1h) it passes the third weekly occurrence
	// (T+14d); the next day passes none.
	tests := []struct {
		name       string
		since, now time.Time
		want       []int64
	}{
		{"a new occurrence inside the horizon", seriesStart.Add(time.Hour), seriesStart.Add(4*24*time.Hour + time.Hour), []int64{weekly.ID}},
		{"no new occurrence", seriesStart.Add(4*24*time.Hour + time.Hour), seriesStart.Add(5*24*time.Hour + time.Hour), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := RollHorizon(t.Context(), s.store, s.worker.Docs, tt.since, tt.now)
			if err != nil || n != len(tt.want) {
				t.Fatalf("RollHorizon = %d, %v; want %d", n, err, len(tt.want))
			}
			marks, err := s.store.PendingMarks(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, m := range marks {
				got = append(got, m.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("marked %v, want %v", got, tt.want)
			}
			s.flush(t)
		})
	}
}

// TestScheduledHorizon: the schedule rolls the horizon once at start and
// then every HorizonEvery, waking the worker when it marked series.
func TestScheduledHorizon(t *testing.T) {
	s := newStack(t)
	s.worker.Docs.Horizon = 10 * 24 * time.Hour
	weekly := s.series(t, "Open weekly", "FREQ=WEEKLY")
	s.flush(t)
	// The first run compares with one period (a day) before: from
	// T+3d+1h to T+4d+1h the horizon's end (ten days ahead) passed the
	// third occurrence (T+14d).
	clock := clockwork.NewFakeClockAt(seriesStart.Add(4*24*time.Hour + time.Hour))
	notified := &countingNotifier{}
	ran := make(runs, 10)
	r := NewReindexer(s.store, s.engine, s.worker, quiet, clock.Now, nil)
	startSchedule(t, ScheduleOptions{Reindexer: r, Store: s.store, Notifier: notified, Docs: s.worker.Docs,
		HorizonEvery: 24 * time.Hour, afterRun: ran.after}, clock, 1)
	for name := ran.next(t); name != jobHorizon; name = ran.next(t) {
	}
	marks, err := s.store.PendingMarks(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].ID != weekly.ID || notified.n.Load() == 0 {
		t.Errorf("marks %+v, notified %d; want the weekly series marked and the worker woken", marks, notified.n.Load())
	}
}
