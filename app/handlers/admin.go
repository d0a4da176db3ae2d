package handlers

import (
	"context"
	"errors"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/lease"
)

// Reindexer starts and reports full rebuilds of the search indexes
// (indexing.Reindexer).
type Reindexer interface {
	Start(ctx context.Context, trigger string) (indexing.Job, error)
	Last() (indexing.Job, bool)
	Cancel(ctx context.Context) (indexing.Job, error)
}

// WorkerStats reports the sync worker's recent figures (indexing.Worker).
type WorkerStats interface{ Stats() indexing.Stats }

// requireAdmin refuses everyone but admins: 401 anonymous, 403 others.
func (r *Request) requireAdmin() error {
	if !access.IsAdmin(r.user) {
		return access.Forbidden(r.user)
	}
	return nil
}

// startReindex serves POST /admin/reindex: 202 with the new job, or 409
// with the running one.
func (h *admin) startReindex(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	if h.reindexer == nil {
		return apierr.Unavailable("search")
	}
	// The job outlives the request: detach it from the request's context.
	job, err := h.reindexer.Start(context.WithoutCancel(r.ctx), "api")
	if errors.Is(err, indexing.ErrRebuildRunning) {
		return apierr.New(409, "reindex_running", "A rebuild is already running.").With("job", job)
	}
	if errors.Is(err, lease.ErrNotLeader) {
		// Another replica holds the lease and runs the jobs; the load
		// balancer may route a retry there.
		return apierr.New(503, "reindex_not_leader", "This replica does not run jobs now; retry, or send the request to the replica holding the lease.")
	}
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 202, present.NewObj().Set("job", job))
}

// cancelReindex serves DELETE /admin/reindex: it stops the running
// rebuild (the live indexes stay as they are) and answers with the
// cancelled job, or 404 when none runs.
func (h *admin) cancelReindex(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	if h.reindexer == nil {
		return apierr.Unavailable("search")
	}
	job, err := h.reindexer.Cancel(r.ctx)
	if errors.Is(err, indexing.ErrNoRebuild) {
		return apierr.New(404, "reindex_not_running", "No rebuild is running.")
	}
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("job", job))
}

// getReindex serves GET /admin/reindex: the current or last job.
func (h *admin) getReindex(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	if h.reindexer == nil {
		return apierr.Unavailable("search")
	}
	job, ok := h.reindexer.Last()
	if !ok {
		return apierr.New(404, "reindex_not_found", "No rebuild has run since the service started.")
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("job", job))
}

// markScanLimit bounds how many pending marks /admin/sync counts.
const markScanLimit = 100000

// syncStatus serves GET /admin/sync: pending marks and the age of the
// oldest, the last batch, documents in the store and in each index, and the
// engine's health.
func (h *admin) syncStatus(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	st, err := h.SyncStatus(r.ctx)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, st)
}

// SyncStatus is the view of GET /admin/sync (and of `eventcal status`).
type SyncStatus struct {
	PendingMarks int `json:"pending_marks"`
	// PendingCapped is true when more marks exist than were counted.
	PendingCapped    bool           `json:"pending_capped"`
	OldestMarkAgeSec float64        `json:"oldest_mark_age_seconds"`
	LastBatchAt      *time.Time     `json:"last_batch_at"`
	LastBatchSize    int            `json:"last_batch_size"`
	LastError        string         `json:"last_error,omitempty"`
	Store            map[string]int `json:"store"`
	Index            map[string]int `json:"index"`
	EngineHealthy    bool           `json:"engine_healthy"`
	EngineError      string         `json:"engine_error,omitempty"`
	// DependentReindex lists the running re-indexes of the events of
	// changed venues and terms, with their progress (sync/indexing/dependents.go).
	DependentReindex []indexing.CascadeProgress `json:"dependent_reindex"`
	// FailingMarks lists the marks whose item the search engine refused
	// (at most failingMarksListed, soonest retry first); FailingCount
	// counts them all. They wait for their next attempt, with backoff,
	// while the rest of the queue moves on.
	FailingCount int           `json:"failing_count"`
	FailingMarks []FailingMark `json:"failing_marks"`
}

