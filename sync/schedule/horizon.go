package schedule

import (
	"context"
	"log/slog"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/lease"
)

// The index holds the occurrences of a series up to a horizon ahead of
// now (indexing.DocBuilder), so the occurrences it holds go stale as
// days pass: the horizon's end moves over new occurrences, and a long
// series capped at MaxOccurrences drops its earliest. The schedule runs
// RollHorizon once a day (jobHorizon): it marks for indexing each series
// whose expansion now differs from its expansion at the previous run
// (recorded in the store, so a process started after a stop catches up;
// horizonRoller.run), and the worker re-indexes them as any other write.

// DefaultHorizonEvery is how often the schedule rolls the horizon.
const DefaultHorizonEvery = 24 * time.Hour

// horizonPage is the number of events RollHorizon reads at once.
const horizonPage = 500

// RollHorizon marks for indexing the stored series (trashed ones
// excepted) whose occurrences as indexed at since (expanded with Now =
// since) differ from those at now: a different number, first or last
// key. It reads the events in pages by ID and writes one mark call per
// page, and returns the number of series marked.
func RollHorizon(ctx context.Context, store repository.Store, docs *indexing.DocBuilder, since, now time.Time) (int, error) {
	marked := 0
	q := repository.RecordQuery{Kind: repository.KindEvent, ExcludeStatuses: []string{repository.StatusTrash}, Limit: horizonPage}
	for {
		page, err := store.FindRecords(ctx, q)
		if err != nil || len(page) == 0 {
			return marked, err
		}
		var moved []int64
		for _, p := range page {
			if p.Event != nil && p.Event.Recurrence != nil && horizonMoved(p.Event, docs, since, now) {
				moved = append(moved, p.ID)
			}
		}
		if len(moved) > 0 {
			if err := store.MarkForIndexing(ctx, repository.MarkPost, moved); err != nil {
				return marked, err
			}
			marked += len(moved)
		}
		q.AfterID = page[len(page)-1].ID
	}
}

// horizonMoved reports whether a series expands differently at now than
// at since (the same rules otherwise); a series the expansion refuses has
// not moved (it is indexed as its first occurrence either way).
func horizonMoved(e *repository.EventFields, docs *indexing.DocBuilder, since, now time.Time) bool {
	s := recurrence.SeriesOf(e, e.Zone(docs.Location))
	expand := func(at time.Time) ([]recurrence.Occurrence, bool) {
		occs, err := recurrence.Expand(s, time.Time{}, time.Time{},
			recurrence.Limits{Now: at, Horizon: docs.Horizon, MaxOccurrences: docs.MaxOccurrences})
		return occs, err == nil
	}
	before, ok1 := expand(since)
	after, ok2 := expand(now)
	if !ok1 || !ok2 {
		return false
	}
	if len(before) != len(after) {
		return true
	}
	return len(after) > 0 && (before[0].Key != after[0].Key || before[len(before)-1].Key != after[len(after)-1].Key)
}

// horizonRolledKey is the job state key (repository.Store.SetJobState)
// of when the horizon was last rolled: RFC 3339 with nanoseconds, UTC.
const horizonRolledKey = "recurrence.horizon.rolled"

// horizonRoller remembers when the horizon was last rolled: in memory
// (last) and in the store's job state (horizonRolledKey), which outlives
// the process.
type horizonRoller struct {
	store    repository.Store
	lease    lease.Lease // checked (CheckFence) before each run writes
	docs     *indexing.DocBuilder
	notifier interface{ Notify() }
	log      *slog.Logger
	every    time.Duration
	last     time.Time
}

// run rolls the horizon from the last run to now, records now as the
// last run and wakes the worker when it marked series. The first run of
// a process (at its start, or when it takes the lease) reads when the
// horizon was last rolled from the store, so a schedule stopped for days
// catches up: the series whose expansion changed while it was stopped
// are marked, and only those (a restart an hour after the last run marks
// what changed in that hour). Without a usable record (never rolled,
// unreadable, or later than now, as another machine's clock may be) it
// compares with one period ago, as a longer look back would re-index
// most series (a week marks every weekly series). A failed roll records
// nothing, so the next run (in this process or after a restart) covers
// its period again; a failure to read or record the time is logged and
// does not stop the roll (an unrecorded run makes the next process look
// back further, which only marks more).
func (r *horizonRoller) run(ctx context.Context, now time.Time) {
	since := r.last
	if since.IsZero() {
		since = r.lastRolled(ctx, now)
	}
	if err := lease.CheckFence(ctx, r.lease); err != nil {
		r.log.Warn("rolling the recurrence horizon skipped", "err", err)
		return
	}
	n, err := RollHorizon(ctx, r.store, r.docs, since, now)
	if err != nil {
		r.log.Error("rolling the recurrence horizon failed", "err", err, "series", n)
		return
	}
	r.last = now
	if err := r.store.SetJobState(ctx, horizonRolledKey, now.UTC().Format(time.RFC3339Nano)); err != nil {
		r.log.Warn("recording when the recurrence horizon was rolled failed", "err", err)
	}
	if n > 0 {
		if r.notifier != nil {
			r.notifier.Notify()
		}
		r.log.Info("recurrence horizon rolled", "series", n, "since", since)
	}
}

// lastRolled returns when the horizon was last rolled as the store
// recorded it, or one period before now (saying why in the log) when
// there is no usable record.
func (r *horizonRoller) lastRolled(ctx context.Context, now time.Time) time.Time {
	fallback := now.Add(-r.every)
	value, found, err := r.store.GetJobState(ctx, horizonRolledKey)
	if err != nil {
		r.log.Warn("reading when the recurrence horizon was last rolled failed: rolling from one period ago", "err", err, "since", fallback)
		return fallback
	}
	if !found {
		r.log.Info("the recurrence horizon was never rolled: rolling from one period ago", "since", fallback)
		return fallback
	}
	rolled, err := time.Parse(time.RFC3339Nano, value)
	switch {
	case err != nil:
		r.log.Warn("the recorded last roll of the recurrence horizon is unreadable: rolling from one period ago", "rolled", value, "err", err, "since", fallback)
		return fallback
	case rolled.After(now):
		r.log.Warn("the recorded last roll of the recurrence horizon is later than now: rolling from one period ago", "rolled", value, "since", fallback)
		return fallback
	}
	r.log.Info("rolling the recurrence horizon from its last roll", "since", rolled)
	return rolled
}
