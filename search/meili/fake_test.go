package meili

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
)

// fakeMeili emulates the Meilisearch HTTP API just enough for the contract
// tests: it records every request and answers in the documented shapes.
//
//   - Writes answer 202 with a summarized task
//     {taskUid, indexUid, status: "enqueued", type, enqueuedAt}
//     (https://www.meilisearch.com/docs/reference/api/tasks#summarized-task-objects);
//     their effect is applied at once, and GET /tasks/{uid} reports the task
//     "processing" on the first poll, then "succeeded" or "failed" with an
//     error object {message, code, type, link}.
//   - Searches answer {hits, query, processingTimeMs, hitsPerPage, page,
//     totalPages, totalHits} when page or hitsPerPage is given, else
//     {hits, query, processingTimeMs, limit, offset, estimatedTotalHits}.
//   - A missing index answers 404 with code index_not_found.
//   - Tasks are visible by Meilisearch's rule (fakeMeili.taskVisible): a
//     key created through POST /keys whose indexes are not "*" sees only
//     the tasks tied to exactly one of its indexes (never a swap); any
//     other Authorization (the master key, "test-key") sees every task.
//   - Every index has its own createdAt, which moves with it in a swap.
type fakeMeili struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []recorded
	indexes  map[string]*fakeIndex
	tasks    map[int64]*fakeTask
	nextTask int64

	// failTasks makes the tasks of a type fail with the given error.
	failTasks map[string]apiError
	// intercept, when it returns ok, answers a request instead of the
	// emulation (to simulate 5xx answers, for example).
	intercept func(r *http.Request) (status int, body any, ok bool)
	// hits returns every document matching a search request body, in
	// order; the fake pages them. By default: none, or, with emulate, the
	// stored documents that emulateSearch finds.
	hits    func(index string, body map[string]any) []map[string]any
	emulate bool
	// geoCos, when set, replaces math.Cos in the emulated _geoRadius
	// distance, to stand for another C library's cos (see fakeDistanceM).
	geoCos func(float64) float64
	// stuck keeps every task "processing".
	stuck bool
	// busyTasks makes the tasks of a type stay "processing" for that many
	// polls beyond the first, their effect applied only when they end.
	busyTasks map[string]int
	// keys are the API keys by UID (POST /keys, GET and DELETE /keys/{uid}).
	keys map[string]map[string]any
	// version is the pkgVersion GET /version reports (MinVersion at first).
	version string
	// served counts the hits the fake's searches have answered with.
	served int
	// created counts the indexes created, for their createdAt.
	created int
}

type recorded struct {
	Method string
	Path   string
	Query  string
	Auth   string
	Body   any
}

type fakeIndex struct {
	// createdAt belongs to the index (a swap moves it with the documents).
	createdAt  string
	primaryKey string
	settings   map[string]any
	docs       map[string]map[string]any
	// internal numbers the documents as Meilisearch's internal document
	// IDs do: a new document takes the smallest number no document holds
	// (milli's AvailableIds), a replaced one keeps its number. Distinct
	// facets depend on it (emulateDistinct). used holds the numbers taken
	// and low is at most the smallest free one.
	internal map[string]uint32
	used     map[uint32]bool
	low      uint32
	// writes counts the changes to docs and settings; words caches the
	// index's sorted word list (wordList) as of wordsAt writes.
	writes  int
	words   []string
	wordsAt int
}

type fakeTask struct {
	summary map[string]any
	final   string
	err     *apiError
	polls   int
	// busy is how many polls beyond the first still see the task
	// "processing" (a long settings update on a large index).
	busy int
	// pending, when set, is the task's effect, applied when the task ends
	// (the emulation applies other tasks' effects at once).
	pending func() *apiError
}

type apiError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	Type    string `json:"type"`
	Link    string `json:"link"`
}

func newAPIError(code, message string) apiError {
	typ := "invalid_request"
	if code == "internal" {
		typ = "internal"
	}
	return apiError{Message: message, Code: code, Type: typ, Link: "https://docs.meilisearch.com/errors#" + code}
}

