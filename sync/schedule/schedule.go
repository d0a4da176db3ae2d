package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/lease"
)

// Job names in the schedule.
const (
	jobReindex = "reindex"
	jobPublish = "publish"
	jobHorizon = "horizon"
)

// DefaultPublishEvery is how often scheduled publishing runs by default.
const DefaultPublishEvery = time.Minute

// Options configure a Schedule.
type Options struct {
	// ReindexCron is the cron expression of full rebuilds (REINDEX_CRON:
	// five fields or a descriptor such as @daily); empty schedules none.
	ReindexCron string
	// Location is the time zone the cron expression is evaluated in
	// (TIMEZONE); nil means UTC.
	Location *time.Location
	// PublishEvery is the period of scheduled publishing (default
	// DefaultPublishEvery).
	PublishEvery time.Duration
	// Reindexer runs the scheduled rebuilds.
	Reindexer *indexing.Reindexer
	// Store is where scheduled items are published.
	Store repository.Store
	// Notifier is woken when publishing or the horizon job wrote index
	// marks (the worker).
	Notifier interface{ Notify() }
	// Docs, when set, enables the horizon job: every HorizonEvery
	// (default DefaultHorizonEvery), and once at start, series whose
	// occurrences up to Docs' horizon changed since the last run are
	// marked for indexing (RollHorizon). The last run is recorded in
	// Store, so the run at start catches up after a stop.
	Docs         *indexing.DocBuilder
	HorizonEvery time.Duration
	// BackupCron is the cron expression of backups of the embedded store
	// (BACKUP_SCHEDULE, evaluated in Location); empty, or Backups nil,
	// schedules none. Each run takes a backup and prunes the oldest
	// (Backups.Scheduled).
	BackupCron string
	Backups    Backups
	// Lease decides whether this process runs the jobs (nil: lease.Held).
	Lease lease.Lease
	// Clock drives the schedule (nil: the real clock); tests pass a
	// clockwork fake clock.
	Clock clockwork.Clock
	// Log receives one line per job run that did something or failed.
	Log *slog.Logger

	// Sources and SourceRunner, when both set, schedule the calendar
	// sources (sources.go): every SourcePoll (default
	// DefaultSourcePoll), and once at start, the sources are read, and
	// each source with a schedule gets a job that runs it through
	// SourceRunner (trigger TriggerSchedule), at times spread by its ID.
	Sources      repository.SourceStore
	SourceRunner SourceRunner
	SourcePoll   time.Duration
	// SourceBusy is the error SourceRunner returns when a run of the
	// source is in progress (sources.ErrRunning): such a tick is skipped
	// and counted as busy.
	SourceBusy error

	// afterRun, when set, is called after every job run, once the job
	// may run again (tests).
	afterRun func(name string)
	// skipped, when set, is called for every tick skipped as the job's
	// previous run goes on (tests).
	skipped func(name string)
	// monitor, when set, is told of every tick of every job: run,
	// skipped for the lease or skipped as its previous run goes on
	// (tests).
	monitor gocron.Monitor
}

// Schedule runs the periodic jobs with gocron: full rebuilds on
// REINDEX_CRON, backups on BACKUP_SCHEDULE, scheduled publishing every
// minute, the recurrence horizon, and the calendar sources on their
// schedules. Each job runs one run at a time (a tick while its previous
// run goes on is skipped; see single), and only in the process holding
// the lease: the lease is the scheduler's Elector.
type Schedule struct {
	sched   gocron.Scheduler
	clock   clockwork.Clock
	sources *sourceJobs
	metrics *sourceMetrics
	// cancel ends the context of the sources' runs (Shutdown).
	cancel context.CancelFunc
}

