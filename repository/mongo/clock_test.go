package mongo_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// skewedStore opens a store on db whose local clock is skew off the real
// one, plus whatever *moved holds (the test moves it on).
func skewedStore(t *testing.T, uri, db string, skew time.Duration, moved *atomic.Int64) *mongo.Store {
	t.Helper()
	clock := func() time.Time { return time.Now().Add(skew + time.Duration(moved.Load())) }
	s, err := mongo.Open(t.Context(), uri, db, mongo.WithLocalClockForTest(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// TestLocksOnTheServerClock: two processes whose clocks disagree by
// minutes agree on the age of an item lock and of a slug reservation: a
// lock (or reservation) one of them just took is respected by the other,
// and one left behind by a holder that died is taken over once lockLease
// has passed, not minutes early or late.
func TestLocksOnTheServerClock(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	for _, tc := range []struct {
		name          string
		holder, taker time.Duration
	}{
		{"holder behind", -10 * time.Minute, 10 * time.Minute},
		{"holder ahead", 10 * time.Minute, -10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := mongotest.Database(t)
			var still, moved atomic.Int64
			holder := skewedStore(t, uri, db, tc.holder, &still)
			taker := skewedStore(t, uri, db, tc.taker, &moved)

			if ok, err := mongo.TakeLockForTest(ctx, holder, "term:999"); err != nil || !ok {
				t.Fatalf("holder's lock: %v, %v", ok, err)
			}
			if ok, err := mongo.TakeLockForTest(ctx, taker, "term:999"); err != nil || ok {
				t.Fatalf("a lock just taken was taken over (%v)", err)
			}
			// A reservation left by a writer that died right after it.
			left := event("skewed")
			if err := holder.CreateRecord(ctx, left); err != nil {
				t.Fatal(err)
			}
			if err := mongo.DeletePostDocumentForTest(ctx, holder, left.ID); err != nil {
				t.Fatal(err)
			}
			young := event("skewed")
			if err := taker.CreateRecord(ctx, young); err != nil {
				t.Fatal(err)
			}
			if young.Slug["en"] != "skewed-2" {
				t.Errorf("slug next to a young reservation: %q, want skewed-2", young.Slug["en"])
			}

			// lockLease passes (on the taker's clock; the holder is dead).
			moved.Store(int64(mongo.LockLeaseForTest + time.Second))
			if ok, err := mongo.TakeLockForTest(ctx, taker, "term:999"); err != nil || !ok {
				t.Fatalf("an expired lock was not taken over (%v)", err)
			}
			old := event("skewed")
			if err := taker.CreateRecord(ctx, old); err != nil {
				t.Fatal(err)
			}
			if old.Slug["en"] != "skewed" {
				t.Errorf("slug %q, want the expired leftover taken over", old.Slug["en"])
			}
			if got, err := taker.GetRecordBySlug(ctx, repository.KindEvent, "en", "skewed"); err != nil || got.ID != old.ID {
				t.Errorf("GetPostBySlug = %v, %v; want %d", got, err, old.ID)
			}
		})
	}
}

// TestLockWaitBoundsABusyItem: a write to an item whose lock another
// writer holds (here one that died) fails after the store's lock wait
// (WithLockWait), saying how long it waited, rather than after
// DefaultLockWait.
func TestLockWaitBoundsABusyItem(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	ctx := t.Context()
	s, err := mongo.Open(ctx, uri, mongotest.Database(t), mongo.WithoutIndexBuildForTest(), mongo.WithLockWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	held := event("held")
	if err := s.CreateRecord(ctx, held); err != nil {
		t.Fatal(err)
	}
	if ok, err := mongo.TakeLockForTest(ctx, s, fmt.Sprintf("post:%d", held.ID)); err != nil || !ok {
		t.Fatalf("the record's lock: %v, %v", ok, err)
	}
	_, err = s.UpdateRecord(ctx, held.ID, func(p *repository.Record) error {
		p.Title = repository.Text{"en": "changed"}
		return nil
	})
	if want := "still locked by another writer after 100ms"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("update of a locked record: %v, want an error saying %q", err, want)
	}
}
