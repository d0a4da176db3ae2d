package meili

import (
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// Every test of this package that talks to a Meilisearch server gets it
// from this file, the one place that decides which server that is:
//
//   - by default, a simulated server (meilisim.Server) served over HTTP
//     for the test;
//   - when TEST_MEILI_URL is set (with TEST_MEILI_KEY, the server's master
//     key), the real server there. Tests written against a target
//     (newTarget) run unchanged on it; tests that need the simulator
//     itself (its request log, canned hits, injected failures, scheduler
//     control or limits) call requireSimulator, which skips them on a real
//     server and says why. newFakeMeili is such a test's entry point.

// realMeili returns the real server's URL and master key when
// TEST_MEILI_URL is set.
func realMeili() (url, key string, ok bool) {
	url = os.Getenv("TEST_MEILI_URL")
	return url, os.Getenv("TEST_MEILI_KEY"), url != ""
}

// requireSimulator skips the test when it runs against a real server: the
// test needs what only the simulator has (why says what).
func requireSimulator(t *testing.T, why string) {
	t.Helper()
	if url, _, ok := realMeili(); ok {
		t.Skipf("needs the Meilisearch simulator (%s); TEST_MEILI_URL=%s is a real server", why, url)
	}
}

// fakeMeili is a simulated Meilisearch server (meilisim.Server) served
// over HTTP for one test.
type fakeMeili struct {
	*meilisim.Server
	t   *testing.T
	srv *httptest.Server
}

// newFakeMeili starts a simulated server of version MinVersion, closed
// when the test ends. A test that uses it reads or drives the simulator
// (request log, canned hits, failures, scheduler): on a real server
// (TEST_MEILI_URL) it is skipped.
func newFakeMeili(t *testing.T) *fakeMeili {
	t.Helper()
	return newFakeMeiliAt(t, MinVersion)
}

// newFakeMeiliAt is newFakeMeili simulating Meilisearch version (for
// example meilisim.NewestVersion, whose autobatching and federated search
// differ from MinVersion's).
func newFakeMeiliAt(t *testing.T, version string) *fakeMeili {
	t.Helper()
	requireSimulator(t, "the test reads the simulator's request log or state, or drives its scheduler")
	return startSimulator(t, meilisim.Options{Version: version})
}

// startSimulator starts a simulated server with opts, closed when the test
// ends.
func startSimulator(t *testing.T, opts meilisim.Options) *fakeMeili {
	opts.Errorf = t.Errorf
	s := meilisim.New(opts)
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

// initialisedEngine opens an Engine on the fake with opts and runs its
// Init; the fake's log is then cleared, so that the test sees only the
// requests that follow.
func (f *fakeMeili) initialisedEngine(opts Options) *Engine {
	f.t.Helper()
	e := f.engine(opts)
	if err := e.Init(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
	f.Reset()
	return e
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

// stepOnPoll pauses the simulator's scheduler and has each poll of an
// unfinished task process one batch afterwards: every task is seen
// unfinished at least once, so the service must poll it to its end.
func (f *fakeMeili) stepOnPoll() {
	f.Pause()
	f.Mu.Lock()
	f.StepOnPoll = true
	f.Mu.Unlock()
}

// TestRequireSimulator: the wrapper skips a simulator-only test when
// TEST_MEILI_URL names a real server, and runs it otherwise.
func TestRequireSimulator(t *testing.T) {
	tests := []struct {
		url      string
		wantSkip bool
	}{
		{"", false},
		{"http://127.0.0.1:7700", true},
	}
	for _, tt := range tests {
		t.Run("TEST_MEILI_URL="+tt.url, func(t *testing.T) {
			t.Setenv("TEST_MEILI_URL", tt.url)
			var ran bool
			t.Run("simulator only", func(t *testing.T) {
				requireSimulator(t, "test")
				ran = true
			})
			if ran == tt.wantSkip {
				t.Errorf("ran %v, want skipped %v", ran, tt.wantSkip)
			}
		})
	}
}