func newFakeMeili(t *testing.T) *fakeMeili {
	f := &fakeMeili{t: t, version: MinVersion, indexes: map[string]*fakeIndex{}, tasks: map[int64]*fakeTask{}, failTasks: map[string]apiError{}, busyTasks: map[string]int{}, keys: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		f.reply(w, 200, map[string]any{"status": "available"})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		v := f.version
		f.mu.Unlock()
		f.reply(w, 200, map[string]any{"commitSha": "0000000", "commitDate": "2025-01-01T00:00:00Z", "pkgVersion": v})
	})
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		body, _ := bodyOf(r).(map[string]any)
		uid, _ := body["uid"].(string)
		f.mu.Lock()
		_, exists := f.keys[uid]
		key := map[string]any{}
		if !exists {
			for k, v := range body {
				key[k] = v
			}
			key["key"] = "key-of-" + uid // Meilisearch: HMAC of the UID with the master key
			key["createdAt"], key["updatedAt"] = "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"
			f.keys[uid] = key
		}
		f.mu.Unlock()
		if exists {
			f.reply(w, 409, newAPIError("api_key_already_exists", "`uid` field value `"+uid+"` is already an existing API key."))
			return
		}
		f.reply(w, 201, key)
	})
	mux.HandleFunc("GET /keys/{uid}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		key, ok := f.keys[r.PathValue("uid")]
		f.mu.Unlock()
		if !ok {
			f.reply(w, 404, newAPIError("api_key_not_found", "API key `"+r.PathValue("uid")+"` not found."))
			return
		}
		f.reply(w, 200, key)
	})
	mux.HandleFunc("DELETE /keys/{uid}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		_, ok := f.keys[r.PathValue("uid")]
		delete(f.keys, r.PathValue("uid"))
		f.mu.Unlock()
		if !ok {
			f.reply(w, 404, newAPIError("api_key_not_found", "API key `"+r.PathValue("uid")+"` not found."))
			return
		}
		w.WriteHeader(204)
	})
	mux.HandleFunc("GET /indexes/{uid}", f.getIndex)
	mux.HandleFunc("POST /indexes", f.createIndex)
	mux.HandleFunc("DELETE /indexes/{uid}", f.deleteIndex)
	mux.HandleFunc("GET /indexes/{uid}/settings", f.getSettings)
	mux.HandleFunc("PATCH /indexes/{uid}/settings", f.updateSettings)
	mux.HandleFunc("POST /indexes/{uid}/documents", f.addDocuments)
	mux.HandleFunc("GET /indexes/{uid}/documents/{id}", f.getDocument)
	mux.HandleFunc("POST /indexes/{uid}/documents/delete-batch", f.deleteDocuments)
	mux.HandleFunc("POST /indexes/{uid}/documents/delete", f.deleteByFilter)
	mux.HandleFunc("POST /indexes/{uid}/search", f.search)
	mux.HandleFunc("POST /multi-search", f.multiSearch)
	mux.HandleFunc("GET /indexes/{uid}/stats", f.stats)
	mux.HandleFunc("POST /swap-indexes", f.swapIndexes)
	mux.HandleFunc("GET /tasks/{uid}", f.getTask)
	mux.HandleFunc("GET /tasks", f.listTasks)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Errorf("fake meili: %s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
			}
		}
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
		intercept := f.intercept
		f.mu.Unlock()
		if intercept != nil {
			if status, answer, ok := intercept(r); ok {
				f.reply(w, status, answer)
				return
			}
		}
		r = r.WithContext(withBody(r.Context(), body))
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// defaultSettings are the settings of a new index (Meilisearch defaults).
func defaultSettings() map[string]any {
	return map[string]any{
		"displayedAttributes":  []any{"*"},
		"searchableAttributes": []any{"*"},
		"filterableAttributes": []any{},
		"sortableAttributes":   []any{},
		"rankingRules":         []any{"words", "typo", "proximity", "attribute", "sort", "exactness"},
		"stopWords":            []any{},
		"nonSeparatorTokens":   []any{},
		"separatorTokens":      []any{},
		"dictionary":           []any{},
		"synonyms":             map[string]any{},
		"distinctAttribute":    nil,
		"proximityPrecision":   "byWord",
		"typoTolerance": map[string]any{
			"enabled":             true,
			"minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
			"disableOnWords":      []any{},
			"disableOnAttributes": []any{},
			"disableOnNumbers":    false,
		},
		"faceting":            map[string]any{"maxValuesPerFacet": 100, "sortFacetValuesBy": map[string]any{"*": "alpha"}},
		"pagination":          map[string]any{"maxTotalHits": 1000},
		"embedders":           map[string]any{},
		"searchCutoffMs":      nil,
		"localizedAttributes": nil,
		"facetSearch":         true,
		"prefixSearch":        "indexingTime",
	}
}

