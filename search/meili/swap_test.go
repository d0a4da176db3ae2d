package meili

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// TestTaskVisibilityPerKey: Meilisearch hides a swap task from a key
// limited to some indexes (and from any task list filtered by index), and
// hides the tasks of other indexes from it; the master key sees them. The
// same table runs against the fake (which must follow the rule) and a
// real server.
func TestTaskVisibilityPerKey(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	ctx := t.Context()
	key, err := EnsureServiceKey(ctx, tg.url, tg.master, tg.prefix)
	if err != nil {
		t.Fatal(err)
	}
	enqueue := func(path string, body any) int64 {
		t.Helper()
		var info struct {
			TaskUID int64 `json:"taskUid"`
		}
		if status := tg.call(ctx, tg.master, http.MethodPost, path, body, &info); status != 202 {
			t.Fatalf("POST %s: %d", path, status)
		}
		return info.TaskUID
	}
	a, b, other := tg.prefix+"a", tg.prefix+"b", "other_"+tg.prefix+"c"
	createA := enqueue("/indexes", map[string]any{"uid": a, "primaryKey": "id"})
	enqueue("/indexes", map[string]any{"uid": b, "primaryKey": "id"})
	createOther := enqueue("/indexes", map[string]any{"uid": other, "primaryKey": "id"})
	t.Cleanup(func() { tg.call(t.Context(), tg.master, http.MethodDelete, "/indexes/"+other, nil, nil) })
	swap := enqueue("/swap-indexes", []any{map[string]any{"indexes": []string{a, b}}})
	if status := tg.waitTask(t, tg.master, swap); status != "succeeded" {
		t.Fatalf("swap %s", status)
	}

	tests := []struct {
		name string
		key  string
		uid  int64
		want int
	}{
		{"master key, swap", tg.master, swap, 200},
		{"service key, swap", key, swap, 404},
		{"service key, creation of its index", key, createA, 200},
		{"service key, creation of another index", key, createOther, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			status := tg.call(ctx, tt.key, http.MethodGet, fmt.Sprintf("/tasks/%d", tt.uid), nil, &body)
			if status != tt.want {
				t.Fatalf("GET /tasks/%d: %d %v, want %d", tt.uid, status, body, tt.want)
			}
			if status == 404 && body["code"] != "task_not_found" {
				t.Errorf("code %v", body["code"])
			}
		})
	}
	// A list filtered by index leaves the swap out, even for the master key.
	var list struct {
		Results []struct {
			UID  int64  `json:"uid"`
			Type string `json:"type"`
		} `json:"results"`
	}
	if status := tg.call(ctx, tg.master, http.MethodGet, "/tasks?indexUids="+a, nil, &list); status != 200 {
		t.Fatalf("list: %d", status)
	}
	for _, task := range list.Results {
		if task.UID == swap {
			t.Errorf("the swap is listed by index: %+v", list.Results)
		}
	}
}

// TestRebuildWithTheServiceKey: a rebuild commits with the key the service
// creates for itself, which cannot see the swap task; the swap is
// confirmed by the indexes' creation times after a later task of the live
// index, the attribute scheme is recorded, and the live index serves the
// rebuilt documents.
func TestRebuildWithTheServiceKey(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	key, err := EnsureServiceKey(t.Context(), tg.url, tg.master, tg.prefix)
	if err != nil {
		t.Fatal(err)
	}
	e := tg.engine(t, key, Options{Languages: testLangs})
	r := rebuildOneOverTwo(t, e)
	if tg.fake != nil {
		tg.fake.Reset()
	}
	if err := r.Commit(t.Context()); err != nil {
		t.Fatalf("Commit with the service key: %v", err)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 1 {
		t.Fatalf("live events after the rebuild: %d, %v", n, err)
	}
	res, err := e.SearchEvents(t.Context(), search.EventQuery{Limit: 10})
	if err != nil || !slices.Equal(res.IDs, []int64{7}) {
		t.Fatalf("live events %v, %v", res.IDs, err)
	}
	// The scheme was recorded: the next start does not rebuild again.
	again := tg.engine(t, key, Options{Languages: testLangs})
	if err := again.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	if outdated, _ := again.Outdated(t.Context()); outdated {
		t.Error("outdated after a committed rebuild")
	}
	if tg.fake == nil {
		return
	}
	// The swap was confirmed through a task of the live index: an empty
	// deletion.
	deletes := tg.fake.Calls(http.MethodPost, "/indexes/calendar_events/documents/delete-batch")
	if len(deletes) != 1 || !reflect.DeepEqual(deletes[0].Body, []any{}) {
		t.Errorf("confirmation %+v", deletes)
	}
}

// rebuildOneOverTwo starts e with live events 1 and 2 and returns an open
// rebuild that has written event 7.
func rebuildOneOverTwo(t *testing.T, e *Engine) search.Rebuild {
	t.Helper()
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 1}, {ID: 2}}); err != nil {
		t.Fatal(err)
	}
	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.IndexEvents(t.Context(), []search.EventDocument{{ID: 7}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRebuildSwapNotApplied: a swap that fails where the key cannot see
// it (the fake fails it) is a failed Commit, and the live index keeps its
// documents.
func TestRebuildSwapNotApplied(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	f.Emulate = true
	key, err := EnsureServiceKey(t.Context(), f.srv.URL, "master-key", "")
	if err != nil {
		t.Fatal(err)
	}
	e := f.engineWithKey(key, Options{Languages: testLangs})
	r := rebuildOneOverTwo(t, e)
	f.Mu.Lock()
	f.FailTasks["indexSwap"] = meilisim.NewAPIError("index_not_found", "Index `x` not found.")
	f.Mu.Unlock()
	err = r.Commit(t.Context())
	var te *TaskError
	if !errors.As(err, &te) || te.Code != "swap_not_applied" {
		t.Fatalf("Commit: %v, want a swap_not_applied TaskError", err)
	}
	if n, err := e.CountEvents(t.Context()); err != nil || n != 2 {
		t.Fatalf("live events: %d, %v", n, err)
	}
}
