package indexing

import (
	"context"
	"slices"
	"time"

	"github.com/calendar/eventcal/repository"
)

// Dependent re-indexing. Event documents carry copies of other records: the
// geo point of their venue, the slugs and ancestors of their categories,
// the slugs of their tags. When such a record changes, every event that
// links it must be indexed again, which at a busy venue or a top-level
// category means thousands of events. Doing that inside the batch would
// hold up every ordinary write queued behind it, so the worker does it in
// the background of its batch loop:
//
//   - The batch that sees the venue or term mark indexes the venue itself
//     and starts a dependent re-index (a cascade): the queries of the
//     events to index again, walked by ID in chunks of CascadeChunk IDs
//     (IDs only: repository.EventLinks.FindPostIDs).
//   - Each Step then indexes at most one chunk of cascade events after its
//     batch of ordinary marks, so writes keep flowing while a large
//     cascade runs.
//   - The venue or term mark stays in the store until its cascade ends, so
//     a crash or restart repeats the cascade instead of losing it. Step
//     skips the marks its running cascades hold (reading that many more
//     marks so that ordinary ones are not crowded out). A newer write of
//     the same venue or term renews its mark (a new Seq): the cascade
//     starts again from the first event.
//   - At most MaxCascades run at once; further dependent re-indexes run to
//     completion inside their batch (the old behaviour), so the number of
//     marks a step skips stays bounded.
//
// Progress is in Stats().Dependents, shown by GET /admin/sync.

// Defaults of the cascade settings.
const (
	defaultCascadeChunk = 256
	defaultMaxCascades  = 64
)

// cascadeKey names the record whose dependents are re-indexed.
type cascadeKey struct {
	kind repository.MarkKind
	id   int64
}

// cascade is one running dependent re-index.
type cascade struct {
	mark repository.IndexMark
	// queries select the events to index again; the first one is walked
	// from after (an event ID), the others from the start.
	queries []repository.RecordQuery
	after   int64
	done    int
	total   int
	started time.Time
}

// CascadeProgress is the progress of one dependent re-index: the events
// that carry a copy of a changed venue or term being indexed again.
type CascadeProgress struct {
	// Kind is "venue" or "term"; ID is the venue's or term's ID.
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
	// Done counts the events indexed so far; Total those counted at the
	// start (events linked later are indexed too, so Done may pass it).
	Done    int       `json:"done"`
	Total   int       `json:"total"`
	Started time.Time `json:"started"`
}

// cascadeRunner runs the cascades: the reindexing of the events that
// depend on a changed venue, organizer or label, in chunks between the
// worker's batches.
type cascadeRunner struct{ *Worker }

// newCascade returns the cascade for a venue mark or a term mark: the
// events at the venue, or the events in the category or any of its
// descendants and the events with the tag (term IDs are shared by both
// taxonomies, so a term is looked up as both).
func (w *cascadeRunner) newCascade(ctx context.Context, m repository.IndexMark) (*cascade, error) {
	c := &cascade{mark: m, started: w.Now()}
	if m.Kind == repository.MarkTerm {
		cats, err := w.categoryTree(ctx, []int64{m.ID})
		if err != nil {
			return nil, err
		}
		c.queries = []repository.RecordQuery{
			{Kind: repository.KindEvent, CategoryIDs: cats},
			{Kind: repository.KindEvent, TagIDs: []int64{m.ID}},
		}
	} else {
		c.queries = []repository.RecordQuery{{Kind: repository.KindEvent, VenueIDs: []int64{m.ID}}}
	}
	for _, q := range c.queries {
		n, err := w.Store.CountRecords(ctx, q)
		if err != nil {
			return nil, err
		}
		c.total += n
	}
	return c, nil
}

// categoryTree returns the categories and all their descendants.
func (w *cascadeRunner) categoryTree(ctx context.Context, roots []int64) ([]int64, error) {
	all, err := w.Store.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory})
	if err != nil {
		return nil, err
	}
	children := map[int64][]int64{}
	for _, t := range all {
		children[t.Parent] = append(children[t.Parent], t.ID)
	}
	set := map[int64]bool{}
	var walk func(id int64, depth int)
	walk = func(id int64, depth int) {
		if set[id] || depth > 64 {
			return
		}
		set[id] = true
		for _, c := range children[id] {
			walk(c, depth+1)
		}
	}
	for _, id := range roots {
		walk(id, 0)
	}
	ids := keys(set)
	slices.Sort(ids)
	return ids, nil
}