// addIndex creates an index directly, with the given settings merged over
// the defaults.
func (f *fakeMeili) addIndex(uid string, settings map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := defaultSettings()
	if settings != nil {
		for k, v := range jsonValue(f.t, settings).(map[string]any) {
			s[k] = v
		}
	}
	f.indexes[uid] = f.newIndex("id")
	f.indexes[uid].settings = s
}

// newIndex returns an empty index with the default settings, created now
// (each index a nanosecond after the previous one). The caller holds f.mu.
func (f *fakeMeili) newIndex(primaryKey string) *fakeIndex {
	f.created++
	at := time.Date(2025, 1, 1, 0, 0, 0, f.created, time.UTC).Format(time.RFC3339Nano)
	return &fakeIndex{createdAt: at, primaryKey: primaryKey, settings: defaultSettings(), docs: map[string]map[string]any{}, internal: map[string]uint32{}, used: map[uint32]bool{}}
}

// put stores a document under its primary key value, numbering it.
func (ix *fakeIndex) put(doc map[string]any) {
	pk := ix.primaryKey
	if pk == "" {
		pk = "id"
	}
	key := fmt.Sprint(doc[pk])
	ix.docs[key] = doc
	if _, ok := ix.internal[key]; ok {
		return
	}
	for ix.used[ix.low] {
		ix.low++
	}
	ix.internal[key], ix.used[ix.low] = ix.low, true
}

// remove deletes the document stored under key.
func (ix *fakeIndex) remove(key string) {
	if n, ok := ix.internal[key]; ok {
		delete(ix.used, n)
		ix.low = min(ix.low, n)
	}
	delete(ix.docs, key)
	delete(ix.internal, key)
}

// keyOf returns the primary key value of a stored document.
func (ix *fakeIndex) keyOf(doc map[string]any) string {
	pk := ix.primaryKey
	if pk == "" {
		pk = "id"
	}
	return fmt.Sprint(doc[pk])
}

// oneIndexKinds are the task types tied to exactly one index
// (Kind::related_to_one_index, crates/meilisearch-types/src/tasks.rs:
// 582-599 at v1.18.0).
var oneIndexKinds = []string{
	"documentAdditionOrUpdate", "documentEdition", "documentDeletion", "settingsUpdate",
	"indexCreation", "indexDeletion", "indexUpdate",
}

// taskVisible is Meilisearch's rule for which tasks a request sees
// (get_tasks_from_authorized_indexes, crates/index-scheduler/src/queue/
// tasks.rs:474-490): when the request filters by index (byIndex) or its
// key is limited to some indexes, the tasks not tied to exactly one index
// are dropped; with a limited key, so are the tasks of other indexes. The
// caller holds f.mu.
func (f *fakeMeili) taskVisible(auth string, task *fakeTask, byIndex bool) bool {
	var patterns []string
	all := true
	for _, k := range f.keys {
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
	typ, _ := task.summary["type"].(string)
	if (byIndex || !all) && !slices.Contains(oneIndexKinds, typ) {
		return false
	}
	if all {
		return true
	}
	index, _ := task.summary["indexUid"].(string)
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(index, prefix) || p == index {
			return true
		}
	}
	return false
}

