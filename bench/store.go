package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof" // -pprof
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/sqlite"
)

// The -store, -mongo-uri and -pprof flags.
var (
	storeKind string
	mongoURI  string
	pprofAddr string
	noIDIndex bool
)

// servePprof serves net/http/pprof on -pprof's address (when set), to
// profile any phase of a run, seeding included:
// go tool pprof http://localhost:6060/debug/pprof/profile?seconds=20
// (and /debug/pprof/mutex, /debug/pprof/block: where goroutines wait on
// locks, one contention event in 100 sampled, blocking of 1 ms and more).
func servePprof() {
	if pprofAddr != "" {
		runtime.SetMutexProfileFraction(100)
		runtime.SetBlockProfileRate(int(time.Millisecond))
		go func() { fmt.Fprintln(os.Stderr, "pprof:", http.ListenAndServe(pprofAddr, nil)) }()
	}
}

// storeCommands counts the commands the MongoDB store sent (0 with SQLite).
var storeCommands atomic.Int64

// openStore opens the store the benchmark runs on: the embedded SQLite
// store (the default), MongoDB over a FerretDB v1 started in this process
// (-store ferretdb; SQLite files under dir), or the MongoDB server at
// -mongo-uri (-store mongodb; a new database calendar_bench_<nanoseconds>). It
// returns the store, a name for the table's title and a function that
// releases everything. FerretDB is linked into the benchmark only, never
// into the service.
func openStore(ctx context.Context, dir string) (repository.Store, string, func(), error) {
	switch storeKind {
	case "", "sqlite":
		st, err := sqlite.Open(ctx, filepath.Join(dir, "calendar.db"))
		if err != nil {
			return nil, "", nil, err
		}
		return st, "SQLite", func() { st.Close(context.Background()) }, nil
	case "ferretdb", "mongodb":
	default:
		return nil, "", nil, fmt.Errorf("-store %q: want sqlite, ferretdb or mongodb", storeKind)
	}
	monitor := mongo.WithCommandMonitor(&event.CommandMonitor{
		Started: func(context.Context, *event.CommandStartedEvent) { storeCommands.Add(1) },
	})
	uri, name, stopServer := mongoURI, "MongoDB "+mongo.RedactURI(mongoURI), func() {}
	database := fmt.Sprintf("calendar_bench_%d", time.Now().UnixNano())
	if storeKind == "ferretdb" {
		fdir := filepath.Join(dir, "ferretdb")
		if err := os.MkdirAll(fdir, 0o755); err != nil {
			return nil, "", nil, err
		}
		u, stop, err := mongotest.Embedded(fdir, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now().Add(time.Minute))
		if err != nil {
			return nil, "", nil, err
		}
		uri, name, database = u, "MongoDB over FerretDB v1.24 (SQLite handler, in process)", "calendar"
		stopServer = func() { _ = stop(time.Now().Add(10 * time.Second)) }
	} else if uri == "" {
		return nil, "", nil, fmt.Errorf("-store mongodb needs -mongo-uri")
	}
	st, err := mongo.Open(ctx, uri, database, monitor)
	if err != nil {
		stopServer()
		return nil, "", nil, err
	}
	// The indexes are built in the background: wait, so that their
	// commands are not counted and every collection exists.
	if err := st.WaitIndexes(ctx); err != nil {
		st.Close(context.Background())
		stopServer()
		return nil, "", nil, err
	}
	if storeKind == "ferretdb" && !noIDIndex {
		// FerretDB's look-ups by a string _id scan without it.
		if err := mongotest.IndexIDLookups(filepath.Join(dir, "ferretdb")); err != nil {
			st.Close(context.Background())
			stopServer()
			return nil, "", nil, err
		}
		name += ", _id look-ups indexed (mongotest.IndexIDLookups)"
	}
	if storeKind == "mongodb" {
		name += ", database " + database + " (left for inspection)"
	}
	release := func() {
		st.Close(context.Background())
		stopServer()
	}
	return st, name, release, nil
}