// advance indexes up to limit more events of c and reports how many it
// indexed and whether c is finished. The caller holds stepMu.
func (w *cascadeRunner) advance(ctx context.Context, c *cascade, limit int) (int, bool, error) {
	n := 0
	for n < limit && len(c.queries) > 0 {
		q := c.queries[0]
		q.AfterID, q.Limit = c.after, limit-n
		ids, err := w.Store.FindRecordIDs(ctx, q)
		if err != nil {
			return n, false, err
		}
		if len(ids) > 0 {
			set := make(map[int64]bool, len(ids))
			for _, id := range ids {
				set[id] = true
			}
			if err := w.indexEvents(ctx, ids, w.destinations(set, nil, nil)); err != nil {
				return n, false, err
			}
			c.after = ids[len(ids)-1]
			c.done += len(ids)
			n += len(ids)
		}
		if len(ids) < q.Limit {
			c.queries, c.after = c.queries[1:], 0
		}
	}
	return n, len(c.queries) == 0, nil
}

// startCascades starts a cascade for each mark (venue or term marks of the
// batch being applied) and returns the marks that are done with (cleared
// with the batch): those whose cascade ran inline because MaxCascades were
// running, or had nothing to index. The caller holds stepMu.
func (w *cascadeRunner) startCascades(ctx context.Context, marks []repository.IndexMark) (map[cascadeKey]bool, error) {
	held := map[cascadeKey]bool{}
	for _, m := range marks {
		key := cascadeKey{m.Kind, m.ID}
		c, err := w.newCascade(ctx, m)
		if err != nil {
			return nil, err
		}
		_, running := w.cascades[key]
		if running || len(w.cascades) < w.MaxCascades {
			if !running {
				w.cascadeOrder = append(w.cascadeOrder, key)
			}
			// A newer mark of a running cascade starts it over.
			w.cascades[key] = c
			held[key] = true
			continue
		}
		// Too many running: index the dependents now, chunk by chunk.
		for {
			_, finished, err := w.advance(ctx, c, w.CascadeChunk)
			if err != nil {
				return nil, err
			}
			if finished {
				break
			}
		}
	}
	w.publishCascades()
	return held, nil
}

// stepCascades indexes one chunk of the running cascades, oldest first,
// and clears the marks of those that finish. It returns the number of
// events indexed plus the marks cleared. The caller holds stepMu.
func (w *cascadeRunner) stepCascades(ctx context.Context) (int, error) {
	budget, did := w.CascadeChunk, 0
	for budget > 0 && len(w.cascadeOrder) > 0 {
		key := w.cascadeOrder[0]
		c := w.cascades[key]
		n, finished, err := w.advance(ctx, c, budget)
		did += n
		budget -= n
		if err != nil {
			w.publishCascades()
			return did, err
		}
		if !finished {
			break
		}
		if err := w.Store.ClearMarks(ctx, []repository.IndexMark{c.mark}); err != nil {
			w.publishCascades()
			return did, err
		}
		did++
		delete(w.cascades, key)
		w.cascadeOrder = w.cascadeOrder[1:]
		w.Log.Info("dependent reindex finished", "kind", kindName(c.mark.Kind), "id", c.mark.ID,
			"events", c.done, "duration_ms", w.Now().Sub(c.started).Milliseconds())
	}
	w.publishCascades()
	return did, nil
}

// heldBy reports whether m is the mark a running cascade holds.
func (w *cascadeRunner) heldBy(m repository.IndexMark) bool {
	c := w.cascades[cascadeKey{m.Kind, m.ID}]
	return c != nil && c.mark.Seq == m.Seq
}

// publishCascades copies the cascades' progress for Stats. The caller
// holds stepMu.
func (w *cascadeRunner) publishCascades() {
	out := make([]CascadeProgress, 0, len(w.cascadeOrder))
	for _, key := range w.cascadeOrder {
		c := w.cascades[key]
		out = append(out, CascadeProgress{Kind: kindName(key.kind), ID: key.id, Done: c.done, Total: c.total, Started: c.started.UTC()})
	}
	w.statsMu.mu.Lock()
	w.statsMu.dependents = out
	w.statsMu.mu.Unlock()
}

// runningCascades reports whether dependent re-indexes are running.
func (w *cascadeRunner) runningCascades() bool {
	w.statsMu.mu.Lock()
	defer w.statsMu.mu.Unlock()
	return len(w.statsMu.dependents) > 0
}

// kindName names what a cascade re-indexes the dependents of.
func kindName(k repository.MarkKind) string {
	if k == repository.MarkTerm {
		return "term"
	}
	return "venue"
}
