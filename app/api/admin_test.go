package api_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/sync/indexing"
)

// fakeReindexer records Start calls; a job stays running until finish.
type fakeReindexer struct {
	mu   sync.Mutex
	job  *indexing.Job
	runs int
}

func (f *fakeReindexer) Start(_ context.Context, trigger string) (indexing.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.job != nil && f.job.State == indexing.JobRunning {
		return *f.job, indexing.ErrRebuildRunning
	}
	f.runs++
	f.job = &indexing.Job{ID: "job-" + string(rune('0'+f.runs)), State: indexing.JobRunning, Total: 10, Started: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), Trigger: trigger}
	return *f.job, nil
}

func (f *fakeReindexer) Last() (indexing.Job, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.job == nil {
		return indexing.Job{}, false
	}
	return *f.job, true
}

func (f *fakeReindexer) Cancel(context.Context) (indexing.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.job == nil || f.job.State != indexing.JobRunning {
		return indexing.Job{}, indexing.ErrNoRebuild
	}
	f.job.State, f.job.Finished = indexing.JobCancelled, time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)
	return *f.job, nil
}

func (f *fakeReindexer) finish() {
	f.mu.Lock()
	f.job.State, f.job.Done, f.job.Finished = indexing.JobSucceeded, 10, time.Date(2026, 11, 22, 12, 1, 0, 0, time.UTC)
	f.mu.Unlock()
}

func TestAdminRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fake := &fakeReindexer{}
	a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: e.worker, Reindexer: fake,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clockNow})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01"})
	e.run(t, []scenario{
		{name: "no job yet", method: "GET", url: "admin/reindex", as: "admin", status: 404, want: map[string]any{"code": "reindex_not_found"}},
		{name: "sync status", method: "GET", url: "admin/sync", as: "admin", status: 200, want: map[string]any{
			"store.events": 1, "engine_healthy": true},
			check: func(t *testing.T, r *resp) {
				if r.num("pending_marks") < 0 {
					t.Errorf("pending_marks missing: %s", r.raw)
				}
			}},
		{name: "anonymous start", method: "POST", url: "admin/reindex", status: 401},
		{name: "editor start", method: "POST", url: "admin/reindex", as: "editor", status: 403},
		{name: "editor sync", method: "GET", url: "admin/sync", as: "editor", status: 403},
		{name: "start", method: "POST", url: "admin/reindex", as: "admin", status: 202, want: map[string]any{"job.state": "running", "job.trigger": "api", "job.total": 10}},
		{name: "second start is 409 with the running job", method: "POST", url: "admin/reindex", as: "admin", status: 409,
			want: map[string]any{"code": "reindex_running", "data.job.id": "job-1"}},
		{name: "admin token works", method: "GET", url: "admin/reindex", as: "token:admin-secret", status: 200, want: map[string]any{"job.state": "running"}},
	})
	fake.finish()
	e.flush()
	e.run(t, []scenario{
		{name: "last job", method: "GET", url: "admin/reindex", as: "admin", status: 200, want: map[string]any{"job.state": "succeeded", "job.done": 10}},
		{name: "sync status after flush", method: "GET", url: "admin/sync", as: "admin", status: 200, want: map[string]any{
			"pending_marks": 0, "index.events": 1, "store.events": 1, "store.venues": 0}},
		{name: "new start after finish", method: "POST", url: "admin/reindex", as: "admin", status: 202, want: map[string]any{"job.id": "job-2"}},
		{name: "editor cancel", method: "DELETE", url: "admin/reindex", as: "editor", status: 403},
		{name: "cancel", method: "DELETE", url: "admin/reindex", as: "admin", status: 200, want: map[string]any{"job.id": "job-2", "job.state": "cancelled"}},
		{name: "cancel with none running", method: "DELETE", url: "admin/reindex", as: "admin", status: 404, want: map[string]any{"code": "reindex_not_running"}},
	})
}

// progressIndexer is an indexer whose stats report a running dependent
// re-index.
type progressIndexer struct{ stats indexing.Stats }

func (p progressIndexer) Notify()               {}
func (p progressIndexer) Stats() indexing.Stats { return p.stats }

// TestAdminSyncDependents checks that GET /admin/sync shows the progress of
// the dependent re-indexes the worker runs (and an empty list otherwise).
func TestAdminSyncDependents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(t, []scenario{
		{name: "none running", method: "GET", url: "admin/sync", as: "admin", status: 200, check: func(t *testing.T, r *resp) {
			if l, ok := r.path("dependent_reindex").([]any); !ok || len(l) != 0 {
				t.Errorf("dependent_reindex = %v, want []", r.path("dependent_reindex"))
			}
		}},
	})
	started := time.Date(2026, 11, 22, 11, 59, 0, 0, time.UTC)
	ix := progressIndexer{stats: indexing.Stats{Dependents: []indexing.CascadeProgress{
		{Kind: "venue", ID: 12, Done: 256, Total: 900, Started: started},
		{Kind: "term", ID: 3, Done: 0, Total: 40, Started: started},
	}}}
	a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: ix,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clockNow})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
	e.run(t, []scenario{
		{name: "two running", method: "GET", url: "admin/sync", as: "admin", status: 200, want: map[string]any{
			"dependent_reindex.0.kind": "venue", "dependent_reindex.0.id": 12, "dependent_reindex.0.done": 256,
			"dependent_reindex.0.total": 900, "dependent_reindex.0.started": "2026-11-22T11:59:00Z",
			"dependent_reindex.1.kind": "term", "dependent_reindex.1.total": 40}},
	})
}

// TestAdminSyncFailingMarks checks that GET /admin/sync names the marks
// the sync worker could not index: kind, id, attempts, last error, next
// attempt, and their count.
func TestAdminSyncFailingMarks(t *testing.T) {
	t.Parallel()
	// No sync worker: it would index (and clear) the event's mark before
	// the test reads it (seen under -race).
	e := newEnvWith(t, t.TempDir(), envOptions{noWorker: true})
	e.run(t, []scenario{
		{name: "none failing", method: "GET", url: "admin/sync", as: "admin", status: 200, want: map[string]any{"failing_count": 0},
			check: func(t *testing.T, r *resp) {
				if l, ok := r.path("failing_marks").([]any); !ok || len(l) != 0 {
					t.Errorf("failing_marks = %v, want []", r.path("failing_marks"))
				}
			}},
	})
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Huge", "start_date": "2026-12-01", "end_date": "2026-12-01"})
	marks, err := e.store.PendingMarks(t.Context(), 0)
	if err != nil || len(marks) == 0 {
		t.Fatalf("PendingMarks = %v, %v", marks, err)
	}
	m := marks[len(marks)-1]
	m.Attempts, m.LastError, m.NextAttempt = 3, "payload_too_large", time.Date(2026, 11, 22, 12, 0, 20, 0, time.UTC)
	if err := e.store.FailMark(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	e.run(t, []scenario{
		{name: "one failing", method: "GET", url: "admin/sync", as: "admin", status: 200, want: map[string]any{
			"failing_count": 1, "failing_marks.0.kind": "post", "failing_marks.0.id": m.ID, "failing_marks.0.attempts": 3,
			"failing_marks.0.last_error": "payload_too_large", "failing_marks.0.next_attempt": "2026-11-22T12:00:20Z"}},
		{name: "editor", method: "GET", url: "admin/sync", as: "editor", status: 403},
	})
}
