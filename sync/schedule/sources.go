package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/config/metric"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/lease"
)

// SourceRunner runs a calendar source to its end (sources.Runner). Run
// returns the finished run, failed or not, with a nil error; an error
// means the run did not start (a run of the source is in progress, the
// source is gone, the store failed).
type SourceRunner interface {
	Run(ctx context.Context, sourceID int64, trigger string) (*repository.SourceRun, error)
}

// TriggerSchedule is the trigger of the runs the schedule starts
// (SourceRun.Trigger).
const TriggerSchedule = "schedule"

// DefaultSourcePoll is how often the schedule reads the sources again by
// default, to follow sources created, changed and deleted.
const DefaultSourcePoll = time.Minute

// MaxCronDelay bounds the delay of a cron-scheduled source (cronDelay).
const MaxCronDelay = 5 * time.Minute

// jobSources is the name of the job that follows the sources; each
// source's own job is named by sourceJobName.
const jobSources = "sources"

// sourceJobTag tags the jobs of sources.
const sourceJobTag = "source"

// The results of eventcal_source_scheduled_runs_total.
const (
	schedSucceeded = "succeeded"
	schedFailed    = "failed"
	schedBusy      = "busy"
	schedError     = "error"
)

// sourceJobName names the job of a source in the schedule.
func sourceJobName(id int64) string { return "source " + strconv.FormatInt(id, 10) }

// sourceJobSpace is the UUID name space of the sources' job IDs.
var sourceJobSpace = uuid.MustParse("6f1c7a52-3b0e-4f55-9a55-0d8c2f1e35a1")

// sourceJobID is the job ID of a source: the same for every job the
// source gets, so that a changed schedule replaces the job in place.
func sourceJobID(id int64) uuid.UUID {
	return uuid.NewSHA1(sourceJobSpace, []byte(strconv.FormatInt(id, 10)))
}

