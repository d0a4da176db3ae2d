package meili

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// TestRebuildRequests checks the exact writes of a rebuild: leftovers
// deleted, temporary indexes created with the live settings, documents
// sent to them only, one swap task for the three pairs, the old data
// deleted; or, when aborted, the temporary indexes deleted. Every task is
// awaited.
func TestRebuildRequests(t *testing.T) {
	t.Parallel()
	begin := []string{
		"DELETE /indexes/calendar_rebuild_events", "POST /indexes", "PATCH /indexes/calendar_rebuild_events/settings",
		"DELETE /indexes/calendar_rebuild_events_hidden", "POST /indexes", "PATCH /indexes/calendar_rebuild_events_hidden/settings",
		"DELETE /indexes/calendar_rebuild_venues", "POST /indexes", "PATCH /indexes/calendar_rebuild_venues/settings",
		"DELETE /indexes/calendar_rebuild_organizers", "POST /indexes", "PATCH /indexes/calendar_rebuild_organizers/settings",
	}
	fill := []string{
		"POST /indexes/calendar_rebuild_events_hidden/documents",
		"POST /indexes/calendar_rebuild_events/documents",
		"POST /indexes/calendar_rebuild_events_hidden/documents/delete",
		"POST /indexes/calendar_rebuild_events/documents/delete",
		"POST /indexes/calendar_rebuild_venues/documents",
		"POST /indexes/calendar_rebuild_events/documents/delete",
		"POST /indexes/calendar_rebuild_events_hidden/documents/delete",
	}
	deleteTemporary := []string{
		"DELETE /indexes/calendar_rebuild_events", "DELETE /indexes/calendar_rebuild_events_hidden",
		"DELETE /indexes/calendar_rebuild_venues", "DELETE /indexes/calendar_rebuild_organizers",
	}
	tests := []struct {
		name string
		end  func(r search.Rebuild) error
		// wantEnd are the writes of Commit or Abort.
		wantEnd []string
		// wantEvents are the event IDs live afterwards.
		wantEvents []string
	}{
		{"commit", func(r search.Rebuild) error { return r.Commit(t.Context()) },
			append([]string{"POST /swap-indexes", "POST /indexes/calendar_meta/documents"}, deleteTemporary...), []string{"7"}},
		{"abort", func(r search.Rebuild) error { return r.Abort(t.Context()) },
			deleteTemporary, []string{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeMeili(t)
			f.stepOnPoll()
			e := f.engine(Options{Languages: testLangs})
			if err := e.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 1, Status: "publish"}, {ID: 2, Status: "publish"}}); err != nil {
				t.Fatal(err)
			}
			f.Reset()
			r, err := e.BeginRebuild(t.Context())
			if err != nil {
				t.Fatalf("BeginRebuild: %v", err)
			}
			if got := f.Writes(); !slices.Equal(got, begin) {
				t.Fatalf("BeginRebuild writes\n got %q\nwant %q", got, begin)
			}
			for uid, want := range map[string]map[string]any{
				"calendar_rebuild_events": wantEventSettings, "calendar_rebuild_events_hidden": wantEventSettings,
				"calendar_rebuild_venues": wantVenueSettings, "calendar_rebuild_organizers": wantOrganizerSettings,
			} {
				if got := f.Index(uid); got == nil || !reflect.DeepEqual(pick(got.Settings, want), meilisim.JSONValue(want)) {
					t.Errorf("%s does not have the live settings", uid)
				}
			}
			if _, err := e.BeginRebuild(t.Context()); !errors.Is(err, ErrRebuildOpen) {
				t.Errorf("second BeginRebuild = %v, want ErrRebuildOpen", err)
			}

			f.Reset()
			if err := r.IndexEvents(t.Context(), []search.EventDocument{{ID: 7, Status: "publish"}, {ID: 8, Status: "publish"}}); err != nil {
				t.Fatal(err)
			}
			if err := r.IndexPlaces(t.Context(), []search.PlaceDocument{{ID: 9, Kind: search.Venues}}); err != nil {
				t.Fatal(err)
			}
			if err := r.DeleteEvents(t.Context(), []int64{8}); err != nil {
				t.Fatal(err)
			}
			if got := f.Writes(); !slices.Equal(got, fill) {
				t.Fatalf("rebuild writes\n got %q\nwant %q", got, fill)
			}
			if n, _ := e.CountEvents(t.Context()); n != 2 {
				t.Errorf("live events during the rebuild = %d, want the 2 old ones", n)
			}

			f.Reset()
			if err := tt.end(r); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if got := f.Writes(); !slices.Equal(got, tt.wantEnd) {
				t.Fatalf("%s writes\n got %q\nwant %q", tt.name, got, tt.wantEnd)
			}
			if tt.name == "commit" {
				swap := f.Calls(http.MethodPost, "/swap-indexes")[0].Body
				want := meilisim.JSONValue([]any{
					map[string]any{"indexes": []string{"calendar_events", "calendar_rebuild_events"}, "rename": false},
					map[string]any{"indexes": []string{"calendar_events_hidden", "calendar_rebuild_events_hidden"}, "rename": false},
					map[string]any{"indexes": []string{"calendar_venues", "calendar_rebuild_venues"}, "rename": false},
					map[string]any{"indexes": []string{"calendar_organizers", "calendar_rebuild_organizers"}, "rename": false},
				})
				if !reflect.DeepEqual(swap, want) {
					t.Errorf("swap body = %s, want %s", meilisim.JSONString(swap), meilisim.JSONString(want))
				}
			}
			// Every write's task was awaited to its end (stepOnPoll: each task is
			// unfinished on its first poll).
			if polls := f.Calls(http.MethodGet, "/tasks/*"); len(polls) < 2*len(tt.wantEnd) {
				t.Errorf("%d task polls for %d tasks", len(polls), len(tt.wantEnd))
			}
			var live []string
			for id := range f.Index("calendar_events").Docs {
				live = append(live, id)
			}
			slices.Sort(live)
			if !slices.Equal(live, tt.wantEvents) {
				t.Errorf("live events = %q, want %q", live, tt.wantEvents)
			}
			for _, uid := range []string{"calendar_rebuild_events", "calendar_rebuild_events_hidden", "calendar_rebuild_venues", "calendar_rebuild_organizers"} {
				if f.Index(uid) != nil {
					t.Errorf("%s still exists", uid)
				}
			}
			if err := r.IndexEvents(t.Context(), []search.EventDocument{{ID: 10}}); err == nil {
				t.Errorf("a write after the end succeeded")
			}
			// The engine may rebuild again.
			r2, err := e.BeginRebuild(t.Context())
			if err != nil {
				t.Fatalf("BeginRebuild after the end: %v", err)
			}
			if err := r2.Abort(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pick returns the keys of want from got, for comparing settings.
func pick(got, want map[string]any) map[string]any {
	out := map[string]any{}
	for k := range want {
		out[k] = got[k]
	}
	return out
}

// TestRebuildLeftoversAndVocabulary: leftover temporary indexes (of a
// rebuild that died) are emptied by the next BeginRebuild; attributes the
// live indexes learn during the rebuild are in the settings after the
// swap, and the live engine knows the attributes the rebuild learned.
func TestRebuildLeftoversAndVocabulary(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	e := f.engine(Options{Languages: []string{"en"}})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.AddIndex("calendar_rebuild_events", map[string]any{"searchableAttributes": []string{"stale"}})
	f.Index("calendar_rebuild_events").Docs["99"] = map[string]any{"id": 99}

	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ix := f.Index("calendar_rebuild_events"); ix == nil || len(ix.Docs) != 0 {
		t.Fatalf("the leftover index was not replaced by an empty one")
	}
	// The live engine learns French from a document the rebuild does not
	// get; the rebuild learns German from a document the scan found.
	if err := e.IndexPlaces(t.Context(), []search.PlaceDocument{{ID: 5, Kind: search.Venues, Text: map[string]search.Text{"fr": {Title: "Salle"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.IndexEvents(t.Context(), []search.EventDocument{{ID: 2, Status: "publish", Text: map[string]search.Text{"de": {Title: "Abend"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	searchable := f.Index("calendar_events").Settings["searchableAttributes"]
	for _, a := range []string{"title_en", "title_fr", "title_de"} {
		if !slices.Contains(searchable.([]any), any(a)) {
			t.Errorf("live searchable attributes %v lack %s", searchable, a)
		}
	}
	res, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "de", Query: "abend", Limit: 10})
	if err != nil || !slices.Equal(res.IDs, []int64{2}) {
		t.Errorf("search in German after the swap = %v, %v; want [2]", res, err)
	}
}
