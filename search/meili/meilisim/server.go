// Package meilisim simulates a Meilisearch server (v1.18.0 and newer 1.x)
// for tests: writes become tasks that a scheduler goroutine processes in
// batches later, as the real index scheduler does. It is a test tool; the
// service never imports it.
package meilisim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server emulates the Meilisearch HTTP API just enough for the contract
// tests: it records every request and answers in the documented shapes.
//
//   - Writes answer 202 with a summarized task
//     {taskUid, indexUid, status: "enqueued", type, enqueuedAt}
//     (https://www.meilisearch.com/docs/reference/api/tasks#summarized-task-objects);
//     the scheduler (scheduler.go) moves the task from "enqueued" through
//     "processing" to "succeeded" or "failed" (with an error object
//     {message, code, type, link}) and applies a batch's effects at once.
//   - Searches answer {hits, query, processingTimeMs, hitsPerPage, page,
//     totalPages, totalHits} when page or hitsPerPage is given, else
//     {hits, query, processingTimeMs, limit, offset, estimatedTotalHits}.
//   - A missing index answers 404 with code index_not_found (400 inside a
//     federated multi-search).
//   - Tasks are visible by Meilisearch's rule (Server.TaskVisible): a
//     key created through POST /keys whose indexes are not "*" sees only
//     the tasks tied to exactly one of its indexes (never a swap); any
//     other Authorization (the master key, "test-key") sees every task.
//   - Every index has its own createdAt, which moves with it in a swap.
type Server struct {
	opts Options
	mux  *http.ServeMux

	// The scheduler's state (scheduler.go), guarded by Mu.
	cond       *sync.Cond
	queue      []int64
	paused     bool
	delay      time.Duration
	processing bool
	closed     bool
	done       chan struct{}
	nextBatch  int64
	// StepOnPoll, while the scheduler is paused, makes every GET
	// /tasks/{uid} that answers an unfinished task process the next batch
	// once it has answered: a client sees each task unfinished and must
	// poll again, deterministically.
	StepOnPoll bool
	// Batches lists the task uids of every processed batch, in order.
	Batches [][]int64

	// Mu guards every exported field; tests that read or change them
	// hold it.

	Mu       sync.Mutex
	Requests []Recorded
	Indexes  map[string]*Index
	Tasks    map[int64]*Task
	NextTask int64

	// failTasks makes the tasks of a type fail with the given error.
	FailTasks map[string]APIError
	// intercept, when it returns ok, answers a request instead of the
	// emulation (to simulate 5xx answers, for example).
	Intercept func(r *http.Request) (status int, body any, ok bool)
	// hits returns every document matching a search request body, in
	// order; the fake pages them. By default: none, or, with emulate, the
	// stored documents that emulateSearch finds.
	Hits    func(index string, body map[string]any) []map[string]any
	Emulate bool
	// geoCos, when set, replaces math.Cos in the emulated _geoRadius
	// distance, to stand for another C library's cos (see fakeDistanceM).
	GeoCos func(float64) float64
	// stuck keeps every task "processing".
	Stuck bool
	// busyTasks makes the tasks of a type stay "processing" for that many
	// polls beyond the first, their effect applied only when they end.
	BusyTasks map[string]int
	// keys are the API keys by UID (POST /keys, GET and DELETE /keys/{uid}).
	Keys map[string]map[string]any
	// version is the pkgVersion GET /version reports (MinVersion at first).
	Version string
	// served counts the hits the fake's searches have answered with.
	Served int
	// created counts the indexes created, for their createdAt.
	Created int
}

// Recorded is one request the server received.
type Recorded struct {
	Method string
	Path   string
	Query  string
	Auth   string
	Body   any
}