// spreadHash mixes a source's ID into 64 well-spread bits (the
// splitmix64 finalizer): consecutive IDs land far apart. It is the same
// in every process and version, so that every replica (and a restarted
// one) fires a source at the same times.
func spreadHash(id int64) uint64 {
	z := uint64(id) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// everyOffset is where in its interval an "@every d" source runs: a
// whole number of seconds below d derived from its ID.
func everyOffset(id int64, d time.Duration) time.Duration {
	secs := uint64(d / time.Second)
	if secs == 0 {
		return 0
	}
	return time.Duration(spreadHash(id)%secs) * time.Second
}

// everyNext returns the first run after now of an "@every d" source: its
// runs fall on the grid Unix epoch + everyOffset + k·d, so that sources
// sharing an interval start at different times, and a source keeps its
// times across restarts and replicas.
func everyNext(id int64, d time.Duration, now time.Time) time.Time {
	off, step := int64(everyOffset(id, d)), int64(d)
	since := now.UnixNano() - off
	k := since / step
	if since < 0 && since%step != 0 {
		k-- // floor
	}
	return time.Unix(0, off+(k+1)*step).In(now.Location())
}

// cronPeriod is the shortest gap between consecutive firings of spec
// (among its first few from a fixed date): an hour for "@hourly", 15
// minutes for "*/15 9-17 * * 1-5".
func cronPeriod(spec cron.Schedule) time.Duration {
	prev := spec.Next(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	var period time.Duration
	for range 32 {
		next := spec.Next(prev)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(prev); period == 0 || gap < period {
			period = gap
		}
		prev = next
	}
	return period
}

// cronDelay is the fixed delay of a cron-scheduled source after each
// time its expression names: a whole number of seconds derived from its
// ID below min(MaxCronDelay, a tenth of the expression's period), so
// that sources sharing "@hourly" do not all fire on the hour.
func cronDelay(id int64, period time.Duration) time.Duration {
	window := min(MaxCronDelay, period/10)
	secs := uint64(window / time.Second)
	if secs == 0 {
		return 0
	}
	return time.Duration(spreadHash(id)%secs) * time.Second
}

// SourceNext returns when a source with this ID and schedule (as
// stored: "@hourly", "@every 6h", five fields, ...) runs next after
// after, by the spread rule every replica's schedule follows (cron
// expressions read in loc, the schedule's TIMEZONE; nil is UTC). False
// for a manual source or an unreadable schedule. The API can show it
// without asking the replica that runs the schedule.
func SourceNext(id int64, schedule string, loc *time.Location, after time.Time) (time.Time, bool) {
	sch, err := feed.ParseSchedule(schedule)
	if err != nil || sch.Manual() {
		return time.Time{}, false
	}
	if loc == nil {
		loc = time.UTC
	}
	if sch.Every > 0 {
		return everyNext(id, sch.Every, after.In(loc)), true
	}
	c := &delayedCron{id: id}
	if err := c.IsValid(sch.Cron, loc, after); err != nil {
		return time.Time{}, false
	}
	next := c.Next(after.In(loc))
	return next, !next.IsZero()
}

// delayedCron is a cron expression whose firings are delayed by a fixed
// duration (gocron.WithCronImplementation): Next(F) for a firing F = B +
// delay is the expression's next time after B, plus the delay.
type delayedCron struct {
	id    int64
	spec  cron.Schedule
	loc   *time.Location
	delay time.Duration
}

// IsValid parses the five-field expression, evaluated in loc (the
// schedule's time zone), and sets the delay from its period.
func (c *delayedCron) IsValid(crontab string, loc *time.Location, now time.Time) error {
	spec, err := cron.ParseStandard(crontab)
	if err != nil {
		return fmt.Errorf("%w: %w", gocron.ErrCronJobParse, err)
	}
	c.spec, c.loc, c.delay = spec, loc, cronDelay(c.id, cronPeriod(spec))
	if c.Next(now).IsZero() {
		return gocron.ErrCronJobInvalid
	}
	return nil
}

// Next returns the first delayed firing after last.
func (c *delayedCron) Next(last time.Time) time.Time {
	next := c.spec.Next(last.Add(-c.delay).In(c.loc))
	if next.IsZero() {
		return next
	}
	return next.Add(c.delay)
}

// sourceMetrics are the schedule's figures of sources (a
// prometheus.Collector):
//
//	eventcal_source_scheduled_runs_total{result}  counter  scheduled runs: succeeded, failed (the run failed), busy (a run of the source was in progress), error (the run did not start)
//	eventcal_source_scheduled                     gauge    sources with a job in this process's schedule
type sourceMetrics struct {
	runs      *prometheus.CounterVec
	scheduled prometheus.Gauge
}

func newSourceMetrics() *sourceMetrics {
	return &sourceMetrics{
		runs: metric.CounterVec("eventcal_source_scheduled_runs_total",
			"Scheduled calendar source runs by result: succeeded, failed (the run failed), busy (a run of the source was in progress), error (the run did not start).",
			"result", schedSucceeded, schedFailed, schedBusy, schedError),
		scheduled: metric.Gauge("eventcal_source_scheduled",
			"Calendar sources with a schedule that this process's scheduler runs (0 on a replica that never held the lease)."),
	}
}

// Describe implements prometheus.Collector.
func (m *sourceMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.runs.Describe(ch)
	m.scheduled.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *sourceMetrics) Collect(ch chan<- prometheus.Metric) {
	m.runs.Collect(ch)
	m.scheduled.Collect(ch)
}

// sourceJobs keeps one job per scheduled source in the schedule: the
// sources job (sync, every SourcePoll and once at start) reads the
// sources and adds, replaces and removes their jobs; each source's job
// runs it through the runner.
type sourceJobs struct {
	sched   gocron.Scheduler
	store   repository.SourceStore
	runner  SourceRunner
	busy    error
	lease   lease.Lease
	loc     *time.Location
	clock   clockwork.Clock
	log     *slog.Logger
	metrics *sourceMetrics
	// options are the job options every job gets (its name).
	options func(name string) []gocron.JobOption
	// task makes a job's task: its function under its guard, reported to
	// the tests' hooks (Options.task).
	task func(name string, g *single, fn func(ctx context.Context)) gocron.Task
	// ctx is the context of the runs: it ends when the schedule shuts
	// down, not when a source's job is replaced or removed (a run in
	// progress then goes on to its end).
	ctx context.Context

	mu sync.Mutex
	// jobs holds the schedule each source's job was set up with.
	jobs map[int64]feed.Schedule
	// bad holds the unreadable schedules already logged.
	bad map[int64]string
	// started holds when each source's last scheduled run started.
	started map[int64]time.Time
	// guards holds each source job's guard: kept when the job is
	// replaced, so that a run still going when the new schedule fires
	// makes that tick skip.
	guards map[int64]*single
}

// sync reads the sources and brings their jobs in line: a job for each
// source with a schedule, set up again when its schedule changed, and
// none for manual or deleted sources.
func (j *sourceJobs) sync(ctx context.Context) {
	list, err := j.store.ListSources(ctx)
	if err != nil {
		if ctx.Err() == nil {
			j.log.Error("calendar sources not read; their jobs stay as they were", "err", err)
		}
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	want := make(map[int64]feed.Schedule, len(list))
	for _, src := range list {
		sch, err := feed.ParseSchedule(src.Schedule)
		if err != nil {
			if j.bad[src.ID] != src.Schedule {
				j.bad[src.ID] = src.Schedule
				j.log.Warn("calendar source not scheduled: its schedule is unreadable", "source", src.ID, "err", err)
			}
			continue
		}
		delete(j.bad, src.ID)
		if !sch.Manual() {
			want[src.ID] = sch
		}
	}
	for id, sch := range want {
		if have, ok := j.jobs[id]; ok && have == sch {
			continue
		}
		if err := j.set(id, sch); err != nil {
			j.log.Error("calendar source not scheduled", "source", id, "err", err)
			continue
		}
		j.jobs[id] = sch
	}
	for id := range j.jobs {
		if _, ok := want[id]; !ok {
			_ = j.sched.RemoveJob(sourceJobID(id))
			delete(j.jobs, id)
			delete(j.guards, id)
			delete(j.started, id)
		}
	}
	for id := range j.bad {
		if !containsSource(list, id) {
			delete(j.bad, id)
		}
	}
	j.metrics.scheduled.Set(float64(len(j.jobs)))
}

// containsSource reports whether list holds the source id.
func containsSource(list []*repository.Source, id int64) bool {
	for _, s := range list {
		if s.ID == id {
			return true
		}
	}
	return false
}

// set adds the source's job, or replaces it (same job ID).
func (j *sourceJobs) set(id int64, sch feed.Schedule) error {
	var def gocron.JobDefinition
	var gap time.Duration
	opts := append(j.options(sourceJobName(id)), gocron.WithIdentifier(sourceJobID(id)), gocron.WithTags(sourceJobTag))
	if sch.Every > 0 {
		gap = sch.Every / 2
		// The first run on the source's grid; should the clock pass it
		// before gocron reads it, gocron moves on along the grid.
		def = gocron.DurationJob(sch.Every)
		opts = append(opts, gocron.WithStartAt(gocron.WithStartDateTimePast(everyNext(id, sch.Every, j.clock.Now()))))
	} else {
		spec, err := cron.ParseStandard(sch.Cron)
		if err != nil {
			return err
		}
		gap = cronPeriod(spec) / 2
		def = gocron.CronJob(sch.Cron, false)
		opts = append(opts, gocron.WithCronImplementation(&delayedCron{id: id}))
	}
	g := j.guards[id]
	if g == nil {
		g = new(single)
		j.guards[id] = g
	}
	task := j.task(sourceJobName(id), g, func(context.Context) { j.run(id, gap) })
	_, err := j.sched.Update(sourceJobID(id), def, task, opts...)
	return err
}

// run runs the source through the runner, once the lease is confirmed
// held. A run that fails or does not start is logged and counted; the
// job tries again at its next time. A tick less than gap (half the
// schedule's period) after the source's last scheduled run started is
// dropped: gocron may fire a job a second time at once when
// it handles the end of a short run before its rescheduling.
func (j *sourceJobs) run(id int64, gap time.Duration) {
	ctx := j.ctx
	now := j.clock.Now()
	j.mu.Lock()
	last, ok := j.started[id]
	if ok && now.Sub(last) < gap {
		j.mu.Unlock()
		return
	}
	j.started[id] = now
	j.mu.Unlock()
	if err := lease.CheckFence(ctx, j.lease); err != nil {
		j.log.Warn("scheduled source run skipped", "source", id, "err", err)
		return
	}
	run, err := j.runner.Run(ctx, id, TriggerSchedule)
	switch {
	case err != nil && j.busy != nil && errors.Is(err, j.busy):
		j.metrics.runs.WithLabelValues(schedBusy).Inc()
		j.log.Info("scheduled source run skipped: a run of the source is in progress", "source", id)
	case errors.Is(err, repository.ErrNotFound):
		// Deleted since the sources were read: the next read removes its
		// job.
		j.log.Info("scheduled source run skipped: the source is gone", "source", id)
	case err != nil:
		if ctx.Err() != nil {
			return
		}
		j.metrics.runs.WithLabelValues(schedError).Inc()
		j.log.Error("scheduled source run did not start; next try at its next time", "source", id, "err", err)
	case run.Status == repository.RunFailed:
		j.metrics.runs.WithLabelValues(schedFailed).Inc()
		j.log.Warn("scheduled source run failed; next try at its next time", "source", id, "run", run.ID, "error", run.Error)
	default:
		j.metrics.runs.WithLabelValues(schedSucceeded).Inc()
		j.log.Info("scheduled source run finished", "source", id, "run", run.ID, "status", run.Status,
			"created", run.Created, "updated", run.Updated, "unchanged", run.Unchanged, "removed", run.Removed, "failed", run.Failed)
	}
}
