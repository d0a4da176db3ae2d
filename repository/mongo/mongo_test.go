package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/storetest"
)

// openStore opens a store on a fresh database of the server at uri and
// closes it when t ends.
func openStore(t *testing.T, uri string, opts ...mongo.Option) *mongo.Store {
	t.Helper()
	s, err := mongo.Open(t.Context(), uri, mongotest.Database(t), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// TestStore runs the shared conformance suite; every subtest gets its own
// database on one FerretDB server. The embedded FerretDB runs in the test
// process, over SQLite, and serialises writes: its concurrency tests use
// fewer writers (mongotest.StoreOptions); against a real MongoDB
// (TEST_MONGO_URI) they run in full. Its stores give up on a new ID
// after storeMaxDraws draws, so that the sequence tests cross that bound
// with ExplicitRun explicit IDs.
func TestStore(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	opts := mongotest.StoreOptions()
	opts.ExplicitRun = storeExplicitRun
	storetest.RunWith(t, opts, func(t *testing.T) repository.Store {
		return openStore(t, uri, mongo.WithoutIndexBuildForTest(), mongo.WithMaxDrawsForTest(storeMaxDraws))
	})
}

// storeMaxDraws bounds the draws of one new ID in TestStore's stores
// (WithMaxDrawsForTest) instead of the store's 100, and storeExplicitRun
// is the number of consecutive explicit IDs its sequence tests create:
// more than a store that did not move its sequence past them could step
// over, as the suite's default 120 are with 100 draws, in a fifth of the
// writes. The concurrency tests' writers, whose creates may draw a value
// FerretDB handed out twice, need a few draws at most.
const (
	storeMaxDraws    = 20
	storeExplicitRun = 24
)

// TestEngine checks engine-specific behaviour the shared suite cannot see.
func TestEngine(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, ctx context.Context, s *mongo.Store)
	}{
		{"OpenIsIdempotent", func(t *testing.T, ctx context.Context, s *mongo.Store) {
			// Open creates indexes on an existing database without error.
			db := mongotest.Database(t)
			for range 2 {
				s2, err := mongo.Open(ctx, uri, db)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				s2.Close(ctx)
			}
		}},
		{"OpenFailsFast", func(t *testing.T, ctx context.Context, s *mongo.Store) {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if _, err := mongo.Open(ctx, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=500", "x"); err == nil {
				t.Error("Open of an unreachable server succeeded")
			}
			if _, err := mongo.Open(ctx, uri, ""); err == nil {
				t.Error("Open with an empty database name succeeded")
			}
		}},
		{"ConcurrentUpdatesWithSlugs", testConcurrentSlugUpdates},
		{"MarksAreRenewedAfterTheWrite", testMarksRenewed},
		{"TitleFilterQuotesRegex", testTitleRegex},
		{"ExplicitIDAheadOfSequence", testExplicitIDAhead},
		{"LeftoverSlugIsTakenOver", testLeftoverSlug},
		{"NameKeysBackfill", testNameKeysBackfill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, t.Context(), openStore(t, uri))
		})
	}
}

// parallel runs fn(w, i) for i < n in each of workers goroutines.
func parallel(workers, n int, fn func(w, i int)) {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range n {
				fn(w, i)
			}
		})
	}
	wg.Wait()
}

func event(slug string) *repository.Record {
	return &repository.Record{
		Kind:   repository.KindEvent,
		Status: repository.StatusPublish,
		Date:   time.Date(2031, 3, 14, 18, 30, 5, 0, time.UTC),
		Title:  repository.Text{"en": slug},
		Slug:   repository.Text{"en": slug},
		Event:  &repository.EventFields{},
	}
}

// testConcurrentSlugUpdates has writers move one item's slug around while
// others create items competing for the same slugs: slugs stay unique and
// every stored slug resolves to its post.
func testConcurrentSlugUpdates(t *testing.T, ctx context.Context, s *mongo.Store) {
	var ids []int64
	for i := range 4 {
		p := event(fmt.Sprintf("move-%d", i))
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	parallel(6, 8, func(w, i int) {
		if w%2 == 0 {
			p := event("swap")
			if err := s.CreateRecord(ctx, p); err != nil {
				t.Errorf("CreatePost: %v", err)
			}
			return
		}
		id := ids[(w+i)%len(ids)]
		_, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error {
			p.Slug["en"] = []string{"swap", "swap-2", "move-0", "other"}[i%4]
			return nil
		})
		if err != nil {
			t.Errorf("UpdatePost: %v", err)
		}
	})
	all, err := s.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, p := range all {
		slug := p.Slug["en"]
		if prev, dup := seen[slug]; dup {
			t.Errorf("slug %q used by %d and %d", slug, prev, p.ID)
		}
		seen[slug] = p.ID
		got, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", slug)
		if err != nil || got.ID != p.ID {
			t.Errorf("GetPostBySlug(%s) = %v, %v; want %d", slug, got, err, p.ID)
		}
	}
}

