package meili

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// fakeMeili is a simulated Meilisearch server (meilisim.Server) served
// over HTTP for one test.
type fakeMeili struct {
	*meilisim.Server
	t   *testing.T
	srv *httptest.Server
}

// newFakeMeili starts a simulated server of version MinVersion, closed
// when the test ends.
func newFakeMeili(t *testing.T) *fakeMeili {
	s := meilisim.New(meilisim.Options{Version: MinVersion, Errorf: t.Errorf})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(s.Close)
	return &fakeMeili{Server: s, t: t, srv: srv}
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

// stepOnPoll pauses the simulator's scheduler and has each poll of an
// unfinished task process one batch afterwards: every task is seen
// unfinished at least once, so the service must poll it to its end.
func (f *fakeMeili) stepOnPoll() {
	f.Pause()
	f.Mu.Lock()
	f.StepOnPoll = true
	f.Mu.Unlock()
}