func (f *fakeMeili) reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(body); err != nil {
		f.t.Errorf("fake meili: encode answer: %v", err)
	}
}

func (f *fakeMeili) notFound(w http.ResponseWriter, uid string) {
	f.reply(w, 404, indexNotFound(uid))
}

// indexNotFound is Meilisearch's error for a missing index.
func indexNotFound(uid string) *apiError {
	e := newAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
	return &e
}

// pathIndex returns the index the request's path names; when there is none
// it answers 404 and returns nil.
func (f *fakeMeili) pathIndex(w http.ResponseWriter, r *http.Request) (string, *fakeIndex) {
	uid := r.PathValue("uid")
	ix := f.index(uid)
	if ix == nil {
		f.notFound(w, uid)
	}
	return uid, ix
}

// enqueue registers a task whose effect has been decided (apply returns
// the error that fails it, if any) and answers with its summary.
func (f *fakeMeili) enqueue(w http.ResponseWriter, typ string, index any, apply func() *apiError) {
	f.mu.Lock()
	uid := f.nextTask
	f.nextTask++
	task := &fakeTask{final: "succeeded"}
	if e, ok := f.failTasks[typ]; ok {
		task.final, task.err = "failed", &e
	} else if n := f.busyTasks[typ]; n > 0 {
		task.busy, task.pending = n, apply
	} else if e := apply(); e != nil {
		task.final, task.err = "failed", e
	}
	task.summary = map[string]any{
		"taskUid": uid, "indexUid": index, "status": "enqueued", "type": typ,
		"enqueuedAt": "2025-01-01T00:00:00.000000Z",
	}
	f.tasks[uid] = task
	f.mu.Unlock()
	f.reply(w, 202, task.summary)
}

func (f *fakeMeili) getTask(w http.ResponseWriter, r *http.Request) {
	uid, _ := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	f.mu.Lock()
	task, ok := f.tasks[uid]
	ok = ok && f.taskVisible(r.Header.Get("Authorization"), task, false)
	var answer map[string]any
	if ok {
		task.polls++
		answer = f.taskObject(uid, task)
	}
	f.mu.Unlock()
	if !ok {
		f.reply(w, 404, newAPIError("task_not_found", fmt.Sprintf("Task `%d` not found.", uid)))
		return
	}
	f.reply(w, 200, answer)
}

// finishTasks lets every busy task end at its next poll.
func (f *fakeMeili) finishTasks() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, task := range f.tasks {
		task.busy = 0
	}
	clear(f.busyTasks)
}

// taskStatus is a task's status now: "enqueued" until first polled, then
// "processing" for 1+busy polls (or for ever when stuck), then final. The
// caller holds f.mu.
func (f *fakeMeili) taskStatus(task *fakeTask) string {
	switch {
	case task.polls == 0:
		return "enqueued"
	case task.polls <= 1+task.busy || f.stuck:
		return "processing"
	}
	return task.final
}

// taskObject renders a task as GET /tasks/{uid} does; the caller holds f.mu.
func (f *fakeMeili) taskObject(uid int64, task *fakeTask) map[string]any {
	status := f.taskStatus(task)
	if status != "processing" && status != "enqueued" && task.pending != nil {
		if e := task.pending(); e != nil {
			task.final, task.err = "failed", e
		}
		task.pending = nil
		status = task.final
	}
	answer := map[string]any{
		"uid": uid, "indexUid": task.summary["indexUid"], "status": status, "type": task.summary["type"],
		"details": map[string]any{}, "error": nil, "canceledBy": nil, "duration": nil,
		"enqueuedAt": "2025-01-01T00:00:00.000000Z", "startedAt": "2025-01-01T00:00:00.001000Z", "finishedAt": nil,
	}
	if status != "processing" && status != "enqueued" {
		answer["duration"], answer["finishedAt"] = "PT0.001S", "2025-01-01T00:00:00.002000Z"
		if task.err != nil {
			answer["error"] = task.err
		}
	}
	return answer
}

