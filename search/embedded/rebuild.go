package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/memindex"
)

// manifestName is the file under the engine's directory that names the
// committed generation (decimal, one line). Without it the generation is 0.
const manifestName = "generation"

// generationDir matches the directory (or file) of one index of one
// generation: "venues.bleve" or "events.db" (generation 0),
// "venues.bleve.7" or "events.db.7". Group 1 is set for "events.bleve"
// (and its generations): the event index of the engine's versions that
// kept the events in Bleve, removed whatever its generation.
var generationDir = regexp.MustCompile(`^(?:(events)\.bleve|(?:venues|organizers)\.bleve|events\.db)(?:\.([1-9][0-9]*))?$`)

// ErrRebuildOpen is returned by BeginRebuild while another rebuild of the
// same engine is open.
var ErrRebuildOpen = errors.New("bleve: a rebuild is already open")

// releaseMemory returns the freed heap to the operating system: called
// once a rebuild has dropped a generation (the old one after Commit, the
// new one after Abort), whose memory index is most of the process's heap.
// Without it the runtime keeps the freed pages mapped and returns them
// only slowly, so the process's resident size after a rebuild stays that
// of the two generations the rebuild held at once. A variable so that the
// tests can count the calls.
var releaseMemory = debug.FreeOSMemory

// errRebuildDone is returned by the writes of a rebuild that has ended.
var errRebuildDone = errors.New("bleve: the rebuild has already been committed or aborted")

// readManifest returns the committed generation of dir (0 when there is no
// manifest).
func readManifest(dir string) (int64, error) {
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("bleve: read the manifest: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bleve: the manifest %s holds %q, not a generation number", filepath.Join(dir, manifestName), raw)
	}
	return n, nil
}

// writeManifest records n as the committed generation: it writes a
// temporary file, flushes it, renames it over the manifest and flushes the
// directory, so that a crash leaves either the old or the new manifest.
func writeManifest(dir string, n int64) error {
	tmp := filepath.Join(dir, manifestName+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("bleve: write the manifest: %w", err)
	}
	_, err = f.WriteString(strconv.FormatInt(n, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, manifestName))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("bleve: write the manifest: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// removeOtherGenerations deletes the index directories under dir that do
// not belong to generation keep, and a temporary manifest.
func removeOtherGenerations(dir string, keep int64) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("bleve: list %s: %w", dir, err)
	}
	var errs []error
	for _, ent := range entries {
		m := generationDir.FindStringSubmatch(ent.Name())
		if m == nil {
			if ent.Name() == manifestName+".tmp" {
				errs = append(errs, os.Remove(filepath.Join(dir, ent.Name())))
			}
			continue
		}
		n := int64(0)
		if m[2] != "" {
			if n, err = strconv.ParseInt(m[2], 10, 64); err != nil {
				continue // not a number we could have written
			}
		}
		if n != keep || m[1] != "" {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, ent.Name())))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bleve: remove the leftovers of another generation: %w", err)
	}
	return nil
}

// removeGeneration deletes the directories of generation n.
func removeGeneration(dir string, n int64) error {
	var errs []error
	for _, k := range indexKinds {
		errs = append(errs, os.RemoveAll(indexPath(dir, k, n)))
	}
	return errors.Join(errs...)
}

// rebuild is an open rebuild: the next generation's indexes, filled beside
// the live ones.
type rebuild struct {
	e *Engine
	// mu: writes hold it for reading, Commit and Abort for writing, so
	// that no write runs on indexes being swapped or closed.
	mu   sync.RWMutex
	gen  *generation
	done bool
}

var _ search.Rebuild = (*rebuild)(nil)

