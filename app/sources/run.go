package sources

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// The triggers of a run (SourceRun.Trigger).
const (
	TriggerAPI      = "api"
	TriggerCLI      = "cli"
	TriggerSchedule = "schedule"
)

// Defaults of RunnerDeps.
const (
	// DefaultClaimFor is how long a run's claim on its source lasts
	// before it is renewed; a process that died mid-run leaves a claim
	// that lapses after it, and the next run takes over.
	DefaultClaimFor = 2 * time.Minute
	// DefaultWritesPerSecond paces a run's writes (one event created,
	// updated or removed is one write): 10,000 new events take at least
	// 20 s, leaving the store to the readers between writes.
	DefaultWritesPerSecond = 500
)

// RunnerDeps are what the runner uses; the composition root fills them.
type RunnerDeps struct {
	// Store holds the sources and their runs, which the runner writes,
	// and the records, which it only reads (every event write goes
	// through Calendar).
	Store repository.Store
	// Calendar writes the events (as the system, calendar.Operator).
	Calendar *calendar.Service
	// Reader reads a source's feed (NewReader).
	Reader Reader
	// Config gives the site's zone (floating times and dates) and default
	// language (the language imported text is stored in).
	Config *config.Config
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ClaimFor is how long a claim lasts unrenewed (DefaultClaimFor
	// when 0); RenewEvery how often a run renews it (ClaimFor/3 when 0).
	ClaimFor, RenewEvery time.Duration
	// WritesPerSecond bounds a run's event writes per second
	// (DefaultWritesPerSecond when 0; negative: unbounded), so that a
	// large run does not starve the readers of the store. Unchanged
	// events cost no write and are not paced.
	WritesPerSecond float64
}

// ErrRunning is returned by Start and Run when a run of the source is
// in progress (in this process or another): the API answers 409.
var ErrRunning = errors.New("a run of this source is in progress")

// errClaimLost ends a run whose claim another run took over (its
// renewal came too late).
var errClaimLost = errors.New("interrupted: the run's claim on the source lapsed and another run took over")

// Runner runs sources: it reads a source's feed and writes its events
// through the calendar. It is safe for concurrent use; runs of one
// source exclude each other across processes (Source.RunClaim).
type Runner struct {
	d       RunnerDeps
	cfg     *config.Config
	log     *slog.Logger
	now     func() time.Time
	limiter *rate.Limiter
	metrics *runMetrics

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ServiceRunnerDeps are the runner's dependencies as the service sets
// them from cfg (serve, eventcal source run): a calendar over store; a
// reader with the guarded fetcher (SOURCE_FETCH_TIMEOUT, SOURCE_MAX_BYTES,
// SOURCES_ALLOW_PRIVATE), the feeds' bounds (SOURCE_MAX_EVENTS,
// SOURCE_MAX_BYTES) and sites running The Events Calendar read in the
// default language; log for the calendar, the reader and the runner.
func ServiceRunnerDeps(cfg *config.Config, store repository.Store, log *slog.Logger) RunnerDeps {
	cal := calendar.New(calendar.Deps{Config: cfg, Store: store, Logger: log})
	fetcher := fetch.New(fetch.Options{Timeout: cfg.SourceFetchTimeout, MaxBytes: cfg.SourceMaxBytes, AllowPrivate: cfg.SourcesAllowPrivate})
	reader := NewReader(ReaderOptions{Fetcher: fetcher, MaxEvents: cfg.SourceMaxEvents, MaxBytes: cfg.SourceMaxBytes,
		Language: cfg.DefaultLanguage, Logger: log})
	return RunnerDeps{Store: store, Calendar: cal, Reader: reader, Config: cfg, Logger: log}
}

// NewRunner returns a runner; Store, Calendar, Reader and Config must be
// set.
func NewRunner(d RunnerDeps) *Runner {
	r := &Runner{d: d, cfg: d.Config, log: d.Logger, now: d.Now, metrics: newRunMetrics()}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.d.ClaimFor <= 0 {
		r.d.ClaimFor = DefaultClaimFor
	}
	if r.d.RenewEvery <= 0 {
		r.d.RenewEvery = r.d.ClaimFor / 3
	}
	// A burst of one: the writes are spread evenly over each second
	// instead of coming in back-to-back runs that the readers queue
	// behind.
	switch wps := r.d.WritesPerSecond; {
	case wps == 0:
		r.limiter = rate.NewLimiter(DefaultWritesPerSecond, 1)
	case wps < 0:
		r.limiter = rate.NewLimiter(rate.Inf, 1)
	default:
		r.limiter = rate.NewLimiter(rate.Limit(wps), 1)
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Metrics returns the runner's metrics, to register on a registry.
func (r *Runner) Metrics() prometheus.Collector { return r.metrics }

// Close stops the runs Start left in the background (each ends as
// failed, interrupted, after the event it is writing) and waits for
// them.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}

// Start claims the source, records a run of it as running and returns
// that run; the run goes on in the background until it ends or the
// runner is closed. ErrRunning: a run of the source is in progress;
// repository.ErrNotFound: there is no such source.
func (r *Runner) Start(ctx context.Context, sourceID int64, trigger string) (*repository.SourceRun, error) {
	src, run, token, err := r.begin(ctx, sourceID, trigger)
	if err != nil {
		return nil, err
	}
	shown := *run
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.carry(r.ctx, src, run, token)
	}()
	return &shown, nil
}

// Run is Start, then the run to its end (the scheduler, the command
// line): it returns the finished run. A run that fails is returned with
// a nil error (its Error says why); an error is returned only when the
// run could not start.
func (r *Runner) Run(ctx context.Context, sourceID int64, trigger string) (*repository.SourceRun, error) {
	src, run, token, err := r.begin(ctx, sourceID, trigger)
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-r.ctx.Done():
			stop()
		case <-runCtx.Done():
		}
	}()
	r.carry(runCtx, src, run, token)
	return run, nil
}

// newToken returns a random claim token.
func newToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// begin claims the source (compare-and-swap on the source: a live claim
// is ErrRunning, a lapsed one is taken over), marks the runs a dead
// process left running as failed (interrupted), and records the new run
// as running.
func (r *Runner) begin(ctx context.Context, sourceID int64, trigger string) (*repository.Source, *repository.SourceRun, string, error) {
	token := newToken()
	now := r.now().UTC()
	src, err := r.d.Store.UpdateSource(ctx, sourceID, func(s *repository.Source) error {
		if s.RunClaim != "" && now.Before(s.RunClaimUntil) {
			return ErrRunning
		}
		s.RunClaim, s.RunClaimUntil = token, now.Add(r.d.ClaimFor)
		return nil
	})
	if err != nil {
		return nil, nil, "", err
	}
	if err := r.interrupted(ctx, sourceID, now); err != nil {
		r.release(ctx, src.ID, token, nil, nil)
		return nil, nil, "", err
	}
	run := &repository.SourceRun{SourceID: sourceID, Status: repository.RunRunning, Trigger: trigger, Started: now.Truncate(time.Second)}
	if err := r.d.Store.CreateSourceRun(ctx, run); err != nil {
		r.release(ctx, src.ID, token, nil, nil)
		return nil, nil, "", err
	}
	return src, run, token, nil
}

// interrupted marks the source's runs still recorded as running as
// failed: with the source claimed by this run, they are runs of a
// process that died (or lost its claim) before it finished.
func (r *Runner) interrupted(ctx context.Context, sourceID int64, now time.Time) error {
	runs, err := r.d.Store.ListSourceRuns(ctx, sourceID, 10)
	if err != nil {
		return err
	}
	for _, old := range runs {
		if old.Status != repository.RunRunning {
			continue
		}
		old.Status, old.Finished = repository.RunFailed, now.Truncate(time.Second)
		old.Error = "interrupted: the process running it stopped before it finished"
		if err := r.d.Store.SaveSourceRun(ctx, old); err != nil {
			return err
		}
		r.metrics.runs.WithLabelValues(repository.RunFailed).Inc()
	}
	return nil
}

// carry runs the claimed source to its end, renewing the claim, then
// records the run and releases the claim.
func (r *Runner) carry(ctx context.Context, src *repository.Source, run *repository.SourceRun, token string) {
	started := r.now()
	ctx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		r.renew(ctx, src.ID, token, cancel)
	}()
	res, err := r.execute(ctx, src, run)
	lost := errors.Is(context.Cause(ctx), errClaimLost)
	cancel(nil)
	<-renewed
	switch {
	case lost:
		err = errClaimLost
	case err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled):
		err = errors.New("interrupted: the run was stopped before it finished (the service stopped, or this replica lost the lease)")
	}
	bg := context.WithoutCancel(ctx)
	run.Finished = r.now().UTC().Truncate(time.Second)
	if err != nil {
		run.Status, run.Error = repository.RunFailed, truncateText(err.Error(), 500)
		res = nil
	} else {
		run.Status = repository.RunSucceeded
	}
	if err := r.d.Store.SaveSourceRun(bg, run); err != nil {
		r.log.Error("source run: the run could not be recorded", "source", src.ID, "run", run.ID, "error", err)
	}
	if err := r.d.Store.PruneSourceRuns(bg, src.ID, repository.MaxRunsKept); err != nil {
		r.log.Warn("source run: old runs could not be pruned", "source", src.ID, "error", err)
	}
	if !lost {
		r.release(bg, src.ID, token, run, res)
	}
	r.metrics.runs.WithLabelValues(run.Status).Inc()
	r.metrics.seconds.Observe(r.now().Sub(started).Seconds())
	for _, c := range []struct {
		res string
		n   int
	}{{resCreated, run.Created}, {resUpdated, run.Updated}, {resUnchanged, run.Unchanged}, {resRemoved, run.Removed}, {resFailed, run.Failed}} {
		if c.n > 0 {
			r.metrics.events.WithLabelValues(c.res).Add(float64(c.n))
		}
	}
	r.log.Info("source run", "source", src.ID, "run", run.ID, "status", run.Status, "created", run.Created, "updated", run.Updated,
		"unchanged", run.Unchanged, "removed", run.Removed, "failed", run.Failed, "error", run.Error)
}