// listTasks answers GET /tasks with the indexUids, types and statuses
// filters (comma-separated lists), newest first.
func (f *fakeMeili) listTasks(w http.ResponseWriter, r *http.Request) {
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
	f.mu.Lock()
	results := []map[string]any{}
	for uid := f.nextTask - 1; uid >= 0; uid-- {
		task := f.tasks[uid]
		index, _ := task.summary["indexUid"].(string)
		typ, _ := task.summary["type"].(string)
		if !byIndex(index) || !byType(typ) || !f.taskVisible(r.Header.Get("Authorization"), task, indexFilter) {
			continue
		}
		// taskObject applies the effect of a task that has just ended.
		if obj := f.taskObject(uid, task); byStatus(obj["status"].(string)) {
			results = append(results, obj)
		}
	}
	f.mu.Unlock()
	f.reply(w, 200, map[string]any{"results": results, "total": len(results), "limit": 20, "from": nil, "next": nil})
}

func (f *fakeMeili) index(uid string) *fakeIndex {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.indexes[uid]
}

func (f *fakeMeili) getIndex(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.pathIndex(w, r)
	if ix == nil {
		return
	}
	f.reply(w, 200, map[string]any{"uid": uid, "primaryKey": ix.primaryKey,
		"createdAt": ix.createdAt, "updatedAt": ix.createdAt})
}

func (f *fakeMeili) createIndex(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	uid, _ := body["uid"].(string)
	pk, _ := body["primaryKey"].(string)
	f.enqueue(w, "indexCreation", uid, func() *apiError {
		if _, ok := f.indexes[uid]; ok {
			e := newAPIError("index_already_exists", fmt.Sprintf("Index `%s` already exists.", uid))
			return &e
		}
		f.indexes[uid] = f.newIndex(pk)
		return nil
	})
}

func (f *fakeMeili) deleteIndex(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	f.enqueue(w, "indexDeletion", uid, func() *apiError {
		if _, ok := f.indexes[uid]; !ok {
			return indexNotFound(uid)
		}
		delete(f.indexes, uid)
		return nil
	})
}

func (f *fakeMeili) getSettings(w http.ResponseWriter, r *http.Request) {
	_, ix := f.pathIndex(w, r)
	if ix == nil {
		return
	}
	f.mu.Lock()
	answer := jsonValue(f.t, ix.settings)
	f.mu.Unlock()
	f.reply(w, 200, answer)
}

func (f *fakeMeili) updateSettings(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	f.enqueue(w, "settingsUpdate", uid, func() *apiError {
		ix, ok := f.indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		for k, v := range body {
			ix.settings[k] = v
		}
		ix.writes++
		return nil
	})
}

func (f *fakeMeili) addDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	docs, _ := bodyOf(r).([]any)
	f.enqueue(w, "documentAdditionOrUpdate", uid, func() *apiError {
		pk := r.URL.Query().Get("primaryKey")
		ix, ok := f.indexes[uid]
		if !ok {
			ix = f.newIndex(pk)
			f.indexes[uid] = ix
		}
		if ix.primaryKey == "" {
			ix.primaryKey = pk
		}
		if pk != "" && pk != ix.primaryKey {
			// Meilisearch refuses a primaryKey parameter that is not the
			// index's (index_primary_key_already_exists).
			e := newAPIError("index_primary_key_already_exists", fmt.Sprintf("Index `%s`: Index already has a primary key: `%s`.", uid, ix.primaryKey))
			return &e
		}
		for _, d := range docs {
			doc := d.(map[string]any)
			if _, ok := doc[ix.primaryKey]; !ok && ix.primaryKey != "" {
				e := newAPIError("missing_document_id", fmt.Sprintf("Document doesn't have a `%s` attribute: `%v`.", ix.primaryKey, doc))
				return &e
			}
		}
		for _, d := range docs {
			ix.put(d.(map[string]any))
		}
		ix.writes++
		return nil
	})
}

