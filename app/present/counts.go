package present

import (
	"context"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
)

// LabelCounts keeps term counts (published events per term) for a
// moment. Rendering an event needs the counts of its few terms: those are
// counted one by one (an indexed count) and kept for countTTL; a write
// drops the entries of the terms it touched, so a local reader sees its own
// writes at once and other replicas' writes show within countTTL. A count
// is also dropped once gen moves (the renderer's write generation, which
// the search index's writes move): what a write made elsewhere (a
// calendar source's run, scheduled publishing, another process) shows
// once it is indexed. Term lists need every count of a taxonomy: those
// maps are cached the same way.
type LabelCounts struct {
	// ttl is how long a count is reused (0: countTTL; negative: never).
	ttl time.Duration
	// gen is the write generation counts are taken under (nil: none).
	gen func() int64
	// loading serialises grouped counts (get).
	loading sync.Mutex
	mu      sync.Mutex
	terms   map[int64]countEntry
	all     map[repository.LabelKind]countAll
	version int64
}

type countEntry struct {
	n   int
	at  time.Time
	gen int64
}

type countAll struct {
	m   map[int64]int
	at  time.Time
	gen int64
}

const countTTL = 2 * time.Second

// fewCounts is how many expired term counts are counted one by one; more
// are read from one grouped count per taxonomy (TermCounts).
const fewCounts = 3

// fresh reports whether a count taken at at, under write generation gen,
// may still be used.
func (c *LabelCounts) fresh(at time.Time, gen int64) bool {
	if gen != c.generation() {
		return false
	}
	ttl := c.ttl
	if ttl == 0 {
		ttl = countTTL
	}
	return time.Since(at) < ttl
}

// generation is the current write generation (0 without one).
func (c *LabelCounts) generation() int64 {
	if c.gen == nil {
		return 0
	}
	return c.gen()
}

// Get returns every count of a taxonomy (for term lists).
func (c *LabelCounts) All(ctx context.Context, st repository.Store, tax repository.LabelKind) (map[int64]int, error) {
	c.mu.Lock()
	if a, ok := c.all[tax]; ok && c.fresh(a.at, a.gen) {
		c.mu.Unlock()
		return a.m, nil
	}
	c.mu.Unlock()
	// One grouped count at a time: concurrent renders that found the map
	// expired wait for the first one's result instead of each counting.
	c.loading.Lock()
	defer c.loading.Unlock()
	c.mu.Lock()
	if a, ok := c.all[tax]; ok && c.fresh(a.at, a.gen) {
		c.mu.Unlock()
		return a.m, nil
	}
	v := c.version
	c.mu.Unlock()
	// The generation before the count: a write indexed while it runs makes
	// it stale.
	gen := c.generation()
	m, err := st.LabelCounts(ctx, tax)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.version == v {
		if c.all == nil {
			c.all = map[repository.LabelKind]countAll{}
		}
		c.all[tax] = countAll{m: m, at: time.Now(), gen: gen}
	}
	c.mu.Unlock()
	return m, nil
}

// ForLabels returns the counts of the given terms.
func (c *LabelCounts) ForLabels(ctx context.Context, st repository.Store, terms map[int64]*repository.Label) (map[int64]int, error) {
	out := make(map[int64]int, len(terms))
	var missing []*repository.Label
	gen := c.generation()
	c.mu.Lock()
	v := c.version
	for id, t := range terms {
		if e, ok := c.terms[id]; ok && c.fresh(e.at, e.gen) {
			out[id] = e.n
			continue
		}
		if a, ok := c.all[t.Taxonomy]; ok && c.fresh(a.at, a.gen) {
			out[id] = a.m[id] // a fresh grouped count (get) has it
			continue
		}
		missing = append(missing, t)
	}
	c.mu.Unlock()
	fresh := map[int64]int{}
	if tc, ok := st.(repository.LabelEventCounter); ok && len(missing) > 0 {
		// One query for every missing count, few or many (MongoDB: one
		// command per render, docs/internals.md, "Round trips").
		ids := make([]int64, len(missing))
		for i, t := range missing {
			ids[i] = t.ID
		}
		m, err := tc.CountLabelEvents(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out[id], fresh[id] = m[id], m[id]
		}
		missing = nil
	}
	if len(missing) > fewCounts {
		// Many counts expired at once (a page of events after countTTL):
		// one grouped count per taxonomy instead of one count per term.
		byTax := map[repository.LabelKind]map[int64]int{}
		for _, t := range missing {
			all, ok := byTax[t.Taxonomy]
			if !ok {
				var err error
				if all, err = c.All(ctx, st, t.Taxonomy); err != nil {
					return nil, err
				}
				byTax[t.Taxonomy] = all
			}
			out[t.ID], fresh[t.ID] = all[t.ID], all[t.ID]
		}
		missing = nil
	}
	for _, t := range missing {
		q := repository.RecordQuery{Kind: repository.KindEvent, Statuses: []string{repository.StatusPublish}}
		if t.Taxonomy == repository.LabelCategory {
			q.CategoryIDs = []int64{t.ID}
		} else {
			q.TagIDs = []int64{t.ID}
		}
		n, err := st.CountRecords(ctx, q)
		if err != nil {
			return nil, err
		}
		out[t.ID], fresh[t.ID] = n, n
	}
	if len(fresh) > 0 {
		c.mu.Lock()
		if c.version == v {
			if c.terms == nil {
				c.terms = map[int64]countEntry{}
			}
			now := time.Now()
			for id, n := range fresh {
				c.terms[id] = countEntry{n: n, at: now, gen: gen}
			}
		}
		c.mu.Unlock()
	}
	return out, nil
}

// Invalidate drops cached counts after a write: those of the given terms
// (and the per-taxonomy maps), or everything when no term is given.
func (c *LabelCounts) Invalidate(termIDs ...int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version++
	c.all = nil
	if len(termIDs) == 0 {
		c.terms = nil
		return
	}
	for _, id := range termIDs {
		delete(c.terms, id)
	}
}

// EventLabels lists the terms of the events among posts (nil ones skipped),
// for invalidating their counts.
func EventLabels(posts ...*repository.Record) []int64 {
	var ids []int64
	for _, p := range posts {
		if p != nil && p.Event != nil {
			ids = append(ids, p.Event.Categories...)
			ids = append(ids, p.Event.Tags...)
		}
	}
	return ids
}
