package embedded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// dirEntries lists the names under dir, sorted.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func fixtureCounts(f *searchtest.Fixtures) [3]int {
	return [3]int{len(f.Events), len(f.Venues), len(f.Organizers)}
}

func mustIndexInto(t *testing.T, w search.Writer, f *searchtest.Fixtures) {
	t.Helper()
	if err := w.IndexEvents(t.Context(), f.Events); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	if err := w.IndexPlaces(t.Context(), f.Places()); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
}

// TestRebuildGenerations: the live generation answers until Commit; after
// Commit (also after reopening) the new one does; Abort, or a process that
// died with a rebuild open, leave the old one; leftovers are removed.
func TestRebuildGenerations(t *testing.T) {
	t.Parallel()
	old, fresh := searchtest.Generate(1, 40, 6, 4), searchtest.Generate(2, 15, 3, 2)
	gen1 := []string{"events.db.1", "generation", "organizers.bleve.1", "venues.bleve.1"}
	gen0 := []string{"events.db", "organizers.bleve", "venues.bleve"}
	tests := []struct {
		name string
		// end finishes the rebuild (or not) and closes the engine.
		end       func(t *testing.T, e *Engine, r search.Rebuild)
		wantLive  *searchtest.Fixtures // after end, before closing
		wantAfter *searchtest.Fixtures // after reopening
		wantDirs  []string             // after reopening
	}{
		{"commit", func(t *testing.T, e *Engine, r search.Rebuild) {
			if err := r.Commit(t.Context()); err != nil {
				t.Fatalf("Commit: %v", err)
			}
		}, fresh, fresh, gen1},
		{"abort", func(t *testing.T, e *Engine, r search.Rebuild) {
			if err := r.Abort(t.Context()); err != nil {
				t.Fatalf("Abort: %v", err)
			}
		}, old, old, gen0},
		{"process died with the rebuild open", func(t *testing.T, e *Engine, r search.Rebuild) {}, old, old, gen0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			e := mustOpen(t, dir)
			mustIndex(t, e, old)
			r, err := e.BeginRebuild(t.Context())
			if err != nil {
				t.Fatalf("BeginRebuild: %v", err)
			}
			mustIndexInto(t, r, fresh)
			if err := r.DeleteEvents(t.Context(), []int64{fresh.Events[0].ID}); err != nil {
				t.Fatal(err)
			}
			if err := r.IndexEvents(t.Context(), fresh.Events[:1]); err != nil {
				t.Fatal(err)
			}
			// The rebuild writes nothing into the live generation.
			if got := counts(t, e); got != fixtureCounts(old) {
				t.Fatalf("live counts during the rebuild = %v, want the old %v", got, fixtureCounts(old))
			}
			tt.end(t, e, r)
			if got := counts(t, e); got != fixtureCounts(tt.wantLive) {
				t.Errorf("live counts = %v, want %v", got, fixtureCounts(tt.wantLive))
			}
			q := search.EventQuery{Lang: "en", Query: "jazz", Statuses: []string{"publish"}, Limit: 100}
			if got, err := e.SearchEvents(t.Context(), q); err != nil || !slices.Equal(got.IDs, searchtest.ExpectedEvents(tt.wantLive.Events, q).IDs) {
				t.Errorf("search = %v, %v; want the expected IDs", got, err)
			}
			if err := e.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}

			e = mustOpen(t, dir)
			defer e.Close()
			if got := counts(t, e); got != fixtureCounts(tt.wantAfter) {
				t.Errorf("counts after reopening = %v, want %v", got, fixtureCounts(tt.wantAfter))
			}
			if got := dirEntries(t, dir); !slices.Equal(got, tt.wantDirs) {
				t.Errorf("directory after reopening = %q, want %q", got, tt.wantDirs)
			}
		})
	}
}

