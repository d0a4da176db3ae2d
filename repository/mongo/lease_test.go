package mongo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/sync/lease"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// leaseStore opens a store on a fresh database of the server at uri.
func leaseStore(t *testing.T, uri string) *Store {
	t.Helper()
	s, err := Open(t.Context(), uri, mongotest.Database(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func TestLease(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	const ttl = 3 * time.Second
	third := ttl / LeaseHolderRenewals

	// Each scenario is a script run by processes a, b and c sharing one
	// database and one fake clock. After every line, leaders lists the
	// processes whose IsLeader answers nil.
	type line struct {
		do      string // "step a", "release a", "advance"
		by      time.Duration
		leaders string
	}
	tests := []struct {
		name   string
		script []line
	}{
		{"the first process takes a free lease", []line{
			{do: "step a", leaders: "a"}, {do: "step b", leaders: "a"}, {do: "step c", leaders: "a"},
		}},
		{"renewals keep the lease", []line{
			{do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "advance", by: third, leaders: "a"}, {do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "advance", by: third, leaders: "a"}, {do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "advance", by: third, leaders: "a"}, {do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "advance", by: third, leaders: "a"}, {do: "step b", leaders: "a"},
		}},
		{"a holder that stops renewing stops leading before anyone takes over", []line{
			{do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "advance", by: ttl - third - time.Millisecond, leaders: "a"},
			{do: "advance", by: time.Millisecond, leaders: ""},
			{do: "step b", leaders: ""},
			{do: "advance", by: third - time.Millisecond, leaders: ""},
			{do: "step b", leaders: ""},
			{do: "advance", by: time.Millisecond, leaders: ""},
			{do: "step b", leaders: "b"},
			// The old holder comes back: it sees the new term.
			{do: "step a", leaders: "b"},
		}},
		{"the wait starts when a process first sees the term", []line{
			{do: "step a", leaders: "a"},
			{do: "advance", by: 10 * ttl, leaders: ""},
			{do: "step b", leaders: ""},
			{do: "advance", by: ttl, leaders: ""},
			{do: "step b", leaders: "b"},
		}},
		{"a released lease is taken at once", []line{
			{do: "step a", leaders: "a"}, {do: "step b", leaders: "a"},
			{do: "release a", leaders: ""},
			{do: "step b", leaders: "b"}, {do: "step a", leaders: "b"},
		}},
		{"releasing a lease not held writes nothing", []line{
			{do: "step a", leaders: "a"}, {do: "release b", leaders: "a"}, {do: "step c", leaders: "a"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := leaseStore(t, uri)
			clock := testsupport.NewClock(time.Unix(1_000_000, 0))
			leases := map[string]*Lease{}
			for _, p := range []string{"a", "b", "c"} {
				l := s.Lease("leader", "process-"+p, ttl, quiet)
				l.now = clock.Now
				leases[p] = l
			}
			for i, ln := range tt.script {
				verb, who, _ := strings.Cut(ln.do, " ")
				var err error
				switch verb {
				case "advance":
					clock.Advance(ln.by)
				case "step":
					err = leases[who].step(t.Context())
				case "release":
					err = leases[who].Release(t.Context())
				}
				if err != nil {
					t.Fatalf("line %d (%s): %v", i, ln.do, err)
				}
				got := ""
				for _, p := range []string{"a", "b", "c"} {
					if leases[p].IsLeader(t.Context()) == nil {
						got += p
					}
				}
				if got != ln.leaders {
					t.Fatalf("line %d (%s %v): leaders %q, want %q", i, ln.do, ln.by, got, ln.leaders)
				}
			}
		})
	}

	t.Run("contenders race for one term", func(t *testing.T) {
		s := leaseStore(t, uri)
		clock := testsupport.NewClock(time.Unix(1_000_000, 0))
		var leases []*Lease
		for i := range 6 {
			l := s.Lease("leader", fmt.Sprintf("process-%d", i), ttl, quiet)
			l.now = clock.Now
			leases = append(leases, l)
		}
		leaders := func() []int {
			var out []int
			for i, l := range leases {
				if l.IsLeader(t.Context()) == nil {
					out = append(out, i)
				}
			}
			return out
		}
		stepAll := func() {
			var wg sync.WaitGroup
			for _, l := range leases {
				wg.Go(func() {
					if err := l.step(t.Context()); err != nil {
						t.Errorf("step: %v", err)
					}
				})
			}
			wg.Wait()
		}
		// A free lease: exactly one of six wins.
		stepAll()
		first := leaders()
		if len(first) != 1 {
			t.Fatalf("leaders after a race for a free lease = %v, want exactly one", first)
		}
		// Renewals racing with the others' checks keep the same leader.
		for range 5 {
			clock.Advance(third)
			stepAll()
			if got := leaders(); len(got) != 1 || got[0] != first[0] {
				t.Fatalf("leaders after a renewal round = %v, want [%d]", got, first[0])
			}
		}
		// The holder dies; the others race to take over: exactly one wins.
		dead := leases[first[0]]
		leases = append(leases[:first[0]], leases[first[0]+1:]...)
		// (A contender that read just before the last renewal has only
		// seen the last term now, so wait a whole ttl from here.)
		stepAll()
		if got := leaders(); len(got) != 0 {
			t.Fatalf("leaders right after the holder died = %v, want none yet", got)
		}
		clock.Advance(ttl)
		stepAll()
		if got := leaders(); len(got) != 1 {
			t.Fatalf("leaders after the take-over race = %v, want exactly one", got)
		}
		if dead.IsLeader(t.Context()) == nil {
			t.Errorf("the dead holder still counts itself leader")
		}
		// Old terms are deleted: the collection stays small.
		n, err := s.leases.CountDocuments(t.Context(), bson.D{})
		if err != nil || n > 3 {
			t.Errorf("%d lease documents (%v), want at most 3", n, err)
		}
	})

	t.Run("a stale claim of a deleted term loses", func(t *testing.T) {
		s := leaseStore(t, uri)
		clock := testsupport.NewClock(time.Unix(1_000_000, 0))
		a := s.Lease("leader", "process-a", ttl, quiet)
		a.now = clock.Now
		for range 5 {
			if err := a.step(t.Context()); err != nil {
				t.Fatal(err)
			}
			clock.Advance(third)
		}
		stale := s.Lease("leader", "process-stale", ttl, quiet)
		stale.now = clock.Now
		// As if it had read term 1 long ago: term 2 is deleted by now.
		won, err := stale.claim(t.Context(), 2, 2)
		if err != nil || won {
			t.Errorf("stale claim = %v, %v; want lost", won, err)
		}
		if err := a.IsLeader(t.Context()); err != nil {
			t.Errorf("the holder lost the lease to a stale claim: %v", err)
		}
	})

	t.Run("Keep takes over from a holder that stopped, and Changed tells", func(t *testing.T) {
		s := leaseStore(t, uri)
		const short = 600 * time.Millisecond
		a := s.Lease("leader", "process-a", short, quiet)
		b := s.Lease("leader", "process-b", short, quiet)
		aCtx, crash := context.WithCancel(t.Context())
		bCtx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer stop()
		changed := a.Changed()
		wg.Go(func() { a.Keep(aCtx) })
		select {
		case <-changed:
		case <-testdeadline.After(t):
			t.Fatal("a never announced that it holds the lease")
		}
		if err := a.IsLeader(t.Context()); err != nil {
			t.Fatalf("a: %v", err)
		}
		wg.Go(func() { b.Keep(bCtx) })
		bChanged := b.Changed()
		crash() // a stops renewing without releasing
		select {
		case <-bChanged:
		case <-testdeadline.After(t):
			t.Fatal("b never took over")
		}
		if err := b.IsLeader(t.Context()); err != nil {
			t.Errorf("b after the take-over: %v", err)
		}
		if err := a.IsLeader(t.Context()); err == nil {
			t.Errorf("a still leads after it stopped renewing")
		}
	})
}

// TestLeaseTransitionsLogged: with lease.LogChanges watching it, a
// lease that is acquired, lost (its renewals fail during a store outage
// until its validity passes) and taken back when the store answers again
// is logged once per transition, the taking back included.
func TestLeaseTransitionsLogged(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	const ttl = 3 * time.Second
	s := leaseStore(t, uri)
	clock := testsupport.NewClock(time.Unix(1_000_000, 0))
	l := s.Lease("leader", "process-a", ttl, quiet)
	l.now = clock.Now
	var out testsupport.SyncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		lease.LogChanges(ctx, l, slog.New(slog.NewTextHandler(&out, nil)), "lease", "leader")
	}()
	waitFor := func(what string, times int) {
		t.Helper()
		deadline := testdeadline.Of(t)
		for strings.Count(out.String(), what) != times {
			if time.Now().After(deadline) {
				t.Fatalf("never logged %d× %s:\n%s", times, what, out.String())
			}
			time.Sleep(5 * time.Millisecond) // a poll interval
		}
	}
	if err := l.step(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(`level=INFO msg="lease acquired" lease=leader`, 1)
	// No renewal for a whole ttl (the store is unreachable): the holder
	// stops counting itself leader, which Keep announces.
	clock.Advance(ttl)
	l.settle()
	waitFor(`level=WARN msg="lease lost" lease=leader`, 1)
	// The store answers again and nobody took over: the holder renews its
	// own term, taking the lease back.
	if err := l.step(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(`level=INFO msg="lease taken back" lease=leader times=1 holder=process-a`, 1)
	if !strings.Contains(out.String(), "term=2 previous=process-a") {
		t.Errorf("the taking back does not name its term and the previous holder:\n%s", out.String())
	}
	cancel()
	<-done
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("%d lines, want 3:\n%s", n, out.String())
	}
}

var _ lease.Fencer = (*Lease)(nil)

// TestLeaseFencing: a holder that paused past its lease (its clock
// stopped with it) still counts itself leader, but Fence (and so the
// guarded work, through lease.CheckFence) refuses it once another process
// took over; renewals keep the epoch, a take-over starts a new one.
func TestLeaseFencing(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	ctx := t.Context()
	const ttl = 3 * time.Second
	third := ttl / LeaseHolderRenewals
	s := leaseStore(t, uri)
	aClock := testsupport.NewClock(time.Unix(1_000_000, 0))
	bClock := testsupport.NewClock(time.Unix(2_000_000, 0))
	a := s.Lease("leader", "process-a", ttl, quiet)
	a.now = aClock.Now
	b := s.Lease("leader", "process-b", ttl, quiet)
	b.now = bClock.Now

	if err := a.step(ctx); err != nil {
		t.Fatal(err)
	}
	epoch, err := a.Fence(ctx)
	if err != nil {
		t.Fatalf("the holder's fence: %v", err)
	}
	for range 3 { // renewals
		aClock.Advance(third)
		bClock.Advance(third)
		if err := a.step(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.step(ctx); err != nil {
			t.Fatal(err)
		}
		if e, err := a.Fence(ctx); err != nil || e != epoch {
			t.Fatalf("after a renewal: epoch %d (%v), want %d", e, err, epoch)
		}
	}
	if _, err := b.Fence(ctx); err == nil {
		t.Fatal("a process that never held the lease passed the fence")
	}
	// a pauses: its clock stands still, b's goes on, b takes over.
	bClock.Advance(ttl)
	if err := b.step(ctx); err != nil {
		t.Fatal(err)
	}
	bEpoch, err := b.Fence(ctx)
	if err != nil || bEpoch <= epoch {
		t.Fatalf("the new holder's fence: epoch %d (%v), want more than %d", bEpoch, err, epoch)
	}
	// a resumes: by its own clock it still leads...
	if err := a.IsLeader(ctx); err != nil {
		t.Fatalf("the paused holder's own clock: %v (the scenario needs it to believe it leads)", err)
	}
	// ...but the guarded work is refused, and a stops leading.
	if err := lease.CheckFence(ctx, a); !errors.Is(err, lease.ErrNotLeader) || !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("the paused holder's fence: %v, want ErrNotLeader", err)
	}
	if err := a.IsLeader(ctx); err == nil {
		t.Error("the paused holder still counts itself leader after its fence failed")
	}
	if err := lease.CheckFence(ctx, b); err != nil {
		t.Errorf("the new holder's fence after a's attempt: %v", err)
	}
}