// FailingMark is a mark whose last indexing attempt failed.
type FailingMark struct {
	// Kind is "post" or "term"; ID the item's.
	Kind        string    `json:"kind"`
	ID          int64     `json:"id"`
	Attempts    int       `json:"attempts"`
	LastError   string    `json:"last_error"`
	NextAttempt time.Time `json:"next_attempt"`
	// Since is when the item was last written (the mark's time).
	Since time.Time `json:"since"`
}

// failingMarksListed bounds SyncStatus.FailingMarks.
const failingMarksListed = 100

// SyncStatus computes the sync figures of this server.
func (h *admin) SyncStatus(ctx context.Context) (*SyncStatus, error) {
	ws, _ := h.indexer.(WorkerStats)
	return ComputeSyncStatus(ctx, h.store, h.search, ws, h.now())
}

// ComputeSyncStatus computes the sync figures from a store, an engine (may
// be nil) and the worker's stats (may be nil), for the admin route and the
// `status` command.
func ComputeSyncStatus(ctx context.Context, store repository.Store, engine search.Engine, ws WorkerStats, now time.Time) (*SyncStatus, error) {
	out := &SyncStatus{Store: map[string]int{}, Index: map[string]int{}, DependentReindex: []indexing.CascadeProgress{}, FailingMarks: []FailingMark{}}
	marks, err := store.PendingMarks(ctx, markScanLimit)
	if err != nil {
		return nil, err
	}
	out.PendingMarks, out.PendingCapped = len(marks), len(marks) >= markScanLimit
	if len(marks) > 0 {
		oldest := marks[0].At
		for _, m := range marks {
			if m.At.Before(oldest) {
				oldest = m.At
			}
		}
		out.OldestMarkAgeSec = now.Sub(oldest).Seconds()
	}
	failing, n, err := store.FailingMarks(ctx, failingMarksListed)
	if err != nil {
		return nil, err
	}
	out.FailingCount = n
	for _, m := range failing {
		out.FailingMarks = append(out.FailingMarks, FailingMark{Kind: string(m.Kind), ID: m.ID, Attempts: m.Attempts,
			LastError: m.LastError, NextAttempt: m.NextAttempt.UTC(), Since: m.At.UTC()})
	}
	if ws != nil {
		st := ws.Stats()
		if !st.LastBatchAt.IsZero() {
			t := st.LastBatchAt.UTC()
			out.LastBatchAt = &t
		}
		out.LastBatchSize, out.LastError = st.LastBatchSize, st.LastError
		if st.Dependents != nil {
			out.DependentReindex = st.Dependents
		}
	}
	for _, k := range []repository.Kind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer} {
		n, err := store.CountRecords(ctx, indexing.IndexedRecords(k))
		if err != nil {
			return nil, err
		}
		out.Store[string(k)+"s"] = n
	}
	if engine == nil {
		out.EngineError = "no search engine configured"
		return out, nil
	}
	if err := engine.Ping(ctx); err != nil {
		out.EngineError = err.Error()
		return out, nil
	}
	out.EngineHealthy = true
	counts := []struct {
		name string
		fn   func(context.Context) (int, error)
	}{
		{"events", engine.CountEvents},
		{"venues", func(ctx context.Context) (int, error) { return engine.CountPlaces(ctx, search.Venues) }},
		{"organizers", func(ctx context.Context) (int, error) { return engine.CountPlaces(ctx, search.Organizers) }},
	}
	for _, c := range counts {
		n, err := c.fn(ctx)
		if err != nil {
			out.EngineHealthy, out.EngineError = false, err.Error()
			break
		}
		out.Index[c.name] = n
	}
	return out, nil
}

// admin serves the rebuild and sync-status routes.
type admin struct {
	store     repository.Store
	search    search.Engine
	indexer   Notifier
	reindexer Reindexer
	backups   Backups
	now       func() time.Time
}
