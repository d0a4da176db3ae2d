package schedule

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// countingNotifier counts Notify calls.
type countingNotifier struct{ n atomic.Int32 }

func (c *countingNotifier) Notify() { c.n.Add(1) }

// runs collects the names of the jobs that ran.
type runs chan string

func (r runs) after(name string) { r <- name }

// next waits for the next job run.
func (r runs) next(t *testing.T) string {
	t.Helper()
	select {
	case name := <-r:
		return name
	case <-testdeadline.After(t):
		t.Fatal("no job ran")
		return ""
	}
}

// startSchedule starts a schedule on a fake clock and waits until its n
// jobs are waiting for their first run.
func startSchedule(t *testing.T, o Options, clock *clockwork.FakeClock, n int) *Schedule {
	t.Helper()
	o.Clock, o.Log = clock, testkit.Quiet
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown() })
	waitTimers(t, clock, n)
	return s
}

// waitTimers waits until n jobs have armed their timer on the fake clock.
func waitTimers(t *testing.T, clock *clockwork.FakeClock, n int) {
	t.Helper()
	ctx := testdeadline.Context(t)
	if err := clock.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("%d job timers not armed: %v", n, err)
	}
}

// TestScheduledRebuild: REINDEX_CRON fires a full rebuild at its time in
// TIMEZONE, only in the process holding the lease.
func TestScheduledRebuild(t *testing.T) {
	t.Parallel()
	brussels, err := time.LoadLocation("Europe/Brussels")
	if err != nil {
		t.Fatal(err)
	}
	// 02:59 in Brussels (UTC+1 in January); the rebuild is due at 03:00
	// there, which is 02:00 UTC.
	start := time.Date(2026, 1, 15, 1, 59, 0, 0, time.UTC)
	due := time.Date(2026, 1, 15, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		held    bool
		wantJob bool
	}{
		{"the lease holder rebuilds", true, true},
		{"another process's schedule skips", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t)
			s.Events(t, 3)
			s.flush(t)
			lease := testkit.NewFakeLease(tt.held)
			clock := clockwork.NewFakeClockAt(start)
			r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, lease)
			ran := make(runs, 10)
			sched := startSchedule(t, Options{
				ReindexCron: "0 3 * * *", Location: brussels, Reindexer: r, Store: s.store,
				Notifier: s.worker, Lease: lease, afterRun: ran.after,
			}, clock, 2)
			if next, ok := sched.NextReindex(); !ok || !next.Equal(due) {
				t.Errorf("NextReindex = %v, %v; want %v (03:00 in Brussels)", next, ok, due)
			}
			clock.Advance(due.Sub(start))
			if !tt.wantJob {
				// Both jobs (rebuild and publishing) asked the lease and
				// were skipped.
				testkit.Eventually(t, "the jobs asked the lease", func() bool { return lease.CallCount() >= 2 })
				if job, ok := r.Last(); ok {
					t.Errorf("a rebuild ran without the lease: %+v", job)
				}
				return
			}
			// The rebuild job returns once its rebuild has ended.
			for name := ran.next(t); name != jobReindex; name = ran.next(t) {
			}
			job, ok := r.Last()
			if !ok || job.Trigger != "schedule" || job.State != indexing.JobSucceeded || !job.Started.Equal(due) {
				t.Fatalf("last job = %+v, %v; want a succeeded scheduled rebuild started at %v", job, ok, due)
			}
			if got := s.Counts(t); got != [3]int{3, 0, 0} {
				t.Errorf("counts after the scheduled rebuild = %v", got)
			}
			// The next one is a day later.
			waitTimers(t, clock, 2)
			if next, _ := sched.NextReindex(); !next.Equal(due.Add(24 * time.Hour)) {
				t.Errorf("NextReindex after the run = %v, want %v", next, due.Add(24*time.Hour))
			}
		})
	}
}

// TestScheduledPublishing: every minute, scheduled items whose date has
// come are published and the worker is woken. Each step starts a schedule
// at a given time and lets its first run happen: one run per schedule, as
// two runs of a job in a row on a fake clock could overlap (the second
// is then skipped by design, single).
func TestScheduledPublishing(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	s := newStack(t)
	event := s.Post(t, repository.KindEvent, "Premiere", repository.StatusFuture, start.Add(90*time.Second))
	venue := s.Post(t, repository.KindVenue, "New hall", repository.StatusFuture, start.Add(30*time.Second))
	later := s.Post(t, repository.KindOrganizer, "Next crew", repository.StatusFuture, start.Add(time.Hour))
	s.flush(t)
	status := func(p *repository.Record) string {
		got, err := s.store.GetRecord(t.Context(), p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	steps := []struct {
		name string
		// from is when the schedule starts; its first run is a minute later.
		from                    time.Time
		event, venue, organizer string
		notified                int32
	}{
		{"after one minute the venue is due", start, repository.StatusFuture, repository.StatusPublish, repository.StatusFuture, 1},
		{"after two minutes the event is due", start.Add(time.Minute), repository.StatusPublish, repository.StatusPublish, repository.StatusFuture, 1},
		{"after three minutes nothing more", start.Add(2 * time.Minute), repository.StatusPublish, repository.StatusPublish, repository.StatusFuture, 0},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(st.from)
			notified := &countingNotifier{}
			ran := make(runs, 10)
			r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, nil)
			sched := startSchedule(t, Options{Reindexer: r, Store: s.store, Notifier: notified, afterRun: ran.after}, clock, 1)
			if _, ok := sched.NextReindex(); ok {
				t.Errorf("a rebuild is scheduled without REINDEX_CRON")
			}
			clock.Advance(DefaultPublishEvery)
			if name := ran.next(t); name != jobPublish {
				t.Fatalf("job %q ran", name)
			}
			if got := [3]string{status(event), status(venue), status(later)}; got != [3]string{st.event, st.venue, st.organizer} {
				t.Errorf("statuses (event, venue, organizer) = %v", got)
			}
			if got := notified.n.Load(); got != st.notified {
				t.Errorf("worker notified %d times, want %d", got, st.notified)
			}
			// The next run is a minute later.
			waitTimers(t, clock, 1)
			for _, j := range sched.sched.Jobs() {
				if next, err := j.NextRun(); err != nil || !next.Equal(st.from.Add(2*DefaultPublishEvery)) {
					t.Errorf("next run of %s = %v, %v; want %v", j.Name(), next, err, st.from.Add(2*DefaultPublishEvery))
				}
			}
		})
	}
	// The published event is listed once the worker ran.
	s.flush(t)
	if got := s.Titles(t, "premiere"); len(got) != 1 || got[0] != event.ID {
		t.Errorf("published event in the index = %v", got)
	}
}

func TestNewScheduleRejectsABadCron(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, nil, nil)
	if _, err := New(Options{ReindexCron: "every night", Reindexer: r, Store: s.store}); err == nil {
		t.Error("New accepted a bad cron expression")
	}
	if _, err := New(Options{Store: s.store}); err == nil {
		t.Error("New accepted options without a Reindexer")
	}
}
