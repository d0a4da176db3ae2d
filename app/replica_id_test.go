package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/search/embedded"
)

// TestReplicaID runs service processes on one MongoDB (an embedded
// FerretDB) under one REPLICA_ID.
func TestReplicaID(t *testing.T) {
	t.Parallel()
	uri := mongotest.Start(t)
	load := func(t *testing.T, env map[string]string) *config.Config {
		t.Helper()
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	// LEASE_TTL is an hour: a process that had to wait for the expiry
	// would never lead during the test, so leading proves the take-back.
	t.Run("restarted after a crash, a replica takes its lease back at once", func(t *testing.T) {
		db := mongotest.Database(t)
		engine, err := embedded.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engine.Close() })
		cfg := load(t, map[string]string{"DATA_DIR": t.TempDir(), "MONGO_URI": uri, "MONGO_DATABASE": db,
			"LISTEN_ADDR": "127.0.0.1:0", "REPLICA_ID": "calendar-1", "LEASE_TTL": "1h", "DRAIN_DELAY": "0"})
		start := func(t *testing.T) (*mongo.Lease, context.CancelFunc, chan error, *testsupport.SyncBuffer) {
			store, err := mongo.Open(t.Context(), uri, db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close(context.Background()) })
			logs := &testsupport.SyncBuffer{}
			lease := newLease(cfg, store, cfg.NewLogger(logs)).(*mongo.Lease)
			ctx, stop := context.WithCancel(context.Background())
			_, done := serveOn(t, ctx, cfg, store, engine, lease, logs)
			t.Cleanup(func() { stop(); <-done })
			return lease, stop, done, logs
		}
		first, crash, done, _ := start(t)
		eventually(t, "the first process leads", func() bool { return first.IsLeader(t.Context()) == nil })
		crash() // serve stops; the lease is NOT released (see serve)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		done <- nil // for the cleanup
		second, _, _, logs := start(t)
		eventually(t, "the restarted process leads", func() bool { return second.IsLeader(t.Context()) == nil })
		// The lease log follows the hold on its own goroutine: the line
		// may come just after the store says this process leads.
		eventually(t, "the take-back logged as from calendar-1", func() bool { return strings.Contains(logs.String(), `previous=calendar-1`) })
	})

	// LEASE_TTL is 3s: the first process checks the lease every second.
	t.Run("a second live process with the same REPLICA_ID is detected and refused", func(t *testing.T) {
		db := mongotest.Database(t)
		env := map[string]string{"MONGO_URI": uri, "MONGO_DATABASE": db, "LISTEN_ADDR": "127.0.0.1:0",
			"REPLICA_ID": "calendar-1", "LEASE_TTL": "3s", "DRAIN_DELAY": "0"}
		type process struct {
			logs *testsupport.SyncBuffer
			stop context.CancelFunc
			done <-chan error
		}
		start := func() *process {
			env["DATA_DIR"] = t.TempDir()
			cfg := load(t, env)
			p := &process{logs: &testsupport.SyncBuffer{}}
			ctx, stop := context.WithCancel(context.Background())
			p.stop = stop
			_, p.done = serveInBackground(t, ctx, cfg, p.logs)
			return p
		}
		first := start()
		defer first.stop()
		eventually(t, "the first process leads", func() bool { return strings.Contains(first.logs.String(), `msg="lease acquired"`) })
		second := start()
		defer func() {
			second.stop()
			if err := <-second.done; err != nil {
				t.Errorf("the second process: %v\n%s", err, second.logs.String())
			}
		}()
		select {
		case err := <-first.done:
			if !errors.Is(err, mongo.ErrDuplicateReplica) {
				t.Fatalf("the first process stopped with %v, want ErrDuplicateReplica\n%s", err, first.logs.String())
			}
		case <-testdeadline.After(t):
			t.Fatalf("the first process was never refused\n%s", first.logs.String())
		}
		if !strings.Contains(first.logs.String(), "another live process uses this replica identity") {
			t.Errorf("the refusal is not logged:\n%s", first.logs.String())
		}
		eventually(t, "the second process leads", func() bool { return strings.Contains(second.logs.String(), `msg="lease acquired"`) })
	})
}
