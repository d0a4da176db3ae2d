package mongo_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	driverevent "go.mongodb.org/mongo-driver/v2/event"
	driver "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// oldWriter updates post id as the release before string _ids does
// (git show 4454500^:repository/mongo/items.go): it takes the item lock
// "post:ID" (an insert into locks, retried while another holder has it),
// reads {_id: ID}, and replaces it guarded by its revision, without the
// id field. busy is signalled (once) when the lock is held by another.
// It reports the revision it wrote, 0 when it wrote nothing (the record
// was gone: the old version answers 404).
func oldWriter(ctx context.Context, db *driver.Database, id int64, busy func()) (int64, error) {
	key := "post:" + strconv.FormatInt(id, 10)
	token := "old-writer"
	for signalled := false; ; {
		_, err := db.Collection("locks").InsertOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "token", Value: token}, {Key: "at", Value: time.Now()}})
		if err == nil {
			break
		}
		if !driver.IsDuplicateKeyError(err) {
			return 0, err
		}
		if !signalled {
			busy()
			signalled = true
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	defer db.Collection("locks").DeleteOne(context.Background(), bson.D{{Key: "_id", Value: key}, {Key: "token", Value: token}})
	var p repository.Record
	err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&p)
	if errors.Is(err, driver.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rev := p.Revision
	p.Revision++
	p.Title["en"] = "Written by the old version"
	res, err := db.Collection("posts").ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "revision", Value: rev}}, &p)
	if err != nil || res.MatchedCount == 0 {
		return 0, err
	}
	return p.Revision, nil
}

// insertsID reports whether the insert command cmd inserts the record id.
func insertsID(cmd bson.Raw, id int64) bool {
	docs, ok := cmd.Lookup("documents").ArrayOK()
	if !ok {
		return false
	}
	vals, _ := docs.Values()
	for _, v := range vals {
		if d, ok := v.DocumentOK(); ok {
			if got, ok := d.Lookup("id").AsInt64OK(); ok && got == id {
				return true
			}
		}
	}
	return false
}

