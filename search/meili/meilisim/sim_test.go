package meilisim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// client talks to a simulated server over HTTP.
type client struct {
	t   *testing.T
	url string
	key string
}

func start(t *testing.T, opts Options) (*Server, *client) {
	t.Helper()
	s := New(opts)
	s.Emulate = true
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(s.Close)
	return s, &client{t: t, url: srv.URL, key: opts.MasterKey}
}

// do sends a request and returns the status and decoded answer.
func (c *client) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		raw, _ = json.Marshal(b)
	}
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(raw))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// task returns the status of task uid and its error code.
func (c *client) task(uid any) (string, string) {
	c.t.Helper()
	status, task := c.do("GET", fmt.Sprintf("/tasks/%v", uid), nil)
	if status != 200 {
		c.t.Fatalf("GET /tasks/%v = %d %v", uid, status, task)
	}
	code := ""
	if e, ok := task["error"].(map[string]any); ok {
		code, _ = e["code"].(string)
	}
	return task["status"].(string), code
}

// hits searches index for q and returns the ids found.
func (c *client) hits(index, q string) []string {
	c.t.Helper()
	status, answer := c.do("POST", "/indexes/"+index+"/search", map[string]any{"q": q, "matchingStrategy": "all", "attributesToSearchOn": []string{"title"}})
	if status != 200 {
		c.t.Fatalf("search %s %q = %d %v", index, q, status, answer)
	}
	var ids []string
	for _, h := range answer["hits"].([]any) {
		ids = append(ids, fmt.Sprint(h.(map[string]any)["id"]))
	}
	slices.Sort(ids)
	return ids
}

// create registers an index with the settings the simulator's search
// emulation requires (the service's).
func (c *client) create(uid string) {
	c.do("POST", "/indexes", map[string]any{"uid": uid, "primaryKey": "id"})
	c.do("PATCH", "/indexes/"+uid+"/settings", map[string]any{"typoTolerance": map[string]any{"enabled": false, "disableOnNumbers": true}})
}

func docs(ids ...int) []any {
	var out []any
	for _, id := range ids {
		out = append(out, map[string]any{"id": id, "title": fmt.Sprintf("hall %d", id)})
	}
	return out
}

// TestSearchSeesOnlySucceededTasks: a write answers 202 "enqueued" and
// changes nothing a search sees until its task has been processed; Pause
// holds it enqueued, Step and Resume process it.
func TestSearchSeesOnlySucceededTasks(t *testing.T) {
	s, c := start(t, Options{})
	c.create("places")
	s.Drain()
	s.Pause()
	status, sum := c.do("POST", "/indexes/places/documents", docs(1))
	if status != 202 || sum["status"] != "enqueued" {
		t.Fatalf("add = %d %v, want 202 enqueued", status, sum)
	}
	if st, _ := c.task(sum["taskUid"]); st != "enqueued" {
		t.Errorf("paused: task %s, want enqueued", st)
	}
	if got := c.hits("places", "hall"); len(got) != 0 {
		t.Errorf("before its task ran, the search found %v", got)
	}
	if !s.Step() {
		t.Fatal("Step found no batch")
	}
	if st, _ := c.task(sum["taskUid"]); st != "succeeded" {
		t.Errorf("after Step: task %s, want succeeded", st)
	}
	if got := c.hits("places", "hall"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("after the task: %v, want [1]", got)
	}

	// Resume: the scheduler goroutine processes the queue on its own.
	_, sum = c.do("POST", "/indexes/places/documents", docs(2))
	if got := c.hits("places", "hall"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("paused again: %v, want [1]", got)
	}
	s.Resume()
	waitTask(t, c, sum["taskUid"], "succeeded")
	if got := c.hits("places", "hall"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("after Resume: %v, want [1 2]", got)
	}
}

// waitTask polls a task until it reaches want; the test's own deadline
// bounds it.
func waitTask(t *testing.T, c *client, uid any, want string) {
	t.Helper()
	for t.Context().Err() == nil {
		if st, _ := c.task(uid); st == want {
			return
		}
	}
	t.Fatalf("task %v never became %s", uid, want)
}

