package indexing

import (
	"context"

	"github.com/calendar/eventcal/repository"
)

// Interleaving. A large event (a daily series with long text in several
// languages) is sent to the engine in many requests, and Meilisearch runs
// the tasks of an index in the order they were enqueued. Were the worker
// to index a mark written meanwhile only once the whole event is sent, a
// small edit would wait for every remaining request of the series
// (seconds at full size), far past the lag target. So each batch runs with
// a yield function (search.WithYield): the engine calls it between two
// requests of one write, after the previous request's task has ended, and
// it indexes the marks that are due and not part of the running batch, as
// one batch of their own (interleaved): small ones only, at most
// BatchBytes of documents (documentBytes), so that a large event never
// runs inside another's write (it waits for the next Step); term marks,
// which start dependent re-indexes, wait for the next Step too. The small edit's tasks are then
// enqueued behind at most the one request of the large write that was in
// flight when it was marked (search.WithYield is set by Step).
//
// The interleaved batch is an ordinary batch (webhooks, isolation of a
// failing mark, dependents, clearing, metrics), but it never yields in
// turn (search.Yield strips the function), and it leaves out the running
// batch's marks and the marks held by dependent re-indexes: an event is
// never written by two writes at once, so the large write's order (every
// addition, then the deletion of the stale documents by generation) holds
// for each event. A failure of the interleaved batch does not end the
// running one: its marks stay set and the next Step retries them.

// interleaving returns the yield function of a batch of marks.
func (w *Worker) interleaving(running []repository.IndexMark) func(context.Context) error {
	type key struct {
		kind repository.MarkKind
		id   int64
	}
	busy := map[key]bool{}
	for _, m := range running {
		busy[key{m.Kind, m.ID}] = true
	}
	return func(ctx context.Context) error {
		pending, err := w.Store.DueMarks(ctx, w.Now(), w.BatchSize+len(running)+len(w.cascades))
		if err != nil {
			w.Log.Warn("sync: reading the marks to interleave failed", "err", err)
			return ctx.Err()
		}
		var ids []int64
		var candidates []repository.IndexMark
		for _, m := range pending {
			if m.Kind != repository.MarkTerm && !busy[key{m.Kind, m.ID}] && !w.heldBy(m) {
				candidates = append(candidates, m)
				ids = append(ids, m.ID)
			}
		}
		if len(candidates) == 0 {
			return nil
		}
		posts, err := w.Store.GetRecords(ctx, ids)
		if err != nil {
			w.Log.Warn("sync: reading the posts to interleave failed", "err", err)
			return ctx.Err()
		}
		// Small writes only, at most one batch's worth (BatchBytes): a
		// large event waits for the next Step, as it would have.
		var marks []repository.IndexMark
		total := 0
		for _, m := range candidates {
			size := 0
			if p := posts[m.ID]; p != nil {
				size = w.documentBytes(p)
			}
			if total+size > w.BatchBytes || len(marks) >= w.BatchSize {
				continue
			}
			total += size
			marks = append(marks, m)
		}
		if len(marks) == 0 {
			return nil
		}
		if _, err := w.batch(ctx, marks, posts); err != nil {
			w.Log.Warn("sync: interleaved batch failed (its marks are retried)", "err", err)
		}
		return ctx.Err()
	}
}
