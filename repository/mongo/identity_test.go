package mongo

import (
	"errors"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// TestReplicaIdentity: the lease holder is the replica's stable identity
// (REPLICA_ID). A replica restarted after a crash takes its lease back at
// once; two live processes with one identity are detected, and the one
// that led first is refused.
func TestReplicaIdentity(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	const ttl = 3 * time.Second
	third := ttl / LeaseHolderRenewals
	setup := func(t *testing.T) (*Store, *testsupport.Clock, func(holder string) *Lease) {
		s := leaseStore(t, uri)
		clock := testsupport.NewClock(time.Unix(1_000_000, 0))
		return s, clock, func(holder string) *Lease {
			l := s.Lease("leader", holder, ttl, quiet)
			l.now = clock.Now
			return l
		}
	}
	step := func(t *testing.T, l *Lease) error {
		t.Helper()
		err := l.step(t.Context())
		if err != nil && !errors.Is(err, ErrDuplicateReplica) {
			t.Fatalf("step: %v", err)
		}
		return err
	}
	leads := func(l *Lease) bool { return l.IsLeader(t.Context()) == nil }

	t.Run("a restarted replica takes its own lease back at once", func(t *testing.T) {
		_, clock, lease := setup(t)
		before := lease("replica-1")
		step(t, before)
		clock.Advance(third)
		step(t, before)
		// kill -9: before stops renewing and never releases. The same
		// replica starts again: a new process, the same identity.
		after := lease("replica-1")
		if after.instance == before.instance {
			t.Fatal("two processes drew the same instance ID")
		}
		step(t, after)
		if !leads(after) {
			t.Fatal("the restarted replica does not lead at once")
		}
		// Another replica, by contrast, would have waited a whole ttl.
		other := lease("replica-2")
		step(t, other)
		if leads(other) {
			t.Error("another identity took over a live lease")
		}
	})

	t.Run("another identity waits for the expiry", func(t *testing.T) {
		_, clock, lease := setup(t)
		dead := lease("replica-1")
		step(t, dead)
		next := lease("replica-2")
		step(t, next)
		if leads(next) {
			t.Fatal("replica-2 took over before the expiry")
		}
		clock.Advance(ttl)
		step(t, next)
		if !leads(next) {
			t.Fatal("replica-2 did not take over after the expiry")
		}
	})

	t.Run("two live processes with one identity: the first is refused", func(t *testing.T) {
		_, clock, lease := setup(t)
		first := lease("replica-1")
		step(t, first)
		second := lease("replica-1") // started by mistake with the same REPLICA_ID
		step(t, second)
		if !leads(second) {
			t.Fatal("the second process did not take the lease")
		}
		clock.Advance(third)
		// first's next renewal finds a term of its identity it did not write.
		if err := step(t, first); !errors.Is(err, ErrDuplicateReplica) {
			t.Fatalf("first's renewal: %v, want ErrDuplicateReplica", err)
		}
		select {
		case <-first.Conflict():
		default:
			t.Fatal("Conflict not closed")
		}
		if leads(first) {
			t.Error("the refused process still leads")
		}
		// The refused process writes nothing more: the other keeps leading.
		step(t, first)
		step(t, second)
		if !leads(second) || leads(first) {
			t.Errorf("leaders after the conflict: first %v, second %v; want only second", leads(first), leads(second))
		}
		select {
		case <-second.Conflict():
			t.Error("the surviving process was refused too")
		default:
		}
		// Keep of the refused process returns at once.
		done := make(chan struct{})
		go func() { first.Keep(t.Context()); close(done) }()
		select {
		case <-done:
		case <-testdeadline.After(t):
			t.Fatal("Keep of a refused process did not return")
		}
	})

	t.Run("the old process's Release leaves the new one's lease alone", func(t *testing.T) {
		_, _, lease := setup(t)
		old := lease("replica-1")
		step(t, old)
		restarted := lease("replica-1")
		step(t, restarted)
		if err := old.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		step(t, restarted)
		if !leads(restarted) {
			t.Error("the old process released the restarted one's lease")
		}
		other := lease("replica-2")
		step(t, other)
		if leads(other) {
			t.Error("another replica took over a held lease")
		}
	})
}
