package meili

import (
	"context"
	"errors"
	"strings"

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
	return &Engine{client: e.client, opts: opts, vocab: e.vocabulary()}, nil
}

// SwapIndexes atomically exchanges the documents, settings and task
// history of the indexes a and b (both must exist) and waits for the swap
// to succeed.
func (e *Engine) SwapIndexes(ctx context.Context, a, b string) error {
	return e.swapIndexes(ctx, [][2]string{{a, b}})
}

// swapIndexes exchanges every pair in one request, which Meilisearch
// applies as one atomic task: a search sees all pairs swapped or none.
func (e *Engine) swapIndexes(ctx context.Context, pairs [][2]string) error {
	params := make([]*meilisearch.SwapIndexesParams, len(pairs))
	names := make([]string, len(pairs))
	for i, p := range pairs {
		params[i] = &meilisearch.SwapIndexesParams{Indexes: []string{p[0], p[1]}}
		names[i] = p[0] + " and " + p[1]
	}
	task, err := e.client.SwapIndexesWithContext(ctx, params)
	return e.await(ctx, "swap indexes "+strings.Join(names, ", "), task, err)
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
