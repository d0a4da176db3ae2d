package embedded

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/memindex"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestRebuildReleasesMemory: once a rebuild drops a generation (the old
// one at Commit, the new one at Abort), the heap is returned to the
// operating system once, after nothing holds the dropped generation's
// memory index any more (a collection reclaims it), so that the process's
// resident size after a rebuild is that of one generation. Not parallel:
// it replaces releaseMemory.
func TestRebuildReleasesMemory(t *testing.T) {
	for _, tt := range []struct {
		name string
		// dropped returns the memory index of the generation that end drops.
		dropped func(e *Engine, r search.Rebuild) *memindex.Index
		end     func(r search.Rebuild) error
	}{
		{"commit", func(e *Engine, _ search.Rebuild) *memindex.Index { return e.cur.queries },
			func(r search.Rebuild) error { return r.Commit(t.Context()) }},
		{"abort", func(_ *Engine, r search.Rebuild) *memindex.Index { return r.(*rebuild).gen.queries },
			func(r search.Rebuild) error { return r.Abort(t.Context()) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := mustOpen(t, t.TempDir())
			mustIndex(t, e, searchtest.Generate(1, 40, 6, 4))
			r, err := e.BeginRebuild(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			mustIndexInto(t, r, searchtest.Generate(2, 15, 3, 2))
			var collected atomic.Bool
			runtime.AddCleanup(tt.dropped(e, r), func(c *atomic.Bool) { c.Store(true) }, &collected)
			calls, collectedAtCall := 0, false
			defer func(f func()) { releaseMemory = f }(releaseMemory)
			releaseMemory = func() {
				calls++
				// Cleanups run after a collection, on their own goroutine.
				for deadline := time.Now().Add(10 * time.Second); !collected.Load() && time.Now().Before(deadline); {
					runtime.GC()
					time.Sleep(time.Millisecond)
				}
				collectedAtCall = collected.Load()
			}
			if err := tt.end(r); err != nil {
				t.Fatal(err)
			}
			if calls != 1 || !collectedAtCall {
				t.Errorf("memory released %d times (want 1); the dropped generation's index collectable then: %v", calls, collectedAtCall)
			}
		})
	}
}

// TestOpenReleasesMemory: opening an engine whose event store holds
// documents returns the heap to the operating system once, after the
// documents are loaded (their decoded form is garbage then); an empty
// store does not. Not parallel: it replaces releaseMemory.
func TestOpenReleasesMemory(t *testing.T) {
	dir := t.TempDir()
	e := mustOpen(t, dir)
	mustIndex(t, e, searchtest.Generate(1, 40, 6, 4))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	defer func(f func()) { releaseMemory = f }(releaseMemory)
	calls := 0
	releaseMemory = func() { calls++ }
	for _, c := range []struct {
		dir   string
		calls int
	}{{t.TempDir(), 0}, {dir, 1}} {
		calls = 0
		opened := mustOpen(t, c.dir)
		docs := opened.cur.queries.Count()
		if err := opened.Close(); err != nil {
			t.Fatal(err)
		}
		if calls != c.calls {
			t.Errorf("open of a store of %d documents released memory %d times, want %d", docs, calls, c.calls)
		}
	}
}
