package meili

import (
	"context"
	"fmt"
	"strconv"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// taskWaiter waits for the server's asynchronous tasks (GET /tasks).
type taskWaiter struct{ *core }

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
//
// The task list is read page by page (settingsTaskPage tasks at a time,
// following next; GET /tasks answers 20 tasks unless told otherwise), so
// that every pending update is found however many there are. The tasks
// come newest first, and the newest is awaited first: Meilisearch
// processes the tasks of one index in order, so the older ones have
// usually ended by then and cost one poll each.
func (e *taskWaiter) awaitSettingsTasks(ctx context.Context, uid string) error {
	pending, err := e.pendingSettingsTasks(ctx, uid)
	if err != nil {
		return err
	}
	for _, t := range pending {
		op := "wait for the pending settings update of " + uid
		if _, err := e.waitTask(ctx, op, t); err != nil {
			return err
		}
	}
	return nil
}

// settingsTaskPage is the number of tasks asked for per GET /tasks.
const settingsTaskPage = 100

// pendingSettingsTasks lists the uids of the settings updates enqueued or
// processing on index uid, newest first, reading every page of the list.
func (e *taskWaiter) pendingSettingsTasks(ctx context.Context, uid string) ([]int64, error) {
	query := &meilisearch.TasksQuery{
		IndexUIDS: []string{uid},
		Types:     []meilisearch.TaskType{meilisearch.TaskTypeSettingsUpdate},
		Statuses:  []meilisearch.TaskStatus{meilisearch.TaskStatusEnqueued, meilisearch.TaskStatusProcessing},
		Limit:     settingsTaskPage,
	}
	var uids []int64
	for {
		res, err := e.client.GetTasksWithContext(ctx, query)
		if err != nil {
			return nil, e.fail("list pending settings tasks of "+uid, err)
		}
		for _, t := range res.Results {
			uids = append(uids, t.UID)
		}
		// next is null (read as 0) after the last page. A full page whose
		// next reads 0 may also mean that task 0 comes next; the client
		// cannot send from=0 (it leaves a zero out), so that one task is
		// asked for by its uid.
		last := int64(-1)
		if n := len(res.Results); n > 0 {
			last = res.Results[n-1].UID
		}
		switch {
		case len(res.Results) < settingsTaskPage || last <= 0:
			return uids, nil
		case res.Next > 0 && res.Next < last:
			query.From = res.Next
		case res.Next == 0 && last == 1:
			query.From, query.UIDS = 0, []int64{0}
		default:
			return uids, nil
		}
	}
}

// waitTask polls task uid until it ends or TaskTimeout passes (then the
// error wraps search.ErrUnavailable) and returns the ended task.
func (e *taskWaiter) waitTask(ctx context.Context, op string, uid int64) (*meilisearch.Task, error) {
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
