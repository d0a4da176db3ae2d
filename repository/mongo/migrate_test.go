package mongo_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	driver "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestMigrateStringIDs starts from databases in the layout written before
// string _ids (numeric _id; DowngradeLayoutForTest), also as an
// interrupted migration leaves them, and checks that Open converts every
// post and term once, that the store then reads and writes them as
// before, and that opening again changes nothing.
func TestMigrateStringIDs(t *testing.T) {
	uri := mongotest.Start(t)
	client := connect(t, uri)
	// Batches of 3 records: every case takes several steps.
	t.Cleanup(mongo.SetMigrateBatchForTest(3))
	for _, tc := range []struct {
		name       string
		skip, keep int
	}{
		{"from the old layout", 0, 0},
		{"interrupted between an insert and its delete", 0, 3},
		{"interrupted after some batches", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := mongotest.Database(t)
			open := func() *mongo.Store {
				t.Helper()
				s, err := mongo.Open(ctx, uri, db)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				t.Cleanup(func() { s.Close(context.Background()) })
				return s
			}
			s := open()
			posts, terms := seedForMigration(t, s)
			if err := mongo.DowngradeLayoutForTest(ctx, s, tc.skip, tc.keep); err != nil {
				t.Fatal(err)
			}
			if n := countOld(t, client, db); n != int64(len(posts)+len(terms)-2*tc.skip) {
				t.Fatalf("%d records in the old layout after the downgrade, want %d", n, len(posts)+len(terms)-2*tc.skip)
			}

			m := open()
			// Expand: the old layout is read as it is, nothing converted.
			if m.Layout() != 1 {
				t.Fatalf("Layout() = %d after opening the old layout, want 1", m.Layout())
			}
			// (Sorted: records converted by an interrupted run sort after
			// the numeric _ids there.)
			if got, err := m.FindRecords(ctx, repository.RecordQuery{}); err != nil || !reflect.DeepEqual(byID(got), posts) {
				t.Errorf("posts before the migration differ (%v):\n got %v\nwant %v", err, got, posts)
			}
			if p, err := m.GetRecord(ctx, posts[len(posts)-1].ID); err != nil || !reflect.DeepEqual(p, posts[len(posts)-1]) {
				t.Errorf("GetPost before the migration = %v, %v", p, err)
			}
			got, err := mongo.MigrateForTest(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			if got.From != 1 || got.Converted != len(posts)+len(terms)-2*tc.skip {
				t.Errorf("migration = %+v, want from 1, %d converted", got, len(posts)+len(terms)-2*tc.skip)
			}
			if m.Layout() != 2 {
				t.Errorf("Layout() = %d after the migration, want 2", m.Layout())
			}
			if n := countOld(t, client, db); n != 0 {
				t.Errorf("%d records left in the old layout", n)
			}
			gotPosts, err := m.FindRecords(ctx, repository.RecordQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotPosts, posts) {
				t.Errorf("posts after the migration differ:\n got %v\nwant %v", gotPosts, posts)
			}
			gotTerms, err := m.FindLabels(ctx, repository.LabelQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotTerms, terms) {
				t.Errorf("terms after the migration differ:\n got %v\nwant %v", gotTerms, terms)
			}
			// Reads by ID, by slug, by several IDs; a page after an ID.
			last := posts[len(posts)-1]
			if p, err := m.GetRecordBySlug(ctx, last.Kind, "en", last.Slug["en"]); err != nil || p.ID != last.ID {
				t.Errorf("GetPostBySlug(%q) = %v, %v", last.Slug["en"], p, err)
			}
			if got, err := m.GetRecords(ctx, []int64{posts[0].ID, last.ID}); err != nil || len(got) != 2 {
				t.Errorf("GetPosts = %v, %v", got, err)
			}
			if page, err := m.FindRecords(ctx, repository.RecordQuery{AfterID: posts[1].ID, Limit: 2}); err != nil ||
				len(page) != 2 || page[0].ID != posts[2].ID || page[1].ID != posts[3].ID {
				t.Errorf("FindPosts(after %d, 2) = %v, %v", posts[1].ID, page, err)
			}
			if got, err := m.FindLabels(ctx, repository.LabelQuery{Slug: terms[0].Slug["en"], SlugLang: "en"}); err != nil || len(got) != 1 {
				t.Errorf("FindTerms(slug) = %v, %v", got, err)
			}
			// Writes: an update, and a create whose ID follows the others.
			up, err := m.UpdateRecord(ctx, last.ID, func(p *repository.Record) error { p.Title["en"] = "Renamed"; return nil })
			if err != nil || up.Revision != last.Revision+1 {
				t.Fatalf("UpdatePost = %v, %v", up, err)
			}
			p := event(last.Slug["en"]) // taken: gets "-2"
			if err := m.CreateRecord(ctx, p); err != nil {
				t.Fatal(err)
			}
			if p.ID <= last.ID || p.Slug["en"] != last.Slug["en"]+"-2" {
				t.Errorf("created post %d with slug %q after the migration; want an ID above %d and slug %q", p.ID, p.Slug["en"], last.ID, last.Slug["en"]+"-2")
			}

			again := open()
			if st, err := mongo.MigrateForTest(ctx, again); err != nil || st.From != 0 || st.Converted != 0 || again.Layout() != 2 {
				t.Errorf("a second migration = %+v, %v (layout %d); want nothing done at layout 2", st, err, again.Layout())
			}
		})
	}
}

