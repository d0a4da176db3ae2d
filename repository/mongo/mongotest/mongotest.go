// Package mongotest runs a MongoDB-compatible server for tests: FerretDB
// v1 embedded in the test process, backed by SQLite files under
// t.TempDir(), or an external server named by the TEST_MONGO_URI
// environment variable.
//
// A test calls Start once for the server and Database for every store it
// opens, so tests never share data even when they share a server:
//
//	uri := mongotest.Start(t)
//	store, err := mongo.Open(ctx, uri, mongotest.Database(t))
//
// Close every client before the test ends (register its Close with
// t.Cleanup after calling Start): FerretDB waits up to three seconds for
// open connections when it stops.
//
// FerretDB logs are discarded unless TEST_FERRETDB_LOG is set (to "debug"
// for everything, to anything else for warnings and errors).
//
// The package's own tests are in package mongo's test binary (the files
// repository/mongo/mongotest_*_test.go): a test binary of their own would
// link FerretDB once more at every go test run.
package mongotest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository/storetest"
)

// EnvURI names the environment variable that points the tests at an
// external MongoDB (or FerretDB) server instead of an embedded FerretDB.
const EnvURI = "TEST_MONGO_URI"

// EnvLog names the environment variable that turns FerretDB logging on.
const EnvLog = "TEST_FERRETDB_LOG"

// newMu serialises ferretdb.New: it writes package-level state (the version
// info) that would otherwise race when parallel tests start servers.
var newMu sync.Mutex

// Start returns the URI of a MongoDB-compatible server for t.
//
// When TEST_MONGO_URI is set, Start returns it unchanged (the caller must
// then use Database for unique database names). Otherwise it starts an
// embedded FerretDB v1 with the SQLite handler on a random loopback port,
// state under t.TempDir(), waits until it answers a ping and stops it when
// t and its subtests finish; in a process whose TestMain runs Main, it
// returns the process's shared embedded FerretDB instead.
func Start(t testing.TB) string {
	t.Helper()
	uri, _ := StartFiles(t)
	return uri
}

// StartFiles is Start that also returns the directory of the embedded
// FerretDB's SQLite files: each database is the file <database>.sqlite
// there, each collection a table of it (named in its _ferretdb_collections
// table) whose _ferretdb_sjson column holds the documents. A test that
// compares the whole store many times reads them directly, without
// FerretDB decoding every document for each look. dir is "" when
// TEST_MONGO_URI names an external server. In a process whose TestMain
// runs Main, the server and dir are the process's shared ones: touch only
// the files of your own databases there.
func StartFiles(t testing.TB) (uri, dir string) {
	t.Helper()
	if uri := os.Getenv(EnvURI); uri != "" {
		return uri, ""
	}
	uri, dir, ok := sharedServer(t)
	if !ok {
		return StartOwn(t)
	}
	uri, err := untilDeadline(uri, testdeadline.Of(t))
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	return uri, dir
}

// StartOwn is StartFiles with an embedded FerretDB of t's own even in a
// process whose TestMain runs Main: for the tests that need a server no
// other test uses (several servers at once, a server they stop). Every
// other test calls Start or StartFiles.
func StartOwn(t testing.TB) (uri, dir string) {
	t.Helper()
	if uri := os.Getenv(EnvURI); uri != "" {
		return uri, ""
	}

	dir = t.TempDir() // registered first, so removed after FerretDB stops
	uri, stop, err := Embedded(dir, logger(), testdeadline.Of(t))
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	uri, err = untilDeadline(uri, testdeadline.Of(t))
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(testdeadline.Of(t)); err != nil {
			t.Errorf("mongotest: %v", err)
		}
	})
	return uri, dir
}

// shared is the process's embedded FerretDB when its TestMain runs Main:
// started by the first test that asks (sharedServer), stopped by Main
// after the tests.
var shared struct {
	mu       sync.Mutex
	enabled  bool // Main runs the tests
	started  bool // the first test asked (err says how it went)
	uri, dir string
	stop     func(deadline time.Time) error
	err      error
}

// sharedStopWait bounds how long Main waits for the shared FerretDB to
// stop once the tests are done (it waits up to three seconds for open
// connections itself).
const sharedStopWait = time.Minute

