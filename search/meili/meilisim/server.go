// Package meilisim simulates a Meilisearch server (v1.18.0 to v1.50.0)
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
//
// Its methods are declared on one type per concern, each holding the
// Server back: httpRouting (server.go), taskQueue (tasks.go), scheduler
// (scheduler.go), indexRoutes and settingsRoutes (indexes.go,
// settingsreset.go), documentRoutes (documents.go) and searchRoutes
// (searchroute.go, search.go, multisearch.go).
type Server struct {
	httpRouting
	taskQueue
	scheduler
	indexRoutes
	settingsRoutes
	documentRoutes
	searchRoutes

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
	// filterThenAdd: the version (v1.45.0 and newer) lets additions
	// queued after a deletion by filter join its batch (joins).
	filterThenAdd bool
	// federatedCap: the version (v1.34.0 and newer) builds at most the
	// index's maxTotalHits hits per index in a federated search
	// (MultiSearch).
	federatedCap bool
	// enqueued is closed (and forgotten) by the next enqueue: Enqueued.
	enqueued chan struct{}
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
	// Refused counts the requests refused 413 payload_too_large; they
	// are not in Requests.
	Refused  int
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
	// built counts the hits built (HitsBuilt).
	built int
	// created counts the indexes created, for their createdAt.
	Created int
}

// Recorded is one request the server received.
type Recorded struct {
	Method string
	Path   string
	Query  string
	Auth   string
	// Body is the decoded JSON body; nil when Options.DiscardBodies.
	Body any
	// Size is the body's length in bytes, as received.
	Size int64
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
	// search is what searches read of docs as of some writes
	// (searchIndexOf). A caller that changes Docs or a document directly
	// counts the change in Writes.
	search *searchIndex
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
	// Bytes is the size of the request body that registered a document
	// addition, and IDs the "id" attribute of each of its documents (the
	// event ID of an event document), so that tests can count the work
	// queued ahead of a task (Server.Batches gives the processing order).
	Bytes int64
	IDs   []string

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

// NewestVersion is the newest Meilisearch version whose behaviour the
// simulator models (autobatching of v1.45.0 and newer, as at v1.50.0).
const NewestVersion = "1.50.0"

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
		if v[0] != 1 || v[1] < 18 || !versionAtLeast(NewestVersion, v[0], v[1]) {
			return nil, fmt.Errorf("version %s: the simulator models Meilisearch %s to %s", opts.Version, DefaultVersion, NewestVersion)
		}
	}
	return New(opts), nil
}

// versionAtLeast reports whether version v (MAJOR.MINOR.PATCH) is at
// least major.minor.
func versionAtLeast(v string, major, minor int) bool {
	var m, n int
	if _, err := fmt.Sscanf(v, "%d.%d", &m, &n); err != nil {
		return false
	}
	return m > major || m == major && n >= minor
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
	// DiscardBodies keeps request bodies out of Requests: each entry
	// keeps its method, path, query, Authorization and Size, but Body is
	// nil. A test sending hundreds of megabytes sets it so that the log
	// does not hold every body beside the stored documents.
	DiscardBodies bool
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
	f.httpRouting, f.taskQueue, f.scheduler = httpRouting{f}, taskQueue{f}, scheduler{f}
	f.indexRoutes, f.settingsRoutes, f.documentRoutes, f.searchRoutes = indexRoutes{f}, settingsRoutes{f}, documentRoutes{f}, searchRoutes{f}
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
	f.filterThenAdd = versionAtLeast(opts.Version, 1, 45)
	f.federatedCap = versionAtLeast(opts.Version, 1, 34)
	f.cond = sync.NewCond(&f.Mu)
	f.done = make(chan struct{})
	go f.run()
	return f
}

