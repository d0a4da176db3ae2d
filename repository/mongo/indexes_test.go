package mongo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// findSort returns the sort a find options builder sets.
func findSort(t *testing.T, b *options.FindOptionsBuilder) bson.D {
	t.Helper()
	var fo options.FindOptions
	for _, set := range b.Opts {
		if err := set(&fo); err != nil {
			t.Fatal(err)
		}
	}
	sort, ok := fo.Sort.(bson.D)
	if !ok {
		t.Fatalf("sort is a %T, want bson.D", fo.Sort)
	}
	return sort
}

// declared reports whether an index with exactly keys (fields, order and
// directions) is declared on coll.
func declared(coll string, keys bson.D) bool {
	for _, ix := range declaredIndexes() {
		if ix.coll == coll && reflect.DeepEqual(ix.keys, keys) {
			return true
		}
	}
	return false
}

// TestQueriesHaveTheirIndexes: the queries that must not scan a large
// collection have an index whose keys are what they filter by equality
// followed by their sort, so that MongoDB reads the index in order and
// stops at the limit. (FerretDB v1's explain reports a table scan for any
// sort, since it never sorts by a secondary index, so the plan is checked
// here against the declared index list; on MongoDB an explain of these
// queries shows an IXSCAN on them.)
func TestQueriesHaveTheirIndexes(t *testing.T) {
	t.Parallel()
	kindPage, _ := postFilter(repository.RecordQuery{Kind: repository.KindVenue, AfterID: 40, Limit: 10}, true)
	itemsFilter, itemsOpts := sourceItemsFind(3)
	runsFilter, runsOpts := listRunsFind(3, 20)
	// flip reverses the directions of a sort: an index serves a sort and
	// its reverse alike.
	flip := func(d bson.D) bson.D {
		out := make(bson.D, len(d))
		for i, e := range d {
			out[i] = bson.E{Key: e.Key, Value: -e.Value.(int)}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		coll string
		keys bson.D
	}{
		// Every sync step, metrics scrape and /admin/sync.
		{"PendingMarks", collMarks, findSort(t, pendingMarksOptions(256))},
		{"PendingMarks unlimited", collMarks, findSort(t, pendingMarksOptions(0))},
		// DueMarks: the waiting marks by a range on next, then the
		// PendingMarks sort (above) excluding their _id keys.
		{"DueMarks waiting", collMarks, bson.D{{Key: failingMarksFilter[0].Key, Value: 1}}},
		// FailingMarks (scrapes, /admin/sync): the range and sort on next.
		{"FailingMarks", collMarks, failingMarksSort},
		// Paging venues or organizers: {kind} by equality, then the
		// FindPosts sort by id (AfterID a range on it).
		{"FindPosts by kind", collPosts, append(bson.D{{Key: kindPage[0].Key, Value: 1}}, findSort(t, findPostsOptions(10))...)},
		// Every source run: the events the source imported, by ID.
		{"SourceItems", collPosts, append(bson.D{{Key: itemsFilter[0].Key, Value: 1}}, findSort(t, itemsOpts)...)},
		// GET /sources/{id}/runs and the pruning after each run: the
		// source's runs by equality, read backwards by ID.
		{"ListSourceRuns", collSourceRuns, append(bson.D{{Key: runsFilter[0].Key, Value: 1}}, flip(findSort(t, runsOpts))...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !declared(tc.coll, tc.keys) {
				t.Errorf("no index %v declared on %s", tc.keys, tc.coll)
			}
		})
	}
	if kindPage[0].Key != "kind" || kindPage[len(kindPage)-1].Key != fieldID {
		t.Errorf("the kind page filter is %v; want kind first and the id range last", kindPage)
	}
}

// TestIndexesCreated: Open creates every declared index on the server
// (keys in order) and drops the {at, seq} index of index_marks that
// earlier versions created, which {at, seq, _id} replaces.
func TestIndexesCreated(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	db := mongotest.Database(t)
	ctx := t.Context()
	first, err := Open(ctx, uri, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.WaitIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	// As an earlier version left it.
	if _, err := first.marks.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: asc("at", "seq")}); err != nil {
		t.Fatal(err)
	}
	first.Close(ctx)

	s, err := Open(ctx, uri, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	if err := s.WaitIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	have := map[string][]bson.D{}
	for _, coll := range []string{collPosts, collTerms, collUsers, collTokens, collSlugs, collMarks, collLeases, collDeliveries, collSourceRuns} {
		cur, err := s.db.Collection(coll).Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ixs []struct {
			Key bson.D `bson:"key"`
		}
		if err := cur.All(ctx, &ixs); err != nil {
			t.Fatal(err)
		}
		for _, ix := range ixs {
			have[coll] = append(have[coll], ix.Key)
		}
	}
	contains := func(coll string, keys bson.D) bool {
		for _, k := range have[coll] {
			if sameKeys(k, keys) {
				return true
			}
		}
		return false
	}
	for _, ix := range declaredIndexes() {
		if !contains(ix.coll, ix.keys) {
			t.Errorf("index %v on %s missing after Open; have %v", ix.keys, ix.coll, have[ix.coll])
		}
	}
	for _, ix := range obsoleteIndexes {
		if contains(ix.coll, ix.keys) {
			t.Errorf("obsolete index %v on %s still there after Open", ix.keys, ix.coll)
		}
	}
}

// TestIndexesBuiltInBackground: Open returns while the indexes that are
// not unique are still being built (a new index on a large collection
// does not hold up the start), with the unique login index already there;
// the store answers meanwhile, and WaitIndexes reports when the build is
// done. Every createIndexes of a non-unique index is held in the command
// monitor until Open has returned: an Open that built them itself would
// wait there until the store's timeout and fail.
func TestIndexesBuiltInBackground(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	ctx := t.Context()
	opened := make(chan struct{})
	var held atomic.Int32
	monitor := &event.CommandMonitor{Started: func(cctx context.Context, e *event.CommandStartedEvent) {
		if e.CommandName != "createIndexes" || strings.Contains(e.Command.String(), `"unique"`) {
			return
		}
		held.Add(1)
		select {
		case <-opened:
		case <-cctx.Done():
		}
	}}
	s, err := Open(ctx, uri, mongotest.Database(t), WithCommandMonitor(monitor), WithTimeout(2*time.Second))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	select {
	case <-s.indexesDone:
		t.Fatal("the index build ended before Open returned")
	default:
	}
	// Served meanwhile.
	if err := s.CreateUser(ctx, &repository.User{Login: "early", Role: repository.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, &repository.User{Login: "early", Role: repository.RoleAdmin}); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("a second user with one login before the build: %v, want ErrDuplicate (the unique index is built by Open)", err)
	}
	close(opened)
	if err := s.WaitIndexes(ctx); err != nil {
		t.Fatalf("WaitIndexes: %v", err)
	}
	want := 0
	for _, ix := range declaredIndexes() {
		if !ix.unique {
			want++
		}
	}
	if n := int(held.Load()); n != want {
		t.Errorf("the background build created %d indexes, want %d", n, want)
	}
}