// TestAutobatchingV1_18 checks that a search sees the state between
// batches, batch by batch, in v1.18.0 mode.
func TestAutobatchingV1_18(t *testing.T) {
	s, c := start(t, Options{})
	c.create("a")
	c.create("b")
	c.do("PATCH", "/indexes/a/settings", map[string]any{"filterableAttributes": []string{"id"}})
	s.Drain()
	s.Pause()
	c.do("POST", "/indexes/a/documents", docs(1))
	c.do("POST", "/indexes/b/documents", docs(9))
	c.do("POST", "/indexes/a/documents/delete-batch", []int{5})
	c.do("POST", "/indexes/a/documents", docs(2))
	c.do("POST", "/indexes/a/documents/delete", map[string]any{"filter": "id = 1"})
	c.do("POST", "/indexes/a/documents", docs(3))
	// After the first batch, the oldest enqueued task is index b's: its
	// batch comes next (create_batch.rs starts from the oldest task).
	wantSeen := [][]string{{"1", "2"}, {"1", "2"}, {"2"}, {"2", "3"}}
	for i, want := range wantSeen {
		if !s.Step() {
			t.Fatalf("batch %d missing", i)
		}
		if got := c.hits("a", "hall"); !slices.Equal(got, want) {
			t.Errorf("after batch %d index a has %v, want %v", i, got, want)
		}
	}
}

// TestAutobatching: which queued tasks share a batch, as autobatcher.rs
// decides at v1.18.0 and at v1.50.0 (from v1.45.0, additions queued after
// a deletion by filter join its batch; the reverse still stops a batch).
func TestAutobatching(t *testing.T) {
	type op struct {
		method, path string
		body         any
	}
	add := func(id int) op { return op{"POST", "/indexes/a/documents", docs(id)} }
	addB := op{"POST", "/indexes/b/documents", docs(9)}
	byID := op{"POST", "/indexes/a/documents/delete-batch", []int{5}}
	byFilter := op{"POST", "/indexes/a/documents/delete", map[string]any{"filter": "id = 1"}}
	settings := func(attr string) op {
		return op{"PATCH", "/indexes/a/settings", map[string]any{"sortableAttributes": []string{attr}}}
	}
	mixed := []op{add(1), addB, byID, add(2), byFilter, add(3), settings("id"), settings("title")}
	tests := []struct {
		version string
		ops     []op
		// want lists the batches as indexes into ops.
		want      [][]int
		wantFinal []string
	}{
		{"1.18.0", mixed, [][]int{{0, 2, 3}, {1}, {4}, {5}, {6, 7}}, []string{"2", "3"}},
		{"1.44.0", mixed, [][]int{{0, 2, 3}, {1}, {4}, {5}, {6, 7}}, []string{"2", "3"}},
		{"1.45.0", mixed, [][]int{{0, 2, 3}, {1}, {4, 5}, {6, 7}}, []string{"2", "3"}},
		{"1.50.0", mixed, [][]int{{0, 2, 3}, {1}, {4, 5}, {6, 7}}, []string{"2", "3"}},
		// A rewrite (delete by filter, then add) and the reverse order.
		{"1.18.0", []op{add(1), byFilter, add(1)}, [][]int{{0}, {1}, {2}}, []string{"1"}},
		{"1.50.0", []op{add(1), byFilter, add(1)}, [][]int{{0}, {1, 2}}, []string{"1"}},
		// Once the batch holds an addition, the next deletion by filter
		// stops it; deletions by id still join.
		{"1.50.0", []op{byFilter, add(1), byID, byFilter, add(2)}, [][]int{{0, 1, 2}, {3, 4}}, []string{"2"}},
		{"1.18.0", []op{byFilter, add(1), byID, byFilter, add(2)}, [][]int{{0}, {1, 2}, {3}, {4}}, []string{"2"}},
		// Deletions by filter batch with deletions by id in both versions.
		{"1.18.0", []op{byFilter, byID, byFilter}, [][]int{{0, 1, 2}}, nil},
		{"1.50.0", []op{byFilter, byID, byFilter}, [][]int{{0, 1, 2}}, nil},
		// Settings never join document tasks.
		{"1.50.0", []op{byFilter, settings("id"), add(1)}, [][]int{{0}, {1}, {2}}, []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d_ops", tt.version, len(tt.ops)), func(t *testing.T) {
			s, c := start(t, Options{Version: tt.version})
			c.create("a")
			c.create("b")
			c.do("PATCH", "/indexes/a/settings", map[string]any{"filterableAttributes": []string{"id"}})
			s.Drain()
			first := len(s.Batches)
			s.Pause()
			var uids []int64
			for _, o := range tt.ops {
				status, sum := c.do(o.method, o.path, o.body)
				if status != 202 {
					t.Fatalf("%s %s = %d %v", o.method, o.path, status, sum)
				}
				uids = append(uids, int64(sum["taskUid"].(float64)))
			}
			s.Drain()
			var want [][]int64
			for _, b := range tt.want {
				var uidsOf []int64
				for _, i := range b {
					uidsOf = append(uidsOf, uids[i])
				}
				want = append(want, uidsOf)
			}
			if got := s.Batches[first:]; !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("batches %v, want %v", got, want)
			}
			if got := c.hits("a", "hall"); !slices.Equal(got, tt.wantFinal) {
				t.Errorf("index a has %v, want %v", got, tt.wantFinal)
			}
		})
	}
}