// Index is one index: its settings and documents.
type Index struct {
	// createdAt belongs to the index (a swap moves it with the documents).
	CreatedAt  string
	PrimaryKey string
	Settings   map[string]any
	Docs       map[string]map[string]any
	// internal numbers the documents as Meilisearch's internal document
	// IDs do: a new document takes the smallest number no document holds
	// (milli's AvailableIds), a replaced one keeps its number. Distinct
	// facets depend on it (emulateDistinct). used holds the numbers taken
	// and low is at most the smallest free one.
	Internal map[string]uint32
	Used     map[uint32]bool
	Low      uint32
	// writes counts the changes to docs and settings; words caches the
	// index's sorted word list (wordList) as of wordsAt writes.
	Writes  int
	Words   []string
	WordsAt int
}

// Task is one registered task.
type Task struct {
	// Summary is the summarized task the write answered with.
	Summary map[string]any
	// Status is "enqueued", "processing", "succeeded" or "failed", as the
	// scheduler moved it.
	Status string
	// Final is the status the task ends with, Err its error when failed.
	Final string
	Err   *APIError
	// Batch is the uid of the batch that processed the task (-1 before).
	Batch int64
	// Polls counts GET /tasks/{uid} answers about the task.
	Polls int
	// Busy is how many polls beyond the first still see a held task
	// "processing" (a long settings update on a large index; see
	// Server.BusyTasks).
	Busy int
	// Pending, when set, is a held task's effect, applied when it ends.
	Pending func() *APIError

	kind   autobatchKind
	index  string
	apply  func() *APIError
	forced *APIError
	held   bool
}

// APIError is Meilisearch's error object.
type APIError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	Type    string `json:"type"`
	Link    string `json:"link"`
}

// NewAPIError returns the error object of a code.
func NewAPIError(code, message string) APIError {
	// Error types as crates/meilisearch-types/src/error.rs assigns them.
	typ := "invalid_request"
	switch code {
	case "internal":
		typ = "internal"
	case "missing_authorization_header", "invalid_api_key":
		typ = "auth"
	}
	return APIError{Message: message, Code: code, Type: typ, Link: "https://docs.meilisearch.com/errors#" + code}
}

// DefaultVersion is the Meilisearch version the simulator reports unless
// Options.Version says otherwise.
const DefaultVersion = "1.18.0"

// DefaultPayloadLimit is Meilisearch's default http_payload_size_limit,
// "100 MB" (DEFAULT_HTTP_PAYLOAD_SIZE_LIMIT in
// crates/meilisearch/src/option.rs), which the byte-unit crate reads as
// 100,000,000 bytes.
const DefaultPayloadLimit = 100_000_000

// byteSize renders n as the payload_too_large message does
// (crates/meilisearch/src/error.rs): binary units when n is a multiple of
// 1024, else decimal ones, in the largest unit n reaches.
func byteSize(n int64) string {
	base, units := 1000.0, []string{"B", "KB", "MB", "GB", "TB"}
	if n%1024 == 0 && n > 0 {
		base, units = 1024, []string{"B", "KiB", "MiB", "GiB", "TiB"}
	}
	v, u := float64(n), 0
	for v >= base && u < len(units)-1 {
		v /= base
		u++
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " " + units[u]
}

// NewChecked is New for a version given by a user: it refuses a version
// older than DefaultVersion (the oldest the simulator models) or one that
// is not MAJOR.MINOR.PATCH.
func NewChecked(opts Options) (*Server, error) {
	if opts.Version != "" {
		var v [3]int
		if _, err := fmt.Sscanf(opts.Version, "%d.%d.%d", &v[0], &v[1], &v[2]); err != nil || fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) != opts.Version {
			return nil, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH", opts.Version)
		}
		if v[0] != 1 || v[1] < 18 {
			return nil, fmt.Errorf("version %s: the simulator models Meilisearch %s and newer 1.x releases", opts.Version, DefaultVersion)
		}
	}
	return New(opts), nil
}