func testMarksRenewed(t *testing.T, ctx context.Context, s *mongo.Store) {
	p := event("marked")
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatal(err)
	}
	marks, err := s.PendingMarks(ctx, 10)
	if err != nil || len(marks) != 1 {
		t.Fatalf("PendingMarks = %v, %v", marks, err)
	}
	// Concurrent updates and a worker that clears what it read: after the
	// writers are done, either the worker's last read saw the last write
	// or a mark is still pending.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			ms, err := s.PendingMarks(ctx, 10)
			if err != nil {
				t.Error(err)
				return
			}
			if err := s.ClearMarks(ctx, ms); err != nil {
				t.Error(err)
				return
			}
		}
	})
	parallel(4, 5, func(w, i int) {
		if _, err := s.UpdateRecord(ctx, p.ID, func(p *repository.Record) error { p.Author++; return nil }); err != nil {
			t.Error(err)
		}
	})
	close(done)
	wg.Wait()
	// Simulate the worker one last time: read the marks, then the item.
	marks, err = s.PendingMarks(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		if m.Kind != repository.MarkPost || m.ID != p.ID {
			t.Errorf("unexpected mark %+v", m)
		}
	}
	if err := s.ClearMarks(ctx, marks); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.PendingMarks(ctx, 10); len(left) != 0 {
		t.Errorf("marks left after clearing the current ones: %v", left)
	}
}

func testTitleRegex(t *testing.T, ctx context.Context, s *mongo.Store) {
	titles := []string{`A.B (c) [d] ^$ *+? {1} | \x`, "Line\n", "Line", "ÉTÉ", "été"}
	ids := map[string]int64{}
	for _, title := range titles {
		p := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish,
			Title: repository.Text{"en": title}, Slug: repository.Text{"en": "v"}, Venue: &repository.VenueFields{}}
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids[title] = p.ID
	}
	for _, tc := range []struct {
		q    string
		want []int64
	}{
		{`a.b (C) [D] ^$ *+? {1} | \X`, []int64{ids[titles[0]]}},
		{`A.B`, nil},
		{`AxB (c) [d] ^$ *+? {1} | \x`, nil},
		{"line", []int64{ids["Line"]}},
		{"line\n", []int64{ids["Line\n"]}},
	} {
		got, err := s.FindRecords(ctx, repository.RecordQuery{Title: tc.q, TitleLang: "en"})
		if err != nil {
			t.Errorf("FindPosts(%q): %v", tc.q, err)
			continue
		}
		var gotIDs []int64
		for _, p := range got {
			gotIDs = append(gotIDs, p.ID)
		}
		if !slices.Equal(gotIDs, tc.want) {
			t.Errorf("FindPosts(title %q) = %v, want %v", tc.q, gotIDs, tc.want)
		}
	}
	for _, lang := range []string{"", "a.b", "$x", "e:n"} {
		got, err := s.FindRecords(ctx, repository.RecordQuery{Title: "x", TitleLang: lang})
		if err != nil || len(got) != 0 {
			t.Errorf("FindPosts(title lang %q) = %v, %v; want none", lang, got, err)
		}
	}
}

func testExplicitIDAhead(t *testing.T, ctx context.Context, s *mongo.Store) {
	first := event("first")
	if err := s.CreateRecord(ctx, first); err != nil {
		t.Fatal(err)
	}
	explicit := event("explicit")
	explicit.ID = first.ID + 2
	if err := s.CreateRecord(ctx, explicit); err != nil {
		t.Fatal(err)
	}
	// The sequence walks past the explicit ID.
	var ids []int64
	for i := range 3 {
		p := event(fmt.Sprintf("auto-%d", i))
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if slices.Contains(ids, explicit.ID) {
		t.Errorf("auto IDs %v reuse the explicit ID %d", ids, explicit.ID)
	}
	// An explicit ID in use (or used before) is a duplicate.
	again := event("again")
	again.ID = explicit.ID
	if err := s.CreateRecord(ctx, again); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreatePost(used ID) = %v, want ErrDuplicate", err)
	}
	if again.ID != explicit.ID || again.Slug["en"] != "again" {
		t.Errorf("failed CreatePost changed its argument: %+v", again)
	}
}

// testLeftoverSlug simulates a writer that died after reserving slugs:
// the reservation is taken over by the next post wanting the slug.
func testLeftoverSlug(t *testing.T, ctx context.Context, s *mongo.Store) {
	a := event("leftover")
	if err := s.CreateRecord(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Deleting the post document behind the store's back leaves its
	// reservation without a user, as a crash before the write would.
	if err := mongo.DeletePostDocumentForTest(ctx, s, a.ID); err != nil {
		t.Fatal(err)
	}
	// A young reservation may belong to a writer still at work: skipped.
	young := event("leftover")
	if err := s.CreateRecord(ctx, young); err != nil {
		t.Fatal(err)
	}
	if young.Slug["en"] != "leftover-2" {
		t.Errorf("slug next to a young reservation: %q, want leftover-2", young.Slug["en"])
	}
	if err := mongo.AgeSlugReservationsForTest(ctx, s); err != nil {
		t.Fatal(err)
	}
	b := event("leftover")
	if err := s.CreateRecord(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.Slug["en"] != "leftover" {
		t.Errorf("slug %q, want the leftover reservation taken over", b.Slug["en"])
	}
	got, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", "leftover")
	if err != nil || got.ID != b.ID {
		t.Errorf("GetPostBySlug = %v, %v; want %d", got, err, b.ID)
	}
}
