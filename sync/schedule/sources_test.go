package schedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/lease"
)

// fakeSources is a SourceStore holding a list of sources the test edits;
// only ListSources is served. It counts the versions of the list it
// served.
type fakeSources struct {
	repository.SourceStore
	mu      sync.Mutex
	list    []*repository.Source
	version int
	served  int
	err     error
}

// set replaces the sources and returns the new version of the list.
func (f *fakeSources) set(list ...*repository.Source) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = list
	f.version++
	return f.version
}

// servedVersion returns the newest version a ListSources call returned.
func (f *fakeSources) servedVersion() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.served
}

func (f *fakeSources) ListSources(context.Context) ([]*repository.Source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.served = f.version
	out := make([]*repository.Source, len(f.list))
	for i, s := range f.list {
		c := *s
		out[i] = &c
	}
	return out, nil
}

// src is a source with a schedule.
func src(id int64, schedule string) *repository.Source {
	return &repository.Source{ID: id, Schedule: schedule}
}

// call is one Run of the fake runner.
type call struct {
	id      int64
	at      time.Time
	trigger string
}

// fakeRunner records its runs with the fake clock's time; outcome, when
// set, decides what a run of a source returns.
type fakeRunner struct {
	clock   clockwork.Clock
	mu      sync.Mutex
	calls   []call
	outcome func(id int64) (*repository.SourceRun, error)
	// gate, when set, holds every run until it is closed; running counts
	// the runs in progress and most the most at once.
	gate          chan struct{}
	running, most int
}

func (f *fakeRunner) Run(ctx context.Context, id int64, trigger string) (*repository.SourceRun, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{id, f.clock.Now(), trigger})
	f.running++
	f.most = max(f.most, f.running)
	gate, outcome := f.gate, f.outcome
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if outcome != nil {
		return outcome(id)
	}
	return &repository.SourceRun{ID: 1, SourceID: id, Status: repository.RunSucceeded}, nil
}

// runs returns the times of the runs of source id, and checks that
// every run was a scheduled one.
func (f *fakeRunner) runs(t *testing.T, id int64) []time.Time {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Time
	for _, c := range f.calls {
		if c.trigger != TriggerSchedule {
			t.Errorf("run of source %d with trigger %q", c.id, c.trigger)
		}
		if c.id == id {
			out = append(out, c.at)
		}
	}
	return out
}

// count returns the number of runs so far.
func (f *fakeRunner) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// ticks is a gocron.Monitor counting the ticks of each job that reached
// a verdict: ran, skipped for the lease, or skipped as its previous run
// goes on.
type ticks struct {
	mu      sync.Mutex
	n       map[string]int
	skipped map[string]int
}

func (m *ticks) IncrementJob(_ uuid.UUID, name string, _ []string, _ gocron.JobStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n[name]++
}

// skip counts a tick of the job name skipped as its previous run goes on
// (Options.skipped; the tick is counted by IncrementJob once it ends).
func (m *ticks) skip(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.skipped[name]++
}

func (m *ticks) RecordJobTiming(time.Time, time.Time, uuid.UUID, string, []string) {}

// of returns the ticks of the job name so far, and those skipped as its
// previous run went on.
func (m *ticks) of(name string) (all, skipped int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[name], m.skipped[name]
}

// sourceRig is a schedule with the sources of a fakeSources run by a
// fakeRunner, on a fake clock, under a lease the test holds or drops.
type sourceRig struct {
	t      *testing.T
	clock  *clockwork.FakeClock
	lease  *testkit.FakeLease
	store  *fakeSources
	runner *fakeRunner
	ticks  *ticks
	sched  *Schedule
	// blocked names the jobs whose run the test holds (settle does not
	// wait for them).
	blocked map[string]bool
}

