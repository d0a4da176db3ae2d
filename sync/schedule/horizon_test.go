package schedule

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// The horizon roller's tests run on series whose expansions change on
// known days: with a 10-day horizon, a weekly series starting at S gains
// an occurrence (its expansion changes) each time now passes S+7k-10d,
// so at S+4d (the third occurrence enters), S+11d, ... (rollerHorizon).
const rollerHorizon = 10 * 24 * time.Hour

// day is a day as a duration.
const day = 24 * time.Hour

// rollerNow is "now" of the roller tests: a week and an hour after
// testkit.SeriesStart, with nanoseconds that the recorded time must keep.
var rollerNow = testkit.SeriesStart.Add(7*day + time.Hour + 123456789)

// rollerSeries creates the weekly series of the roller tests, each named
// by when its expansion last changed before rollerNow (the next change
// comes a week later, after rollerNow), and flushes their creation marks.
// It returns their IDs by name.
//
//	stopDay    6d+1h before now: before a 5-day stop began
//	threeDays  3d+1h before now: during the stop, not in the last day
//	twentyFive 25h before now: just outside one period (a day)
//	twentyThree 23h before now: just inside one period
//	lastHour   1h before now
func rollerSeries(t *testing.T, s *stack) map[string]int64 {
	t.Helper()
	s.worker.Docs.Horizon = rollerHorizon
	changed := map[string]time.Duration{
		"stopDay":     6*day + time.Hour,
		"threeDays":   3*day + time.Hour,
		"twentyFive":  25 * time.Hour,
		"twentyThree": 23 * time.Hour,
		"lastHour":    time.Hour,
	}
	ids := make(map[string]int64)
	for name, ago := range changed {
		start := rollerNow.Add(-ago - 4*day).Truncate(time.Second)
		p := s.Post(t, repository.KindEvent, name, repository.StatusPublish, testkit.BaseTime)
		s.Update(t, p, func(p *repository.Record) {
			p.Event.StartUTC, p.Event.EndUTC = start, start.Add(time.Hour)
			p.Event.StartLocal, p.Event.EndLocal = start.Format(time.DateTime), start.Add(time.Hour).Format(time.DateTime)
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY"}}
		})
		ids[name] = p.ID
	}
	s.flush(t)
	return ids
}

