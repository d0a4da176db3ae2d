package meili

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/calendar/eventcal/search"
)

// A full rebuild (search.Rebuilder) fills one temporary index per live
// index, <prefix>rebuild_events, <prefix>rebuild_events_hidden,
// <prefix>rebuild_venues and <prefix>rebuild_organizers, created with the
// live indexes' settings (EnsureIndex), while the live indexes keep
// answering. Commit then swaps the pairs in ONE swap-indexes task, which Meilisearch applies
// atomically (documents and settings move together), and deletes the
// temporary names, which hold the old data after the swap. Every task is
// awaited and its final status checked.
// https://www.meilisearch.com/docs/reference/api/indexes/swap-indexes
//
// The names are fixed, not per rebuild: a rebuild that died (the process
// was killed) leaves them behind, and the next BeginRebuild deletes them
// first. Only one process runs rebuilds at a time (the sync lease), so
// two rebuilds never share the names.

// rebuildInfix follows the engine's prefix in the temporary index names.
const rebuildInfix = "rebuild_"

// ErrRebuildOpen is returned by BeginRebuild while another rebuild of the
// same engine is open.
var ErrRebuildOpen = errors.New("meili: a rebuild is already open")

// errRebuildDone is returned by the writes of a rebuild that has ended.
var errRebuildDone = errors.New("meili: the rebuild has already been committed or aborted")

// rebuild fills the temporary indexes through an engine on their prefix.
type rebuild struct {
	live *Engine
	next *Engine
	// mu: writes hold it for reading, Commit and Abort for writing.
	mu   sync.RWMutex
	done bool
}

var _ search.Rebuild = (*rebuild)(nil)

// BeginRebuild deletes leftover temporary indexes, then creates them with
// the live indexes' settings (the engine's vocabulary so far). It fails
// with ErrRebuildOpen while another rebuild of this engine is open.
func (e *Engine) BeginRebuild(ctx context.Context) (search.Rebuild, error) {
	e.rebuildMu.Lock()
	defer e.rebuildMu.Unlock()
	if e.rebuilding {
		return nil, ErrRebuildOpen
	}
	next, err := e.WithPrefix(e.opts.IndexPrefix + rebuildInfix)
	if err != nil {
		return nil, err
	}
	for _, ix := range indexes {
		uid := next.IndexUID(ix)
		// A leftover of an interrupted rebuild holds stale documents.
		if err := e.DeleteIndex(ctx, uid); err != nil {
			return nil, err
		}
		if err := next.EnsureIndex(ctx, uid, ix); err != nil {
			return nil, err
		}
	}
	e.rebuilding = true
	return &rebuild{live: e, next: next}, nil
}

// write runs fn unless the rebuild has ended.
func (r *rebuild) write(fn func() error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.done {
		return errRebuildDone
	}
	return fn()
}

// IndexEvents adds or replaces events in the temporary event index.
func (r *rebuild) IndexEvents(ctx context.Context, docs []search.EventDocument) error {
	// No other write runs between this one's requests: r.mu is held for
	// reading, which a nested write would take again.
	return r.write(func() error { return r.next.IndexEvents(search.WithoutYield(ctx), docs) })
}

// IndexPlaces adds or replaces venues and organizers in the temporary
// place indexes.
func (r *rebuild) IndexPlaces(ctx context.Context, docs []search.PlaceDocument) error {
	return r.write(func() error { return r.next.IndexPlaces(ctx, docs) })
}

// DeleteEvents removes events from the temporary event index.
func (r *rebuild) DeleteEvents(ctx context.Context, ids []int64) error {
	return r.write(func() error { return r.next.DeleteEvents(ctx, ids) })
}

// DeletePlaces removes venues or organizers from a temporary place index.
func (r *rebuild) DeletePlaces(ctx context.Context, kind search.PlaceKind, ids []int64) error {
	return r.write(func() error { return r.next.DeletePlaces(ctx, kind, ids) })
}

// Commit swaps the temporary indexes with the live ones in one task and
// deletes the old data. The temporary indexes first learn the attributes
// the live indexes learned during the rebuild (documents written to the
// live indexes meanwhile, in a language new to them), and the live engine
// afterwards learns those of the temporary ones, so that after the swap
// the settings and the vocabulary cover every document. The live engine's
// vocabulary does not grow during the swap (its learnMu is held).
func (r *rebuild) Commit(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return errRebuildDone
	}
	e := r.live
	e.learnMu.Lock()
	if err := r.next.learn(ctx, e.vocabulary()); err != nil {
		e.learnMu.Unlock()
		return err
	}
	pairs := make([][2]string, len(indexes))
	for i, ix := range indexes {
		pairs[i] = [2]string{e.IndexUID(ix), r.next.IndexUID(ix)}
	}
	if err := e.swapIndexes(ctx, pairs); err != nil {
		e.learnMu.Unlock()
		return err
	}
	// The live indexes now have the current layout: the next write and
	// search use it, even if recording the scheme below fails.
	e.current()
	e.mu.Lock()
	e.vocab, _ = e.vocab.union(r.next.vocabulary())
	e.mu.Unlock()
	e.learnMu.Unlock()
	r.done = true
	r.release()
	// The swapped-in documents were written under the current scheme;
	// recorded at once, for the other processes' engines still reading
	// the old layout (searchEvents looks for the record meanwhile).
	if err := e.recordScheme(ctx); err != nil {
		return fmt.Errorf("meili: rebuild committed, but recording its attribute scheme failed (the next start rebuilds again): %w", err)
	}
	var errs []error
	for _, ix := range indexes {
		errs = append(errs, e.DeleteIndex(ctx, r.next.IndexUID(ix)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("meili: rebuild committed, but deleting the old indexes failed (the next rebuild retries): %w", err)
	}
	return nil
}

// Abort deletes the temporary indexes; the live ones are untouched.
// Aborting an ended rebuild does nothing.
func (r *rebuild) Abort(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return nil
	}
	r.done = true
	r.release()
	var errs []error
	for _, ix := range indexes {
		errs = append(errs, r.live.DeleteIndex(ctx, r.next.IndexUID(ix)))
	}
	return errors.Join(errs...)
}

// release lets the engine begin another rebuild.
func (r *rebuild) release() {
	r.live.rebuildMu.Lock()
	r.live.rebuilding = false
	r.live.rebuildMu.Unlock()
}
