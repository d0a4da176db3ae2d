package mongo_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestRoundTrips checks the batched reads the API's renders rely on (app's
// TestMongoCommandsPerRequest counts whole requests): on MongoDB, GetPosts
// and GetTerms answer any number of IDs, repeats included, in one command
// (past the driver's default first batch of 101 documents), and
// CountLabelEvents counts the published events of any number of terms in
// one command, as CountPosts does term by term. The store runs MongoDB's
// plan (mongo.WithMongoDBPlan) on whatever server the test has; on
// FerretDB the store's own plan reads by ID with one look-up per distinct
// ID instead (the "FerretDB plan" subtests; TestHotReadsPushedDown checks
// that FerretDB answers them with SQL).
func TestRoundTrips(t *testing.T) {
	uri := mongotest.Start(t)
	ctx := t.Context()
	counter := mongotest.CommandNames()
	db := mongotest.Database(t)
	s, err := mongo.Open(ctx, uri, db, mongo.WithCommandMonitor(counter.Monitor()), mongo.WithMongoDBPlan())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	ownCounter := mongotest.CommandNames()
	own, err := mongo.Open(ctx, uri, db, mongo.WithCommandMonitor(ownCounter.Monitor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close(context.Background()) })
	// No background index build may add to the counts.
	for _, st := range []*mongo.Store{s, own} {
		if err := st.WaitIndexes(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ferret := own.FerretDB()

	var cats, tags []int64
	for i := range 8 {
		for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
			term := &repository.Label{Taxonomy: tax, Name: repository.Text{"en": fmt.Sprintf("%s %d", tax, i)},
				Slug: repository.Text{"en": fmt.Sprintf("%s-%d", tax, i)}}
			if err := s.CreateLabel(ctx, term); err != nil {
				t.Fatal(err)
			}
			if tax == repository.LabelCategory {
				cats = append(cats, term.ID)
			} else {
				tags = append(tags, term.ID)
			}
		}
	}
	rng := rand.New(rand.NewPCG(20, 6))
	pick := func(from []int64) []int64 {
		out := []int64{}
		for range rng.IntN(3) {
			out = append(out, from[rng.IntN(len(from))]) // repeats possible, as in stored data
		}
		return out
	}
	statuses := []string{repository.StatusPublish, repository.StatusPublish, repository.StatusDraft, repository.StatusTrash}
	var ids []int64
	const events = 120
	for i := range events {
		start := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i)
		p := &repository.Record{Kind: repository.KindEvent, Status: statuses[rng.IntN(len(statuses))],
			Title: repository.Text{"en": fmt.Sprintf("Event %d", i)}, Slug: repository.Text{"en": fmt.Sprintf("event-%d", i)},
			Event: &repository.EventFields{StartUTC: start, EndUTC: start.Add(time.Hour), Categories: pick(cats), Tags: pick(tags)}}
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	counter.Take()

	t.Run("GetPosts", func(t *testing.T) {
		got, err := s.GetRecords(ctx, append(append([]int64{}, ids...), ids[:10]...))
		if err != nil || len(got) != events {
			t.Fatalf("GetPosts = %d posts, %v; want %d", len(got), err, events)
		}
		if cmds := counter.Take(); len(cmds) != 1 {
			t.Errorf("GetPosts of %d IDs sent %v, want one find", events+10, cmds)
		}
	})
	t.Run("GetPosts, the server's plan", func(t *testing.T) {
		ownCounter.Take()
		got, err := own.GetRecords(ctx, append(append([]int64{}, ids...), ids[:10]...))
		if err != nil || len(got) != events {
			t.Fatalf("GetPosts = %d posts, %v; want %d", len(got), err, events)
		}
		want := 1
		if ferret {
			want = events // one look-up per distinct ID
		}
		if cmds := ownCounter.Take(); len(cmds) != want || slices.ContainsFunc(cmds, func(c string) bool { return c != "find" }) {
			t.Errorf("GetPosts of %d IDs (%d distinct) sent %d commands %v, want %d finds (FerretDB: %v)", events+10, events, len(cmds), cmds, want, ferret)
		}
	})
	t.Run("GetPosts, more IDs than look-ups", func(t *testing.T) {
		defer mongo.SetMaxIDLookupsForTest(events - 1)()
		ownCounter.Take()
		got, err := own.GetRecords(ctx, ids)
		if err != nil || len(got) != events {
			t.Fatalf("GetPosts = %d posts, %v; want %d", len(got), err, events)
		}
		if cmds := ownCounter.Take(); len(cmds) != 1 {
			t.Errorf("GetPosts of %d IDs, over the look-up limit, sent %v, want one find", events, cmds)
		}
	})
	t.Run("GetTerms", func(t *testing.T) {
		all := append(append([]int64{}, cats...), tags...)
		got, err := s.GetLabels(ctx, append(all, all...))
		if err != nil || len(got) != len(all) {
			t.Fatalf("GetTerms = %d terms, %v; want %d", len(got), err, len(all))
		}
		if cmds := counter.Take(); len(cmds) != 1 {
			t.Errorf("GetTerms sent %v, want one find", cmds)
		}
	})
	t.Run("CountLabelEvents", func(t *testing.T) {
		terms := append(append([]int64{}, cats...), tags...)
		got, err := s.CountLabelEvents(ctx, append(terms, 999999))
		if err != nil {
			t.Fatal(err)
		}
		if cmds := counter.Take(); len(cmds) != 1 {
			t.Errorf("CountLabelEvents sent %v, want one command", cmds)
		}
		want := map[int64]int{}
		for _, id := range terms {
			q := repository.RecordQuery{Kind: repository.KindEvent, Statuses: []string{repository.StatusPublish}, CategoryIDs: []int64{id}}
			if slices.Contains(tags, id) {
				q.CategoryIDs, q.TagIDs = nil, []int64{id}
			}
			n, err := s.CountRecords(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				want[id] = n
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("CountLabelEvents = %v\nCountPosts per term = %v", got, want)
		}
		if got, err := s.CountLabelEvents(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("CountLabelEvents(none) = %v, %v; want empty", got, err)
		}

		// The server's plan: on FerretDB one read of every published
		// event, reused for a moment (at most one command a call) and
		// made stale by the store's own post writes.
		terms = append(terms, 999999)
		for range 2 {
			ownCounter.Take()
			got, err := own.CountLabelEvents(ctx, terms)
			if err != nil {
				t.Fatal(err)
			}
			if cmds := ownCounter.Take(); len(cmds) > 1 {
				t.Errorf("CountLabelEvents (server's plan) sent %v, want at most one command", cmds)
			}
			if !maps.Equal(got, want) {
				t.Errorf("CountLabelEvents (server's plan) = %v\nCountPosts per term = %v", got, want)
			}
		}
		p := &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish,
			Title: repository.Text{"en": "One more"}, Slug: repository.Text{"en": "one-more"},
			Event: &repository.EventFields{Categories: []int64{cats[0]}, Tags: []int64{tags[0], tags[0]}}}
		if err := own.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, err = own.CountLabelEvents(ctx, []int64{cats[0], tags[0]})
		if err != nil {
			t.Fatal(err)
		}
		if got[cats[0]] != want[cats[0]]+1 || got[tags[0]] != want[tags[0]]+1 {
			t.Errorf("after a new event CountLabelEvents = %v, want %d and %d", got, want[cats[0]]+1, want[tags[0]]+1)
		}
	})
}
