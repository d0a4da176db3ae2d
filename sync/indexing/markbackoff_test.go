package indexing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// poisonWord in an event's title makes refusingEngine refuse its
// documents, as Meilisearch refuses a payload over its limit.
const poisonWord = "POISON"

// errRefused is what refusingEngine answers for a poisoned document: a
// 4xx of the engine (no search.ErrUnavailable), with credentials in a URL
// that must not reach an operator's screen.
var errRefused = errors.New("meili: add documents: payload_too_large (413): The provided payload reached the size limit\n(http://admin:s3cret@meili:7700/indexes/events/documents)")

// refusingEngine is the embedded engine, except that it refuses (in the
// live indexes and in a rebuild's) every write holding a document whose
// title has poisonWord, and answers search.ErrUnavailable to every write
// while down is set. It counts the writes it refused.
type refusingEngine struct {
	rebuildingEngine
	mu      sync.Mutex
	down    bool
	refused map[int64]int
}

// rebuildingEngine is an engine that rebuilds (*bleve.Engine, gatedEngine).
type rebuildingEngine interface {
	search.Engine
	search.Rebuilder
}

func newRefusingEngine(e rebuildingEngine) *refusingEngine {
	return &refusingEngine{rebuildingEngine: e, refused: map[int64]int{}}
}

// check returns the error for a write of docs.
func (r *refusingEngine) check(docs []search.EventDocument) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return fmt.Errorf("%w: meili: connection refused", search.ErrUnavailable)
	}
	for _, d := range docs {
		if strings.Contains(d.Text["en"].Title, poisonWord) {
			r.refused[d.ID]++
			return errRefused
		}
	}
	return nil
}

func (r *refusingEngine) setDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

func (r *refusingEngine) refusals(id int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused[id]
}

func (r *refusingEngine) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	if err := r.check(docs); err != nil {
		return err
	}
	return r.rebuildingEngine.IndexEvents(ctx, docs)
}

func (r *refusingEngine) BeginRebuild(ctx context.Context) (search.Rebuild, error) {
	rb, err := r.rebuildingEngine.BeginRebuild(ctx)
	if err != nil {
		return nil, err
	}
	return &refusingRebuild{Rebuild: rb, r: r}, nil
}

type refusingRebuild struct {
	search.Rebuild
	r *refusingEngine
}

func (rb *refusingRebuild) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	if err := rb.r.check(docs); err != nil {
		return err
	}
	return rb.Rebuild.IndexEvents(ctx, docs)
}

// newRefusingStack is a stack whose worker writes through a
// refusingEngine, on a clock of its own, without jitter.
func newRefusingStack(t *testing.T) (*stack, *refusingEngine, *testsupport.Clock) {
	t.Helper()
	s := newStack(t)
	eng := newRefusingEngine(s.engine)
	clock := testsupport.NewClock(baseTime)
	s.worker.Engine = eng
	s.worker.Now = clock.Now
	s.worker.Jitter = func() float64 { return 0 }
	return s, eng, clock
}

// gauge returns the value of the metric name (a gauge or counter without
// labels) in reg, -1 when absent.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return -1
}

// failing returns the store's failing marks.
func failing(t *testing.T, st repository.Store) []repository.IndexMark {
	t.Helper()
	list, n, err := st.FailingMarks(t.Context(), 100)
	if err != nil {
		t.Fatalf("FailingMarks: %v", err)
	}
	if n != len(list) {
		t.Fatalf("FailingMarks counts %d, lists %d", n, len(list))
	}
	return list
}

