package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/sync/indexing"
)

// seedEvents writes n published events straight into the store of dir.
func seedEvents(t *testing.T, dir string, n int) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	start := time.Date(2027, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		p := &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish, Date: start, Modified: start,
			Title: repository.Text{"en": fmt.Sprintf("Seeded %d", i)}, Slug: repository.Text{"en": "seeded"},
			Event: &repository.EventFields{StartLocal: "2027-01-01 10:00:00", EndLocal: "2027-01-01 11:00:00",
				StartUTC: start, EndUTC: start.Add(time.Hour), ShowMap: true, ShowMapLink: true}}
		if err := st.CreateRecord(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
}

// statusLine returns the line of `status` output that starts with name.
func statusLine(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name) {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

func TestReindexAndStatusDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedEvents(t, dir, 30)
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:1"}
	r := runCLI(t, env, "status")
	if r.code != exitOK {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	if got := statusLine(r.stdout, "pending marks"); got != "pending marks 30" {
		t.Errorf("before: %q\n%s", got, r.stdout)
	}
	if got := statusLine(r.stdout, "events"); got != "events store 30, index 0" {
		t.Errorf("before: %q", got)
	}
	r = runCLI(t, env, "reindex")
	if r.code != exitOK || !strings.Contains(r.stdout, "rebuild succeeded: 30 documents") {
		t.Fatalf("reindex: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "30/30") {
		t.Errorf("no progress lines: %q", r.stderr)
	}
	r = runCLI(t, env, "status", "--direct")
	if got := statusLine(r.stdout, "events"); got != "events store 30, index 30" {
		t.Errorf("after: %q\n%s", got, r.stdout)
	}
	if got := statusLine(r.stdout, "search engine"); got != "search engine healthy" {
		t.Errorf("engine: %q", got)
	}
}

func TestReindexAndStatusRemote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedEvents(t, dir, 12)
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token", "DRAIN_DELAY": "0"}
	addr, logs := startServing(t, env)
	remote := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": addr.String(), "ADMIN_TOKEN": "ops-token"}
	// The service is found on LISTEN_ADDR; the index is locked by it, so a
	// direct rebuild would fail: this goes through the admin API.
	r := runCLI(t, remote, "reindex")
	if r.code != exitOK || !strings.Contains(r.stdout, "rebuild succeeded") {
		t.Fatalf("remote reindex: exit %d\nstdout %s\nstderr %s\nlogs %s", r.code, r.stdout, r.stderr, logs.String())
	}
	deadline := testdeadline.Of(t)
	for {
		r = runCLI(t, remote, "status", "--url", "http://"+addr.String())
		if r.code != exitOK {
			t.Fatalf("remote status: exit %d: %s", r.code, r.stderr)
		}
		if statusLine(r.stdout, "events") == "events store 12, index 12" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("index never reached 12 events:\n%s", r.stdout)
		}
	}
	if r := runCLI(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": addr.String(), "ADMIN_TOKEN": "wrong"}, "status"); r.code != exitFailure {
		t.Errorf("wrong token: exit %d", r.code)
	}
	// Without any token the commands say how to pass one.
	for _, cmd := range []string{"status", "reindex"} {
		r := runCLI(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": addr.String()}, cmd)
		if r.code != exitFailure || !strings.Contains(r.stderr, "pass --token or set ADMIN_TOKEN") {
			t.Errorf("%s without a token: exit %d, stderr %s", cmd, r.code, r.stderr)
		}
	}
	// --cancel with no rebuild running says so; it never touches the index.
	if r := runCLI(t, remote, "reindex", "--cancel"); r.code != exitOK || !strings.Contains(r.stderr, "no rebuild is running") {
		t.Errorf("reindex --cancel: exit %d, stderr %s", r.code, r.stderr)
	}
	if r := runCLI(t, map[string]string{"DATA_DIR": t.TempDir()}, "reindex", "--cancel", "--direct"); r.code != exitFailure || !strings.Contains(r.stderr, "needs a running service") {
		t.Errorf("reindex --cancel --direct: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestJobRate: the rate counts from the job's start, so following a
// rebuild joined half-way shows its real rate from the first update.
func TestJobRate(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		done, total int
		after       time.Duration
		rate        float64
		eta         string
	}{
		{0, 1000, 0, 0, "?"},
		{5000, 10000, 10 * time.Second, 500, "10s"},
		{5000, 10000, 100 * time.Millisecond, 50000, "0s"},
		{10000, 10000, 20 * time.Second, 500, "0s"},
	} {
		rate, eta := jobRate(indexing.Job{Done: tc.done, Total: tc.total, Started: start}, start.Add(tc.after))
		if rate != tc.rate || eta != tc.eta {
			t.Errorf("%d/%d after %s: %v docs/s, ETA %s; want %v, %s", tc.done, tc.total, tc.after, rate, eta, tc.rate, tc.eta)
		}
	}
}

// TestFollowInterrupted: Ctrl-C while following a remote rebuild says that
// the rebuild goes on in the service and how to stop it.
func TestFollowInterrupted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"job":{"id":"j1","state":"running","done":5,"total":10,"started":"2026-11-23T12:00:00Z"}}`)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	c := newCLI(func(string) string { return "" }, &out, &errb)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C before the first poll
	a := &adminClient{base: srv.URL, token: "t", http: srv.Client()}
	code := c.followRemote(ctx, a, indexing.Job{ID: "j1", State: indexing.JobRunning, Done: 5, Total: 10, Started: time.Now()})
	if code != exitFailure || !strings.Contains(errb.String(), "it goes on in the service") || !strings.Contains(errb.String(), "reindex --cancel") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// TestRemoteBaseWaitsForASlowService: the operations commands ask a
// service found on LISTEN_ADDR even when it answers slower than the first
// probe (a busy machine: working directly beside it would fail on the
// index's lock), and work directly only when nothing answers: a refused
// connection, an answer other than 200, or no answer within the second
// probe either. The slow service holds the first request it gets until
// that probe gives up (its context ends).
func TestRemoteBaseWaitsForASlowService(t *testing.T) {
	t.Parallel()
	// The first probe waits 2 s: long enough for its request to reach
	// the slow server even on a busy machine (with 50 ms, under the race
	// detector at a load of 25, it gave up before it was sent, so the
	// second probe was the one held). The cases that must find the
	// service give the second probe a minute (they end as soon as it
	// answers); the one that must not, a fifth of a second.
	const wait, slowWait, shortSlowWait = 2 * time.Second, time.Minute, 200 * time.Millisecond
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	cases := []struct {
		name    string
		handler func(n int, w http.ResponseWriter, r *http.Request) // n: the request's number, from 1
		remote  bool
	}{
		{"answers at once", func(int, http.ResponseWriter, *http.Request) {}, true},
		{"answers the second probe", func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				<-r.Context().Done()
			}
		}, true},
		{"answers no probe", func(_ int, w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, false},
		{"answers 503", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, false},
		{"nothing listens", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			addr := closedAddr
			if c.handler != nil {
				var mu sync.Mutex
				n := 0
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					n++
					k := n
					mu.Unlock()
					c.handler(k, w, r)
				}))
				t.Cleanup(srv.Close)
				addr = srv.Listener.Addr().String()
			}
			cfg, err := config.Load(func(k string) string {
				return map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": addr}[k]
			})
			if err != nil {
				t.Fatal(err)
			}
			second := slowWait
			if !c.remote {
				second = shortSlowWait
			}
			got := remoteBaseWithin(&opsFlags{}, cfg, wait, second)
			if want := map[bool]string{true: "http://" + addr}[c.remote]; got != want {
				t.Errorf("remote base %q, want %q", got, want)
			}
		})
	}
}