// BeginRebuild creates the indexes of the next generation, empty, beside
// the live ones. It fails with ErrRebuildOpen while another rebuild is open.
func (e *Engine) BeginRebuild(ctx context.Context) (search.Rebuild, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.rebuildMu.Lock()
	defer e.rebuildMu.Unlock()
	if e.rebuilding != nil {
		return nil, ErrRebuildOpen
	}
	live, done := e.current()
	next := live.n + 1
	done()
	g, err := createGeneration(e.dir, next)
	if err != nil {
		_ = removeGeneration(e.dir, next)
		return nil, err
	}
	// Nothing reads the new generation before Commit, and a crash before
	// Commit discards it: its writes skip the flush to disk, and Commit
	// flushes the file once (see Commit).
	g.events.db.NoSync = true
	// Nor does anything query it: its in-memory index defers its date
	// order and facet buckets to Commit, which builds them in one sort
	// (memindex.NewBulk).
	g.queries, g.bulk = memindex.NewBulk(), true
	r := &rebuild{e: e, gen: g}
	e.rebuilding = r
	return r, nil
}

// write runs fn on the new generation unless the rebuild has ended.
func (r *rebuild) write(fn func(g *generation) error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.done {
		return errRebuildDone
	}
	return fn(r.gen)
}

// IndexEvents adds or replaces events in the new generation.
func (r *rebuild) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	return r.write(func(g *generation) error { return g.indexEvents(ctx, docs) })
}

// IndexPlaces adds or replaces venues and organizers in the new generation.
func (r *rebuild) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	return r.write(func(g *generation) error { return g.indexPlaces(ctx, docs) })
}

// DeleteEvents removes events from the new generation.
func (r *rebuild) DeleteEvents(ctx context.Context, ids []int64) error {
	return r.write(func(g *generation) error { return g.deleteEvents(ctx, ids) })
}

// DeletePlaces removes venues or organizers from the new generation.
func (r *rebuild) DeletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	return r.write(func(g *generation) error { return g.deletePlaces(ctx, kind, ids) })
}

// Commit makes the new generation the live one: it writes the manifest
// (from then on Open picks the new generation), swaps the engine's indexes
// under the engine's lock (waiting for running searches, which finish on
// the old indexes), then closes and removes the old generation.
func (r *rebuild) Commit(ctx context.Context) error {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return errRebuildDone
	}
	if err := ctx.Err(); err != nil {
		r.mu.Unlock()
		return err
	}
	// The new generation's writes were not flushed (BeginRebuild): flush
	// them before the manifest names it, and flush every later write, as
	// the live generation's are. Meanwhile its in-memory index builds
	// what it deferred (no write runs: r.mu is held).
	synced := make(chan error, 1)
	go func() { synced <- r.gen.events.db.Sync() }()
	r.gen.queries.Finish()
	r.gen.bulk = false
	if err := <-synced; err != nil {
		r.mu.Unlock()
		return fmt.Errorf("bleve: flush the new generation: %w", err)
	}
	r.gen.events.db.NoSync = false
	if err := writeManifest(r.e.dir, r.gen.n); err != nil {
		r.mu.Unlock()
		return err
	}
	r.e.mu.Lock()
	old := r.e.cur
	r.e.cur = r.gen
	r.e.mu.Unlock()
	r.done = true
	r.mu.Unlock()
	r.release()
	oldN := old.n
	err := errors.Join(old.close(), removeGeneration(r.e.dir, oldN))
	// The rebuild's writes read most of the new file through its mapping;
	// nothing reads it again until the next open. A failure costs
	// resident memory only.
	_ = r.gen.events.releaseMapped()
	releaseMemory()
	if err != nil {
		return fmt.Errorf("bleve: rebuild committed (generation %d is live), but removing generation %d failed (the next Open retries): %w", r.gen.n, oldN, err)
	}
	return nil
}

// Abort closes and removes the new generation; the live one is untouched.
// Aborting an ended rebuild does nothing.
func (r *rebuild) Abort(context.Context) error {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return nil
	}
	r.done = true
	err := errors.Join(r.gen.close(), removeGeneration(r.e.dir, r.gen.n))
	r.gen = nil
	r.mu.Unlock()
	r.release()
	releaseMemory()
	if err != nil {
		return fmt.Errorf("bleve: abort the rebuild (the next Open retries the removal): %w", err)
	}
	return nil
}

// release lets the engine begin another rebuild.
func (r *rebuild) release() {
	r.e.rebuildMu.Lock()
	if r.e.rebuilding == r {
		r.e.rebuilding = nil
	}
	r.e.rebuildMu.Unlock()
}
