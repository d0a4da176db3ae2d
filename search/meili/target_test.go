package meili

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// Tests written against a target run unchanged against the fake (the
// default) or, when TEST_MEILI_URL is set, against a real Meilisearch
// server whose master key is TEST_MEILI_KEY:
//
//	docker run -d --rm -p 7700:7700 -e MEILI_MASTER_KEY=test-master-key-0123456789 getmeili/meilisearch:v1.18.0
//	TEST_MEILI_URL=http://localhost:7700 TEST_MEILI_KEY=test-master-key-0123456789 go test ./search/meili/
//
// On a real server every test uses its own index prefix and deletes its
// indexes when it ends. Tests that assert the fake's request log (which
// only the fake keeps) check it only when target.fake is set.

// target is the server a test runs against.
type target struct {
	url    string
	master string
	// prefix starts every index of the test.
	prefix string
	// fake is the fake server, nil on a real one.
	fake *fakeMeili
}

var targetSeq atomic.Int64

// newTarget returns the server of the test: a new fake (emulating
// search), or the real server of TEST_MEILI_URL.
func newTarget(t *testing.T) *target {
	t.Helper()
	if url, key, ok := realMeili(); ok {
		tg := &target{url: url, master: key, prefix: fmt.Sprintf("t%d_%d_", time.Now().UnixNano(), targetSeq.Add(1))}
		t.Cleanup(func() { tg.deleteIndexes(t) })
		return tg
	}
	f := startSimulator(t, meilisim.Options{Version: MinVersion})
	f.Emulate = true
	return &target{url: f.srv.URL, master: "master-key", prefix: DefaultIndexPrefix, fake: f}
}

// engine opens an engine on the target with key and the test's prefix.
func (tg *target) engine(t *testing.T, key string, opts Options) *Engine {
	t.Helper()
	opts.IndexPrefix = tg.prefix + opts.IndexPrefix
	if tg.fake != nil {
		opts.TaskPollInterval = time.Millisecond
	}
	if opts.TaskTimeout == 0 {
		opts.TaskTimeout = testdeadline.Timeout(t)
	}
	e, err := Open(t.Context(), tg.url, key, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// deleteIndexes deletes the indexes of the test's prefix on a real server.
func (tg *target) deleteIndexes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testdeadline.Timeout(t))
	defer cancel()
	var list struct {
		Results []struct {
			UID string `json:"uid"`
		} `json:"results"`
	}
	if status := tg.call(ctx, tg.master, http.MethodGet, "/indexes?limit=1000", nil, &list); status != 200 {
		t.Errorf("list indexes: %d", status)
		return
	}
	for _, ix := range list.Results {
		if len(ix.UID) >= len(tg.prefix) && ix.UID[:len(tg.prefix)] == tg.prefix {
			tg.call(ctx, tg.master, http.MethodDelete, "/indexes/"+ix.UID, nil, nil)
		}
	}
}

// call sends one request with key and decodes the answer into out (when
// not nil); it returns the status (0 when the request failed).
func (tg *target) call(ctx context.Context, key, method, path string, body, out any) int {
	var rd *bytes.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.url+path, rd)
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// waitTask polls task uid with key until it ends (or the test's deadline).
func (tg *target) waitTask(t *testing.T, key string, uid int64) string {
	t.Helper()
	deadline := time.Now().Add(testdeadline.Timeout(t))
	for {
		var task struct {
			Status string `json:"status"`
		}
		status := tg.call(t.Context(), key, http.MethodGet, fmt.Sprintf("/tasks/%d", uid), nil, &task)
		if status != 200 {
			t.Fatalf("GET /tasks/%d: %d", uid, status)
		}
		if task.Status != "enqueued" && task.Status != "processing" {
			return task.Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %d still %s", uid, task.Status)
		}
		time.Sleep(5 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}
