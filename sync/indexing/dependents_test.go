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

// recordingEngine records what the worker writes: how often each place
// document was written, and the last document of each event.
type recordingEngine struct {
	search.Engine
	mu     sync.Mutex
	places map[int64]int
	events map[int64]search.EventDocument
	// eventWrites counts IndexEvents documents, per event.
	eventWrites map[int64]int
}

func record(e search.Engine) *recordingEngine {
	return &recordingEngine{Engine: e, places: map[int64]int{}, events: map[int64]search.EventDocument{}, eventWrites: map[int64]int{}}
}

func (r *recordingEngine) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	r.mu.Lock()
	for _, d := range docs {
		r.places[d.ID]++
	}
	r.mu.Unlock()
	return r.Engine.IndexPlaces(ctx, docs)
}

func (r *recordingEngine) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	r.mu.Lock()
	for _, d := range docs {
		r.events[d.ID] = d
		r.eventWrites[d.ID]++
	}
	r.mu.Unlock()
	return r.Engine.IndexEvents(ctx, docs)
}

// event returns the last document written for an event.
func (r *recordingEngine) event(id int64) search.EventDocument {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events[id]
}

// reset forgets what was recorded.
func (r *recordingEngine) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.places, r.events, r.eventWrites = map[int64]int{}, map[int64]search.EventDocument{}, map[int64]int{}
}

// countingStore counts PlaceEvents calls.
type countingStore struct {
	repository.Store
	mu    sync.Mutex
	calls int
}

func (c *countingStore) PlaceEvents(ctx context.Context, kind repository.Kind, ids []int64) (map[int64]repository.PlaceEvents, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Store.PlaceEvents(ctx, kind, ids)
}