// New validates the options and creates the jobs; Start runs them.
func New(o Options) (*Schedule, error) {
	if o.Store == nil || o.Reindexer == nil {
		return nil, errors.New("sync: a schedule needs a Store and a Reindexer")
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.PublishEvery <= 0 {
		o.PublishEvery = DefaultPublishEvery
	}
	if o.Lease == nil {
		o.Lease = lease.Held()
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	schedOpts := []gocron.SchedulerOption{
		gocron.WithClock(o.Clock),
		gocron.WithLocation(o.Location),
		gocron.WithDistributedElector(o.Lease),
	}
	if o.monitor != nil {
		schedOpts = append(schedOpts, gocron.WithMonitor(o.monitor))
	}
	sched, err := gocron.NewScheduler(schedOpts...)
	if err != nil {
		return nil, fmt.Errorf("sync: create the scheduler: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Schedule{sched: sched, clock: o.Clock, metrics: newSourceMetrics(), cancel: cancel}
	options := func(name string) []gocron.JobOption { return []gocron.JobOption{gocron.WithName(name)} }
	if o.ReindexCron != "" {
		task := o.task(jobReindex, new(single), func(ctx context.Context) { runScheduledReindex(ctx, o.Reindexer, o.Log) })
		if _, err := sched.NewJob(gocron.CronJob(o.ReindexCron, false), task, options(jobReindex)...); err != nil {
			s.abort()
			return nil, fmt.Errorf("sync: schedule rebuilds on %q: %w", o.ReindexCron, err)
		}
	}
	if o.BackupCron != "" && o.Backups != nil {
		task := o.task(jobBackup, new(single), func(ctx context.Context) { runScheduledBackup(ctx, o.Backups, o.Lease, o.Log) })
		if _, err := sched.NewJob(gocron.CronJob(o.BackupCron, false), task, options(jobBackup)...); err != nil {
			s.abort()
			return nil, fmt.Errorf("sync: schedule backups on %q: %w", o.BackupCron, err)
		}
	}
	task := o.task(jobPublish, new(single), func(ctx context.Context) {
		runScheduledPublish(ctx, o.Store, o.Lease, o.Notifier, o.Clock.Now(), o.Log)
	})
	if _, err := sched.NewJob(gocron.DurationJob(o.PublishEvery), task, options(jobPublish)...); err != nil {
		s.abort()
		return nil, fmt.Errorf("sync: schedule publishing: %w", err)
	}
	if o.Docs != nil {
		if o.HorizonEvery <= 0 {
			o.HorizonEvery = DefaultHorizonEvery
		}
		roller := &horizonRoller{store: o.Store, lease: o.Lease, docs: o.Docs, notifier: o.Notifier, log: o.Log, every: o.HorizonEvery}
		task := o.task(jobHorizon, new(single), func(ctx context.Context) { roller.run(ctx, o.Clock.Now()) })
		opts := append(options(jobHorizon), gocron.WithStartAt(gocron.WithStartImmediately()))
		if _, err := sched.NewJob(gocron.DurationJob(o.HorizonEvery), task, opts...); err != nil {
			s.abort()
			return nil, fmt.Errorf("sync: schedule the recurrence horizon: %w", err)
		}
	}
	if o.Sources != nil && o.SourceRunner != nil {
		if o.SourcePoll <= 0 {
			o.SourcePoll = DefaultSourcePoll
		}
		s.sources = &sourceJobs{sched: sched, store: o.Sources, runner: o.SourceRunner, busy: o.SourceBusy,
			lease: o.Lease, loc: o.Location, clock: o.Clock, log: o.Log, metrics: s.metrics, options: options, task: o.task, ctx: runCtx,
			jobs: map[int64]feed.Schedule{}, bad: map[int64]string{}, started: map[int64]time.Time{}, guards: map[int64]*single{}}
		task := o.task(jobSources, new(single), func(ctx context.Context) { s.sources.sync(ctx) })
		opts := append(options(jobSources), gocron.WithStartAt(gocron.WithStartImmediately()))
		if _, err := sched.NewJob(gocron.DurationJob(o.SourcePoll), task, opts...); err != nil {
			s.abort()
			return nil, fmt.Errorf("sync: schedule the calendar sources: %w", err)
		}
	}
	return s, nil
}

// single keeps a job's runs one at a time: a tick that comes while the
// job's previous run goes on is skipped, and the job runs again at its
// next tick. gocron's singleton mode (gocron.LimitModeReschedule) does
// the same, but frees the job only after its listeners and monitor were
// told the run ended, so that nothing can tell from outside when the job
// may run again: a tick right after the end of a run could be skipped.
// single is freed before the run is reported (Options.afterRun).
type single struct{ busy atomic.Bool }

// task returns the gocron task of the job name: fn, run under the guard
// g (a tick while g is held is skipped and logged).
func (o *Options) task(name string, g *single, fn func(ctx context.Context)) gocron.Task {
	return gocron.NewTask(func(ctx context.Context) {
		if !g.busy.CompareAndSwap(false, true) {
			o.Log.Debug("scheduled run skipped: the previous run goes on", "job", name)
			if o.skipped != nil {
				o.skipped(name)
			}
			return
		}
		func() {
			defer g.busy.Store(false)
			fn(ctx)
		}()
		if o.afterRun != nil {
			o.afterRun(name)
		}
	})
}

// abort stops a schedule New could not finish.
func (s *Schedule) abort() {
	s.cancel()
	_ = s.sched.Shutdown()
}

// Start starts running the jobs.
func (s *Schedule) Start() { s.sched.Start() }

// Shutdown stops the schedule: no job starts any more, and running jobs'
// contexts are cancelled (a scheduled rebuild is aborted, a scheduled
// source run ends as interrupted). It waits for them to return.
func (s *Schedule) Shutdown() error {
	s.cancel()
	return s.sched.Shutdown()
}

// Metrics returns the schedule's metrics of calendar sources, to
// register on a registry (zero when sources are not scheduled).
func (s *Schedule) Metrics() prometheus.Collector { return s.metrics }

// NextSourceRun returns when the source's next scheduled run is due in
// this process's schedule (false when it has no job here: a manual
// source, one not read yet, or a replica without the lease).
func (s *Schedule) NextSourceRun(id int64) (time.Time, bool) {
	for _, j := range s.sched.Jobs() {
		if j.ID() != sourceJobID(id) {
			continue
		}
		// The list may start with past times (ticks skipped for the
		// lease): the first one after now.
		runs, err := j.NextRuns(8)
		if err != nil {
			return time.Time{}, false
		}
		now := s.clock.Now()
		for _, next := range runs {
			if next.After(now) {
				return next, true
			}
		}
		return time.Time{}, false
	}
	return time.Time{}, false
}

// NextReindex returns when the next scheduled rebuild is due (false when
// none is scheduled).
func (s *Schedule) NextReindex() (time.Time, bool) {
	for _, j := range s.sched.Jobs() {
		if j.Name() != jobReindex {
			continue
		}
		next, err := j.NextRun()
		return next, err == nil && !next.IsZero()
	}
	return time.Time{}, false
}

// runScheduledReindex starts a rebuild and waits for it; a rebuild already
// running (started through the API) is left alone.
func runScheduledReindex(ctx context.Context, r *indexing.Reindexer, log *slog.Logger) {
	job, err := r.Start(ctx, "schedule")
	switch {
	case errors.Is(err, indexing.ErrRebuildRunning):
		log.Info("scheduled reindex skipped: a rebuild is running", "job", job.ID)
		return
	case err != nil:
		log.Error("scheduled reindex did not start", "err", err)
		return
	}
	// The job logs its own end; waiting keeps the job's guard (single)
	// held for as long as the rebuild.
	_, _ = r.Wait(ctx)
}

// runScheduledPublish publishes the due items and wakes the worker, once
// the lease is confirmed held (lease.CheckFence).
func runScheduledPublish(ctx context.Context, store repository.Store, l lease.Lease, n interface{ Notify() }, now time.Time, log *slog.Logger) {
	if err := lease.CheckFence(ctx, l); err != nil {
		log.Warn("scheduled publishing skipped", "err", err)
		return
	}
	count, err := PublishDue(ctx, store, now)
	if count > 0 {
		if n != nil {
			n.Notify()
		}
		log.Info("scheduled items published", "items", count)
	}
	if err != nil {
		log.Error("scheduled publishing failed", "err", err, "published", count)
	}
}