// TestPoisonMarkDoesNotBlockQueue: one event the engine refuses among
// many: one step indexes every other one; the refused one becomes a
// failing mark, retried only when due, with delays that double up to the
// cap; it is counted in the metrics; a new write that fixes it is indexed
// at once.
func TestPoisonMarkDoesNotBlockQueue(t *testing.T) {
	t.Parallel()
	s, eng, clock := newRefusingStack(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.worker.Metrics())
	var healthy []int64
	var poison *repository.Record
	for i := range 40 {
		if i == 2 {
			poison = s.Post(t, repository.KindEvent, "Gala "+poisonWord, repository.StatusPublish, baseTime)
			continue
		}
		healthy = append(healthy, s.Post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, baseTime).ID)
	}
	ctx := testdeadline.Context(t)
	// One step: the healthy marks go, the poisoned one waits.
	if _, err := s.worker.Step(ctx); err != nil {
		t.Fatalf("Step with a refused event: %v", err)
	}
	got := s.Titles(t, "jazz")
	slices.Sort(got)
	if !slices.Equal(got, healthy) {
		t.Fatalf("after one step %d of %d healthy events indexed", len(got), len(healthy))
	}
	pending, _ := s.store.PendingMarks(ctx, 0)
	if len(pending) != 1 || pending[0].ID != poison.ID {
		t.Fatalf("pending marks = %+v, want only the poisoned event's", pending)
	}
	// Bisection: one refused write per halving of the 40 marks.
	first := eng.refusals(poison.ID)
	if first < 1 || first > 7 {
		t.Fatalf("isolating the poisoned event took %d refused writes, want 1 to 7", first)
	}

	// Each due retry fails again and doubles the delay, up to the cap;
	// a step before the mark is due does not touch it.
	wantDelays := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 320 * time.Second, 10 * time.Minute, 10 * time.Minute}
	for i, want := range wantDelays {
		attempts := i + 1
		f := failing(t, s.store)
		if len(f) != 1 {
			t.Fatalf("attempt %d: failing marks = %+v", attempts, f)
		}
		m := f[0]
		if m.ID != poison.ID || m.Attempts != attempts || m.NextAttempt.Sub(clock.Now()) != want {
			t.Fatalf("attempt %d: failing mark %+v (next in %v), want attempts %d, next in %v",
				attempts, m, m.NextAttempt.Sub(clock.Now()), attempts, want)
		}
		if strings.Contains(m.LastError, "s3cret") || strings.Contains(m.LastError, "\n") || !strings.Contains(m.LastError, "payload_too_large") {
			t.Fatalf("last error %q: want the engine's code, on one line, without the URL's credentials", m.LastError)
		}
		if got := eng.refusals(poison.ID); got != first+attempts-1 {
			t.Fatalf("attempt %d: the engine refused the poisoned event %d times, want %d", attempts, got, first+attempts-1)
		}
		if got := gauge(t, reg, "eventcal_sync_mark_failures_total"); got != float64(attempts) {
			t.Errorf("attempt %d: eventcal_sync_mark_failures_total = %v", attempts, got)
		}
		if got := gauge(t, reg, "eventcal_sync_failing_marks"); got != 1 {
			t.Errorf("attempt %d: eventcal_sync_failing_marks = %v, want 1", attempts, got)
		}
		// Not due yet: nothing happens.
		clock.Set(m.NextAttempt.Add(-time.Millisecond))
		if n, err := s.worker.Step(ctx); err != nil || n != 0 {
			t.Fatalf("attempt %d: step before due = %d, %v; want nothing done", attempts, n, err)
		}
		if got := eng.refusals(poison.ID); got != first+attempts-1 {
			t.Fatalf("attempt %d: retried before due", attempts)
		}
		// Due: retried (and refused) once.
		clock.Set(m.NextAttempt)
		s.flush(t)
	}
	if st := s.worker.Stats(); !strings.Contains(st.LastError, "1 of 1 marks failed") {
		t.Errorf("worker's last error = %q", st.LastError)
	}

	// A write that is still refused starts afresh: attempts 1.
	mustUpdate(t, s.store, poison.ID, func(p *repository.Record) { p.Title["en"] = "Gala " + poisonWord + " again" })
	s.flush(t)
	if f := failing(t, s.store); len(f) != 1 || f[0].Attempts != 1 {
		t.Fatalf("after a new refused write: %+v, want attempts 1", f)
	}
	// A write that fixes it is indexed on the next round, not when due.
	mustUpdate(t, s.store, poison.ID, func(p *repository.Record) { p.Title["en"] = "Jazz gala" })
	s.flush(t)
	if f := failing(t, s.store); len(f) != 0 {
		t.Fatalf("after the fix: failing marks %+v", f)
	}
	if !slices.Contains(s.Titles(t, "gala"), poison.ID) {
		t.Errorf("the fixed event is not indexed")
	}
	if got := gauge(t, reg, "eventcal_sync_failing_marks"); got != 0 {
		t.Errorf("eventcal_sync_failing_marks = %v after the fix", got)
	}
}

func mustUpdate(t *testing.T, st repository.Store, id int64, fn func(*repository.Record)) {
	t.Helper()
	if _, err := st.UpdateRecord(t.Context(), id, func(p *repository.Record) error { fn(p); return nil }); err != nil {
		t.Fatalf("UpdatePost: %v", err)
	}
}

// TestFailureKinds: only a refusal of the engine is blamed on a mark; an
// unreachable engine fails the whole step, as before, and records no
// failure on any mark.
func TestFailureKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		down      bool
		title     string
		wantErr   bool
		wantBlame bool
	}{
		{"refused document", false, "Gala " + poisonWord, false, true},
		{"engine unreachable", true, "Jazz night", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, eng, _ := newRefusingStack(t)
			s.Post(t, repository.KindEvent, tc.title, repository.StatusPublish, baseTime)
			s.Post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, baseTime)
			eng.setDown(tc.down)
			err := s.worker.Flush(testdeadline.Context(t))
			if (err != nil) != tc.wantErr {
				t.Fatalf("Flush = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, search.ErrUnavailable) {
				t.Errorf("Flush = %v, want search.ErrUnavailable", err)
			}
			if f := failing(t, s.store); (len(f) == 1) != tc.wantBlame || len(f) > 1 {
				t.Errorf("failing marks = %+v, want blame %v", f, tc.wantBlame)
			}
			pending, _ := s.store.PendingMarks(t.Context(), 0)
			want := 1
			if tc.down {
				want = 2
			}
			if len(pending) != want {
				t.Errorf("pending marks = %d, want %d", len(pending), want)
			}
		})
	}
}