// TestSchedulerTakesDeletionAtOnce: the scheduler wakes as soon as a task
// is queued (crates/index-scheduler/src/scheduler/mod.rs wakes on every
// registration), so an addition queued while a deletion by filter is
// already processing is not in its batch, whatever the version.
func TestSchedulerTakesDeletionAtOnce(t *testing.T) {
	for _, version := range []string{"1.18.0", "1.50.0"} {
		t.Run(version, func(t *testing.T) {
			s, c := start(t, Options{Version: version})
			c.create("a")
			c.do("PATCH", "/indexes/a/settings", map[string]any{"filterableAttributes": []string{"id"}})
			c.do("POST", "/indexes/a/documents", docs(1))
			s.Drain()
			first := len(s.Batches)
			// Hold the batch "processing" until the test ends.
			s.SetTaskDelay(time.Hour)
			_, del := c.do("POST", "/indexes/a/documents/delete", map[string]any{"filter": "id = 1"})
			waitTask(t, c, del["taskUid"], "processing")
			_, addSum := c.do("POST", "/indexes/a/documents", docs(1))
			s.Mu.Lock()
			task := s.Tasks[int64(addSum["taskUid"].(float64))]
			status, batch := task.Status, task.Batch
			s.Mu.Unlock()
			if status != "enqueued" || batch != -1 {
				t.Errorf("addition queued after the scheduler took the deletion: %s in batch %d, want enqueued outside it", status, batch)
			}
			s.Mu.Lock()
			if len(s.Batches) != first {
				t.Errorf("batches %v finished while one was held", s.Batches[first:])
			}
			s.Mu.Unlock()
		})
	}
}

// TestPayloadLimit: a body over the limit is 413 payload_too_large and
// registers no task; the default limit is 100 MB as in option.rs.
func TestPayloadLimit(t *testing.T) {
	if New(Options{}).opts.PayloadLimit != 100_000_000 {
		t.Errorf("default payload limit %d, want 100000000", New(Options{}).opts.PayloadLimit)
	}
	s, c := start(t, Options{PayloadLimit: 64})
	body := []byte(`[{"id":1,"title":"` + strings.Repeat("x", 64) + `"}]`)
	status, answer := c.do("POST", "/indexes/a/documents", body)
	if status != 413 || answer["code"] != "payload_too_large" || answer["message"] != "The provided payload reached the size limit. The maximum accepted payload size is 64 B." {
		t.Errorf("over the limit: %d %v, want 413 payload_too_large", status, answer)
	}
	if status, answer := c.do("POST", "/indexes/a/documents", []byte(`[{"id":1}]`)); status != 202 {
		t.Errorf("under the limit: %d %v, want 202", status, answer)
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if len(s.Tasks) != 1 {
		t.Errorf("%d tasks registered, want 1 (the refused body registers none)", len(s.Tasks))
	}
	if s.Refused != 1 {
		t.Errorf("Refused = %d, want 1", s.Refused)
	}
}

// TestDiscardBodies: every request is recorded with its body's size;
// with DiscardBodies the body itself is not kept.
func TestDiscardBodies(t *testing.T) {
	body := []byte(`[{"id":1,"title":"` + strings.Repeat("x", 1000) + `"}]`)
	for _, tc := range []struct {
		name     string
		discard  bool
		wantBody bool
	}{
		{"bodies kept by default", false, true},
		{"bodies discarded", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := start(t, Options{DiscardBodies: tc.discard})
			if status, answer := c.do("POST", "/indexes/a/documents", body); status != 202 {
				t.Fatalf("POST documents: %d %v, want 202", status, answer)
			}
			calls := s.Calls("POST", "/indexes/a/documents")
			if len(calls) != 1 {
				t.Fatalf("%d calls recorded, want 1", len(calls))
			}
			if calls[0].Size != int64(len(body)) {
				t.Errorf("Size = %d, want %d", calls[0].Size, len(body))
			}
			if got := calls[0].Body != nil; got != tc.wantBody {
				t.Errorf("body kept: %v, want %v", got, tc.wantBody)
			}
			s.Drain()
			s.Mu.Lock()
			defer s.Mu.Unlock()
			if n := len(s.Indexes["a"].Docs); n != 1 {
				t.Errorf("%d documents stored, want 1 (the body is applied either way)", n)
			}
		})
	}
}