// deleteByFilter answers POST /indexes/{uid}/documents/delete: a
// documentDeletion task that removes the documents matching the filter
// (filterable attributes only, as Meilisearch requires).
func (f *fakeMeili) deleteByFilter(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	fs, _ := body["filter"].(string)
	f.enqueue(w, "documentDeletion", uid, func() *apiError {
		ix, ok := f.indexes[uid]
		if !ok {
			e := newAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
			return &e
		}
		var filterable []string
		list, _ := ix.settings["filterableAttributes"].([]any)
		for _, a := range list {
			filterable = append(filterable, fmt.Sprint(a))
		}
		match, err := (&filterParser{src: fs, filterable: filterable, cos: f.geoCos}).parse()
		if err != nil || fs == "" {
			e := newAPIError("invalid_document_filter", fmt.Sprintf("%v in %q", err, fs))
			return &e
		}
		for key, doc := range ix.docs {
			if match(doc) {
				ix.remove(key)
			}
		}
		ix.writes++
		return nil
	})
}

func (f *fakeMeili) getDocument(w http.ResponseWriter, r *http.Request) {
	_, ix := f.pathIndex(w, r)
	if ix == nil {
		return
	}
	id := r.PathValue("id")
	f.mu.Lock()
	doc, ok := ix.docs[id]
	answer := jsonValue(f.t, doc)
	f.mu.Unlock()
	if !ok {
		f.reply(w, 404, newAPIError("document_not_found", fmt.Sprintf("Document `%s` not found.", id)))
		return
	}
	f.reply(w, 200, answer)
}

func (f *fakeMeili) deleteDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	ids, _ := bodyOf(r).([]any)
	f.enqueue(w, "documentDeletion", uid, func() *apiError {
		ix, ok := f.indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		for _, id := range ids {
			ix.remove(fmt.Sprint(id))
		}
		ix.writes++
		return nil
	})
}

func (f *fakeMeili) swapIndexes(w http.ResponseWriter, r *http.Request) {
	pairs, _ := bodyOf(r).([]any)
	f.enqueue(w, "indexSwap", nil, func() *apiError {
		for _, p := range pairs {
			names := p.(map[string]any)["indexes"].([]any)
			a, b := names[0].(string), names[1].(string)
			for _, uid := range []string{a, b} {
				if _, ok := f.indexes[uid]; !ok {
					return indexNotFound(uid)
				}
			}
			f.indexes[a], f.indexes[b] = f.indexes[b], f.indexes[a]
		}
		return nil
	})
}

func (f *fakeMeili) stats(w http.ResponseWriter, r *http.Request) {
	_, ix := f.pathIndex(w, r)
	if ix == nil {
		return
	}
	f.mu.Lock()
	n := len(ix.docs)
	f.mu.Unlock()
	f.reply(w, 200, map[string]any{"numberOfDocuments": n, "isIndexing": false, "fieldDistribution": map[string]any{}})
}