// newSourceRig starts a schedule at start with the sources list (its
// first read of them happens at start).
func newSourceRig(t *testing.T, start time.Time, held bool, busy error, list ...*repository.Source) *sourceRig {
	t.Helper()
	s := newStack(t)
	clock := clockwork.NewFakeClockAt(start)
	rig := &sourceRig{t: t, clock: clock, lease: testkit.NewFakeLease(held), store: &fakeSources{}, runner: &fakeRunner{clock: clock},
		ticks: &ticks{n: map[string]int{}, skipped: map[string]int{}}, blocked: map[string]bool{}}
	v := rig.store.set(list...)
	r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, rig.lease)
	sched, err := New(Options{Reindexer: r, Store: s.store, Lease: rig.lease, Clock: clock, Log: testkit.Quiet,
		Sources: rig.store, SourceRunner: rig.runner, SourceBusy: busy, monitor: rig.ticks, skipped: rig.ticks.skip})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rig.sched = sched
	sched.Start()
	t.Cleanup(func() { sched.Shutdown() })
	testkit.Eventually(t, "the sources job ticked at start", func() bool { n, _ := rig.ticks.of(jobSources); return n >= 1 })
	if held {
		rig.synced(v)
	}
	rig.settle()
	return rig
}

// synced waits until the sources job read version v of the list and
// brought the jobs in line.
func (r *sourceRig) synced(v int) {
	r.t.Helper()
	testkit.Eventually(r.t, fmt.Sprintf("the sources job read version %d", v), func() bool {
		return r.store.servedVersion() >= v && !r.running(jobSources)
	})
}

// running reports whether the named job runs.
func (r *sourceRig) running(name string) bool {
	for _, j := range r.sched.sched.Jobs() {
		if j.Name() == name {
			running, _ := j.IsRunning()
			return running
		}
	}
	return false
}

// settle waits until no job runs (but the blocked ones) and every job
// has armed its timer.
func (r *sourceRig) settle() {
	r.t.Helper()
	testkit.Eventually(r.t, "no job runs", func() bool {
		for _, j := range r.sched.sched.Jobs() {
			if running, _ := j.IsRunning(); running && !r.blocked[j.Name()] {
				return false
			}
		}
		return true
	})
	waitTimers(r.t, r.clock, len(r.sched.sched.Jobs()))
}

// due returns the earliest time a job is due and the jobs due then.
func (r *sourceRig) due() (time.Time, []string) {
	r.t.Helper()
	now := r.clock.Now()
	var at time.Time
	var names []string
	for _, j := range r.sched.sched.Jobs() {
		next, ok := nextAfter(j, now)
		if !ok {
			r.t.Fatalf("job %s has no next run", j.Name())
		}
		switch {
		case at.IsZero() || next.Before(at):
			at, names = next, []string{j.Name()}
		case next.Equal(at):
			names = append(names, j.Name())
		}
	}
	return at, names
}

// nextAfter returns the job's first run after now. (A job skipped for
// the lease keeps its past times in its list: look past them.)
func nextAfter(j gocron.Job, now time.Time) (time.Time, bool) {
	for n := 4; n <= 1<<16; n *= 2 {
		runs, err := j.NextRuns(n)
		if err != nil || len(runs) == 0 {
			return time.Time{}, false
		}
		for _, next := range runs {
			if next.After(now) {
				return next, true
			}
		}
	}
	return time.Time{}, false
}

// step advances the clock to the next time a job is due, waits until
// every job due then has ticked (ran or was skipped) and the schedule
// settled, and returns the time.
func (r *sourceRig) step() time.Time {
	r.t.Helper()
	at, names := r.due()
	if at.IsZero() {
		r.t.Fatalf("no job is due after %v", r.clock.Now())
	}
	before := make([]int, len(names))
	for i, name := range names {
		before[i], _ = r.ticks.of(name)
	}
	r.clock.Advance(at.Sub(r.clock.Now()))
	for i, name := range names {
		testkit.Eventually(r.t, fmt.Sprintf("job %q ticked at %v", name, at), func() bool {
			n, _ := r.ticks.of(name)
			return n > before[i]
		})
	}
	r.settle()
	return at
}

// until steps until the next due time is after end.
func (r *sourceRig) until(end time.Time) {
	r.t.Helper()
	for {
		at, _ := r.due()
		if at.After(end) {
			return
		}
		r.step()
	}
}

// everyTimes returns the runs of an "@every d" source id in (from, to].
func everyTimes(id int64, d time.Duration, from, to time.Time) []time.Time {
	var out []time.Time
	for at := everyNext(id, d, from); !at.After(to); at = at.Add(d) {
		out = append(out, at)
	}
	return out
}