// TestPositionsCap: words past the 65,536th position of an attribute are
// not searchable.
func TestPositionsCap(t *testing.T) {
	s, c := start(t, Options{})
	filler := strings.Repeat("filler ", MaxPositionsPerAttribute-1)
	c.create("a")
	c.do("POST", "/indexes/a/documents", []any{
		map[string]any{"id": 1, "title": filler + "needle"},          // position 65,535: the last indexed
		map[string]any{"id": 2, "title": filler + "filler haystack"}, // position 65,536: beyond
	})
	s.Drain()
	if got := c.hits("a", "needle"); !slices.Equal(got, []string{"1"}) {
		t.Errorf("needle at the last position: %v, want [1]", got)
	}
	if got := c.hits("a", "haystack"); len(got) != 0 {
		t.Errorf("haystack beyond the cap found: %v", got)
	}
}

// TestErrorCodes: the codes and statuses the service reads.
func TestErrorCodes(t *testing.T) {
	s, c := start(t, Options{})
	c.do("POST", "/indexes", map[string]any{"uid": "a", "primaryKey": "id"})
	_, dup := c.do("POST", "/indexes", map[string]any{"uid": "a"})
	_, pk := c.do("POST", "/indexes/a/documents?primaryKey=other", docs(1))
	_, badID := c.do("POST", "/indexes/a/documents", []any{map[string]any{"id": "7:2025"}})
	_, floatID := c.do("POST", "/indexes/a/documents", []any{map[string]any{"id": 1.5}})
	_, goodID := c.do("POST", "/indexes/a/documents", []any{map[string]any{"id": "7-2025_x"}, map[string]any{"id": 8}})
	s.Drain()
	for _, tt := range []struct {
		task       map[string]any
		wantStatus string
		wantCode   string
	}{{badID, "failed", "invalid_document_id"}, {floatID, "failed", "invalid_document_id"}, {goodID, "succeeded", ""}} {
		if st, code := c.task(tt.task["taskUid"]); st != tt.wantStatus || code != tt.wantCode {
			t.Errorf("task %v: %s %s, want %s %s", tt.task["taskUid"], st, code, tt.wantStatus, tt.wantCode)
		}
	}
	if st, code := c.task(dup["taskUid"]); st != "failed" || code != "index_already_exists" {
		t.Errorf("second creation: %s %s, want failed index_already_exists", st, code)
	}
	if st, code := c.task(pk["taskUid"]); st != "failed" || code != "index_primary_key_already_exists" {
		t.Errorf("another primary key: %s %s, want failed index_primary_key_already_exists", st, code)
	}
	s.Mu.Lock()
	before := len(s.Tasks)
	s.Mu.Unlock()
	tests := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"search of a missing index", "POST", "/indexes/nope/search", map[string]any{"q": ""}, 404, "index_not_found"},
		{"missing index inside a federated multi-search", "POST", "/multi-search",
			map[string]any{"federation": map[string]any{}, "queries": []any{map[string]any{"indexUid": "nope"}}}, 400, "index_not_found"},
		{"malformed delete filter", "POST", "/indexes/a/documents/delete", map[string]any{"filter": "id = "}, 400, "invalid_document_filter"},
		{"empty delete filter", "POST", "/indexes/a/documents/delete", map[string]any{"filter": ""}, 400, "invalid_document_filter"},
		{"missing task", "GET", "/tasks/999", nil, 404, "task_not_found"},
		{"unknown settings field", "PATCH", "/indexes/a/settings", map[string]any{"sortFacetValuesBy": map[string]any{}}, 400, "bad_request"},
		// Request-time validations of a search (400 at once, as
		// crates/meilisearch/src/search/mod.rs and milli answer them).
		{"sort on an attribute not sortable", "POST", "/indexes/a/search", map[string]any{"sort": []string{"title:asc"}}, 400, "invalid_search_sort"},
		{"filter on an attribute not filterable", "POST", "/indexes/a/search", map[string]any{"filter": "title = x"}, 400, "invalid_search_filter"},
		{"malformed search filter", "POST", "/indexes/a/search", map[string]any{"filter": "id ="}, 400, "invalid_search_filter"},
		{"facet not filterable", "POST", "/indexes/a/search", map[string]any{"facets": []string{"title"}}, 400, "invalid_search_facets"},
		{"pagination inside a federated query", "POST", "/multi-search",
			map[string]any{"federation": map[string]any{}, "queries": []any{map[string]any{"indexUid": "a", "limit": 5}}}, 400, "invalid_multi_search_query_pagination"},
		{"facets inside a federated query", "POST", "/multi-search",
			map[string]any{"federation": map[string]any{}, "queries": []any{map[string]any{"indexUid": "a", "facets": []string{"id"}}}}, 400, "invalid_multi_search_query_facets"},
		{"missing index in facetsByIndex", "POST", "/multi-search",
			map[string]any{"federation": map[string]any{"facetsByIndex": map[string]any{"nope": []string{"id"}}}, "queries": []any{map[string]any{"indexUid": "a"}}}, 400, "index_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, answer := c.do(tt.method, tt.path, tt.body)
			if status != tt.status || answer["code"] != tt.code {
				t.Errorf("%d %v, want %d %s", status, answer, tt.status, tt.code)
			}
		})
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if len(s.Tasks) != before {
		t.Errorf("refused requests registered %d tasks", len(s.Tasks)-before)
	}
}