// Options configure a simulated server.
type Options struct {
	// MasterKey, when set, is the only key besides the keys created
	// through POST /keys that the server accepts; when empty every
	// request is accepted (a server started without a master key).
	MasterKey string
	// Version is the pkgVersion GET /version reports (DefaultVersion
	// when empty).
	Version string
	// PayloadLimit is the largest request body accepted, in bytes
	// (DefaultPayloadLimit when 0); a larger one is 413
	// payload_too_large.
	PayloadLimit int64
	// Errorf, when set, reports a request the simulator cannot read (a
	// test's t.Errorf); by default such a request is answered 400 only.
	Errorf func(format string, args ...any)
}

// New returns a simulated Meilisearch server; serve it with
// httptest.NewServer(s) or http.ListenAndServe.
func New(opts Options) *Server {
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if opts.PayloadLimit <= 0 {
		opts.PayloadLimit = DefaultPayloadLimit
	}
	f := &Server{opts: opts, Version: opts.Version, Indexes: map[string]*Index{}, Tasks: map[int64]*Task{}, FailTasks: map[string]APIError{}, BusyTasks: map[string]int{}, Keys: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		f.Reply(w, 200, map[string]any{"status": "available"})
	})
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		f.Mu.Lock()
		v := f.Version
		f.Mu.Unlock()
		f.Reply(w, 200, map[string]any{"commitSha": "0000000", "commitDate": "2025-01-01T00:00:00Z", "pkgVersion": v})
	})
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		body, _ := bodyOf(r).(map[string]any)
		uid, _ := body["uid"].(string)
		f.Mu.Lock()
		_, exists := f.Keys[uid]
		key := map[string]any{}
		if !exists {
			for k, v := range body {
				key[k] = v
			}
			key["key"] = "key-of-" + uid // Meilisearch: HMAC of the UID with the master key
			key["createdAt"], key["updatedAt"] = "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"
			f.Keys[uid] = key
		}
		f.Mu.Unlock()
		if exists {
			f.Reply(w, 409, NewAPIError("api_key_already_exists", "`uid` field value `"+uid+"` is already an existing API key."))
			return
		}
		f.Reply(w, 201, key)
	})
	mux.HandleFunc("GET /keys/{uid}", func(w http.ResponseWriter, r *http.Request) {
		f.Mu.Lock()
		key, ok := f.Keys[r.PathValue("uid")]
		f.Mu.Unlock()
		if !ok {
			f.Reply(w, 404, NewAPIError("api_key_not_found", "API key `"+r.PathValue("uid")+"` not found."))
			return
		}
		f.Reply(w, 200, key)
	})
	mux.HandleFunc("DELETE /keys/{uid}", func(w http.ResponseWriter, r *http.Request) {
		f.Mu.Lock()
		_, ok := f.Keys[r.PathValue("uid")]
		delete(f.Keys, r.PathValue("uid"))
		f.Mu.Unlock()
		if !ok {
			f.Reply(w, 404, NewAPIError("api_key_not_found", "API key `"+r.PathValue("uid")+"` not found."))
			return
		}
		w.WriteHeader(204)
	})
	mux.HandleFunc("GET /indexes/{uid}", f.GetIndex)
	mux.HandleFunc("POST /indexes", f.CreateIndex)
	mux.HandleFunc("DELETE /indexes/{uid}", f.DeleteIndex)
	mux.HandleFunc("GET /indexes/{uid}/settings", f.GetSettings)
	mux.HandleFunc("PATCH /indexes/{uid}/settings", f.UpdateSettings)
	mux.HandleFunc("DELETE /indexes/{uid}/settings/{name}", f.ResetSetting)
	mux.HandleFunc("POST /indexes/{uid}/documents", f.AddDocuments)
	mux.HandleFunc("GET /indexes/{uid}/documents/{id}", f.GetDocument)
	mux.HandleFunc("POST /indexes/{uid}/documents/delete-batch", f.DeleteDocuments)
	mux.HandleFunc("POST /indexes/{uid}/documents/delete", f.DeleteByFilter)
	mux.HandleFunc("POST /indexes/{uid}/search", f.Search)
	mux.HandleFunc("POST /multi-search", f.MultiSearch)
	mux.HandleFunc("GET /indexes/{uid}/stats", f.Stats)
	mux.HandleFunc("POST /swap-indexes", f.SwapIndexes)
	mux.HandleFunc("GET /tasks/{uid}", f.GetTask)
	mux.HandleFunc("GET /tasks", f.ListTasks)
	f.mux = mux
	f.cond = sync.NewCond(&f.Mu)
	f.done = make(chan struct{})
	go f.run()
	return f
}