// hourlyTimes returns the runs of an "@hourly" source id in (from, to].
func hourlyTimes(id int64, from, to time.Time) []time.Time {
	d := cronDelay(id, time.Hour)
	var out []time.Time
	for at := from.Truncate(time.Hour).Add(d); !at.After(to); at = at.Add(time.Hour) {
		if at.After(from) {
			out = append(out, at)
		}
	}
	return out
}

func equalTimes(a, b []time.Time) bool {
	return slices.EqualFunc(a, b, func(x, y time.Time) bool { return x.Equal(y) })
}

// TestScheduledSources: on a fake clock, each source with a schedule runs
// at its times (an "@every" source on its grid, an "@hourly" one at its
// delay after each hour), a manual source never; a changed schedule takes
// effect at the next read of the sources, a deleted source stops, a new
// one starts; every run is a scheduled one, one at a time.
func TestScheduledSources(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	rig := newSourceRig(t, start, true, nil, src(1, "@every 10m"), src(2, "@hourly"), src(3, ""), src(4, "@every 45m"))
	if _, ok := rig.sched.NextSourceRun(3); ok {
		t.Error("the manual source has a job")
	}
	// What the schedule will do is what SourceNext says, in any replica.
	for _, s := range []*repository.Source{src(1, "@every 10m"), src(2, "@hourly"), src(4, "@every 45m")} {
		next, ok := rig.sched.NextSourceRun(s.ID)
		want, _ := SourceNext(s.ID, s.Schedule, time.UTC, start)
		if !ok || !next.Equal(want) || !want.After(start) {
			t.Errorf("source %d (%s): NextSourceRun = %v, %v; SourceNext = %v", s.ID, s.Schedule, next, ok, want)
		}
	}
	if _, ok := SourceNext(3, "", time.UTC, start); ok {
		t.Error("SourceNext of a manual source")
	}
	if got := testutil.ToFloat64(rig.sched.metrics.scheduled); got != 3 {
		t.Errorf("eventcal_source_scheduled = %v, want 3", got)
	}

	// Two hours.
	phase1 := start.Add(2 * time.Hour)
	rig.until(phase1)
	want := map[int64][]time.Time{
		1: everyTimes(1, 10*time.Minute, start, phase1),
		2: hourlyTimes(2, start, phase1),
		3: nil,
		4: everyTimes(4, 45*time.Minute, start, phase1),
	}
	for id, times := range want {
		if got := rig.runner.runs(t, id); !equalTimes(got, times) {
			t.Errorf("phase 1: source %d ran at %v, want %v", id, got, times)
		}
	}
	if n := len(want[1]); n != 12 {
		t.Errorf("the @every 10m source ran %d times in two hours, want 12", n)
	}
	if d := cronDelay(2, time.Hour); d == 0 || d >= MaxCronDelay || len(want[2]) != 2 {
		t.Errorf("the @hourly source: delay %v, %d runs; want a delay in (0, 5m) and 2 runs", d, len(want[2]))
	}

	// Source 1 changes to every 30 minutes, source 2 is deleted, source 3
	// gets a schedule; the next read of the sources (within a minute)
	// applies it.
	v := rig.store.set(src(1, "@every 30m"), src(3, "@every 20m"), src(4, "@every 45m"))
	before := map[int64]int{}
	for id := range want {
		before[id] = len(rig.runner.runs(t, id))
	}
	for rig.store.servedVersion() < v {
		rig.step()
	}
	rig.synced(v)
	changed := rig.clock.Now()
	if changed.Sub(phase1) > 2*time.Minute {
		t.Fatalf("the change was read at %v, more than a minute after %v", changed, phase1)
	}
	if _, ok := rig.sched.NextSourceRun(2); ok {
		t.Error("the deleted source still has a job")
	}
	phase2 := changed.Add(3 * time.Hour)
	rig.until(phase2)
	after := func(id int64) []time.Time { return rig.runner.runs(t, id)[before[id]:] }
	// Runs between the change and its reading follow the old schedule.
	for id, times := range map[int64][]time.Time{
		1: everyTimes(1, 30*time.Minute, changed, phase2),
		2: nil,
		3: everyTimes(3, 20*time.Minute, changed, phase2),
		4: everyTimes(4, 45*time.Minute, phase1, phase2),
	} {
		got := after(id)
		if id == 1 || id == 2 {
			got = slices.DeleteFunc(got, func(at time.Time) bool { return !at.After(changed) })
		}
		if !equalTimes(got, times) {
			t.Errorf("phase 2: source %d ran at %v, want %v", id, got, times)
		}
	}
	if got := testutil.ToFloat64(rig.sched.metrics.scheduled); got != 3 {
		t.Errorf("eventcal_source_scheduled = %v, want 3", got)
	}
	if got := testutil.ToFloat64(rig.sched.metrics.runs.WithLabelValues(schedSucceeded)); int(got) != rig.runner.count() {
		t.Errorf("succeeded scheduled runs counted %v, want %d", got, rig.runner.count())
	}
	if rig.runner.most != 1 {
		t.Errorf("%d runs at once, want 1", rig.runner.most)
	}
}