// Main runs the tests of m with one embedded FerretDB for the whole test
// process (started by the first test calling Start or StartFiles, each
// test in databases of its own, mongotest.Database) and stops it, its
// files removed, once they are done; it returns m.Run's exit code, or 1
// when the server did not stop. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(mongotest.Main(m)) }
//
// A server per test costs its start and stop, and ferretdb.New writes
// package-level state (the version info: FerretDB v1.24
// ferretdb/ferretdb.go) that the servers already running read, a data
// race under -race; one server per process starts once. Tests that need a
// server of their own call StartOwn.
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.enabled = true
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		if err := shared.stop(time.Now().Add(sharedStopWait)); err != nil {
			fmt.Fprintf(os.Stderr, "mongotest: the shared FerretDB: %v\n", err)
			code = max(code, 1)
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	return code
}

// sharedServer returns the URI and files of the process's shared FerretDB
// (starting it for the first test that asks), ok false when TestMain does
// not run Main. t fails when the server could not start.
func sharedServer(t testing.TB) (uri, dir string, ok bool) {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.enabled {
		return "", "", false
	}
	if !shared.started {
		shared.started = true
		shared.dir, shared.err = os.MkdirTemp("", "mongotest-")
		if shared.err == nil {
			shared.uri, shared.stop, shared.err = Embedded(shared.dir, logger(), testdeadline.Of(t))
		}
	}
	if shared.err != nil {
		t.Fatalf("mongotest: the shared FerretDB: %v", shared.err)
	}
	return shared.uri, shared.dir, true
}

// untilDeadline returns uri with timeoutMS set to the time left until
// deadline: a store opened on it bounds each operation by the test's own
// deadline, not by the store's DefaultTimeout of 10 s, which an operation
// on a near-16 MB record can exceed on a busy machine (the embedded
// FerretDB decodes documents in Go). Tests of the timeout itself set their
// own (mongo.WithTimeout).
func untilDeadline(uri string, deadline time.Time) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("FerretDB's URI %q: %w", uri, err)
	}
	q := u.Query()
	q.Set("timeoutMS", strconv.FormatInt(max(time.Until(deadline).Milliseconds(), 1), 10))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Embedded starts a FerretDB v1 with the SQLite handler in this process,
// on a random loopback port with its files under dir, and returns its URI
// once it answers a ping (waiting until ready at most) and the function
// that stops it, waiting until the given deadline. Tests call Start; the
// benchmark (go run ./bench -store ferretdb) calls Embedded. The service's
// binary never links FerretDB.
func Embedded(dir string, log *slog.Logger, ready time.Time) (uri string, stop func(deadline time.Time) error, err error) {
	return EmbeddedAt(dir, "127.0.0.1:0", log, ready)
}

// EmbeddedAt is Embedded listening on the TCP address addr ("host:port";
// port 0 picks a free one). The standalone test server
// (mongotest/cmd/ferretdb) calls it.
func EmbeddedAt(dir, addr string, log *slog.Logger, ready time.Time) (uri string, stop func(deadline time.Time) error, err error) {
	sqliteURL := (&url.URL{Scheme: "file", Path: dir + "/"}).String()
	// The files are throw-away: skip fsync to keep tests fast on slow disks.
	sqliteURL += "?_pragma=synchronous(off)"

	newMu.Lock()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    log,
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	newMu.Unlock()
	if err != nil {
		return "", nil, fmt.Errorf("start FerretDB: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	stop = func(deadline time.Time) error {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("FerretDB stopped with an error: %w", err)
			}
			return nil
		case <-time.After(time.Until(deadline)):
			return errors.New("FerretDB did not stop")
		}
	}

	// The listener is bound by ferretdb.New, so the URI is known at once.
	uri = f.MongoDBURI()
	if err := waitReady(uri, done, ready); err != nil {
		cancel()
		return "", nil, err
	}
	return uri, stop, nil
}

// waitReady pings the server at uri until it answers, Run fails or the
// deadline (the test's, testdeadline.Of: a busy machine may be slow to
// start FerretDB) passes.
func waitReady(uri string, done <-chan error, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(time.Second))
	if err != nil {
		return fmt.Errorf("connect to FerretDB at %s: %w", uri, err)
	}
	defer client.Disconnect(context.Background())

	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := client.Ping(pctx, nil)
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case runErr := <-done:
			return fmt.Errorf("FerretDB stopped before it was ready: %v (last ping: %v)", runErr, err)
		case <-ctx.Done():
			return fmt.Errorf("FerretDB at %s never became ready: %v", uri, err)
		case <-tick.C:
		}
	}
}

