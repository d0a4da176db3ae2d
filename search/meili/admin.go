package meili

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meilisearch/meilisearch-go"
)

// Index administration for zero-downtime rebuilds: fill fresh indexes
// under another prefix (WithPrefix, then Init and Index*), swap each with
// the live one (SwapIndexes), and delete the old data (DeleteIndex).
// https://www.meilisearch.com/docs/reference/api/indexes/swap-indexes

// WithPrefix returns an engine on the same server and client whose
// indexes use another prefix, with the same settings and vocabulary.
// Closing it does not close the client.
func (e *Engine) WithPrefix(prefix string) (*Engine, error) {
	opts := e.opts
	opts.IndexPrefix = prefix
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return newEngine(&core{client: e.client, opts: opts, vocab: e.vocabulary()}), nil
}

// SwapIndexes atomically exchanges the documents, settings and task
// history of the indexes a and b (both must exist) and waits for the swap
// to succeed.
func (e *Engine) SwapIndexes(ctx context.Context, a, b string) error {
	return e.swapIndexes(ctx, [][2]string{{a, b}})
}

// swapIndexes exchanges every pair in one request, which Meilisearch
// applies as one atomic task: a search sees all pairs swapped or none.
//
// The service's own key is limited to its indexes (calendar_*), and
// Meilisearch hides from such a key every task that is not tied to
// exactly one index: Kind::related_to_one_index is false for IndexSwap
// (crates/meilisearch-types/src/tasks.rs:582-599 at v1.18.0), and
// get_tasks_from_authorized_indexes drops those kinds whenever the key's
// indexes are not "*" (crates/index-scheduler/src/queue/tasks.rs:474-480;
// crates/meilisearch-auth/src/lib.rs:205-212), so GET /tasks/{swap}
// answers 404 task_not_found (crates/meilisearch/src/routes/tasks.rs:
// 637-646); v1.50.0 does the same. The swap itself runs. So when the task
// is not visible, the swap is confirmed by what the key can see:
//
//  1. Before the swap, the creation time of every index (GET
//     /indexes/{uid}, createdAt). It belongs to the index, not to its
//     name: a swap exchanges the names' UUIDs in the index mapper
//     (crates/index-scheduler/src/index_mapper/mod.rs:513-527), and
//     createdAt is read from the index itself
//     (crates/meilisearch/src/routes/indexes/mod.rs:106).
//  2. After it, an empty document deletion on the first live index (a
//     task tied to one index, which the key sees; Meilisearch accepts an
//     empty batch: crates/meilisearch/tests/documents/delete_documents.rs,
//     delete_no_document_batch). Tasks run from the oldest enqueued one
//     (crates/index-scheduler/src/scheduler/create_batch.rs:547-565), and
//     a batch of an index's tasks stops at a swap of that index
//     (scheduler/autobatcher.rs:291): when that later task has ended, the
//     swap has been processed.
//  3. Then every live name must hold the index its partner held before;
//     otherwise the swap failed (its error is not visible to the key) and
//     the rebuild fails as it would with the task's error.
//
// With a key that sees the task (the master key, or indexes "*"), the
// task's own status decides, as for every other task.
func (e *Engine) swapIndexes(ctx context.Context, pairs [][2]string) error {
	params := make([]*meilisearch.SwapIndexesParams, len(pairs))
	names := make([]string, len(pairs))
	for i, p := range pairs {
		params[i] = &meilisearch.SwapIndexesParams{Indexes: []string{p[0], p[1]}}
		names[i] = p[0] + " and " + p[1]
	}
	op := "swap indexes " + strings.Join(names, ", ")
	created := map[string]time.Time{}
	for _, p := range pairs {
		for _, uid := range p {
			info, err := e.client.GetIndexWithContext(ctx, uid)
			if err != nil {
				return e.fail(op+": read index "+uid, err)
			}
			created[uid] = info.CreatedAt
		}
		if created[p[0]].Equal(created[p[1]]) {
			return fmt.Errorf("meili: %s: both were created at %s: the swap could not be confirmed", op, created[p[0]])
		}
	}
	info, err := e.client.SwapIndexesWithContext(ctx, params)
	if err != nil {
		return e.fail(op, err)
	}
	task, err := e.waitTask(ctx, op, info.TaskUID)
	switch {
	case err == nil:
		return taskResult(op, info.TaskUID, task)
	case apiCode(err) != "task_not_found":
		return err
	}
	marker, err := e.client.Index(pairs[0][0]).DeleteDocumentsWithContext(ctx, []string{}, nil)
	if err := e.await(ctx, op+": confirm the swap (task "+strconv.FormatInt(info.TaskUID, 10)+" is not visible to this key)", marker, err); err != nil {
		return err
	}
	for _, p := range pairs {
		now, err := e.client.GetIndexWithContext(ctx, p[0])
		if err != nil {
			return e.fail(op+": read index "+p[0], err)
		}
		if !now.CreatedAt.Equal(created[p[1]]) {
			return &TaskError{
				Op: op, TaskUID: info.TaskUID, Type: string(meilisearch.TaskTypeIndexSwap), Status: "not applied",
				Code:    "swap_not_applied",
				Message: fmt.Sprintf("%s still holds the index created at %s, not %s's (created at %s); the task's own status is not visible to this key", p[0], now.CreatedAt, p[1], created[p[1]]),
			}
		}
	}
	return nil
}

// DeleteIndex deletes the index uid and waits for the deletion; an index
// that does not exist is not an error.
func (e *Engine) DeleteIndex(ctx context.Context, uid string) error {
	task, err := e.client.DeleteIndexWithContext(ctx, uid)
	err = e.await(ctx, "delete index "+uid, task, err)
	var te *TaskError
	if errors.As(err, &te) && te.Code == "index_not_found" {
		return nil
	}
	return err
}