// ServeHTTP answers one request as the simulated server.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux := f.mux
	{
		// crates/meilisearch/src/extractors/payload.rs: a body beyond
		// http_payload_size_limit is refused with payload_too_large (413)
		// before anything is registered.
		raw, _ := io.ReadAll(io.LimitReader(r.Body, f.opts.PayloadLimit+1))
		if int64(len(raw)) > f.opts.PayloadLimit {
			f.Reply(w, http.StatusRequestEntityTooLarge, NewAPIError("payload_too_large", "The provided payload reached the size limit. The maximum accepted payload size is "+byteSize(f.opts.PayloadLimit)+"."))
			return
		}
		var body any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				if f.opts.Errorf != nil {
					f.opts.Errorf("meilisim: %s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
				}
				f.Reply(w, 400, NewAPIError("malformed_payload", "The payload cannot be parsed: "+err.Error()))
				return
			}
		}
		f.Mu.Lock()
		f.Requests = append(f.Requests, Recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
		intercept := f.Intercept
		f.Mu.Unlock()
		if intercept != nil {
			if status, answer, ok := intercept(r); ok {
				f.Reply(w, status, answer)
				return
			}
		}
		// crates/meilisearch/src/extractors/authentication/mod.rs: every
		// route but /health needs a key when a master key is set; no
		// Authorization header is 401 missing_authorization_header, an
		// unknown key 403 invalid_api_key.
		if f.opts.MasterKey != "" && r.URL.Path != "/health" && !f.authorized(r.Header.Get("Authorization")) {
			if r.Header.Get("Authorization") == "" {
				f.Reply(w, 401, NewAPIError("missing_authorization_header", "The Authorization header is missing. It must use the bearer authorization method."))
				return
			}
			f.Reply(w, 403, NewAPIError("invalid_api_key", "The provided API key is invalid."))
			return
		}
		r = r.WithContext(withBody(r.Context(), body))
		mux.ServeHTTP(w, r)
	}
}

