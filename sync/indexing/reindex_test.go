package indexing

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/lease"
)

// TestRebuildRepairsTheRaceWithTheWorker sets up the race a rebuild must
// survive, deterministically: the scan reads a page of events, then
// (while the scan is held at the gate) an event is renamed, one trashed,
// one deleted and one created, and the worker indexes those writes (into
// both index sets). The scan then writes its stale documents into the new
// indexes. After the swap the repair marks bring every written item back
// to the store's state.
func TestRebuildRepairsTheRaceWithTheWorker(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStack(t)
	var events []*repository.Record
	for i := range 30 {
		events = append(events, s.Post(t, repository.KindEvent, "Concert "+string(rune('a'+i%26))+" night", repository.StatusPublish, baseTime))
	}
	s.Post(t, repository.KindVenue, "Hall", repository.StatusPublish, baseTime)
	s.Post(t, repository.KindOrganizer, "Crew", repository.StatusPublish, baseTime)
	s.flush(t)
	renamed, trashed, deleted := events[3], events[4], events[5]

	gate := newGate(s.engine)
	s.worker.Engine = gate
	r := NewReindexer(s.store, gate, s.worker, quiet, nil, nil)
	job, err := r.Start(ctx, "test")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if job.State != JobRunning || job.Total != 32 || job.Trigger != "test" || job.ID == "" || job.Started.IsZero() {
		t.Errorf("started job = %+v, want running with total 32", job)
	}
	gate.waitReached(t)

	// (c) A second Start while one runs returns the running job.
	again, err := r.Start(ctx, "api")
	if !errors.Is(err, ErrRebuildRunning) || again.ID != job.ID || again.State != JobRunning {
		t.Errorf("second Start = %+v, %v; want the running job with ErrRebuildRunning", again, err)
	}
	if last, ok := r.Last(); !ok || last.ID != job.ID {
		t.Errorf("Last = %+v, %v", last, ok)
	}

	// Writes while the scan holds stale documents.
	if _, err := s.store.UpdateRecord(ctx, renamed.ID, func(p *repository.Record) error {
		p.Title = repository.Text{"en": "Renamed gala"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.UpdateRecord(ctx, trashed.ID, func(p *repository.Record) error {
		p.Status = repository.StatusTrash
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.store.DeleteRecord(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	created := s.Post(t, repository.KindEvent, "Latecomer show", repository.StatusPublish, baseTime)
	s.flush(t)
	// The live index, which answers lists during the rebuild, is current.
	if got := s.Titles(t, "gala"); !slices.Equal(got, testkit.IDs(renamed)) {
		t.Errorf("live index during the rebuild: gala = %v", got)
	}
	if got := s.Titles(t, "latecomer"); !slices.Equal(got, testkit.IDs(created)) {
		t.Errorf("live index during the rebuild: latecomer = %v", got)
	}

	close(gate.release)
	job = waitJob(t, r)
	if job.State != JobSucceeded || job.Error != "" || job.Finished.IsZero() || job.Done < job.Total {
		t.Fatalf("finished job = %+v, want succeeded with done >= total", job)
	}
	// The swap happened and the scan's stale documents are live: the
	// race is real. The repair marks are pending.
	if got := s.Titles(t, "gala"); len(got) != 0 {
		t.Errorf("right after the swap gala = %v, want the scan's stale document", got)
	}
	if got := s.Titles(t, "concert"); len(got) != 30 {
		t.Errorf("right after the swap %d concerts, want the scan's 30 stale ones", len(got))
	}
	marks, err := s.store.PendingMarks(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var marked []int64
	for _, m := range marks {
		marked = append(marked, m.ID)
	}
	for _, p := range []*repository.Record{renamed, trashed, deleted, created} {
		if !slices.Contains(marked, p.ID) {
			t.Errorf("post %d is not marked again after the swap (marks %v)", p.ID, marked)
		}
	}

	s.flush(t)
	checks := []struct {
		word string
		want []int64
	}{
		{"gala", testkit.IDs(renamed)},
		{"latecomer", testkit.IDs(created)},
		{"concert", testkit.IDs(slices.Concat(events[:3], events[6:])...)},
	}
	for _, c := range checks {
		if got := s.Titles(t, c.word); !slices.Equal(sorted(got), sorted(c.want)) {
			t.Errorf("after the repair, %q = %v, want %v", c.word, got, c.want)
		}
	}
	// The trashed event stays indexed (status=trash lists, trash.go); the
	// deleted one is gone.
	if got, want := s.Counts(t), [3]int{30 - 1 + 1, 1, 1}; got != want {
		t.Errorf("counts after the repair = %v, want %v", got, want)
	}
	// The new generation is the one on disk.
	if _, err := os.Stat(filepath.Join(s.dir, "events.db.1")); err != nil {
		t.Errorf("generation 1 is not on disk: %v", err)
	}
}

func sorted(v []int64) []int64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v
}

// noRebuild is an engine that cannot rebuild.
type noRebuild struct{ search.Engine }

func TestReindexerRefuses(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	tests := []struct {
		name  string
		setup func() *Reindexer
		want  error
		text  string
	}{
		{"engine without rebuilds", func() *Reindexer {
			return NewReindexer(s.store, noRebuild{s.engine}, s.worker, quiet, nil, nil)
		}, nil, "cannot rebuild"},
		{"lease held elsewhere", func() *Reindexer {
			return NewReindexer(s.store, s.engine, s.worker, quiet, nil, testkit.NewFakeLease(false))
		}, lease.ErrNotLeader, "held elsewhere"},
		{"closed", func() *Reindexer {
			r := NewReindexer(s.store, s.engine, s.worker, quiet, nil, nil)
			r.Close()
			return r
		}, ErrReindexerClosed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.setup()
			job, err := r.Start(t.Context(), "test")
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("Start = %+v, %v; want %v (%q)", job, err, tt.want, tt.text)
			}
			if _, ok := r.Last(); ok {
				t.Errorf("a refused Start left a job")
			}
			if _, err := r.Wait(t.Context()); !errors.Is(err, ErrNoRebuild) {
				t.Errorf("Wait = %v, want ErrNoRebuild", err)
			}
		})
	}
}

// TestRebuildAborts: a rebuild that fails or is stopped is aborted (its
// new indexes removed), the live index keeps answering and the worker
// keeps working, and the next rebuild can run.
func TestRebuildAborts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// interrupt runs while the scan is held at the gate.
		interrupt func(t *testing.T, s *stack, r *Reindexer, g *gatedEngine, l *testkit.FakeLease)
		wantError string
	}{
		{"the dual write fails", func(t *testing.T, s *stack, r *Reindexer, g *gatedEngine, l *testkit.FakeLease) {
			g.fail, g.failOn = errors.New("disk full"), "delete"
			deleteFirstEvent(t, s)
			s.flush(t) // the worker is not held up by the failing rebuild
		}, "dual write: disk full"},
		{"the lease is lost", func(t *testing.T, s *stack, r *Reindexer, g *gatedEngine, l *testkit.FakeLease) {
			l.Set(false)
		}, "another process holds the lease"},
		{"the service stops", func(t *testing.T, s *stack, r *Reindexer, g *gatedEngine, l *testkit.FakeLease) {
			go r.Close()
		}, "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStackWithEvents(t, 5)
			gate := newGate(s.engine)
			s.worker.Engine = gate
			lease := testkit.NewFakeLease(true)
			r := NewReindexer(s.store, gate, s.worker, quiet, nil, lease)
			if _, err := r.Start(t.Context(), "test"); err != nil {
				t.Fatal(err)
			}
			gate.waitReached(t)
			tt.interrupt(t, s, r, gate, lease)
			// The gate stays closed: the job ends because it was told to.
			job := waitJob(t, r)
			if job.State != JobFailed || !strings.Contains(job.Error, tt.wantError) {
				t.Fatalf("job = %+v, want failed with %q", job, tt.wantError)
			}
			close(gate.release)
			ents, _ := os.ReadDir(s.dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".1") {
					t.Errorf("the aborted generation is left: %s", e.Name())
				}
			}
			n, err := s.engine.CountEvents(t.Context())
			if err != nil || n < 4 {
				t.Errorf("live events after the abort = %d, %v", n, err)
			}
			if s.worker.dual != nil {
				t.Errorf("the worker still dual-writes")
			}
			if tt.name == "the service stops" {
				return
			}
			// The next rebuild runs (the engine's rebuild slot is free).
			gate.fail = nil
			lease.Set(true)
			if _, err := r.Start(t.Context(), "test"); err != nil {
				t.Fatalf("Start after the abort: %v", err)
			}
			if job := waitJob(t, r); job.State != JobSucceeded {
				t.Errorf("next job = %+v", job)
			}
		})
	}
}