// atVenue creates an event at the venue (and organizer, when not 0).
func (s *stack) atVenue(t *testing.T, title string, venue, org int64) *repository.Record {
	t.Helper()
	p := s.Post(t, repository.KindEvent, title, repository.StatusPublish, baseTime)
	upd, err := s.store.UpdateRecord(t.Context(), p.ID, func(p *repository.Record) error {
		p.Event.Venues = []int64{venue}
		if org != 0 {
			p.Event.Organizers = []int64{org}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return upd
}

// setGeo gives the venue a geo point.
func (s *stack) setGeo(t *testing.T, venue int64, lat float64) {
	t.Helper()
	if _, err := s.store.UpdateRecord(t.Context(), venue, func(p *repository.Record) error {
		p.Venue.GeoLat, p.Venue.GeoLng = &lat, &lat
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// step runs one Step and fails on an error.
func (s *stack) step(t *testing.T) int {
	t.Helper()
	n, err := s.worker.Step(t.Context())
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return n
}

// TestPlaceRebuiltOncePerBatch writes 500 events at one venue and
// organizer and indexes them in one batch: the venue and the organizer
// documents are each written once, from one aggregate query per kind.
func TestPlaceRebuiltOncePerBatch(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rec := record(s.engine)
	cs := &countingStore{Store: s.store}
	s.worker.Engine, s.worker.Store, s.worker.Docs.Store = rec, cs, cs
	s.worker.BatchSize = 1000
	venue := s.Post(t, repository.KindVenue, "Big hall", repository.StatusPublish, baseTime)
	org := s.Post(t, repository.KindOrganizer, "Busy org", repository.StatusPublish, baseTime)
	s.flush(t)
	rec.reset()
	cs.calls = 0
	for i := range 500 {
		e := &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish, Date: baseTime,
			Title: repository.Text{"en": "Gig"}, Event: &repository.EventFields{StartUTC: baseTime.Add(time.Duration(i) * time.Hour),
				EndUTC: baseTime.Add(time.Duration(i+1) * time.Hour), Venues: []int64{venue.ID}, Organizers: []int64{org.ID}}}
		if err := s.store.CreateRecord(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.step(t); n != 500 {
		t.Fatalf("Step cleared %d marks, want the 500 in one batch", n)
	}
	if rec.places[venue.ID] != 1 || rec.places[org.ID] != 1 {
		t.Errorf("place documents written: venue %d times, organizer %d times; want once each", rec.places[venue.ID], rec.places[org.ID])
	}
	if cs.calls != 2 {
		t.Errorf("PlaceEvents called %d times, want 2 (one per kind)", cs.calls)
	}
	res, err := s.engine.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Lang: "en", HasEvents: search.Some(true), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.IDs, []int64{venue.ID}) {
		t.Errorf("venues with events = %v, want [%d]", res.IDs, venue.ID)
	}
}

// TestDependentsInBackground changes the geo point of a venue with 50
// events: the worker re-indexes them 10 per step after its batch, shows the
// progress in Stats, keeps the venue's mark until the end, and indexes an
// ordinary write at the next step while the re-index is still running.
func TestDependentsInBackground(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rec := record(s.engine)
	s.worker.Engine = rec
	s.worker.CascadeChunk = 10
	venue := s.Post(t, repository.KindVenue, "Hall", repository.StatusPublish, baseTime)
	var events []int64
	for range 50 {
		events = append(events, s.atVenue(t, "Concert", venue.ID, 0).ID)
	}
	s.flush(t)
	rec.reset()

	s.setGeo(t, venue.ID, 10)
	s.step(t) // the venue's batch and the first chunk
	st := s.worker.Stats()
	if len(st.Dependents) != 1 || st.Dependents[0].Kind != "venue" || st.Dependents[0].ID != venue.ID ||
		st.Dependents[0].Done != 10 || st.Dependents[0].Total != 50 {
		t.Fatalf("after one step: dependents %+v, want venue %d at 10/50", st.Dependents, venue.ID)
	}
	if rec.places[venue.ID] != 1 {
		t.Errorf("venue document written %d times, want 1", rec.places[venue.ID])
	}
	marks, err := s.store.PendingMarks(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].ID != venue.ID {
		t.Fatalf("pending marks while the re-index runs = %+v, want the venue's", marks)
	}
	// An ordinary write is indexed at the next step, before the re-index ends.
	late := s.Post(t, repository.KindEvent, "Latecomer", repository.StatusPublish, baseTime)
	s.step(t)
	if got := s.Titles(t, "latecomer"); !slices.Equal(got, []int64{late.ID}) {
		t.Errorf("the write made during the re-index is not indexed at the next step: %v", got)
	}
	if st := s.worker.Stats(); len(st.Dependents) != 1 || st.Dependents[0].Done != 20 {
		t.Fatalf("after two steps: dependents %+v, want 20/50", st.Dependents)
	}
	s.flush(t)
	for _, id := range events {
		if d := rec.event(id); d.Geo == nil || d.Geo.Lat != 10 {
			t.Fatalf("event %d after the re-index: geo %+v, want lat 10", id, d.Geo)
		}
	}
	if st := s.worker.Stats(); len(st.Dependents) != 0 {
		t.Errorf("dependents after the flush = %+v, want none", st.Dependents)
	}
	if marks, _ := s.store.PendingMarks(t.Context(), 0); len(marks) != 0 {
		t.Errorf("pending marks after the flush = %+v", marks)
	}
}

// TestDependentsRestart checks that a re-index interrupted by a restart
// (a new worker on the same store) runs again from the mark the store kept,
// and that a newer write of the venue starts a running one over.
func TestDependentsRestart(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.worker.CascadeChunk = 5
	venue := s.Post(t, repository.KindVenue, "Hall", repository.StatusPublish, baseTime)
	var events []int64
	for range 20 {
		events = append(events, s.atVenue(t, "Concert", venue.ID, 0).ID)
	}
	s.flush(t)
	s.setGeo(t, venue.ID, 10)
	s.step(t)
	s.step(t)
	s.setGeo(t, venue.ID, 20) // renews the mark while the re-index runs
	s.step(t)
	if st := s.worker.Stats(); len(st.Dependents) != 1 || st.Dependents[0].Done != 5 {
		t.Fatalf("after the venue changed again: dependents %+v, want one started over (5 done)", st.Dependents)
	}

	// "Restart": a fresh worker and a recording engine on the same store.
	rec := record(s.engine)
	w2 := &Worker{Store: s.store, Engine: rec, Log: quiet, CascadeChunk: 5, Docs: s.worker.Docs}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range events {
		if d := rec.event(id); d.Geo == nil || d.Geo.Lat != 20 {
			t.Fatalf("event %d after the restart: geo %+v, want lat 20", id, d.Geo)
		}
	}
}

// TestDependentsOfTerms renames a parent category: the events of its child
// category carry the parent's slug, so they are indexed again (in the
// background), as are the events with a renamed tag.
func TestDependentsOfTerms(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rec := record(s.engine)
	s.worker.Engine = rec
	s.worker.CascadeChunk = 3
	ctx := t.Context()
	parent := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Music"}, Slug: repository.Text{"en": "music"}}
	if err := s.store.CreateLabel(ctx, parent); err != nil {
		t.Fatal(err)
	}
	child := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": "Jazz"}, Slug: repository.Text{"en": "jazz"}, Parent: parent.ID}
	tag := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "free"}, Slug: repository.Text{"en": "free"}}
	for _, term := range []*repository.Label{child, tag} {
		if err := s.store.CreateLabel(ctx, term); err != nil {
			t.Fatal(err)
		}
	}
	var inChild, tagged []int64
	for i := range 8 {
		p := s.Post(t, repository.KindEvent, "Gig", repository.StatusPublish, baseTime)
		if _, err := s.store.UpdateRecord(ctx, p.ID, func(p *repository.Record) error {
			if i%2 == 0 {
				p.Event.Categories = []int64{child.ID}
			} else {
				p.Event.Tags = []int64{tag.ID}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			inChild = append(inChild, p.ID)
		} else {
			tagged = append(tagged, p.ID)
		}
	}
	s.flush(t)
	for _, term := range []*repository.Label{parent, tag} {
		if _, err := s.store.UpdateLabel(ctx, term.ID, func(t *repository.Label) error {
			t.Slug = repository.Text{"en": t.Slug["en"] + "-renamed"}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.step(t)
	if st := s.worker.Stats(); len(st.Dependents) == 0 || st.Dependents[0].Kind != "term" {
		t.Fatalf("after one step: dependents %+v, want term re-indexes running", st.Dependents)
	}
	s.flush(t)
	for _, id := range inChild {
		if d := rec.event(id); !slices.Contains(d.CategorySlugs, "music-renamed") {
			t.Errorf("event %d in the child category: slugs %v, want the parent's new slug", id, d.CategorySlugs)
		}
	}
	for _, id := range tagged {
		if d := rec.event(id); !slices.Equal(d.TagSlugs, []string{"free-renamed"}) {
			t.Errorf("tagged event %d: tag slugs %v, want [free-renamed]", id, d.TagSlugs)
		}
	}
}

// TestDependentsOverflow runs with MaxCascades 1: the second venue's
// dependents are indexed inside its batch, and both end right.
func TestDependentsOverflow(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	rec := record(s.engine)
	s.worker.Engine = rec
	s.worker.CascadeChunk, s.worker.MaxCascades = 2, 1
	v1 := s.Post(t, repository.KindVenue, "One", repository.StatusPublish, baseTime)
	v2 := s.Post(t, repository.KindVenue, "Two", repository.StatusPublish, baseTime)
	var at1, at2 []int64
	for range 6 {
		at1 = append(at1, s.atVenue(t, "A", v1.ID, 0).ID)
		at2 = append(at2, s.atVenue(t, "B", v2.ID, 0).ID)
	}
	s.flush(t)
	rec.reset()
	s.setGeo(t, v1.ID, 1)
	s.setGeo(t, v2.ID, 2)
	s.step(t)
	if st := s.worker.Stats(); len(st.Dependents) != 1 {
		t.Fatalf("dependents running = %+v, want 1 (the limit)", st.Dependents)
	}
	// One of the two ran inline: all its events are indexed already.
	inline := at2
	if st := s.worker.Stats(); st.Dependents[0].ID == v2.ID {
		inline = at1
	}
	for _, id := range inline {
		if rec.event(id).Geo == nil {
			t.Fatalf("event %d of the inline re-index not indexed after one step", id)
		}
	}
	s.flush(t)
	for i := range at1 {
		if d1, d2 := rec.event(at1[i]), rec.event(at2[i]); d1.Geo == nil || d1.Geo.Lat != 1 || d2.Geo == nil || d2.Geo.Lat != 2 {
			t.Fatalf("geo after the flush: %+v, %+v", d1.Geo, d2.Geo)
		}
	}
}
