package meilisim

// Tasks: registration, the task routes and which tasks a key sees.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// oneIndexKinds are the task types tied to exactly one index
// (Kind::related_to_one_index, crates/meilisearch-types/src/tasks.rs:
// 582-599 at v1.18.0).
var oneIndexKinds = []string{
	"documentAdditionOrUpdate", "documentEdition", "documentDeletion", "settingsUpdate",
	"indexCreation", "indexDeletion", "indexUpdate",
}

// taskQueue enqueues tasks and answers the task routes (GET /tasks).
type taskQueue struct{ *Server }

// TaskVisible is Meilisearch's rule for which tasks a request sees
// (get_tasks_from_authorized_indexes, crates/index-scheduler/src/queue/
// tasks.rs:474-490): when the request filters by index (byIndex) or its
// key is limited to some indexes, the tasks not tied to exactly one index
// are dropped; with a limited key, so are the tasks of other indexes. The
// caller holds f.Mu.
func (f *taskQueue) TaskVisible(auth string, task *Task, byIndex bool) bool {
	var patterns []string
	all := true
	for _, k := range f.Keys {
		if "Bearer "+fmt.Sprint(k["key"]) != auth {
			continue
		}
		all = false
		list, _ := k["indexes"].([]any)
		for _, p := range list {
			patterns = append(patterns, fmt.Sprint(p))
			all = all || p == "*"
		}
	}
	typ, _ := task.Summary["type"].(string)
	if (byIndex || !all) && !slices.Contains(oneIndexKinds, typ) {
		return false
	}
	if all {
		return true
	}
	index, _ := task.Summary["indexUid"].(string)
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(index, prefix) || p == index {
			return true
		}
	}
	return false
}

// Enqueue registers a task whose effect has been decided (apply returns
// the error that fails it, if any) and answers with its summary.
func (f *taskQueue) Enqueue(w http.ResponseWriter, typ string, index any, apply func() *APIError) {
	f.enqueue(w, typ, index, false, apply)
}

// Enqueue registers a task and answers 202 with its summary; the
// scheduler (scheduler.go) applies it later. byFilter marks a deletion by
// filter, which the autobatcher keeps apart from document additions.
func (f *taskQueue) enqueue(w http.ResponseWriter, typ string, index any, byFilter bool, apply func() *APIError) {
	f.enqueueTask(w, typ, index, byFilter, apply, func(*Task) {})
}

// enqueueTask is enqueue with describe filling in the task's description
// (Task.Bytes, Task.IDs) before it is queued.
func (f *taskQueue) enqueueTask(w http.ResponseWriter, typ string, index any, byFilter bool, apply func() *APIError, describe func(*Task)) {
	f.Mu.Lock()
	uid := f.NextTask
	f.NextTask++
	task := &Task{Final: "succeeded", Status: "enqueued", Batch: -1, kind: autobatchKindOf(typ, byFilter), apply: apply}
	describe(task)
	task.index, _ = index.(string)
	if e, ok := f.FailTasks[typ]; ok {
		task.forced = &e
	}
	if n := f.BusyTasks[typ]; n > 0 && task.forced == nil {
		// A task the test holds "processing" for n polls beyond the
		// first: it bypasses the queue and takes effect when it ends.
		task.Busy, task.Pending, task.held = n, apply, true
	}
	task.Summary = map[string]any{
		"taskUid": uid, "indexUid": index, "status": "enqueued", "type": typ,
		"enqueuedAt": "2025-01-01T00:00:00.000000Z",
	}
	f.Tasks[uid] = task
	if !task.held {
		f.queue = append(f.queue, uid)
		f.wake()
	}
	if f.enqueued != nil {
		close(f.enqueued)
		f.enqueued = nil
	}
	f.Mu.Unlock()
	f.Reply(w, 202, task.Summary)
}

// GetTask answers GET /tasks/{uid}.
func (f *taskQueue) GetTask(w http.ResponseWriter, r *http.Request) {
	uid, _ := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	f.Mu.Lock()
	task, ok := f.Tasks[uid]
	ok = ok && f.TaskVisible(r.Header.Get("Authorization"), task, false)
	var answer map[string]any
	step := false
	if ok {
		task.Polls++
		answer = f.TaskObject(uid, task)
		step = f.StepOnPoll && f.paused && (answer["status"] == "enqueued" || answer["status"] == "processing")
	}
	f.Mu.Unlock()
	if !ok {
		f.Reply(w, 404, NewAPIError("task_not_found", fmt.Sprintf("Task `%d` not found.", uid)))
		return
	}
	f.Reply(w, 200, answer)
	if step {
		f.Step()
	}
}