// TestScheduledSourcesNeedTheLease: a replica without the lease never
// reads the sources nor runs one; a replica that loses the lease stops
// running them, and runs them again once it holds it again.
func TestScheduledSourcesNeedTheLease(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	t.Run("never held", func(t *testing.T) {
		t.Parallel()
		rig := newSourceRig(t, start, false, nil, src(1, "@every 1m"), src(2, "@hourly"))
		rig.until(start.Add(2 * time.Hour))
		if n := rig.runner.count(); n != 0 {
			t.Errorf("%d runs without the lease", n)
		}
		if v := rig.store.servedVersion(); v != 0 {
			t.Errorf("the sources were read without the lease")
		}
		if _, ok := rig.sched.NextSourceRun(1); ok {
			t.Error("a source has a job without the lease")
		}
	})
	t.Run("lost and taken back", func(t *testing.T) {
		t.Parallel()
		rig := newSourceRig(t, start, true, nil, src(1, "@every 10m"))
		first := everyNext(1, 10*time.Minute, start)
		rig.until(first)
		if got := rig.runner.runs(t, 1); !equalTimes(got, []time.Time{first}) {
			t.Fatalf("runs while held: %v, want %v", got, first)
		}
		rig.lease.Set(false)
		rig.until(first.Add(time.Hour))
		if got := rig.runner.runs(t, 1); len(got) != 1 {
			t.Errorf("runs after the lease was lost: %v", got[1:])
		}
		rig.lease.Set(true)
		back := rig.clock.Now()
		rig.until(back.Add(30 * time.Minute))
		if got := rig.runner.runs(t, 1)[1:]; !equalTimes(got, everyTimes(1, 10*time.Minute, back, back.Add(30*time.Minute))) {
			t.Errorf("runs once held again: %v", got)
		}
	})
}

// TestScheduledSourceOutcomes: a run that fails, or does not start, is
// counted and the source is run again at its next time (not before); a
// run in progress makes the next tick wait (one run per source at a
// time), and the source runs at the tick after it ends.
func TestScheduledSourceOutcomes(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	errBusy := errors.New("a run of this source is in progress")
	tests := []struct {
		name   string
		result string
		run    *repository.SourceRun
		err    error
	}{
		{"a failed run", schedFailed, &repository.SourceRun{ID: 9, Status: repository.RunFailed, Error: "the source answered HTTP 500"}, nil},
		{"a run that did not start", schedError, nil, errors.New("store unavailable")},
		{"a run in progress elsewhere", schedBusy, nil, fmt.Errorf("claim: %w", errBusy)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rig := newSourceRig(t, start, true, errBusy, src(5, "@every 15m"))
			rig.runner.mu.Lock()
			rig.runner.outcome = func(int64) (*repository.SourceRun, error) { return tt.run, tt.err }
			rig.runner.mu.Unlock()
			end := start.Add(time.Hour)
			rig.until(end)
			times := everyTimes(5, 15*time.Minute, start, end)
			if got := rig.runner.runs(t, 5); !equalTimes(got, times) {
				t.Errorf("runs at %v, want one at each time %v", got, times)
			}
			if got := testutil.ToFloat64(rig.sched.metrics.runs.WithLabelValues(tt.result)); int(got) != len(times) {
				t.Errorf("%s counted %v times, want %d", tt.result, got, len(times))
			}
			if got := testutil.ToFloat64(rig.sched.metrics.runs.WithLabelValues(schedSucceeded)); got != 0 {
				t.Errorf("succeeded counted %v times", got)
			}
		})
	}

	t.Run("one run at a time", func(t *testing.T) {
		t.Parallel()
		rig := newSourceRig(t, start, true, errBusy, src(6, "@every 1m"))
		gate := make(chan struct{})
		rig.runner.mu.Lock()
		rig.runner.gate = gate
		rig.runner.mu.Unlock()
		first := everyNext(6, time.Minute, start)
		name := sourceJobName(6)
		rig.blocked[name] = true
		// The run starts and holds its job (no verdict of its tick yet).
		rig.clock.Advance(first.Sub(start))
		testkit.Eventually(t, "the first run started", func() bool { return rig.runner.count() == 1 })
		rig.settle()
		if n := rig.runner.count(); n != 1 {
			t.Fatalf("%d runs started, want 1", n)
		}
		// Three more ticks while the run goes on: each is skipped.
		rig.until(first.Add(3 * time.Minute))
		if _, skipped := rig.ticks.of(name); skipped != 3 {
			t.Errorf("%d ticks skipped while the run went on, want 3", skipped)
		}
		if n := rig.runner.count(); n != 1 {
			t.Fatalf("%d runs started while the first went on", n)
		}
		close(gate)
		delete(rig.blocked, name)
		rig.settle()
		rig.until(first.Add(4 * time.Minute))
		if rig.runner.most != 1 {
			t.Errorf("%d runs at once, want 1", rig.runner.most)
		}
		if got := rig.runner.runs(t, 6); !equalTimes(got, []time.Time{first, first.Add(4 * time.Minute)}) {
			t.Errorf("runs at %v: want %v and the first tick after it ended", got, first)
		}
	})
}