// readBody reads at most limit bytes of r's body. A document addition is
// up to the request budget, tens of megabytes, sent without a length:
// io.ReadAll would copy it over and over as its buffer grows, so the body
// is read in chunks (reused from bodyChunks) and copied once, into a slice
// of its size.
func readBody(r *http.Request, limit int64) []byte {
	body := io.LimitReader(r.Body, limit)
	var chunks []*[]byte
	defer func() {
		for _, c := range chunks {
			bodyChunks.Put(c)
		}
	}()
	total := 0
	for {
		c := bodyChunks.Get().(*[]byte)
		chunks = append(chunks, c)
		n, err := io.ReadFull(body, *c)
		total += n
		if err != nil {
			break
		}
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, (*c)[:min(len(*c), total-len(out))]...)
	}
	return out
}

// bodyChunks are the buffers readBody reads into.
var bodyChunks = sync.Pool{New: func() any {
	c := make([]byte, 1<<20)
	return &c
}}

// ServeHTTP answers one request as the simulated server.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mux := f.mux
	{
		// crates/meilisearch/src/extractors/payload.rs: a body beyond
		// http_payload_size_limit is refused with payload_too_large (413)
		// before anything is registered.
		raw := readBody(r, f.opts.PayloadLimit+1)
		if int64(len(raw)) > f.opts.PayloadLimit {
			f.Mu.Lock()
			f.Refused++
			f.Mu.Unlock()
			f.Reply(w, http.StatusRequestEntityTooLarge, NewAPIError("payload_too_large", "The provided payload reached the size limit. The maximum accepted payload size is "+byteSize(f.opts.PayloadLimit)+"."))
			return
		}
		var body any
		if len(raw) > 0 {
			var err error
			if body, err = decodeJSON(raw); err != nil {
				if f.opts.Errorf != nil {
					f.opts.Errorf("meilisim: %s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
				}
				f.Reply(w, 400, NewAPIError("malformed_payload", "The payload cannot be parsed: "+err.Error()))
				return
			}
		}
		size := int64(len(raw))
		// The body as received, whatever the transfer encoding (Task.Bytes).
		r.ContentLength = size
		rec := Recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body, Size: size}
		if f.opts.DiscardBodies {
			rec.Body = nil
		}
		f.Mu.Lock()
		f.Requests = append(f.Requests, rec)
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

// httpRouting holds the steps every route shares: authorization, the
// index a path names and the replies.
type httpRouting struct{ *Server }

// authorized reports whether an Authorization header carries the master
// key or a key created through POST /keys.
func (f *httpRouting) authorized(auth string) bool {
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

// Reply writes a JSON answer.
func (f *httpRouting) Reply(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(body); err != nil {
		if f.opts.Errorf != nil {
			f.opts.Errorf("meilisim: encode answer: %v", err)
		}
	}
}

// NotFound answers 404 index_not_found for uid.
func (f *httpRouting) NotFound(w http.ResponseWriter, uid string) {
	f.Reply(w, 404, indexNotFound(uid))
}

// indexNotFound is Meilisearch's error for a missing index.
func indexNotFound(uid string) *APIError {
	e := NewAPIError("index_not_found", fmt.Sprintf("Index `%s` not found.", uid))
	return &e
}

// PathIndex returns the index the request's path names; when there is none
// it answers 404 and returns nil.
func (f *httpRouting) PathIndex(w http.ResponseWriter, r *http.Request) (string, *Index) {
	uid := r.PathValue("uid")
	ix := f.Index(uid)
	if ix == nil {
		f.NotFound(w, uid)
	}
	return uid, ix
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

// JSONValue round-trips v through JSON, so that Go literals compare with
// decoded request bodies (numbers become float64, and so on). It panics
// when v does not marshal.
func JSONValue(v any) any {
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

// JSONString renders a value as indented JSON, for failure messages.
func JSONString(v any) string {
	raw, _ := json.MarshalIndent(v, "", "  ")
	return string(raw)
}

// SortedKeys returns the keys of a decoded JSON object, sorted.
func SortedKeys(m map[string]any) []string {
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
