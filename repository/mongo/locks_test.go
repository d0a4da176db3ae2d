package mongo_test

import (
	"context"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestRestartedReplicaBreaksItsOwnLocks: a lock left by a process that
// died holding it is broken at once by the next process of the same
// replica identity (WithReplica), opened after the lock was taken; every
// other taker (another identity, none, or a process of the same identity
// opened before the lock was taken: a live duplicate) waits for the lock
// lease as before.
func TestRestartedReplicaBreaksItsOwnLocks(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	for _, tc := range []struct {
		name            string
		holder, taker   string
		takerOpensFirst bool
		breaks          bool
	}{
		{name: "the same replica restarted", holder: "r1", taker: "r1", breaks: true},
		{name: "another replica", holder: "r2", taker: "r1"},
		{name: "a holder without identity", holder: "", taker: "r1"},
		{name: "a taker without identity", holder: "r1", taker: ""},
		{name: "a live duplicate", holder: "r1", taker: "r1", takerOpensFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := mongotest.Database(t)
			open := func(replica string) *mongo.Store {
				opts := []mongo.Option{mongo.WithoutIndexBuildForTest()}
				if replica != "" {
					opts = append(opts, mongo.WithReplica(replica))
				}
				s, err := mongo.Open(ctx, uri, db, opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close(context.Background()) })
				return s
			}
			var taker *mongo.Store
			if tc.takerOpensFirst {
				taker = open(tc.taker)
			}
			holder := open(tc.holder)
			if ok, err := mongo.TakeLockForTest(ctx, holder, "post:7"); err != nil || !ok {
				t.Fatalf("holder's lock: %v, %v", ok, err)
			}
			// The lock is taken a second before or after the taker
			// opened (the stores' estimates of the server's clock may
			// differ by a few milliseconds).
			shift := -time.Second
			if taker == nil {
				taker = open(tc.taker)
			} else {
				shift = time.Second
			}
			if err := mongo.ShiftLocksForTest(ctx, holder, shift); err != nil {
				t.Fatal(err)
			}
			ok, err := mongo.TakeLockForTest(ctx, taker, "post:7")
			if err != nil || ok != tc.breaks {
				t.Errorf("taker's lock: %v, %v; want %v", ok, err, tc.breaks)
			}
			if ok, err := mongo.TakeLockForTest(ctx, holder, "post:7"); err != nil || ok {
				t.Errorf("the lock was free again after the taker's try: %v, %v", ok, err)
			}
		})
	}
}
