package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/search/embedded"
)

// replica is one service process of TestReplicas.
type replica struct {
	name  string
	base  string
	lease *mongo.Lease
	stop  context.CancelFunc
	done  chan error
	logs  *testsupport.SyncBuffer
}

// TestReplicas runs two service instances on one MongoDB (an embedded
// FerretDB). Exactly one runs the sync worker and the scheduled jobs: the
// holder of the lease. Writes through either are indexed by the holder's
// worker; when the holder crashes (its context is cancelled and its lease
// is NOT released), the other takes the lease over after LEASE_TTL and
// indexes everything that was left.
//
// Both instances share one search engine, an in-process Bleve index. That
// stands for the shared Meilisearch a real multi-process deployment needs:
// with MongoDB and Bleve, each process would have its own index under its
// own DATA_DIR and only the leader's would be updated (the service logs a
// warning for that setup). Sharing the engine is what makes the test
// meaningful: every list, through either process, reads what the one
// worker wrote, so a write that no worker indexed would be missing.
func TestReplicas(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	db := mongotest.Database(t)
	engine, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	const token = "replica-admin"
	// LEASE_TTL is 3s: short for the take-over, long enough that a holder
	// slowed down by a busy machine still renews in time.

	start := func(name string) *replica {
		t.Helper()
		env := map[string]string{"DATA_DIR": t.TempDir(), "MONGO_URI": uri, "MONGO_DATABASE": db, "LEASE_TTL": "3s",
			"LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": token, "SHUTDOWN_TIMEOUT": "5s", "WEBHOOK_ALLOW_PRIVATE": "true", "DRAIN_DELAY": "0"}
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		store, err := mongo.Open(t.Context(), uri, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close(context.Background()) })
		r := &replica{name: name, logs: &testsupport.SyncBuffer{}}
		r.lease = store.Lease(leaseName, "replica-"+name, cfg.LeaseTTL, cfg.NewLogger(r.logs))
		ctx, stop := context.WithCancel(context.Background())
		r.stop = stop
		var addr net.Addr
		addr, r.done = serveOn(t, ctx, cfg, store, engine, r.lease, r.logs)
		r.base = "http://" + addr.String() + cfg.APIRoot()
		t.Cleanup(func() { r.crash(t) })
		return r
	}

	client := &http.Client{Timeout: testdeadline.Timeout(t)}
	call := func(r *replica, method, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, r.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s on %s: %v", method, path, r.name, err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 300 {
			t.Fatalf("%s %s on %s: %d %s", method, path, r.name, res.StatusCode, raw)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s on %s: %v", method, path, r.name, err)
		}
		return out
	}
	// Events within the default list window (the next two years).
	write := func(r *replica, n int, tag string) {
		t.Helper()
		for i := range n {
			start := time.Now().UTC().AddDate(0, 1, i)
			call(r, "POST", "/events", fmt.Sprintf(`{"title":"Replica %s %d","status":"publish","start_date":%q,"end_date":%q}`,
				tag, i, start.Format("2006-01-02 15:04"), start.Add(time.Hour).Format("2006-01-02 15:04")))
		}
	}
	listed := func(r *replica) int {
		out := call(r, "GET", "/events?per_page=1&search=replica", "")
		n, _ := out["total"].(float64)
		return int(n)
	}
	leads := func(r *replica) bool { return r.lease.IsLeader(context.Background()) == nil }

	// A webhook receiver: each message must arrive once, from whichever
	// replica holds the lease.
	var hookMu sync.Mutex
	hookIDs := map[string]int{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hookMu.Lock()
		hookIDs[r.Header.Get("webhook-id")]++
		hookMu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	messages := func() (distinct, total int) {
		hookMu.Lock()
		defer hookMu.Unlock()
		for _, n := range hookIDs {
			total += n
		}
		return len(hookIDs), total
	}

	a := start("a")
	eventually(t, "a holds the lease", func() bool { return leads(a) })
	b := start("b")
	hook := call(b, "POST", "/admin/webhooks", `{"url":"`+receiver.URL+`","events":["event.created"]}`)
	hookPath := fmt.Sprintf("/admin/webhooks/%v/deliveries?per_page=200", hook["id"])

	// Writes through both are indexed by a's worker; b's worker waits.
	write(a, 8, "a")
	write(b, 8, "b")
	eventually(t, "a's worker indexes the writes of both", func() bool { return listed(b) == 16 && listed(a) == 16 })
	if leads(b) {
		t.Fatal("b holds the lease while a does")
	}
	// b's worker is paused: it has not run a single batch.
	if out := b.logs.String(); strings.Contains(out, `msg="sync batch"`) {
		t.Errorf("b's worker ran while a held the lease:\n%s", out)
	}

	eventually(t, "a delivers one message per event", func() bool {
		log, _ := call(b, "GET", hookPath, "")["deliveries"].([]any)
		done := 0
		for _, d := range log {
			if d.(map[string]any)["status"] == "delivered" {
				done++
			}
		}
		return done == 16
	})
	if d, n := messages(); d != 16 || n != 16 {
		t.Fatalf("receiver got %d messages (%d distinct), want 16 once each", n, d)
	}

	// a crashes: its lease is not released. b's writes wait for a worker.
	a.crash(t)
	write(b, 6, "c")
	eventually(t, "b takes the lease over", func() bool { return leads(b) })
	eventually(t, "b's worker indexes what was left", func() bool { return listed(b) == 22 })
	eventually(t, "b delivers the messages of the writes a left", func() bool { _, n := messages(); return n >= 22 })
	if d, n := messages(); d != 22 || n != 22 {
		t.Errorf("receiver got %d messages (%d distinct), want 22 once each", n, d)
	}
	// (The batch's log line follows its index writes: poll for it too.)
	eventually(t, "b's logs show the take-over and b's worker", func() bool {
		out := b.logs.String()
		return strings.Contains(out, `msg="lease acquired"`) && strings.Contains(out, `msg="sync batch"`)
	})
}

// crash stops the replica as if it died: the service stops, the lease is
// left in the database to expire.
func (r *replica) crash(t *testing.T) {
	t.Helper()
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("%s: serve: %v\n%s", r.name, err, r.logs.String())
		}
	case <-testdeadline.After(t):
		t.Errorf("%s did not stop", r.name)
	}
}
