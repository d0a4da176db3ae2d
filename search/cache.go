package search

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Cached is an Engine that remembers query results for a moment. Calendar
// frontends send the same few list queries over and over (the default
// list, a category page); a result is reused until the engine is written
// through this wrapper (every index write, delete and rebuild commit makes
// all remembered results stale at once) or TTL passes. The TTL bounds the
// staleness of results in a replica whose engine is written by another
// process (several replicas sharing Meilisearch): there the cache adds at
// most TTL to the time a write takes to show in lists.
type Cached struct {
	Engine
	ttl time.Duration
	// gen counts writes; an entry stored under an older generation is stale.
	gen atomic.Int64

	mu      sync.Mutex
	entries map[string]cacheEntry
	// now is the clock (time.Now; tests replace it).
	now func() time.Time
}

type cacheEntry struct {
	res Result
	gen int64
	at  time.Time
}

// maxCacheEntries bounds memory: past it the cache starts over.
const maxCacheEntries = 4096

// NewCached wraps e; ttl <= 0 disables caching.
func NewCached(e Engine, ttl time.Duration) *Cached {
	return &Cached{Engine: e, ttl: ttl, entries: map[string]cacheEntry{}, now: time.Now}
}

// lookup returns a fresh remembered result.
func (c *Cached) lookup(key string) (Result, int64, bool) {
	gen := c.gen.Load()
	if c.ttl <= 0 {
		return Result{}, gen, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.gen != gen || c.now().Sub(e.at) >= c.ttl {
		return Result{}, gen, false
	}
	return e.res, gen, true
}

// store remembers a result computed under generation gen.
func (c *Cached) store(key string, gen int64, res Result) {
	if c.ttl <= 0 || c.gen.Load() != gen {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCacheEntries {
		c.entries = map[string]cacheEntry{}
	}
	c.entries[key] = cacheEntry{res: res, gen: gen, at: c.now()}
}

// SearchEvents answers from the cache or the engine.
func (c *Cached) SearchEvents(ctx context.Context, q EventQuery) (Result, error) {
	key := fmt.Sprintf("e%#v", q)
	if res, _, ok := c.lookup(key); ok {
		return res, nil
	}
	gen := c.gen.Load()
	res, err := c.Engine.SearchEvents(ctx, q)
	if err == nil {
		c.store(key, gen, res)
	}
	return res, err
}

// SearchPlaces answers from the cache or the engine.
func (c *Cached) SearchPlaces(ctx context.Context, q PlaceQuery) (Result, error) {
	key := fmt.Sprintf("p%#v", q)
	if res, _, ok := c.lookup(key); ok {
		return res, nil
	}
	gen := c.gen.Load()
	res, err := c.Engine.SearchPlaces(ctx, q)
	if err == nil {
		c.store(key, gen, res)
	}
	return res, err
}

// written makes every remembered result stale. It runs before and after
// each write so that a search racing the write cannot store a result
// under the new generation.
func (c *Cached) written() { c.gen.Add(1) }

// IndexEvents writes through and invalidates.
func (c *Cached) IndexEvents(ctx context.Context, docs []EventDocument) error {
	c.written()
	defer c.written()
	return c.Engine.IndexEvents(ctx, docs)
}

// IndexPlaces writes through and invalidates.
func (c *Cached) IndexPlaces(ctx context.Context, docs []PlaceDocument) error {
	c.written()
	defer c.written()
	return c.Engine.IndexPlaces(ctx, docs)
}

// DeleteEvents writes through and invalidates.
func (c *Cached) DeleteEvents(ctx context.Context, ids []int64) error {
	c.written()
	defer c.written()
	return c.Engine.DeleteEvents(ctx, ids)
}

// DeletePlaces writes through and invalidates.
func (c *Cached) DeletePlaces(ctx context.Context, kind PlaceKind, ids []int64) error {
	c.written()
	defer c.written()
	return c.Engine.DeletePlaces(ctx, kind, ids)
}

// ErrNoRebuilder is returned by BeginRebuild when the wrapped engine
// cannot rebuild without downtime.
var ErrNoRebuilder = errors.New("search: engine cannot rebuild")

// BeginRebuild passes the rebuild through; its commit invalidates.
func (c *Cached) BeginRebuild(ctx context.Context) (Rebuild, error) {
	rb, ok := c.Engine.(Rebuilder)
	if !ok {
		return nil, ErrNoRebuilder
	}
	r, err := rb.BeginRebuild(ctx)
	if err != nil {
		return nil, err
	}
	return &cachedRebuild{Rebuild: r, c: c}, nil
}

// cachedRebuild invalidates the cache when the new indexes go live.
type cachedRebuild struct {
	Rebuild
	c *Cached
}

// Commit swaps the indexes and invalidates.
func (r *cachedRebuild) Commit(ctx context.Context) error {
	r.c.written()
	defer r.c.written()
	return r.Rebuild.Commit(ctx)
}

// Unwrap returns the wrapped engine.
func (c *Cached) Unwrap() Engine { return c.Engine }

// Generation counts the writes through this wrapper: anything derived from
// a result (a rendered list page) is stale once it changes.
func (c *Cached) Generation() int64 { return c.gen.Load() }
