package meili

import (
	"context"
	"fmt"
	"strconv"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// awaitSettingsTasks waits until no settings update is queued or running
// on index uid, whoever sent it. ensureIndex calls it before it reads the
// live settings, so that:
//
//   - it compares against the settings the index is about to have, not
//     those it had before an update still in the queue, and
//   - a retry never stacks another update behind one that is still running:
//     a settings change on a large index re-indexes every document and may
//     outlast TaskTimeout; the attempt that sent it then fails with
//     search.ErrUnavailable, and the next attempt waits for that same task
//     (again up to TaskTimeout) instead of queueing a copy of it.
//
// The final status of those tasks is not checked here: ensureIndex reads
// the settings afterwards and sends (and checks) its own update if they
// still differ.
func (e *Engine) awaitSettingsTasks(ctx context.Context, uid string) error {
	res, err := e.client.GetTasksWithContext(ctx, &meilisearch.TasksQuery{
		IndexUIDS: []string{uid},
		Types:     []meilisearch.TaskType{meilisearch.TaskTypeSettingsUpdate},
		Statuses:  []meilisearch.TaskStatus{meilisearch.TaskStatusEnqueued, meilisearch.TaskStatusProcessing},
	})
	if err != nil {
		return e.fail("list pending settings tasks of "+uid, err)
	}
	for _, t := range res.Results {
		op := "wait for the pending settings update of " + uid
		if _, err := e.waitTask(ctx, op, t.UID); err != nil {
			return err
		}
	}
	return nil
}

// waitTask polls task uid until it ends or TaskTimeout passes (then the
// error wraps search.ErrUnavailable) and returns the ended task.
func (e *Engine) waitTask(ctx context.Context, op string, uid int64) (*meilisearch.Task, error) {
	wctx, cancel := context.WithTimeout(ctx, e.opts.TaskTimeout)
	defer cancel()
	task, err := e.client.WaitForTaskWithContext(wctx, uid, e.opts.TaskPollInterval)
	if err != nil {
		if ctx.Err() == nil && wctx.Err() != nil {
			return nil, fmt.Errorf("%w: meili: %s: task %d not finished after %s", search.ErrUnavailable, op, uid, e.opts.TaskTimeout)
		}
		return nil, e.fail(op+": wait for task "+strconv.FormatInt(uid, 10), err)
	}
	return task, nil
}