func (f *fakeMeili) search(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.pathIndex(w, r)
	if ix == nil {
		return
	}
	body, _ := bodyOf(r).(map[string]any)
	var all []map[string]any
	switch {
	case f.hits != nil:
		all = f.hits(uid, body)
	case f.emulate:
		f.mu.Lock()
		found, err := f.emulateSearch(f.indexes[uid], body)
		f.mu.Unlock()
		if err != nil {
			f.reply(w, 400, err)
			return
		}
		all = found
	}
	forFacets := all
	if f.emulate {
		f.mu.Lock()
		var err *apiError
		all, forFacets, err = emulateDistinct(f.indexes[uid], body, all)
		f.mu.Unlock()
		if err != nil {
			f.reply(w, 400, err)
			return
		}
	}
	num := func(key string, def int) int {
		if v, ok := body[key].(float64); ok {
			return int(v)
		}
		return def
	}
	q, _ := body["q"].(string)
	answer := map[string]any{"query": q, "processingTimeMs": 1}
	var offset, limit int
	if _, hasPage := body["page"]; hasPage || body["hitsPerPage"] != nil {
		perPage, page := num("hitsPerPage", 20), num("page", 1)
		offset, limit = perPage*(page-1), perPage
		if page == 0 {
			offset, limit = 0, 0
		}
		totalPages := 0
		if perPage > 0 {
			totalPages = (len(all) + perPage - 1) / perPage
		}
		answer["hitsPerPage"], answer["page"], answer["totalPages"], answer["totalHits"] = perPage, page, totalPages, len(all)
	} else {
		offset, limit = num("offset", 0), num("limit", 20)
		answer["offset"], answer["limit"], answer["estimatedTotalHits"] = offset, limit, len(all)
	}
	hits := []map[string]any{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		hits = append(hits, project(all[i], body["attributesToRetrieve"]))
	}
	answer["hits"] = hits
	f.mu.Lock()
	f.served += len(hits)
	f.mu.Unlock()
	if f.emulate {
		f.mu.Lock()
		dist, err := emulateFacets(f.indexes[uid], body, forFacets)
		f.mu.Unlock()
		if err != nil {
			f.reply(w, 400, err)
			return
		}
		if dist != nil {
			answer["facetDistribution"] = dist
		}
	}
	f.reply(w, 200, answer)
}

// multiSearch answers a federated POST /multi-search over one index as
// Meilisearch does (crates/meilisearch/src/search/federated/perform.rs at
// v1.18.0): every query's matches, merged in the order of their sort
// values, each document once; the federation's offset and limit (defaults
// 0 and 20) cut the page; estimatedTotalHits is the size of the union of
// the queries' matches. Pagination inside a federated query is refused.
// Non-federated multi-search is not emulated.
func (f *fakeMeili) multiSearch(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	fed, ok := body["federation"].(map[string]any)
	if !ok {
		f.reply(w, 400, newAPIError("bad_request", "the fake only emulates federated multi-search"))
		return
	}
	queries, _ := body["queries"].([]any)
	var merged []map[string]any
	seen := map[string]bool{}
	dist := map[string]map[string]int{}
	var sortBy []any
	var retrieve any
	for i, raw := range queries {
		q, _ := raw.(map[string]any)
		if _, ok := q["distinct"]; ok {
			// Meilisearch accepts it, but a federated query's count is not
			// exhaustive, so its candidates are not deduplicated: the
			// engine never relies on it, and the fake does not emulate it.
			f.reply(w, 400, newAPIError("bad_request", "the fake does not emulate distinct in a federated search"))
			return
		}
		for _, k := range []string{"page", "hitsPerPage", "limit", "offset", "facets"} {
			if _, ok := q[k]; ok {
				f.reply(w, 400, newAPIError("invalid_multi_search_query_pagination", fmt.Sprintf("Inside `.queries[%d]`: `%s` is not allowed in a federated search", i, k)))
				return
			}
		}
		uid, _ := q["indexUid"].(string)
		if f.index(uid) == nil {
			f.notFound(w, uid)
			return
		}
		var found []map[string]any
		switch {
		case f.hits != nil:
			found = f.hits(uid, q)
		case f.emulate:
			f.mu.Lock()
			var err *apiError
			found, err = f.emulateSearch(f.indexes[uid], q)
			f.mu.Unlock()
			if err != nil {
				err.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, err.Message)
				f.reply(w, 400, err)
				return
			}
		}
		sortBy, _ = q["sort"].([]any)
		retrieve = q["attributesToRetrieve"]
		f.mu.Lock()
		keyOf := f.indexes[uid].keyOf
		f.mu.Unlock()
		for _, d := range found {
			if id := uid + "/" + keyOf(d); !seen[id] {
				seen[id] = true
				merged = append(merged, d)
			}
		}
		if byIndex, _ := fed["facetsByIndex"].(map[string]any); byIndex[uid] != nil {
			f.mu.Lock()
			d, err := emulateFacets(f.indexes[uid], map[string]any{"facets": byIndex[uid]}, found)
			f.mu.Unlock()
			if err != nil {
				f.reply(w, 400, err)
				return
			}
			for a, counts := range d {
				if dist[a] == nil {
					dist[a] = map[string]int{}
				}
				for v, n := range counts {
					dist[a][v] += n
				}
			}
		}
	}
	slices.SortStableFunc(merged, func(a, b map[string]any) int {
		for _, s := range sortBy {
			attr, dir, _ := strings.Cut(fmt.Sprint(s), ":")
			x, y := a[attr], b[attr]
			if attr == "id" {
				x, _ = strconv.ParseFloat(fmt.Sprint(a["id"]), 64)
				y, _ = strconv.ParseFloat(fmt.Sprint(b["id"]), 64)
			}
			if c := compareSortValues(x, y, dir == "desc"); c != 0 {
				return c
			}
		}
		return 0
	})
	num := func(key string, def int) int {
		if v, ok := fed[key].(float64); ok {
			return int(v)
		}
		return def
	}
	offset, limit := num("offset", 0), num("limit", 20)
	hits := []map[string]any{}
	for i := offset; i < len(merged) && i < offset+limit; i++ {
		hits = append(hits, project(merged[i], retrieve))
	}
	f.mu.Lock()
	f.served += len(hits)
	f.mu.Unlock()
	answer := map[string]any{"hits": hits, "processingTimeMs": 1, "limit": limit, "offset": offset, "estimatedTotalHits": len(merged)}
	if _, ok := fed["facetsByIndex"]; ok {
		if _, merge := fed["mergeFacets"]; !merge {
			f.reply(w, 400, newAPIError("bad_request", "the fake only emulates facetsByIndex with mergeFacets"))
			return
		}
		answer["facetDistribution"] = dist
	}
	f.reply(w, 200, answer)
}