// TestMasterKey: with a master key, a request without Authorization is
// 401 and one with an unknown key 403; /health needs no key; a key's
// indexes limit the tasks it sees.
func TestMasterKey(t *testing.T) {
	s, c := start(t, Options{MasterKey: "master"})
	anon := &client{t: t, url: c.url}
	if status, _ := anon.do("GET", "/health", nil); status != 200 {
		t.Errorf("health without a key: %d", status)
	}
	if status, answer := anon.do("GET", "/tasks", nil); status != 401 || answer["code"] != "missing_authorization_header" {
		t.Errorf("no key: %d %v", status, answer)
	}
	wrong := &client{t: t, url: c.url, key: "wrong"}
	if status, answer := wrong.do("GET", "/tasks", nil); status != 403 || answer["code"] != "invalid_api_key" {
		t.Errorf("wrong key: %d %v", status, answer)
	}
	_, key := c.do("POST", "/keys", map[string]any{"uid": "k", "actions": []string{"*"}, "indexes": []string{"a"}})
	c.do("POST", "/indexes", map[string]any{"uid": "a"})
	c.do("POST", "/indexes", map[string]any{"uid": "b"})
	s.Drain()
	limited := &client{t: t, url: c.url, key: key["key"].(string)}
	_, all := c.do("GET", "/tasks", nil)
	_, mine := limited.do("GET", "/tasks", nil)
	if all["total"] != 2.0 || mine["total"] != 1.0 {
		t.Errorf("tasks: master sees %v, key on [a] sees %v; want 2 and 1", all["total"], mine["total"])
	}
}

// TestSettingsCreateIndex: a settings update on a missing index creates it
// when the key may create indexes, and fails with index_not_found when it
// may not (routes/indexes/settings.rs, allow_index_creation).
func TestSettingsCreateIndex(t *testing.T) {
	s, c := start(t, Options{MasterKey: "master"})
	c.do("POST", "/keys", map[string]any{"uid": "ro", "actions": []string{"settings.update"}, "indexes": []string{"*"}})
	tests := []struct {
		name, key, index, want string
	}{
		{"master key creates", "master", "made", "succeeded"},
		{"key without indexes.create", "key-of-ro", "not-made", "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := &client{t: t, url: c.url, key: tt.key}
			status, sum := kc.do("PATCH", "/indexes/"+tt.index+"/settings", map[string]any{"filterableAttributes": []string{"id"}})
			if status != 202 {
				t.Fatalf("PATCH = %d %v", status, sum)
			}
			s.Drain()
			if st, _ := c.task(sum["taskUid"]); st != tt.want {
				t.Errorf("task %s, want %s", st, tt.want)
			}
			if got := s.Index(tt.index) != nil; got != (tt.want == "succeeded") {
				t.Errorf("index exists: %v", got)
			}
		})
	}
}