// FinishTasks lets every busy task end at its next poll.
func (f *taskQueue) FinishTasks() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for _, task := range f.Tasks {
		task.Busy = 0
	}
	clear(f.BusyTasks)
}

// TaskStatus is a task's status now: "enqueued" until first polled, then
// "processing" for 1+busy polls (or for ever when stuck), then final. The
// caller holds f.Mu.
func (f *taskQueue) TaskStatus(task *Task) string {
	if task.held {
		switch {
		case task.Polls == 0:
			return "enqueued"
		case task.Polls <= 1+task.Busy || f.Stuck:
			return "processing"
		}
		return task.Final
	}
	if f.Stuck && task.Status != "enqueued" {
		return "processing"
	}
	return task.Status
}

// TaskObject renders a task as GET /tasks/{uid} does; the caller holds f.Mu.
func (f *taskQueue) TaskObject(uid int64, task *Task) map[string]any {
	status := f.TaskStatus(task)
	if status != "processing" && status != "enqueued" && task.Pending != nil {
		if e := task.Pending(); e != nil {
			task.Final, task.Err = "failed", e
		}
		task.Pending = nil
		task.Status = task.Final
		status = task.Final
	}
	answer := map[string]any{
		"uid": uid, "indexUid": task.Summary["indexUid"], "status": status, "type": task.Summary["type"],
		"details": map[string]any{}, "error": nil, "canceledBy": nil, "duration": nil,
		"enqueuedAt": "2025-01-01T00:00:00.000000Z", "startedAt": "2025-01-01T00:00:00.001000Z", "finishedAt": nil,
	}
	if status != "processing" && status != "enqueued" {
		answer["duration"], answer["finishedAt"] = "PT0.001S", "2025-01-01T00:00:00.002000Z"
		if task.Err != nil {
			answer["error"] = task.Err
		}
	}
	return answer
}

// ListTasks answers GET /tasks with the indexUids, types and statuses
// filters (comma-separated lists), newest first.
func (f *taskQueue) ListTasks(w http.ResponseWriter, r *http.Request) {
	filter := func(name string) func(string) bool {
		v := r.URL.Query().Get(name)
		if v == "" {
			return func(string) bool { return true }
		}
		list := strings.Split(v, ",")
		return func(s string) bool { return slices.Contains(list, s) }
	}
	byIndex, byType, byStatus := filter("indexUids"), filter("types"), filter("statuses")
	indexFilter := r.URL.Query().Get("indexUids") != ""
	f.Mu.Lock()
	results := []map[string]any{}
	for uid := f.NextTask - 1; uid >= 0; uid-- {
		task := f.Tasks[uid]
		index, _ := task.Summary["indexUid"].(string)
		typ, _ := task.Summary["type"].(string)
		if !byIndex(index) || !byType(typ) || !f.TaskVisible(r.Header.Get("Authorization"), task, indexFilter) {
			continue
		}
		// taskObject applies the effect of a task that has just ended.
		if obj := f.TaskObject(uid, task); byStatus(obj["status"].(string)) {
			results = append(results, obj)
		}
	}
	f.Mu.Unlock()
	// Paging as crates/meilisearch/src/routes/tasks.rs (v1.18.0): limit
	// (default 20) tasks from the uid from (inclusive, default the
	// newest), next the uid of the first task after the page (null when
	// there is none); total counts every task matching the filters.
	total := len(results)
	limit := 20
	if v, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && v >= 0 {
		limit = v
	}
	if v, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64); err == nil {
		i := 0
		for i < len(results) && results[i]["uid"].(int64) > v {
			i++
		}
		results = results[i:]
	}
	var from, next any
	if len(results) > 0 {
		from = results[0]["uid"]
	}
	if len(results) > limit {
		next = results[limit]["uid"]
		results = results[:limit]
	}
	f.Reply(w, 200, map[string]any{"results": results, "total": total, "limit": limit, "from": from, "next": next})
}