func deleteFirstEvent(t *testing.T, s *stack) {
	t.Helper()
	evs, err := s.store.FindRecords(t.Context(), repository.RecordQuery{Kind: repository.KindEvent, Limit: 1})
	if err != nil || len(evs) == 0 {
		t.Fatalf("FindPosts: %v", err)
	}
	// A deleted event is removed from the index (a trashed one stays
	// indexed for status=trash lists: trash.go).
	if err := s.store.DeleteRecord(context.WithoutCancel(t.Context()), evs[0].ID); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildCancel: an admin's Cancel stops the running rebuild; the job
// says cancelled, the live index is untouched and the next rebuild runs.
func TestRebuildCancel(t *testing.T) {
	t.Parallel()
	s := newStackWithEvents(t, 5)
	gate := newGate(s.engine)
	s.worker.Engine = gate
	r := NewReindexer(s.store, gate, s.worker, quiet, nil, nil)
	if _, err := r.Cancel(t.Context()); !errors.Is(err, ErrNoRebuild) {
		t.Errorf("Cancel with nothing running = %v, want ErrNoRebuild", err)
	}
	if _, err := r.Start(t.Context(), "test"); err != nil {
		t.Fatal(err)
	}
	gate.waitReached(t)
	job, err := r.Cancel(t.Context())
	if err != nil || job.State != JobCancelled || !strings.Contains(job.Error, "live indexes were kept") || job.Finished.IsZero() {
		t.Fatalf("Cancel = %+v, %v; want a cancelled job", job, err)
	}
	close(gate.release)
	if n, err := s.engine.CountEvents(t.Context()); err != nil || n != 5 {
		t.Errorf("live events after the cancel = %d, %v; want 5", n, err)
	}
	if _, err := r.Start(t.Context(), "test"); err != nil {
		t.Fatalf("Start after the cancel: %v", err)
	}
	if job := waitJob(t, r); job.State != JobSucceeded {
		t.Errorf("next job = %+v", job)
	}
}

// TestRebuildLogs: a running rebuild logs its progress (done, total, rate)
// every few seconds, and a failed one logs why.
func TestRebuildLogs(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := NewReindexer(nil, nil, &Worker{}, slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return clock }, nil)
	r.last = Job{ID: "job-1", State: JobRunning, Total: 1000, Started: clock}
	r.lastLog = clock
	r.progress(100) // too soon after the start: no line
	clock = clock.Add(6 * time.Second)
	r.progress(600)
	clock = clock.Add(time.Second)
	r.progress(700) // too soon after the last line
	r.finish(errors.New("disk full"))
	out := buf.String()
	if n := strings.Count(out, `msg="reindex progress"`); n != 1 {
		t.Errorf("%d progress lines, want 1:\n%s", n, out)
	}
	for _, want := range []string{"done=600 total=1000 per_second=100", `msg="reindex failed"`, `err="disk full"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