// TestScheduledSourcesStoreDown: a failed read of the sources keeps the
// jobs as they were.
func TestScheduledSourcesStoreDown(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	rig := newSourceRig(t, start, true, nil, src(1, "@every 10m"))
	rig.store.mu.Lock()
	rig.store.err = errors.New("store unavailable")
	rig.store.list = nil
	rig.store.mu.Unlock()
	end := start.Add(time.Hour)
	rig.until(end)
	if got := rig.runner.runs(t, 1); !equalTimes(got, everyTimes(1, 10*time.Minute, start, end)) {
		t.Errorf("runs while the store was down: %v", got)
	}
}

// TestScheduledSourceShutdown: Shutdown ends a scheduled run in progress
// (its context) and waits for it.
func TestScheduledSourceShutdown(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	rig := newSourceRig(t, start, true, nil, src(1, "@every 1m"))
	rig.runner.mu.Lock()
	rig.runner.gate = make(chan struct{}) // never opened
	rig.runner.mu.Unlock()
	rig.clock.Advance(everyNext(1, time.Minute, start).Sub(start))
	testkit.Eventually(t, "the run started", func() bool { return rig.runner.count() == 1 })
	done := make(chan error, 1)
	go func() { done <- rig.sched.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-testdeadline.After(t):
		t.Fatal("Shutdown did not end the run in progress")
	}
	rig.runner.mu.Lock()
	defer rig.runner.mu.Unlock()
	if rig.runner.running != 0 {
		t.Errorf("%d runs still going after Shutdown", rig.runner.running)
	}
}

// TestSourceTickTwiceAtOnce: a second tick of a source's job right
// after a run started (gocron may fire a job again at once when it
// handles the end of a short run before rescheduling it) runs
// nothing; the next tick a period later runs.
func TestSourceTickTwiceAtOnce(t *testing.T) {
	t.Parallel()
	clock := clockwork.NewFakeClockAt(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	runner := &fakeRunner{clock: clock}
	j := &sourceJobs{runner: runner, lease: lease.Held(), clock: clock, log: testkit.Quiet, metrics: newSourceMetrics(),
		ctx: t.Context(), started: map[int64]time.Time{}}
	gap := 5 * time.Minute
	j.run(1, gap)
	j.run(1, gap)
	clock.Advance(time.Second)
	j.run(1, gap)
	if n := runner.count(); n != 1 {
		t.Fatalf("%d runs of three ticks within a second, want 1", n)
	}
	j.run(2, gap) // another source is not held back
	clock.Advance(2 * gap)
	j.run(1, gap)
	if got := runner.runs(t, 1); len(got) != 2 {
		t.Errorf("runs at %v, want a second one after the period", got)
	}
	if n := runner.count(); n != 3 {
		t.Errorf("%d runs, want 3", n)
	}
}