// TestMigrateHoldsItemLocks: an update by a process of the previous
// release that lands while the migration converts its batch is either
// converted with the record or refused (the record is gone from the
// numeric layout); never acknowledged and then deleted. The old writer
// runs when the migration sends the insert of the record's string form,
// and the migration goes
// on once the writer is done or waits for the item's lock.
func TestMigrateHoldsItemLocks(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	client := connect(t, uri)
	ctx := t.Context()
	db := mongotest.Database(t)
	_, posts, _ := oldLayoutStore(t, uri, db)
	target := posts[len(posts)/2].ID

	var (
		mu       sync.Mutex
		armed    bool
		fired    bool
		once     sync.Once
		wrote    int64
		writeErr error
	)
	done := make(chan struct{})
	monitor := &driverevent.CommandMonitor{Started: func(_ context.Context, e *driverevent.CommandStartedEvent) {
		mu.Lock()
		run := armed && e.CommandName == "insert" && e.Command.Lookup("insert").StringValue() == "posts" && insertsID(e.Command, target)
		mu.Unlock()
		if !run {
			return
		}
		once.Do(func() {
			mu.Lock()
			fired = true
			mu.Unlock()
			busy := make(chan struct{}, 1)
			go func() {
				defer close(done)
				rev, err := oldWriter(ctx, client.Database(db), target, func() { busy <- struct{}{} })
				mu.Lock()
				wrote, writeErr = rev, err
				mu.Unlock()
			}()
			select {
			case <-done:
			case <-busy:
			case <-testdeadline.After(t):
			}
		})
	}}
	m, err := mongo.Open(ctx, uri, db, mongo.WithCommandMonitor(monitor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	mu.Lock()
	armed = true
	mu.Unlock()
	if _, err := mongo.MigrateForTest(ctx, m); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	ran := fired
	mu.Unlock()
	if !ran {
		t.Fatal("the migration never inserted the record's string form")
	}
	select {
	case <-done:
	case <-testdeadline.After(t):
		t.Fatal("the old writer never finished")
	}
	mu.Lock()
	rev, werr := wrote, writeErr
	mu.Unlock()
	if werr != nil {
		t.Fatalf("old writer: %v", werr)
	}
	t.Logf("the old writer wrote revision %d (0: refused, the record was converted first)", rev)
	got, err := m.GetRecord(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if rev != 0 && (got.Revision != rev || got.Title["en"] != "Written by the old version") {
		t.Errorf("the old version's update (revision %d) was acknowledged, but the record after the migration is revision %d titled %q: lost",
			rev, got.Revision, got.Title["en"])
	}
	if n := countOld(t, client, db); n != 0 {
		t.Errorf("%d records left in the old layout", n)
	}
}

// oldForm returns post p as the release before string _ids stores it:
// {_id: ID, ...} without the id field (its plain BSON).
func oldForm(t *testing.T, p *repository.Record) bson.Raw {
	t.Helper()
	raw, err := bson.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestUpgradeProtocol walks the expand/contract steps of migrate.go on one
// database with a store of this version beside records written by the
// previous release:
//   - expand: on a database in the numeric layout, creates and updates
//     are written with a numeric _id, which the previous release finds by
//     {_id: ID} and decodes;
//   - the leader does not migrate while a live replica record reads only
//     the numeric layout, and migrates (guarding the lease) once none does;
//   - stragglers: a record the previous release creates afterwards is
//     listed, read by ID (never 404), converted by an update, and
//     converted by the leader's sweep.
func TestUpgradeProtocol(t *testing.T) {
	t.Cleanup(mongo.SetLayoutIntervalForTest(20 * time.Millisecond))
	uri := mongotest.Start(t)
	client := connect(t, uri)
	ctx := t.Context()
	dbName := mongotest.Database(t)
	db := client.Database(dbName)
	_, posts, _ := oldLayoutStore(t, uri, dbName)

	s, err := mongo.Open(ctx, uri, dbName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	if s.Layout() != 1 {
		t.Fatalf("Layout() = %d on the numeric layout, want 1", s.Layout())
	}
	// Expand: what this version writes, the previous release reads.
	p := event("written-in-expand")
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRecord(ctx, posts[0].ID, func(p *repository.Record) error { p.Title["en"] = "Updated in expand"; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id    int64
		title string
	}{{p.ID, p.Title["en"]}, {posts[0].ID, "Updated in expand"}} {
		var old repository.Record
		if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: c.id}}).Decode(&old); err != nil || old.ID != c.id || old.Title["en"] != c.title {
			t.Errorf("the previous release reads post %d as %+v, %v; want it titled %q", c.id, old, err, c.title)
		}
	}

	// A live replica that reads only the numeric layout holds the
	// migration back.
	if _, err := db.Collection("replicas").InsertOne(ctx, bson.D{{Key: "_id", Value: "future-old/x"}, {Key: "replica", Value: "future-old"},
		{Key: "instance", Value: "x"}, {Key: "reads", Value: 1}, {Key: "writes", Value: 1}, {Key: "beat", Value: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	lease := s.Lease("leader", "replica-a", time.Second, nil)
	kctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); lease.Keep(kctx) }()
	go func() { defer wg.Done(); s.KeepLayout(kctx, lease, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { stop(); wg.Wait() })
	poll(t, "the replica record and the lease", func() bool {
		live, err := s.LiveReplicas(ctx)
		return err == nil && len(live) == 2 && lease.IsLeader(ctx) == nil
	})
	// Five more heartbeats as leader (counted on its record): still the
	// numeric layout.
	beats := map[time.Time]bool{}
	poll(t, "five heartbeats", func() bool {
		live, err := s.LiveReplicas(ctx)
		for _, r := range live {
			if err == nil && r.Replica == "replica-a" {
				beats[r.Beat] = true
			}
		}
		return len(beats) > 5
	})
	if s.Layout() != 1 || countOld(t, client, dbName) == 0 {
		t.Fatalf("migrated (layout %d) while a live replica reads only the numeric layout", s.Layout())
	}
	if _, err := db.Collection("replicas").DeleteOne(ctx, bson.D{{Key: "_id", Value: "future-old/x"}}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the migration", func() bool { return s.Layout() == 2 })
	if n := countOld(t, client, dbName); n != 0 {
		t.Errorf("%d records left in the numeric layout after the migration", n)
	}
	var guard bson.M
	if err := db.Collection("leases").FindOne(ctx, bson.D{{Key: "term", Value: int64(math.MaxInt64)}}).Decode(&guard); err != nil {
		t.Errorf("no lease guard after the migration: %v", err)
	}
	if lease.IsLeader(ctx) != nil {
		t.Error("the lease is no longer held beside its guard")
	}

	// Stragglers, as a forgotten follower of the previous release writes
	// them: listed, read by ID, never 404.
	var strays []*repository.Record
	for i := range 2 {
		st := *posts[1]
		st.ID, st.Slug = 1000+int64(i), repository.Text{"en": "straggler-" + strconv.Itoa(i)}
		if _, err := db.Collection("posts").InsertOne(ctx, oldForm(t, &st)); err != nil {
			t.Fatal(err)
		}
		strays = append(strays, &st)
	}
	// A reader that opens now (or checks at its next sweep) finds them.
	r, err := mongo.Open(ctx, uri, dbName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	listed, err := r.FindRecords(ctx, repository.RecordQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lp := range listed {
		if _, err := r.GetRecord(ctx, lp.ID); err != nil {
			t.Errorf("post %d is listed but GetPost answers %v", lp.ID, err)
		}
	}
	if got, err := r.GetRecords(ctx, []int64{strays[0].ID, strays[1].ID}); err != nil || len(got) != 2 {
		t.Errorf("GetPosts(stragglers) = %v, %v; want both", got, err)
	}
	up, err := r.UpdateRecord(ctx, strays[0].ID, func(p *repository.Record) error { p.Title["en"] = "Straggler updated"; return nil })
	if err != nil || up.Revision != strays[0].Revision+1 {
		t.Fatalf("UpdatePost(straggler) = %v, %v", up, err)
	}
	if err := db.Collection("posts").FindOne(ctx, bson.D{{Key: "_id", Value: strconv.FormatInt(strays[0].ID, 10)}}).Err(); err != nil {
		t.Errorf("the updated straggler is not in the string layout: %v", err)
	}
	// The leader's sweep converts the other.
	poll(t, "the sweep", func() bool { return countOld(t, client, dbName) == 0 })
	if got, err := r.GetRecord(ctx, strays[1].ID); err != nil || got.Slug["en"] != "straggler-1" {
		t.Errorf("GetPost(swept straggler) = %v, %v", got, err)
	}
}

// poll waits until cond holds, failing the test at its deadline.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testdeadline.Poll(t, 10*time.Millisecond, what, cond)
}
