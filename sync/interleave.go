package sync

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
// one batch of their own (interleaved). The small edit's tasks are then
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
		var marks []repository.IndexMark
		for _, m := range pending {
			if !busy[key{m.Kind, m.ID}] && !w.heldBy(m) && len(marks) < w.BatchSize {
				marks = append(marks, m)
			}
		}
		if len(marks) == 0 {
			return nil
		}
		chosen, posts, err := w.choose(ctx, marks)
		if err == nil {
			_, err = w.batch(ctx, chosen, posts)
		}
		if err != nil {
			w.Log.Warn("sync: interleaved batch failed (its marks are retried)", "err", err)
		}
		return ctx.Err()
	}
}