// pendingSeries returns the names of the series marked for indexing,
// sorted, and clears the marks (the worker indexes them).
func pendingSeries(t *testing.T, s *stack, ids map[string]int64) []string {
	t.Helper()
	marks, err := s.store.PendingMarks(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range marks {
		for name, id := range ids {
			if m.Kind == repository.MarkPost && m.ID == id {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	s.flush(t)
	return names
}

// recordedRoll returns the job state of the horizon roller ("" when none).
func recordedRoll(t *testing.T, store repository.Store) string {
	t.Helper()
	v, found, err := store.GetJobState(t.Context(), horizonRolledKey)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		return ""
	}
	return v
}

// horizonFaults is a store whose job state or event reads fail when set.
type horizonFaults struct {
	repository.Store
	getState, setState, findPosts error
}

func (f horizonFaults) GetJobState(ctx context.Context, key string) (string, bool, error) {
	if f.getState != nil {
		return "", false, f.getState
	}
	return f.Store.GetJobState(ctx, key)
}

func (f horizonFaults) SetJobState(ctx context.Context, key, value string) error {
	if f.setState != nil {
		return f.setState
	}
	return f.Store.SetJobState(ctx, key, value)
}

func (f horizonFaults) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	if f.findPosts != nil {
		return nil, f.findPosts
	}
	return f.Store.FindRecords(ctx, q)
}

// newRoller returns a daily horizon roller on store, as a process starts
// it (nothing in memory), logging to log.
func newRoller(s *stack, store repository.Store, log *slog.Logger) *horizonRoller {
	return &horizonRoller{store: store, docs: s.worker.Docs, log: log, every: day}
}

// rfc3339 is t as the roller records it.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// TestHorizonRollerFirstRun: the first run of a process rolls from the
// recorded last roll when there is a usable one, and otherwise from one
// period (a day) ago, saying why in the log; either way a successful
// roll records now, and a store that cannot read or record the state
// still rolls.
func TestHorizonRollerFirstRun(t *testing.T) {
	t.Parallel()
	oneDay := []string{"lastHour", "twentyThree"}
	fiveDays := []string{"lastHour", "threeDays", "twentyFive", "twentyThree"}
	broken := errors.New("job state unavailable")
	tests := []struct {
		name     string
		recorded string // the job state before the run ("": none)
		faults   horizonFaults
		want     []string // the series marked
		wantLog  string
		// wantRecorded is the job state after the run.
		wantRecorded string
	}{
		{name: "never rolled: from one period ago", want: oneDay,
			wantLog: "never rolled", wantRecorded: rfc3339(rollerNow)},
		{name: "rolled five days ago: from then", recorded: rfc3339(rollerNow.Add(-5 * day)), want: fiveDays,
			wantLog: "from its last roll", wantRecorded: rfc3339(rollerNow)},
		{name: "rolled five days ago, recorded in another offset", recorded: rollerNow.Add(-5 * day).In(time.FixedZone("X", -7*3600)).Format(time.RFC3339Nano),
			want: fiveDays, wantLog: "from its last roll", wantRecorded: rfc3339(rollerNow)},
		{name: "rolled at now: nothing to mark", recorded: rfc3339(rollerNow), want: nil,
			wantLog: "from its last roll", wantRecorded: rfc3339(rollerNow)},
		{name: "recorded roll in the future: from one period ago", recorded: rfc3339(rollerNow.Add(time.Hour)), want: oneDay,
			wantLog: "later than now", wantRecorded: rfc3339(rollerNow)},
		{name: "unreadable record: from one period ago", recorded: "last Tuesday", want: oneDay,
			wantLog: "unreadable", wantRecorded: rfc3339(rollerNow)},
		{name: "record without a time zone: unreadable", recorded: "2026-04-08T20:00:00", want: oneDay,
			wantLog: "unreadable", wantRecorded: rfc3339(rollerNow)},
		{name: "failing read: from one period ago, still recorded", recorded: rfc3339(rollerNow.Add(-5 * day)),
			faults: horizonFaults{getState: broken}, want: oneDay,
			wantLog: "reading when the recurrence horizon was last rolled failed", wantRecorded: rfc3339(rollerNow)},
		{name: "failing write: rolled all the same", recorded: rfc3339(rollerNow.Add(-5 * day)),
			faults: horizonFaults{setState: broken}, want: fiveDays,
			wantLog: "recording when the recurrence horizon was rolled failed", wantRecorded: rfc3339(rollerNow.Add(-5 * day))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t)
			ids := rollerSeries(t, s)
			if tt.recorded != "" {
				if err := s.store.SetJobState(t.Context(), horizonRolledKey, tt.recorded); err != nil {
					t.Fatal(err)
				}
			}
			var out testkit.LogBuffer
			store := tt.faults
			store.Store = s.store
			r := newRoller(s, store, slog.New(slog.NewTextHandler(&out, nil)))
			// now in another zone than UTC: the record is UTC all the same.
			r.run(t.Context(), rollerNow.In(time.FixedZone("CEST", 2*3600)))
			if got := pendingSeries(t, s, ids); !slices.Equal(got, tt.want) {
				t.Errorf("marked %v, want %v", got, tt.want)
			}
			if got := recordedRoll(t, s.store); got != tt.wantRecorded {
				t.Errorf("recorded %q, want %q", got, tt.wantRecorded)
			}
			if !r.last.Equal(rollerNow) {
				t.Errorf("last run in memory %v, want %v", r.last, rollerNow)
			}
			if !strings.Contains(out.String(), tt.wantLog) {
				t.Errorf("log %q does not say %q", out.String(), tt.wantLog)
			}
		})
	}
}

// TestHorizonRollerRestart: a process restarted after the schedule was
// stopped for five days catches up from the last roll the previous
// process recorded, also when the last run before the stop failed (a
// failed roll records nothing), and later runs of the process roll from
// its own last run.
func TestHorizonRollerRestart(t *testing.T) {
	t.Parallel()
	before := rollerNow.Add(-5 * day) // the last run before the stop
	tests := []struct {
		name string
		// failedAt, when set, is a run after before that fails.
		failedAt time.Time
	}{
		{name: "stopped for five days"},
		{name: "stopped for five days after a failed run", failedAt: before.Add(4 * day)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStack(t)
			ids := rollerSeries(t, s)
			// The previous process: its first run (a day back) marks
			// nothing, and records its time.
			previous := newRoller(s, s.store, testkit.Quiet)
			previous.run(t.Context(), before)
			if got := pendingSeries(t, s, ids); len(got) != 0 {
				t.Fatalf("the run before the stop marked %v, want none", got)
			}
			if got := recordedRoll(t, s.store); got != rfc3339(before) {
				t.Fatalf("recorded %q after the run before the stop, want %q", got, rfc3339(before))
			}
			if !tt.failedAt.IsZero() {
				previous.store = horizonFaults{Store: s.store, findPosts: errors.New("store down")}
				previous.run(t.Context(), tt.failedAt)
				if got := recordedRoll(t, s.store); got != rfc3339(before) {
					t.Fatalf("recorded %q after a failed run, want %q still", got, rfc3339(before))
				}
				if !previous.last.Equal(before) {
					t.Fatalf("last run in memory %v after a failed run, want %v still", previous.last, before)
				}
			}

			// The restarted process marks every series that changed
			// while it was stopped (one period back would see only the
			// last day's two), not the one that changed before.
			restarted := newRoller(s, s.store, testkit.Quiet)
			restarted.run(t.Context(), rollerNow)
			want := []string{"lastHour", "threeDays", "twentyFive", "twentyThree"}
			if got := pendingSeries(t, s, ids); !slices.Equal(got, want) {
				t.Errorf("the restarted process marked %v, want %v", got, want)
			}
			if got := recordedRoll(t, s.store); got != rfc3339(rollerNow) {
				t.Errorf("recorded %q, want %q", got, rfc3339(rollerNow))
			}

			// Its next run rolls from its first: a week later every
			// series gained its next occurrence.
			if err := s.store.SetJobState(t.Context(), horizonRolledKey, "not read again"); err != nil {
				t.Fatal(err)
			}
			restarted.run(t.Context(), rollerNow.Add(7*day))
			if got, want := pendingSeries(t, s, ids), []string{"lastHour", "stopDay", "threeDays", "twentyFive", "twentyThree"}; !slices.Equal(got, want) {
				t.Errorf("the next run marked %v, want %v", got, want)
			}
		})
	}
}