// authorized reports whether an Authorization header carries the master
// key or a key created through POST /keys.
func (f *Server) authorized(auth string) bool {
	key := strings.TrimPrefix(auth, "Bearer ")
	if key == f.opts.MasterKey {
		return true
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for _, k := range f.Keys {
		if k["key"] == key {
			return true
		}
	}
	return false
}

// DefaultSettings are the settings of a new index (Meilisearch defaults).
func DefaultSettings() map[string]any {
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

// AddIndex creates an index directly, with the given settings merged over
// the defaults.
func (f *Server) AddIndex(uid string, settings map[string]any) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	s := DefaultSettings()
	if settings != nil {
		for k, v := range jsonValue(settings).(map[string]any) {
			s[k] = v
		}
	}
	f.Indexes[uid] = f.NewIndex("id")
	f.Indexes[uid].Settings = s
}

// NewIndex returns an empty index with the default settings, created now
// (each index a nanosecond after the previous one). The caller holds f.Mu.
func (f *Server) NewIndex(primaryKey string) *Index {
	f.Created++
	at := time.Date(2025, 1, 1, 0, 0, 0, f.Created, time.UTC).Format(time.RFC3339Nano)
	return &Index{CreatedAt: at, PrimaryKey: primaryKey, Settings: DefaultSettings(), Docs: map[string]map[string]any{}, Internal: map[string]uint32{}, Used: map[uint32]bool{}}
}

// Put stores a document under its primary key value, numbering it.
func (ix *Index) Put(doc map[string]any) {
	pk := ix.PrimaryKey
	if pk == "" {
		pk = "id"
	}
	key := fmt.Sprint(doc[pk])
	ix.Docs[key] = doc
	if _, ok := ix.Internal[key]; ok {
		return
	}
	for ix.Used[ix.Low] {
		ix.Low++
	}
	ix.Internal[key], ix.Used[ix.Low] = ix.Low, true
}

// Remove deletes the document stored under key.
func (ix *Index) Remove(key string) {
	if n, ok := ix.Internal[key]; ok {
		delete(ix.Used, n)
		ix.Low = min(ix.Low, n)
	}
	delete(ix.Docs, key)
	delete(ix.Internal, key)
}

// KeyOf returns the primary key value of a stored document.
func (ix *Index) KeyOf(doc map[string]any) string {
	pk := ix.PrimaryKey
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

// TaskVisible is Meilisearch's rule for which tasks a request sees
// (get_tasks_from_authorized_indexes, crates/index-scheduler/src/queue/
// tasks.rs:474-490): when the request filters by index (byIndex) or its
// key is limited to some indexes, the tasks not tied to exactly one index
// are dropped; with a limited key, so are the tasks of other indexes. The
// caller holds f.Mu.
func (f *Server) TaskVisible(auth string, task *Task, byIndex bool) bool {
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

// Reply writes a JSON answer.
func (f *Server) Reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(body); err != nil {
		if f.opts.Errorf != nil {
			f.opts.Errorf("meilisim: encode answer: %v", err)
		}
	}
}

// NotFound answers 404 index_not_found for uid.
func (f *Server) NotFound(w http.ResponseWriter, uid string) {
	f.Reply(w, 404, indexNotFound(uid))
}

// indexNotFound is Meilisearch's error for a missing index.
func indexNotFound(uid string) *APIError {
	e := NewAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
	return &e
}

// PathIndex returns the index the request's path names; when there is none
// it answers 404 and returns nil.
func (f *Server) PathIndex(w http.ResponseWriter, r *http.Request) (string, *Index) {
	uid := r.PathValue("uid")
	ix := f.Index(uid)
	if ix == nil {
		f.NotFound(w, uid)
	}
	return uid, ix
}

// Enqueue registers a task whose effect has been decided (apply returns
// the error that fails it, if any) and answers with its summary.
func (f *Server) Enqueue(w http.ResponseWriter, typ string, index any, apply func() *APIError) {
	f.enqueue(w, typ, index, false, apply)
}

// Enqueue registers a task and answers 202 with its summary; the
// scheduler (scheduler.go) applies it later. byFilter marks a deletion by
// filter, which the autobatcher keeps apart from document additions.
func (f *Server) enqueue(w http.ResponseWriter, typ string, index any, byFilter bool, apply func() *APIError) {
	f.Mu.Lock()
	uid := f.NextTask
	f.NextTask++
	task := &Task{Final: "succeeded", Status: "enqueued", Batch: -1, kind: autobatchKindOf(typ, byFilter), apply: apply}
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
	f.Mu.Unlock()
	f.Reply(w, 202, task.Summary)
}

// GetTask answers GET /tasks/{uid}.
func (f *Server) GetTask(w http.ResponseWriter, r *http.Request) {
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
func (f *Server) FinishTasks() {
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
func (f *Server) TaskStatus(task *Task) string {
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
func (f *Server) TaskObject(uid int64, task *Task) map[string]any {
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
func (f *Server) ListTasks(w http.ResponseWriter, r *http.Request) {
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

// Index returns the index uid, or nil.
func (f *Server) Index(uid string) *Index {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.Indexes[uid]
}

// GetIndex answers GET /indexes/{uid}.
func (f *Server) GetIndex(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Reply(w, 200, map[string]any{"uid": uid, "primaryKey": ix.PrimaryKey,
		"createdAt": ix.CreatedAt, "updatedAt": ix.CreatedAt})
}

// CreateIndex answers POST /indexes with an indexCreation task.
func (f *Server) CreateIndex(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	uid, _ := body["uid"].(string)
	pk, _ := body["primaryKey"].(string)
	f.Enqueue(w, "indexCreation", uid, func() *APIError {
		if _, ok := f.Indexes[uid]; ok {
			e := NewAPIError("index_already_exists", fmt.Sprintf("Index `%s` already exists.", uid))
			return &e
		}
		f.Indexes[uid] = f.NewIndex(pk)
		return nil
	})
}

// DeleteIndex answers DELETE /indexes/{uid} with an indexDeletion task.
func (f *Server) DeleteIndex(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	f.Enqueue(w, "indexDeletion", uid, func() *APIError {
		if _, ok := f.Indexes[uid]; !ok {
			return indexNotFound(uid)
		}
		delete(f.Indexes, uid)
		return nil
	})
}

// GetSettings answers GET /indexes/{uid}/settings.
func (f *Server) GetSettings(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Mu.Lock()
	answer := jsonValue(ix.Settings)
	f.Mu.Unlock()
	f.Reply(w, 200, answer)
}

// UpdateSettings answers PATCH /indexes/{uid}/settings with a settingsUpdate task.
func (f *Server) UpdateSettings(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	f.Enqueue(w, "settingsUpdate", uid, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		for k, v := range body {
			ix.Settings[k] = v
		}
		ix.Writes++
		return nil
	})
}

// AddDocuments answers POST /indexes/{uid}/documents with a documentAdditionOrUpdate task.
func (f *Server) AddDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	docs, _ := bodyOf(r).([]any)
	f.Enqueue(w, "documentAdditionOrUpdate", uid, func() *APIError {
		pk := r.URL.Query().Get("primaryKey")
		ix, ok := f.Indexes[uid]
		if !ok {
			ix = f.NewIndex(pk)
			f.Indexes[uid] = ix
		}
		if ix.PrimaryKey == "" {
			ix.PrimaryKey = pk
		}
		if pk != "" && pk != ix.PrimaryKey {
			// Meilisearch refuses a primaryKey parameter that is not the
			// index's (index_primary_key_already_exists).
			e := NewAPIError("index_primary_key_already_exists", fmt.Sprintf("Index `%s`: Index already has a primary key: `%s`.", uid, ix.PrimaryKey))
			return &e
		}
		for _, d := range docs {
			doc := d.(map[string]any)
			if _, ok := doc[ix.PrimaryKey]; !ok && ix.PrimaryKey != "" {
				e := NewAPIError("missing_document_id", fmt.Sprintf("Document doesn't have a `%s` attribute: `%v`.", ix.PrimaryKey, doc))
				return &e
			}
		}
		for _, d := range docs {
			ix.Put(d.(map[string]any))
		}
		ix.Writes++
		return nil
	})
}

// DeleteByFilter answers POST /indexes/{uid}/documents/delete: a
// documentDeletion task that removes the documents matching the filter
// (filterable attributes only, as Meilisearch requires).
func (f *Server) DeleteByFilter(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	fs, _ := body["filter"].(string)
	// crates/meilisearch/src/routes/indexes/documents.rs
	// (delete_documents_by_filter): the filter is parsed before the task
	// is enqueued; a malformed or empty one is 400 invalid_document_filter
	// at once, and no task is registered. Whether its attributes are
	// filterable is only known when the task runs (then the task fails).
	if _, err := (&filterParser{src: fs, syntaxOnly: true}).parse(); err != nil || strings.TrimSpace(fs) == "" {
		msg := "Sending an empty filter is forbidden."
		if err != nil {
			msg = fmt.Sprintf("%v in %q", err, fs)
		}
		f.Reply(w, 400, NewAPIError("invalid_document_filter", msg))
		return
	}
	f.enqueue(w, "documentDeletion", uid, true, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			e := NewAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
			return &e
		}
		var filterable []string
		list, _ := ix.Settings["filterableAttributes"].([]any)
		for _, a := range list {
			filterable = append(filterable, fmt.Sprint(a))
		}
		match, err := (&filterParser{src: fs, filterable: filterable, cos: f.GeoCos}).parse()
		if err != nil || fs == "" {
			e := NewAPIError("invalid_document_filter", fmt.Sprintf("%v in %q", err, fs))
			return &e
		}
		for key, doc := range ix.Docs {
			if match(doc) {
				ix.Remove(key)
			}
		}
		ix.Writes++
		return nil
	})
}

// GetDocument answers GET /indexes/{uid}/documents/{id}.
func (f *Server) GetDocument(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	id := r.PathValue("id")
	f.Mu.Lock()
	doc, ok := ix.Docs[id]
	answer := jsonValue(doc)
	f.Mu.Unlock()
	if !ok {
		f.Reply(w, 404, NewAPIError("document_not_found", fmt.Sprintf("Document `%s` not found.", id)))
		return
	}
	f.Reply(w, 200, answer)
}

// DeleteDocuments answers POST /indexes/{uid}/documents/delete-batch with a documentDeletion task.
func (f *Server) DeleteDocuments(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	ids, _ := bodyOf(r).([]any)
	f.Enqueue(w, "documentDeletion", uid, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		for _, id := range ids {
			ix.Remove(fmt.Sprint(id))
		}
		ix.Writes++
		return nil
	})
}

// SwapIndexes answers POST /swap-indexes with an indexSwap task.
func (f *Server) SwapIndexes(w http.ResponseWriter, r *http.Request) {
	pairs, _ := bodyOf(r).([]any)
	f.Enqueue(w, "indexSwap", nil, func() *APIError {
		for _, p := range pairs {
			names := p.(map[string]any)["indexes"].([]any)
			a, b := names[0].(string), names[1].(string)
			for _, uid := range []string{a, b} {
				if _, ok := f.Indexes[uid]; !ok {
					return indexNotFound(uid)
				}
			}
			f.Indexes[a], f.Indexes[b] = f.Indexes[b], f.Indexes[a]
		}
		return nil
	})
}

// Stats answers GET /indexes/{uid}/stats.
func (f *Server) Stats(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Mu.Lock()
	n := len(ix.Docs)
	f.Mu.Unlock()
	f.Reply(w, 200, map[string]any{"numberOfDocuments": n, "isIndexing": false, "fieldDistribution": map[string]any{}})
}

// Search answers POST /indexes/{uid}/search.
func (f *Server) Search(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	body, _ := bodyOf(r).(map[string]any)
	var all []map[string]any
	switch {
	case f.Hits != nil:
		all = f.Hits(uid, body)
	case f.Emulate:
		f.Mu.Lock()
		found, err := f.EmulateSearch(f.Indexes[uid], body)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		all = found
	}
	forFacets := all
	if f.Emulate {
		f.Mu.Lock()
		var err *APIError
		all, forFacets, err = emulateDistinct(f.Indexes[uid], body, all)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
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
	f.Mu.Lock()
	f.Served += len(hits)
	f.Mu.Unlock()
	if f.Emulate {
		f.Mu.Lock()
		dist, err := emulateFacets(f.Indexes[uid], body, forFacets)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		if dist != nil {
			answer["facetDistribution"] = dist
		}
	}
	f.Reply(w, 200, answer)
}

// MultiSearch answers a federated POST /multi-search over one index as
// Meilisearch does (crates/meilisearch/src/search/federated/perform.rs at
// v1.18.0): every query's matches, merged in the order of their sort
// values, each document once; the federation's offset and limit (defaults
// 0 and 20) cut the page; estimatedTotalHits is the size of the union of
// the queries' matches. Pagination inside a federated query is refused.
// Non-federated multi-search is not emulated.
func (f *Server) MultiSearch(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	fed, ok := body["federation"].(map[string]any)
	if !ok {
		f.Reply(w, 400, NewAPIError("bad_request", "the fake only emulates federated multi-search"))
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
			f.Reply(w, 400, NewAPIError("bad_request", "the fake does not emulate distinct in a federated search"))
			return
		}
		for _, k := range []string{"page", "hitsPerPage", "limit", "offset", "facets"} {
			if _, ok := q[k]; ok {
				f.Reply(w, 400, NewAPIError("invalid_multi_search_query_pagination", fmt.Sprintf("Inside `.queries[%d]`: `%s` is not allowed in a federated search", i, k)))
				return
			}
		}
		uid, _ := q["indexUid"].(string)
		if f.Index(uid) == nil {
			// crates/meilisearch/src/search/federated/perform.rs
			// (SearchByIndex::execute): a missing index is index_not_found
			// with status 400, not 404 (the index is not in the URL), its
			// message prefixed with the query's place.
			e := indexNotFound(uid)
			e.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, e.Message)
			f.Reply(w, 400, e)
			return
		}
		var found []map[string]any
		switch {
		case f.Hits != nil:
			found = f.Hits(uid, q)
		case f.Emulate:
			f.Mu.Lock()
			var err *APIError
			found, err = f.EmulateSearch(f.Indexes[uid], q)
			f.Mu.Unlock()
			if err != nil {
				err.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, err.Message)
				f.Reply(w, 400, err)
				return
			}
		}
		sortBy, _ = q["sort"].([]any)
		retrieve = q["attributesToRetrieve"]
		f.Mu.Lock()
		keyOf := f.Indexes[uid].KeyOf
		f.Mu.Unlock()
		for _, d := range found {
			if id := uid + "/" + keyOf(d); !seen[id] {
				seen[id] = true
				merged = append(merged, d)
			}
		}
		if byIndex, _ := fed["facetsByIndex"].(map[string]any); byIndex[uid] != nil {
			f.Mu.Lock()
			d, err := emulateFacets(f.Indexes[uid], map[string]any{"facets": byIndex[uid]}, found)
			f.Mu.Unlock()
			if err != nil {
				f.Reply(w, 400, err)
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
	f.Mu.Lock()
	f.Served += len(hits)
	f.Mu.Unlock()
	answer := map[string]any{"hits": hits, "processingTimeMs": 1, "limit": limit, "offset": offset, "estimatedTotalHits": len(merged)}
	if _, ok := fed["facetsByIndex"]; ok {
		if _, merge := fed["mergeFacets"]; !merge {
			f.Reply(w, 400, NewAPIError("bad_request", "the fake only emulates facetsByIndex with mergeFacets"))
			return
		}
		answer["facetDistribution"] = dist
	}
	f.Reply(w, 200, answer)
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

// Calls returns the Recorded requests whose method and path match (an
// empty method matches all; a path ending in '*' is a prefix).
func (f *Server) Calls(method, path string) []Recorded {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []Recorded
	for _, r := range f.Requests {
		if method != "" && r.Method != method {
			continue
		}
		if p, ok := strings.CutSuffix(path, "*"); ok && strings.HasPrefix(r.Path, p) || r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Writes returns the Recorded requests that are not reads (GET), as
// "METHOD path", in order.
func (f *Server) Writes() []string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	var out []string
	for _, r := range f.Requests {
		if r.Method != http.MethodGet {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// Reset forgets the recorded requests.
func (f *Server) Reset() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Requests = nil
}

// jsonValue round-trips v through JSON, so that Go literals compare with
// decoded request bodies (numbers become float64, and so on).
func jsonValue(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("meilisim: marshal %v: %v", v, err))
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("meilisim: unmarshal %s: %v", raw, err))
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
