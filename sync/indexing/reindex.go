package indexing

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/lease"
)

// A full rebuild writes every stored event, venue and organizer into new
// indexes beside the live ones (search.Rebuilder), which keep answering
// lists with complete, exact results, then swaps them in atomically.
//
// Writes made during a rebuild are not lost:
//
//  1. Dual write. From before the scan starts until the swap, the sync
//     worker applies every batch to the live indexes AND to the new ones
//     (dualWrite below), so the live lists stay current and the new
//     indexes receive every change.
//  2. Repair. The scan and the worker race: the scan may read an item,
//     the worker index a newer version of it into both index sets, and the
//     scan then write its older document over it in the new indexes. So
//     the swap happens with no batch running (the worker's step lock is
//     held from the end of the dual write through the commit), and right
//     after it every item the worker wrote during the rebuild is marked
//     for indexing again (store.MarkForIndexing): the worker re-reads the
//     store and rewrites them into the (now live) new indexes. Any stale
//     document the race left is therefore replaced within one batch after
//     the swap.
//
// Batches that ran before the dual write started are older than what the
// scan reads; batches after the swap write to the new indexes directly.
//
// A failure of the dual write never holds up the worker: the error fails
// and aborts the rebuild, and the live indexes are unaffected.

// remarkChunk is the number of IDs per MarkForIndexing call of the repair.
const remarkChunk = 1000

// cleanupTimeout bounds the work that must happen even when the rebuild's
// context has ended: aborting, and the repair marks after a swap.
const cleanupTimeout = time.Minute

// ErrNoRebuild is returned by Reindexer.Wait when no rebuild has run in
// this process.
var ErrNoRebuild = errors.New("sync: no rebuild has run")

// ErrReindexerClosed is returned by Reindexer.Start after Close.
var ErrReindexerClosed = errors.New("sync: the reindexer is closed")

// Reindexer runs full rebuilds of the search indexes, one at a time, in
// the background. It is safe for concurrent use.
type Reindexer struct {
	store  repository.Store
	engine search.Engine
	worker *Worker
	log    *slog.Logger
	now    func() time.Time
	lease  lease.Lease

	mu   sync.Mutex
	last Job
	// lastLog is when progress was last logged.
	lastLog time.Time
	ran     bool
	cancel  context.CancelFunc // cancels the running job; nil when none
	// cancelBy cancels the running job with a cause (Cancel); nil when none.
	cancelBy context.CancelCauseFunc
	done     chan struct{} // closed when the running job ends; nil when none
	closed   bool
}

// NewReindexer returns a Reindexer that rebuilds engine's indexes from
// store, building documents with worker's DocBuilder and dual-writing
// through worker (which must be the worker that indexes store into
// engine). logger (nil: slog.Default), now (nil: time.Now) and l (nil:
// lease.Held) may be nil; rebuilds run only while l is held.
func NewReindexer(store repository.Store, engine search.Engine, worker *Worker, logger *slog.Logger, now func() time.Time, l lease.Lease) *Reindexer {
	if logger == nil {
		logger = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	if l == nil {
		l = lease.Held()
	}
	return &Reindexer{store: store, engine: engine, worker: worker, log: logger, now: now, lease: l}
}

// Start starts a full rebuild in the background and returns its job
// (state running, Total the number of stored events, venues and organizers
// now). While a rebuild runs it returns that job with ErrRebuildRunning. It
// fails with lease.ErrNotLeader in a process that does not hold the lease, and
// when the engine cannot rebuild.
//
// The rebuild runs until it ends, ctx is cancelled (pass a context that
// outlives the request, e.g. context.WithoutCancel), Close is called or
// the lease is lost; it is then aborted and the live indexes are kept.
// trigger says what started it ("api", "schedule", "cli").
func (r *Reindexer) Start(ctx context.Context, trigger string) (Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return Job{}, ErrReindexerClosed
	case r.done != nil:
		return r.last, ErrRebuildRunning
	}
	if err := lease.CheckFence(ctx, r.lease); err != nil {
		return Job{}, err
	}
	rb, ok := r.engine.(search.Rebuilder)
	if !ok {
		return Job{}, fmt.Errorf("sync: the search engine %T cannot rebuild its indexes", r.engine)
	}
	total, err := r.count(ctx)
	if err != nil {
		return Job{}, fmt.Errorf("sync: count the stored items: %w", err)
	}
	job := Job{ID: newJobID(), State: JobRunning, Total: total, Started: r.now().UTC(), Trigger: trigger}
	leaderCtx, stopLeader := lease.WhileLeader(ctx, r.lease)
	jobCtx, cancel := context.WithCancelCause(leaderCtx)
	done := make(chan struct{})
	r.last, r.ran, r.cancel, r.cancelBy, r.done, r.lastLog = job, true, func() { cancel(nil) }, cancel, done, job.Started
	r.log.Info("reindex started", "job", job.ID, "trigger", trigger, "total", total)
	go func() {
		defer close(done)
		defer stopLeader()
		defer cancel(nil)
		err := r.rebuild(jobCtx, rb)
		if err != nil && context.Cause(jobCtx) != nil {
			// Report why the context ended (lease lost, shutdown).
			err = fmt.Errorf("%w (%w)", err, context.Cause(jobCtx))
		}
		r.finish(err)
	}()
	return job, nil
}

