package sources_test

import (
	"context"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// openMongo opens a MongoDB store on a server of its own (an embedded
// FerretDB, or the server of TEST_MONGO_URI) in a database of its own.
func openMongo(t *testing.T) repository.Store {
	t.Helper()
	st, err := mongo.Open(context.Background(), mongotest.Start(t), mongotest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// TestRunOnEveryEngine: the life of a feed on each engine: created,
// unchanged, one event changed and one gone (trashed), then back
// (restored), with a series and its changed instance, a venue and a
// category by name.
func TestRunOnEveryEngine(t *testing.T) {
	t.Parallel()
	for _, engine := range []struct {
		name string
		open func(t *testing.T) repository.Store
	}{{"sqlite", openSQLite}, {"mongo", openMongo}} {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, engine.open, func(s *repository.Source) { s.Status = repository.StatusPublish })
			ams := zone(t, "Europe/Amsterdam")
			a := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
			a.Location, a.Categories = &feed.Place{Name: "Hall", Address: "Main St 1"}, []string{"Music"}
			b := single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC))
			b.Location = &feed.Place{Name: "hall"}
			s := feed.Event{UID: "s", Title: "Series", Zone: "Europe/Amsterdam", Rules: []string{"FREQ=WEEKLY;COUNT=4"},
				Start: time.Date(2026, 10, 14, 19, 0, 0, 0, ams), End: time.Date(2026, 10, 14, 20, 0, 0, 0, ams),
				Overrides: []feed.Override{{Of: time.Date(2026, 10, 21, 19, 0, 0, 0, ams), Start: time.Date(2026, 10, 27, 19, 0, 0, 0, ams)}}}
			e.feed(a, b, s)
			wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 3})
			if va, vb := e.get("a").Event.Venues, e.get("b").Event.Venues; len(va) != 1 || len(vb) != 1 || va[0] != vb[0] {
				t.Errorf("venues %v %v, want one Hall", va, vb)
			}
			p := e.get("s")
			occ, err := e.cal.FindOccurrence(p, ams, "20261021T190000")
			if err != nil || !occ.Start.Equal(time.Date(2026, 10, 27, 18, 0, 0, 0, time.UTC)) || !occ.End.Equal(occ.Start.Add(time.Hour)) {
				t.Errorf("moved instance %s-%s (%v), want 18:00-19:00 UTC on the 27th", occ.Start, occ.End, err)
			}
			before := e.store.writes.Load()
			wantRun(t, "second", e.run(), repository.RunSucceeded, counts{unchanged: 3})
			if n := e.store.writes.Load() - before; n != 0 {
				t.Errorf("the second run wrote %d times", n)
			}
			a.Title = "A2"
			e.feed(a, s)
			wantRun(t, "changed", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1, removed: 1})
			if got := e.get("b").Status; got != repository.StatusTrash {
				t.Errorf("b gone: %s", got)
			}
			e.feed(a, b, s)
			wantRun(t, "back", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 2})
			if got := e.get("b").Status; got != repository.StatusPublish {
				t.Errorf("b back: %s", got)
			}
		})
	}
}