// TestRebuildLifecycle: one rebuild at a time, no write after the end, and
// successive rebuilds use successive generations.
func TestRebuildLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	e := mustOpen(t, dir)
	defer e.Close()
	for want := int64(1); want <= 3; want++ {
		r, err := e.BeginRebuild(ctx)
		if err != nil {
			t.Fatalf("BeginRebuild %d: %v", want, err)
		}
		if _, err := e.BeginRebuild(ctx); !errors.Is(err, ErrRebuildOpen) {
			t.Fatalf("a second BeginRebuild = %v, want ErrRebuildOpen", err)
		}
		mustIndexInto(t, r, small())
		if err := r.Commit(ctx); err != nil {
			t.Fatalf("Commit %d: %v", want, err)
		}
		if err := r.IndexEvents(ctx, small().Events); err == nil {
			t.Error("a write after Commit succeeded")
		}
		if err := r.Commit(ctx); err == nil {
			t.Error("a second Commit succeeded")
		}
		if err := r.Abort(ctx); err != nil {
			t.Errorf("Abort after Commit: %v", err)
		}
		if n, err := readManifest(dir); err != nil || n != want {
			t.Errorf("manifest = %d, %v; want %d", n, err, want)
		}
		var gens []string
		for _, name := range dirEntries(t, dir) {
			if strings.HasPrefix(name, "events.") {
				gens = append(gens, name)
			}
		}
		if wantDir := filepath.Base(indexPath(dir, eventsIndex, want)); !slices.Equal(gens, []string{wantDir}) {
			t.Errorf("event index directories = %q, want only %s", gens, wantDir)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, manifestName+".tmp")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a temporary manifest is left: %v", err)
	}
}

// TestCommitUnderLoad: searches running while a rebuild commits never fail
// and see either the whole old generation or the whole new one.
func TestCommitUnderLoad(t *testing.T) {
	t.Parallel()
	old, fresh := searchtest.Generate(3, 300, 5, 5), searchtest.Generate(4, 120, 5, 5)
	e := mustOpen(t, t.TempDir())
	defer e.Close()
	mustIndex(t, e, old)
	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mustIndexInto(t, r, fresh)

	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	totals := make([]map[int]int, 4)
	for i := range totals {
		totals[i] = map[int]int{}
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := e.SearchEvents(context.Background(), search.EventQuery{Limit: 5})
				if err != nil {
					errs <- err
					return
				}
				totals[i][res.Total]++
			}
		})
	}
	if err := r.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if res, err := e.SearchEvents(t.Context(), search.EventQuery{}); err != nil || res.Total != len(fresh.Events) {
		t.Errorf("after the commit: total %d, %v; want %d", res.Total, err, len(fresh.Events))
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a search failed during the commit: %v", err)
	}
	for i, m := range totals {
		for total := range m {
			if total != len(old.Events) && total != len(fresh.Events) {
				t.Errorf("searcher %d saw a total of %d, neither %d nor %d", i, total, len(old.Events), len(fresh.Events))
			}
		}
	}
}

// TestRebuildFlushedOnce: the new generation's writes skip the flush to
// disk until Commit, which flushes the file once before the manifest
// names it; from then on its writes are flushed as the live
// generation's are, and a reopened engine holds every document.
func TestRebuildFlushedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := searchtest.Generate(3, 30, 4, 2)
	e := mustOpen(t, dir)
	if e.cur.events.db.NoSync {
		t.Fatal("the live generation's writes skip the flush")
	}
	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatalf("BeginRebuild: %v", err)
	}
	next := r.(*rebuild).gen
	if !next.events.db.NoSync {
		t.Error("the new generation's writes are flushed one by one before Commit")
	}
	mustIndexInto(t, r, f)
	if err := r.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if e.cur != next || next.events.db.NoSync {
		t.Error("after Commit, the live generation's writes skip the flush")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = mustOpen(t, dir)
	defer e.Close()
	if n, err := e.CountEvents(t.Context()); err != nil || n != len(f.Events) {
		t.Errorf("after reopening: %d events, %v; want %d", n, err, len(f.Events))
	}
}