// Last returns the running or last job, and false when none has run in
// this process.
func (r *Reindexer) Last() (Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.ran
}

// Wait waits until the running job (if any) ends or ctx ends, and returns
// the last job: its State says whether it succeeded. The error is ctx's
// when ctx ended first, ErrNoRebuild when no job has run.
func (r *Reindexer) Wait(ctx context.Context) (Job, error) {
	r.mu.Lock()
	done, ran := r.done, r.ran
	r.mu.Unlock()
	if !ran {
		return Job{}, ErrNoRebuild
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			job, _ := r.Last()
			return job, ctx.Err()
		}
	}
	job, _ := r.Last()
	return job, nil
}

// Close aborts the running rebuild, waits for it to end, and makes later
// Starts fail. It is part of the service's shutdown.
func (r *Reindexer) Close() {
	r.mu.Lock()
	r.closed = true
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// count returns the number of stored events, venues and organizers that a
// rebuild indexes (trash.go).
func (r *Reindexer) count(ctx context.Context) (int, error) {
	total := 0
	for _, kind := range []repository.Kind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer} {
		n, err := r.store.CountRecords(ctx, IndexedRecords(kind))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// progressLogInterval is how often a running rebuild logs its progress.
const progressLogInterval = 5 * time.Second

// progress records the number of items written so far, and logs it (done,
// total, rate) every progressLogInterval.
func (r *Reindexer) progress(done int) {
	now := r.now()
	r.mu.Lock()
	r.last.Done = done
	job, due := r.last, now.Sub(r.lastLog) >= progressLogInterval
	if due {
		r.lastLog = now
	}
	r.mu.Unlock()
	if due {
		rate := 0.0
		if secs := now.Sub(job.Started).Seconds(); secs > 0 {
			rate = float64(done) / secs
		}
		r.log.Info("reindex progress", "job", job.ID, "done", done, "total", job.Total, "per_second", int(rate))
	}
}

// ErrRebuildCancelled is why a rebuild stopped by Cancel ended.
var ErrRebuildCancelled = errors.New("sync: rebuild cancelled")

// Cancel stops the running rebuild (the live indexes are kept), waits for
// it to end and returns its job, now cancelled. ErrNoRebuild means none
// was running.
func (r *Reindexer) Cancel(ctx context.Context) (Job, error) {
	r.mu.Lock()
	cancel, done := r.cancelBy, r.done
	r.mu.Unlock()
	if cancel == nil {
		return Job{}, ErrNoRebuild
	}
	cancel(ErrRebuildCancelled)
	select {
	case <-done:
	case <-ctx.Done():
		return Job{}, ctx.Err()
	}
	job, _ := r.Last()
	return job, nil
}

// finish records the end of the running job.
func (r *Reindexer) finish(err error) {
	r.mu.Lock()
	job := &r.last
	job.Finished = r.now().UTC()
	job.State = JobSucceeded
	switch {
	case errors.Is(err, ErrRebuildCancelled):
		job.State, job.Error = JobCancelled, "cancelled; the live indexes were kept"
	case err != nil:
		job.State, job.Error = JobFailed, err.Error()
	}
	r.cancel, r.cancelBy, r.done = nil, nil, nil
	final := *job
	r.mu.Unlock()
	took := final.Finished.Sub(final.Started)
	if final.State == JobCancelled {
		r.log.Warn("reindex cancelled", "job", final.ID, "done", final.Done, "total", final.Total, "duration_ms", took.Milliseconds())
		return
	}
	if err != nil {
		r.worker.Metrics().ObserveReindexFailure()
		r.log.Error("reindex failed", "job", final.ID, "done", final.Done, "total", final.Total, "duration_ms", took.Milliseconds(), "err", err)
		return
	}
	r.worker.Metrics().ObserveReindex(took, final.Done)
	r.log.Info("reindex finished", "job", final.ID, "done", final.Done, "total", final.Total, "duration_ms", took.Milliseconds())
}

// rebuild runs one rebuild: begin, dual write, scan, commit with no batch
// running, repair marks. Any failure before the commit aborts it.
func (r *Reindexer) rebuild(ctx context.Context, rb search.Rebuilder) (err error) {
	next, err := rb.BeginRebuild(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	ctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	dual := &dualWrite{dst: next, fail: fail, posts: map[int64]struct{}{}}
	r.worker.startDualWrite(dual)
	ended := false
	defer func() {
		if !ended {
			r.worker.endDualWrite(func() error { return nil })
		}
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			if aerr := next.Abort(cctx); aerr != nil {
				err = errors.Join(err, fmt.Errorf("abort: %w", aerr))
			}
		}
	}()

	skipped, err := r.worker.indexAllInto(ctx, next, r.progress)
	r.skipped(skipped)
	if err != nil {
		if derr := dual.failure(); derr != nil {
			return derr
		}
		return fmt.Errorf("scan: %w", err)
	}
	var written []int64
	commitErr := r.worker.endDualWrite(func() error {
		written = dual.written()
		if err := dual.failure(); err != nil {
			return err
		}
		if err := next.Commit(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
	ended = true
	// Repair even when the commit failed: the swap may have happened (an
	// error removing the old indexes), and extra marks only cost a batch.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if rerr := r.remark(cctx, written); rerr != nil {
		return errors.Join(commitErr, fmt.Errorf("mark the items written during the rebuild: %w", rerr))
	}
	return commitErr
}

// maxSkippedListed bounds Job.Skipped; Job.SkippedCount counts them all.
const maxSkippedListed = 100

// skipped records in the running job the posts the scan could not index.
func (r *Reindexer) skipped(items []skippedItem) {
	if len(items) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last.SkippedCount = len(items)
	r.last.Skipped = make([]SkippedRecord, 0, min(len(items), maxSkippedListed))
	for _, it := range items[:min(len(items), maxSkippedListed)] {
		r.last.Skipped = append(r.last.Skipped, SkippedRecord(it))
	}
}

// remark marks the posts again and wakes the worker.
func (r *Reindexer) remark(ctx context.Context, ids []int64) error {
	for len(ids) > 0 {
		n := min(remarkChunk, len(ids))
		if err := r.store.MarkForIndexing(ctx, repository.MarkPost, ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	r.worker.Notify()
	return nil
}

// newJobID returns a random job ID.
func newJobID() string {
	b := make([]byte, 8)
	crand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// dualWrite is the second destination of the worker's batches while a
// rebuild runs: it writes them to the rebuild's new indexes and records
// every post the worker wrote, for the repair after the swap. Its writes
// never fail the worker's batch: the first error is kept, fails (cancels)
// the rebuild, and later writes are skipped.
type dualWrite struct {
	dst  search.Rebuild
	fail context.CancelCauseFunc

	mu    sync.Mutex
	posts map[int64]struct{}
	err   error
}

var _ search.Writer = (*dualWrite)(nil)

// record notes the posts of a batch (indexed events and places, and posts
// that are gone).
func (d *dualWrite) record(events, places map[int64]bool, gone []int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id := range events {
		d.posts[id] = struct{}{}
	}
	for id := range places {
		d.posts[id] = struct{}{}
	}
	for _, id := range gone {
		d.posts[id] = struct{}{}
	}
}

// written returns the recorded posts, sorted.
func (d *dualWrite) written() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := make([]int64, 0, len(d.posts))
	for id := range d.posts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// failure returns the first write error.
func (d *dualWrite) failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// write runs fn unless an earlier write failed; a failure is kept and
// fails the rebuild. (A document the engine refuses never gets here: the
// worker writes the live indexes first, and a refusal there ends the
// write before the dual one, isolating the culprit: backoff.go.)
func (d *dualWrite) write(fn func() error) error {
	if d.failure() != nil {
		return nil
	}
	if err := fn(); err != nil {
		d.mu.Lock()
		if d.err == nil {
			d.err = fmt.Errorf("dual write: %w", err)
			d.fail(d.err)
		}
		d.mu.Unlock()
	}
	return nil
}

// IndexEvents writes events to the new indexes.
func (d *dualWrite) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	return d.write(func() error { return d.dst.IndexEvents(ctx, docs) })
}

// IndexPlaces writes places to the new indexes.
func (d *dualWrite) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	return d.write(func() error { return d.dst.IndexPlaces(ctx, docs) })
}

// DeleteEvents removes events from the new indexes.
func (d *dualWrite) DeleteEvents(ctx context.Context, ids []int64) error {
	return d.write(func() error { return d.dst.DeleteEvents(ctx, ids) })
}

// DeletePlaces removes places from the new indexes.
func (d *dualWrite) DeletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	return d.write(func() error { return d.dst.DeletePlaces(ctx, kind, ids) })
}

// destinations returns where the current batch goes: the engine, and the
// rebuild's new indexes while a rebuild runs, in which case it records the
// batch's posts for the repair. The caller holds stepMu.
func (w *Worker) destinations(events, places map[int64]bool, gone []int64) []search.Writer {
	if w.dual == nil {
		return []search.Writer{w.Engine}
	}
	w.dual.record(events, places, gone)
	return []search.Writer{w.Engine, w.dual}
}

// startDualWrite makes every later batch go to d too. It waits for a
// running batch to end.
func (w *Worker) startDualWrite(d *dualWrite) {
	w.init()
	w.stepMu.Lock()
	defer w.stepMu.Unlock()
	w.dual = d
}

// endDualWrite stops the dual write and runs fn (the commit) before any
// other batch runs: a batch either ran with the dual write, or runs after
// fn on the swapped indexes.
func (w *Worker) endDualWrite(fn func() error) error {
	w.init()
	w.stepMu.Lock()
	defer w.stepMu.Unlock()
	w.dual = nil
	return fn()
}