// TestMarkBackoff: doubling from 5 s to the 10 min cap, jitter taking off
// at most half.
func TestMarkBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempts int
		jitter   float64
		want     time.Duration
	}{
		{1, 0, 5 * time.Second},
		{2, 0, 10 * time.Second},
		{3, 0.5, 15 * time.Second},
		{7, 0, 320 * time.Second},
		{8, 0, 10 * time.Minute},
		{1000, 0, 10 * time.Minute},
		{1000, 0.999, 10*time.Minute - time.Duration(float64(5*time.Minute)*0.999)},
	} {
		if got := markBackoff(tc.attempts, tc.jitter); got != tc.want {
			t.Errorf("markBackoff(%d, %v) = %v, want %v", tc.attempts, tc.jitter, got, tc.want)
		}
	}
}

// TestMarkErrorText: one line, no URL credentials, bounded.
func TestMarkErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, err, want string
	}{
		{"credentials", "post https://user:pw@meili.example/x: 413", "post https://meili.example/x: 413"},
		{"lines", "a\n\tb  c", "a b c"},
	} {
		if got := markErrorText(errors.New(tc.err)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := markErrorText(errors.New(strings.Repeat("x", 5000))); len(got) > repository.MaxMarkErrorBytes {
		t.Errorf("a long error is kept at %d bytes", len(got))
	}
}

// TestRebuildSkipsRefusedPost: a full rebuild with an event the engine
// refuses succeeds with every other item, reports the skipped event, and
// leaves it marked, so the worker lists it as a failing mark.
func TestRebuildSkipsRefusedPost(t *testing.T) {
	t.Parallel()
	s, _, _ := newRefusingStack(t)
	var healthy []int64
	for range 5 {
		healthy = append(healthy, s.Post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, baseTime).ID)
	}
	poison := s.Post(t, repository.KindEvent, "Gala "+poisonWord, repository.StatusPublish, baseTime)
	s.flush(t)
	r := NewReindexer(s.store, s.worker.Engine, s.worker, quiet, nil, nil)
	if _, err := r.Start(testdeadline.Context(t), "test"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	job := waitJob(t, r)
	if job.State != JobSucceeded {
		t.Fatalf("rebuild %s: %s", job.State, job.Error)
	}
	if job.SkippedCount != 1 || len(job.Skipped) != 1 || job.Skipped[0].ID != poison.ID || !strings.Contains(job.Skipped[0].Error, "payload_too_large") {
		t.Errorf("job skipped %d: %+v; want the poisoned event", job.SkippedCount, job.Skipped)
	}
	got := s.Titles(t, "jazz")
	slices.Sort(got)
	if !slices.Equal(got, healthy) {
		t.Errorf("after the rebuild indexed %v, want %v", got, healthy)
	}
	s.flush(t)
	if f := failing(t, s.store); len(f) != 1 || f[0].ID != poison.ID {
		t.Errorf("after the rebuild failing marks = %+v, want the poisoned event", f)
	}
}

// TestRebuildFailsWhenTooManyRefused: a scan whose engine refuses more
// than maxScanSkips posts fails (the fault is the engine's, and the new
// indexes would lack them all), keeping the live indexes.
func TestRebuildFailsWhenTooManyRefused(t *testing.T) {
	t.Parallel()
	s, _, _ := newRefusingStack(t)
	for range 2 {
		s.Post(t, repository.KindEvent, "Jazz night", repository.StatusPublish, baseTime)
	}
	s.flush(t)
	for range maxScanSkips + 1 {
		s.Post(t, repository.KindEvent, "Gala "+poisonWord, repository.StatusPublish, baseTime)
	}
	r := NewReindexer(s.store, s.worker.Engine, s.worker, quiet, nil, nil)
	if _, err := r.Start(testdeadline.Context(t), "test"); err != nil {
		t.Fatalf("Start: %v", err)
	}
	job := waitJob(t, r)
	if job.State != JobFailed || !strings.Contains(job.Error, "refused more than 100 posts") {
		t.Fatalf("job %s: %q; want failed for too many refusals", job.State, job.Error)
	}
	if got := len(s.Titles(t, "jazz")); got != 2 {
		t.Errorf("live index holds %d events, want the 2 it had", got)
	}
}