// renew renews the claim until ctx ends; a claim another run took over
// cancels the run (errClaimLost).
func (r *Runner) renew(ctx context.Context, sourceID int64, token string, cancel context.CancelCauseFunc) {
	t := time.NewTicker(r.d.RenewEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := r.d.Store.UpdateSource(ctx, sourceID, func(s *repository.Source) error {
			if s.RunClaim != token {
				return errClaimLost
			}
			s.RunClaimUntil = r.now().UTC().Add(r.d.ClaimFor)
			return nil
		})
		switch {
		case errors.Is(err, errClaimLost), errors.Is(err, repository.ErrNotFound):
			cancel(errClaimLost)
			return
		case err != nil && ctx.Err() == nil:
			r.log.Warn("source run: the claim could not be renewed", "source", sourceID, "error", err)
		}
	}
}

// release clears the run's claim and records the run as the source's
// last. After a run that succeeded with res, the source keeps the
// validators, content hash and format it read; after a run that failed,
// or in which events failed, the validators and content hash are
// cleared, so that the next run reads the feed in full and writes what
// this one did not (a run that failed midway may have written part of
// a feed the kept hash does not describe).
func (r *Runner) release(ctx context.Context, sourceID int64, token string, run *repository.SourceRun, res *ReadResult) {
	_, err := r.d.Store.UpdateSource(ctx, sourceID, func(s *repository.Source) error {
		if s.RunClaim != token {
			return errClaimLost
		}
		s.RunClaim, s.RunClaimUntil = "", time.Time{}
		if run != nil {
			s.LastRun = run.ID
		}
		switch {
		case run == nil:
		case run.Status != repository.RunSucceeded || run.Failed > 0:
			s.ETag, s.LastModified, s.ContentHash = "", "", ""
		case res != nil && !res.NotModified:
			if res.Format != "" {
				s.DetectedFormat = res.Format
			}
			s.ETag, s.LastModified, s.ContentHash = res.ETag, res.LastModified, res.ContentHash
		}
		return nil
	})
	if err != nil && !errors.Is(err, repository.ErrNotFound) {
		r.log.Warn("source run: the claim could not be released (it lapses by itself)", "source", sourceID, "error", err)
	}
}

// truncateText cuts s to at most n bytes, at a rune boundary, with "…".
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