// logger returns the logger handed to FerretDB: a discarding one unless
// TEST_FERRETDB_LOG asks for output.
func logger() *slog.Logger {
	switch v := os.Getenv(EnvLog); {
	case v == "":
		return slog.New(slog.DiscardHandler)
	case strings.EqualFold(v, "debug"):
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	default:
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
}

// dbSeq numbers the databases handed out by this process.
var dbSeq atomic.Int64

// runID tells apart test processes sharing one external server.
var runID = func() string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprintf("%08x", time.Now().UnixNano()&0xffffffff)
	}
	return hex.EncodeToString(b)
}()

// unsafeChars matches what may not appear in a database name.
var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_]+`)

// Database returns a database name that no other test (in this process or
// another one sharing the same server) uses. The name is derived from the
// test name so leftovers on an external server are easy to attribute.
//
// When TEST_MONGO_URI is set, the database is dropped when t finishes; an
// embedded FerretDB's files disappear with its temporary directory anyway.
func Database(t testing.TB) string {
	t.Helper()
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	// MongoDB caps database names at 63 bytes (FerretDB too).
	suffix := fmt.Sprintf("_%s_%d", runID, dbSeq.Add(1))
	if max := 63 - len("t_") - len(suffix); len(name) > max {
		name = name[:max]
	}
	db := "t_" + name + suffix

	if uri := os.Getenv(EnvURI); uri != "" {
		t.Cleanup(func() { drop(t, uri, db) })
	}
	return db
}

// drop removes database db from the server at uri, reporting failures
// without failing the test.
func drop(t testing.TB, uri, db string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Logf("mongotest: drop %s: %v", db, err)
		return
	}
	defer client.Disconnect(ctx)
	if err := client.Database(db).RunCommand(ctx, bson.D{{Key: "dropDatabase", Value: 1}}).Err(); err != nil {
		t.Logf("mongotest: drop %s: %v", db, err)
	}
}

// StoreOptions returns the scale of the store conformance suite for the
// server Start returns: in full (storetest's defaults) against an external
// server (TEST_MONGO_URI); with 4 writers of 10 posts each against the
// embedded FerretDB, which runs in the test process over SQLite and
// serialises every write, so that 8×50 concurrent creates under -race on a
// busy machine take minutes without testing anything more.
func StoreOptions() storetest.Options {
	if os.Getenv(EnvURI) != "" {
		return storetest.Options{}
	}
	return storetest.Options{Workers: 4, PerWorker: 10}
}

// IndexIDLookups adds to the SQLite files of an embedded FerretDB (its
// directory, as given to Embedded) the index its look-ups by _id can use.
// FerretDB v1.24 answers a filter of exactly {_id: <string>} with SQL
// (every other filter is evaluated in Go over the whole collection), but
// its WHERE clause reads _ferretdb_sjson->'$._id' while its own _id index
// is on _ferretdb_sjson->"_id", which SQLite does not take for the same
// expression: every such look-up scans the table (EXPLAIN QUERY PLAN:
// SCAN). The store looks up posts and terms (by their string _id),
// counters, marks, locks, slug reservations, ID claims and tokens that way,
// several times per read and write, in collections that grow with the data. Call it after the store created its
// collections (mongo.Open); collections created later lack the index.
// dir must be a server's own (Embedded, StartOwn), not the one StartFiles
// shares between the tests of a process (Main): index one database there
// with IndexIDs.
func IndexIDLookups(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.sqlite"))
	if err != nil {
		return err
	}
	for _, file := range files {
		if err := indexIDLookups(file); err != nil {
			return fmt.Errorf("mongotest: index _id look-ups in %s: %w", file, err)
		}
	}
	return nil
}

// IndexIDs is IndexIDLookups for one database (db) of a test's server
// (dir, its files, from StartFiles): nothing when dir is "" (an external
// server, which indexes _id itself); t fails when the index cannot be
// added. Call it after the store opened (mongo.Open creates its
// collections), so that the store's look-ups by _id search an index, as
// on MongoDB, instead of each scanning its collection.
func IndexIDs(t testing.TB, dir, db string) {
	t.Helper()
	if dir == "" {
		return
	}
	if err := indexIDLookups(filepath.Join(dir, db+".sqlite")); err != nil {
		t.Fatalf("mongotest: index _id look-ups in %s: %v", db, err)
	}
}

// indexIDLookups adds the _id look-up index to every collection table of
// one FerretDB database file.
func indexIDLookups(file string) error {
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: file}).String()+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\_ferretdb\_%' ESCAPE '\'`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+"_id_lookup", t)
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	return nil
}