// seedForMigration writes terms, a venue and events (some updated, with
// links) and returns every post and term as the store reads them.
// oldLayoutStore opens a store on database db of uri (closed when the test
// ends), seeds it (seedForMigration) and rewrites every record in the old
// layout (DowngradeLayoutForTest).
func oldLayoutStore(t *testing.T, uri, db string) (*mongo.Store, []*repository.Record, []*repository.Label) {
	t.Helper()
	s, err := mongo.Open(t.Context(), uri, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	posts, terms := seedForMigration(t, s)
	if err := mongo.DowngradeLayoutForTest(t.Context(), s, 0, 0); err != nil {
		t.Fatal(err)
	}
	return s, posts, terms
}

func seedForMigration(t *testing.T, s *mongo.Store) ([]*repository.Record, []*repository.Label) {
	t.Helper()
	ctx := t.Context()
	var cats []int64
	for i := range 3 {
		term := &repository.Label{Taxonomy: repository.LabelCategory, Name: repository.Text{"en": fmt.Sprintf("Cat %d", i)},
			Slug: repository.Text{"en": fmt.Sprintf("cat-%d", i)}}
		if err := s.CreateLabel(ctx, term); err != nil {
			t.Fatal(err)
		}
		cats = append(cats, term.ID)
	}
	venue := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish,
		Title: repository.Text{"en": "Hall"}, Slug: repository.Text{"en": "hall"}, Venue: &repository.VenueFields{City: "Gent"}}
	if err := s.CreateRecord(ctx, venue); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		p := event(fmt.Sprintf("event-%d", i))
		p.Event.Venues, p.Event.Categories = []int64{venue.ID}, []int64{cats[i%3]}
		p.Event.StartUTC = time.Date(2027, 5, 1, 20, 0, 0, 0, time.UTC).AddDate(0, 0, i)
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := s.UpdateRecord(ctx, p.ID, func(p *repository.Record) error { p.Event.Featured = true; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	posts, err := s.FindRecords(ctx, repository.RecordQuery{})
	if err != nil {
		t.Fatal(err)
	}
	terms, err := s.FindLabels(ctx, repository.LabelQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return posts, terms
}

// countOld counts the posts and terms of database db in the old layout
// (without the numeric id field).
func countOld(t *testing.T, client *driver.Client, db string) int64 {
	t.Helper()
	var n int64
	for _, coll := range []string{"posts", "terms"} {
		c, err := client.Database(db).Collection(coll).CountDocuments(t.Context(), bson.D{{Key: "id", Value: bson.D{{Key: "$exists", Value: false}}}})
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestMigrateConcurrently: two processes migrating an old database at
// once (as two leaders, one after the other's lease was lost, may) both
// succeed and convert every record exactly once between them, each under
// its item lock.
func TestMigrateConcurrently(t *testing.T) {
	uri := mongotest.Start(t)
	client := connect(t, uri)
	t.Cleanup(mongo.SetMigrateBatchForTest(2))
	ctx := t.Context()
	db := mongotest.Database(t)
	s, posts, terms := oldLayoutStore(t, uri, db)
	stats := make([]mongo.MigrationStats, 2)
	errs := make([]error, 2)
	parallel(2, 1, func(w, _ int) {
		st, err := mongo.Open(ctx, uri, db)
		if errs[w] = err; err == nil {
			stats[w], errs[w] = mongo.MigrateForTest(ctx, st)
			st.Close(context.Background())
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
	}
	if total := stats[0].Converted + stats[1].Converted; total != len(posts)+len(terms) {
		t.Errorf("migrations %+v; want %d records converted between them", stats, len(posts)+len(terms))
	}
	if n := countOld(t, client, db); n != 0 {
		t.Errorf("%d records left in the old layout", n)
	}
	got, err := s.FindRecords(ctx, repository.RecordQuery{})
	if err != nil || !reflect.DeepEqual(got, posts) {
		t.Errorf("posts after the migration differ (%v):\n got %v\nwant %v", err, got, posts)
	}
}

// byID returns posts sorted by ID.
func byID(posts []*repository.Record) []*repository.Record {
	slices.SortFunc(posts, func(a, b *repository.Record) int { return cmp.Compare(a.ID, b.ID) })
	return posts
}

// TestRecordLayoutLosesRace: two processes record the layout document at
// once and the server answers the loser's upsert with a duplicate key
// error. The fault proxy makes that interleaving deterministic: when the
// loser's update of meta reaches it, the winner runs to completion (Before)
// and the proxy answers the loser as the server does. The loser accepts
// the winner's document instead of failing Open or the migration.
func TestRecordLayoutLosesRace(t *testing.T) {
	uri := mongotest.Start(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		// prepare sets the database up before both processes run.
		prepare func(t *testing.T, db string)
		// run is what both processes do (the loser through the proxy
		// at puri); it returns the process's store.
		run func(uri, db string) (*mongo.Store, error)
	}{
		{
			// Two replicas start on a new database together.
			name:    "open a new database",
			prepare: func(*testing.T, string) {},
			run: func(uri, db string) (*mongo.Store, error) {
				return mongo.Open(ctx, uri, db)
			},
		},
		{
			// Two leaders finish migrating an old database together.
			name: "migrate an old database",
			prepare: func(t *testing.T, db string) {
				oldLayoutStore(t, uri, db)
			},
			run: func(uri, db string) (*mongo.Store, error) {
				s, err := mongo.Open(ctx, uri, db)
				if err != nil {
					return nil, err
				}
				if _, err := mongo.MigrateForTest(ctx, s); err != nil {
					s.Close(context.Background())
					return nil, err
				}
				return s, nil
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := mongotest.Database(t)
			tc.prepare(t, db)
			p, puri := mongotest.ProxyURI(t, uri)
			var winnerErr error
			winner := func() {
				s, err := tc.run(uri, db)
				if winnerErr = err; err == nil {
					s.Close(context.Background())
				}
			}
			p.Inject(mongotest.Fault{Command: "update", Collection: "meta", Action: mongotest.WriteError, Times: 1, Before: winner})
			s, err := tc.run(puri, db)
			if s != nil {
				defer s.Close(context.Background())
			}
			if p.Applied() != 1 {
				t.Fatalf("the fault applied to %d commands, want 1 (the loser never recorded the layout)", p.Applied())
			}
			if winnerErr != nil {
				t.Fatalf("the winner of the race failed: %v", winnerErr)
			}
			if err != nil {
				t.Fatalf("the loser of the race failed: %v", err)
			}
			if s.Layout() != 2 {
				t.Errorf("Layout() of the loser = %d, want 2", s.Layout())
			}
			again, err := mongo.Open(ctx, uri, db)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close(context.Background())
			if again.Layout() != 2 {
				t.Errorf("Layout() of a later Open = %d, want 2", again.Layout())
			}
		})
	}
}
