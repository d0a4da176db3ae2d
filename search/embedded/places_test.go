package embedded

import (
	"context"
	"slices"
	"testing"

	bleve "github.com/blevesearch/bleve/v2"

	"github.com/calendar/eventcal/search"
)

// batches returns the Bleve batches idx has applied (scorch's TotBatches).
func batches(t *testing.T, idx bleve.Index) uint64 {
	t.Helper()
	stats, _ := idx.StatsMap()["index"].(map[string]interface{})
	n, ok := stats["TotBatches"].(uint64)
	if !ok {
		t.Fatalf("no TotBatches in the index stats: %v", idx.StatsMap())
	}
	return n
}

func venueDoc(id int64, hasEvents bool, lastStart int64) search.PlaceDocument {
	return search.PlaceDocument{
		ID: id, Kind: search.Venues, Status: "publish", PublishDate: 1700000000,
		Text:      map[string]search.Text{"en": {Title: "Hall"}},
		Fields:    map[string]string{"city": "Lyon"},
		HasEvents: hasEvents, LastStart: map[string]int64{"publish": lastStart},
	}
}

// TestUnchangedPlacesNotRewritten: indexing a venue or organizer document
// equal to the one indexed writes no Bleve batch (every event write makes
// the sync worker index its places again); a changed document, a document
// of the other kind with the same ID, and a document indexed again after its
// deletion are written, and queries see each write.
func TestUnchangedPlacesNotRewritten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := mustOpen(t, t.TempDir())
	defer e.Close()
	g, done := e.current()
	done()
	// Creating an index writes batches of its own: count from here.
	venues0, orgs0 := batches(t, g.venues), batches(t, g.organizers)
	org := venueDoc(1, false, 0)
	org.Kind = search.Organizers
	steps := []struct {
		name string
		// index or (with del) delete these venues
		docs []search.PlaceDocument
		del  []int64
		// the batches of the venue and organizer indexes after the step
		venueBatches, orgBatches uint64
		// the venues with events after the step
		withEvents []int64
	}{
		{name: "first write", docs: []search.PlaceDocument{venueDoc(1, false, 0), venueDoc(2, true, 100)}, venueBatches: 1, withEvents: []int64{2}},
		{name: "same documents", docs: []search.PlaceDocument{venueDoc(2, true, 100), venueDoc(1, false, 0)}, venueBatches: 1, withEvents: []int64{2}},
		{name: "one changed", docs: []search.PlaceDocument{venueDoc(1, true, 50), venueDoc(2, true, 100)}, venueBatches: 2, withEvents: []int64{1, 2}},
		{name: "changed then as indexed, in one call", docs: []search.PlaceDocument{venueDoc(2, false, 0), venueDoc(2, true, 100)}, venueBatches: 3, withEvents: []int64{1, 2}},
		{name: "organizer with a venue's ID", docs: []search.PlaceDocument{org}, venueBatches: 3, orgBatches: 1, withEvents: []int64{1, 2}},
		{name: "deleted", del: []int64{1}, venueBatches: 4, orgBatches: 1, withEvents: []int64{2}},
		{name: "indexed again after its deletion", docs: []search.PlaceDocument{venueDoc(1, true, 50)}, venueBatches: 5, orgBatches: 1, withEvents: []int64{1, 2}},
		{name: "same again", docs: []search.PlaceDocument{venueDoc(1, true, 50), org}, venueBatches: 5, orgBatches: 1, withEvents: []int64{1, 2}},
	}
	for _, s := range steps {
		var err error
		if s.del != nil {
			err = e.DeletePlaces(ctx, search.Venues, s.del)
		} else {
			err = e.IndexPlaces(ctx, s.docs)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if n := batches(t, g.venues) - venues0; n != s.venueBatches {
			t.Errorf("%s: %d venue batches, want %d", s.name, n, s.venueBatches)
		}
		if n := batches(t, g.organizers) - orgs0; n != s.orgBatches {
			t.Errorf("%s: %d organizer batches, want %d", s.name, n, s.orgBatches)
		}
		res, err := e.SearchPlaces(ctx, search.PlaceQuery{Kind: search.Venues, HasEvents: search.Some(true), Limit: 10})
		if err != nil {
			t.Fatalf("%s: search: %v", s.name, err)
		}
		got := slices.Sorted(slices.Values(res.IDs))
		if !slices.Equal(got, s.withEvents) {
			t.Errorf("%s: venues with events %v, want %v", s.name, got, s.withEvents)
		}
	}
}

// TestReopenedEngineRewritesPlaces: an engine opened from disk does not
// know what its indexes hold, so its first write of each place is applied.
func TestReopenedEngineRewritesPlaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := mustOpen(t, dir)
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{venueDoc(1, true, 50)}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = mustOpen(t, dir)
	defer e.Close()
	g, done := e.current()
	done()
	before := batches(t, g.venues)
	for range 2 {
		if err := e.IndexPlaces(ctx, []search.PlaceDocument{venueDoc(1, true, 50)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := batches(t, g.venues) - before; n != 1 {
		t.Errorf("%d batches for two writes of one document after reopening, want 1", n)
	}
}

// TestFailedPlaceWriteForgetsPlaces: after a place write that failed, the
// engine does not know what its index holds of those places, so the next
// write of each is applied even when it equals the document indexed
// before.
func TestFailedPlaceWriteForgetsPlaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := mustOpen(t, t.TempDir())
	defer e.Close()
	g, done := e.current()
	done()
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{venueDoc(1, true, 50)}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.IndexPlaces(cancelled, []search.PlaceDocument{venueDoc(1, true, 60)}); err == nil {
		t.Fatal("IndexPlaces with a cancelled context succeeded")
	}
	before := batches(t, g.venues)
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{venueDoc(1, true, 50)}); err != nil {
		t.Fatal(err)
	}
	if n := batches(t, g.venues) - before; n != 1 {
		t.Errorf("%d batches for the write after a failed one, want 1", n)
	}
}