// project keeps the attributes a search asked for.
func project(doc map[string]any, attrs any) map[string]any {
	list, ok := attrs.([]any)
	if !ok {
		return doc
	}
	out := map[string]any{}
	for _, a := range list {
		if v, ok := doc[a.(string)]; ok {
			out[a.(string)] = v
		}
	}
	return out
}

// calls returns the recorded requests whose method and path match (an
// empty method matches all; a path ending in '*' is a prefix).
func (f *fakeMeili) calls(method, path string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.requests {
		if method != "" && r.Method != method {
			continue
		}
		if p, ok := strings.CutSuffix(path, "*"); ok && strings.HasPrefix(r.Path, p) || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// writes returns the recorded requests that are not reads (GET), as
// "METHOD path", in order.
func (f *fakeMeili) writes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if r.Method != http.MethodGet {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

func (f *fakeMeili) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = nil
}

// engine opens an Engine on the fake with fast task polling.
func (f *fakeMeili) engine(opts Options) *Engine {
	f.t.Helper()
	return f.engineWithKey("test-key", opts)
}

// engineWithKey opens an Engine on the fake with the API key key.
func (f *fakeMeili) engineWithKey(key string, opts Options) *Engine {
	f.t.Helper()
	opts.TaskPollInterval = time.Millisecond
	if opts.TaskTimeout == 0 {
		opts.TaskTimeout = testdeadline.Timeout(f.t)
	}
	e, err := Open(f.t.Context(), f.srv.URL, key, opts)
	if err != nil {
		f.t.Fatalf("Open: %v", err)
	}
	f.t.Cleanup(func() { e.Close() })
	return e
}

// jsonValue round-trips v through JSON, so that Go literals compare with
// decoded request bodies (numbers become float64, and so on).
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
	return out
}

// jsonString renders a value for failure messages.
func jsonString(v any) string {
	raw, _ := json.MarshalIndent(v, "", "  ")
	return string(raw)
}

// sortedKeys returns the keys of a decoded JSON object.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type bodyKey struct{}

func withBody(ctx context.Context, body any) context.Context {
	return context.WithValue(ctx, bodyKey{}, body)
}

// bodyOf returns the decoded JSON body of a request to the fake.
func bodyOf(r *http.Request) any { return r.Context().Value(bodyKey{}) }