// TestScheduledHorizonAfterStop: the schedule's horizon job records its
// runs in the store, so a schedule started five days after the previous
// one stopped catches up at its first run.
func TestScheduledHorizonAfterStop(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	ids := rollerSeries(t, s)
	tests := []struct {
		name string
		at   time.Time
		want []string
	}{
		{"the last start before the stop", rollerNow.Add(-5 * day), nil},
		{"the start five days later", rollerNow, []string{"lastHour", "threeDays", "twentyFive", "twentyThree"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(tt.at)
			ran := make(runs, 10)
			r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, nil)
			sched := startSchedule(t, Options{Reindexer: r, Store: s.store, Docs: s.worker.Docs,
				HorizonEvery: day, afterRun: ran.after}, clock, 1)
			for name := ran.next(t); name != jobHorizon; name = ran.next(t) {
			}
			if err := sched.Shutdown(); err != nil {
				t.Fatal(err)
			}
			if got := pendingSeries(t, s, ids); !slices.Equal(got, tt.want) {
				t.Errorf("marked %v, want %v", got, tt.want)
			}
			if got := recordedRoll(t, s.store); got != rfc3339(tt.at) {
				t.Errorf("recorded %q, want %q", got, rfc3339(tt.at))
			}
		})
	}
}

// TestRollHorizon: the daily job marks the series whose occurrences up to
// the horizon changed since its last run (the horizon's end passed a new
// occurrence), and nothing else: not a single event, not a finished
// series, not a series whose next occurrence is still beyond the horizon.
func TestRollHorizon(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.worker.Docs.Horizon = 10 * 24 * time.Hour
	weekly := s.Series(t, "Open weekly", "FREQ=WEEKLY")
	finished := s.Series(t, "Two weeks", "FREQ=WEEKLY;COUNT=2")
	single := s.Series(t, "Once")
	s.flush(t)
	_, _ = finished, single // never marked
	// The horizon ends 10 days after now: from T+1h (end T+10d+1h) to
	// T+4d+1h (end T+14d+1h) it passes the third weekly occurrence
	// (T+14d); the next day passes none.
	tests := []struct {
		name       string
		since, now time.Time
		want       []int64
	}{
		{"a new occurrence inside the horizon", testkit.SeriesStart.Add(time.Hour), testkit.SeriesStart.Add(4*24*time.Hour + time.Hour), []int64{weekly.ID}},
		{"no new occurrence", testkit.SeriesStart.Add(4*24*time.Hour + time.Hour), testkit.SeriesStart.Add(5*24*time.Hour + time.Hour), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := RollHorizon(t.Context(), s.store, s.worker.Docs, tt.since, tt.now)
			if err != nil || n != len(tt.want) {
				t.Fatalf("RollHorizon = %d, %v; want %d", n, err, len(tt.want))
			}
			marks, err := s.store.PendingMarks(t.Context(), 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, m := range marks {
				got = append(got, m.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("marked %v, want %v", got, tt.want)
			}
			s.flush(t)
		})
	}
}

// TestScheduledHorizon: the schedule rolls the horizon once at start and
// then every HorizonEvery, waking the worker when it marked series.
func TestScheduledHorizon(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.worker.Docs.Horizon = 10 * 24 * time.Hour
	weekly := s.Series(t, "Open weekly", "FREQ=WEEKLY")
	s.flush(t)
	// The first run compares with one period (a day) before: from
	// T+3d+1h to T+4d+1h the horizon's end (ten days ahead) passed the
	// third occurrence (T+14d).
	clock := clockwork.NewFakeClockAt(testkit.SeriesStart.Add(4*24*time.Hour + time.Hour))
	notified := &countingNotifier{}
	ran := make(runs, 10)
	r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, nil)
	startSchedule(t, Options{Reindexer: r, Store: s.store, Notifier: notified, Docs: s.worker.Docs,
		HorizonEvery: 24 * time.Hour, afterRun: ran.after}, clock, 1)
	for name := ran.next(t); name != jobHorizon; name = ran.next(t) {
	}
	marks, err := s.store.PendingMarks(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].ID != weekly.ID || notified.n.Load() == 0 {
		t.Errorf("marks %+v, notified %d; want the weekly series marked and the worker woken", marks, notified.n.Load())
	}
}
