// Package sqlite is the embedded storage engine: it implements
// repository.Store on one SQLite database file, with the pure-Go driver
// modernc.org/sqlite (no cgo).
//
// # Layout
//
// Posts and terms are stored as JSON documents (the json tags of
// repository.Post and repository.Term) next to a few plain columns that
// queries filter on (kind, status, parent, image URL); one generic table
// type, docTable (doctable.go), does for both what is the same: reads, ID
// allocation, slugs, folded names and updates. Everything a query
// must find by value lives in side tables kept in step with the document in
// the same transaction:
//
//   - post_slugs / term_slugs: one row per (kind or taxonomy, language, slug),
//     whose primary key makes slugs unique;
//   - post_links: the venues, organizers, categories and tags of each event,
//     for the link filters of FindPosts, UnlinkPost, DeleteTerm and
//     TermCounts;
//   - post_titles / term_names: titles and names folded to lower case (ASCII
//     only: "É" and "é" are different, as in SQLite's own lower()), for the
//     case-insensitive Title and Name filters;
//   - counters: the post, term, user, mark, webhook, source and
//     source_run sequences. IDs come from a counter, never from
//     MAX(id)+1, so they are never reused (portable.go reads and raises
//     them for a portable export and load);
//   - index_marks: one row per item that needs (re)indexing, written in the
//     same transaction as the item, with a sequence number that grows on
//     every write;
//   - job_state: the periodic jobs' persisted state, one value per key
//     (GetJobState, SetJobState);
//   - sources and source_runs: calendar sources and their runs as JSON
//     documents; the events a source imported are found through
//     posts_by_source, an expression index on the source ID in the
//     posts' documents (sources.go).
//
// # Concurrency
//
// The database runs in WAL mode: readers never block the writer and see the
// last committed state. Every write is one transaction opened with BEGIN
// IMMEDIATE (the _txlock DSN parameter), so it holds SQLite's write lock
// from its first statement and writers never deadlock or fail midway on a
// lock upgrade. Several processes may open the same file (a CLI "user add"
// while the service runs): SQLite's file locks serialize their writes and
// busy_timeout makes a writer wait for the lock instead of failing at once.
// Inside one process the writes also go through a single connection, which
// queues them in Go rather than in SQLite's sleeping busy handler.
//
// UpdatePost and UpdateTerm call the caller's function outside any
// transaction and write the result only if the revision is unchanged,
// retrying otherwise (optimistic concurrency), so a slow or re-entrant fn
// never holds the write lock.
//
// synchronous=NORMAL is used with WAL: a committed write survives a crash of
// the process; a power loss may drop the last transactions, but never half
// of one, so an item and its index mark are always lost or kept together.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/calendar/eventcal/repository"
)

// busyTimeout is how long a write waits for another process's write lock.
const busyTimeout = 10 * time.Second

// schemaVersion is stored in PRAGMA user_version; Open refuses a database
// written by a newer schema.
const schemaVersion = 7

// migrations bring a database from one version to the next: migrations[i]
// runs on a database at version i+1 (the schema above is version 1).
var migrations = [][]string{
	{ // 2: token names, last use and expiry; disabled users
		`ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE tokens ADD COLUMN name TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE tokens ADD COLUMN last_used TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE tokens ADD COLUMN expires TEXT NOT NULL DEFAULT ''`,
	},
	{ // 3: delivery claims (token, and expiry in Unix nanoseconds)
		`ALTER TABLE webhook_deliveries ADD COLUMN claim TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE webhook_deliveries ADD COLUMN claim_until INTEGER NOT NULL DEFAULT 0`,
	},
	{ // 4: failed indexing attempts of marks (marks.go): attempts,
		// last_error and next_at (Unix nanoseconds; 0 for a mark that
		// never failed)
		`ALTER TABLE index_marks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE index_marks ADD COLUMN last_error TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE index_marks ADD COLUMN next_at INTEGER NOT NULL DEFAULT 0`,
		`CREATE INDEX IF NOT EXISTS index_marks_failing ON index_marks(next_at) WHERE attempts > 0`,
	},
	{ // 5: users' e-mail addresses and origins (kept from an import;
		// origin is the JSON of a repository.Origin, '' for none)
		`ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE users ADD COLUMN origin TEXT NOT NULL DEFAULT ''`,
	},
	{ // 6: calendar sources and their runs (sources.go), their ID
		// counters, and the index that finds the events a source
		// imported from the records' documents
		`CREATE TABLE IF NOT EXISTS sources (
			id  INTEGER PRIMARY KEY,
			rev INTEGER NOT NULL,
			doc TEXT NOT NULL       -- JSON of repository.Source
		)`,
		`CREATE TABLE IF NOT EXISTS source_runs (
			id        INTEGER PRIMARY KEY,
			source_id INTEGER NOT NULL,
			doc       TEXT NOT NULL -- JSON of repository.SourceRun
		)`,
		`CREATE INDEX IF NOT EXISTS source_runs_by_source ON source_runs(source_id, id)`,
		`INSERT OR IGNORE INTO counters(name, value) VALUES ('source', 0), ('source_run', 0)`,
		`CREATE INDEX IF NOT EXISTS posts_by_source ON posts(json_extract(doc, '$.source.id'), id)
			WHERE json_extract(doc, '$.source.id') IS NOT NULL`,
	},
	{ // 7: the webhook endpoints' ID counter (portable.go). Endpoints
		// took SQLite's rowid before, which hands the ID of the newest
		// endpoint out again once it is deleted; the counter starts at
		// the largest ID stored (a deleted endpoint above it is not
		// known any more) and only grows from there.
		`INSERT OR IGNORE INTO counters(name, value) SELECT 'webhook', COALESCE(MAX(id), 0) FROM webhooks`,
	},
}

// schema creates every table and index; it is idempotent.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS counters (
		name  TEXT PRIMARY KEY,
		value INTEGER NOT NULL
	) WITHOUT ROWID`,
	`INSERT OR IGNORE INTO counters(name, value) VALUES ('post', 0), ('term', 0), ('user', 0), ('mark', 0)`,

	`CREATE TABLE IF NOT EXISTS posts (
		id        INTEGER PRIMARY KEY,
		kind      TEXT NOT NULL,
		status    TEXT NOT NULL,
		parent    INTEGER,           -- events only, NULL for none
		image_url TEXT,              -- images only
		revision  INTEGER NOT NULL,
		doc       TEXT NOT NULL      -- JSON of repository.Post
	)`,
	`CREATE INDEX IF NOT EXISTS posts_by_kind ON posts(kind, id)`,
	`CREATE INDEX IF NOT EXISTS posts_by_status ON posts(status, id)`,
	`CREATE INDEX IF NOT EXISTS posts_by_parent ON posts(parent) WHERE parent IS NOT NULL`,
	`CREATE INDEX IF NOT EXISTS posts_by_image_url ON posts(image_url) WHERE image_url IS NOT NULL`,
	`CREATE TABLE IF NOT EXISTS post_slugs (
		kind    TEXT NOT NULL,
		lang    TEXT NOT NULL,
		slug    TEXT NOT NULL,
		post_id INTEGER NOT NULL,
		PRIMARY KEY (kind, lang, slug)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS post_slugs_by_post ON post_slugs(post_id)`,
	`CREATE TABLE IF NOT EXISTS post_links (
		post_id INTEGER NOT NULL,
		rel     TEXT NOT NULL,       -- venue, organizer, category or tag
		target  INTEGER NOT NULL,
		PRIMARY KEY (post_id, rel, target)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS post_links_by_target ON post_links(rel, target, post_id)`,
	`CREATE TABLE IF NOT EXISTS post_titles (
		post_id    INTEGER NOT NULL,
		lang       TEXT NOT NULL,
		title_fold TEXT NOT NULL,
		PRIMARY KEY (post_id, lang)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS post_titles_by_title ON post_titles(title_fold, lang, post_id)`,

	`CREATE TABLE IF NOT EXISTS terms (
		id       INTEGER PRIMARY KEY,
		taxonomy TEXT NOT NULL,
		parent   INTEGER NOT NULL,
		revision INTEGER NOT NULL,
		doc      TEXT NOT NULL       -- JSON of repository.Term
	)`,
	`CREATE INDEX IF NOT EXISTS terms_by_taxonomy ON terms(taxonomy, parent, id)`,
	`CREATE INDEX IF NOT EXISTS terms_by_parent ON terms(parent)`,
	`CREATE TABLE IF NOT EXISTS term_slugs (
		taxonomy TEXT NOT NULL,
		lang     TEXT NOT NULL,
		slug     TEXT NOT NULL,
		term_id  INTEGER NOT NULL,
		PRIMARY KEY (taxonomy, lang, slug)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS term_slugs_by_term ON term_slugs(term_id)`,
	`CREATE TABLE IF NOT EXISTS term_names (
		term_id   INTEGER NOT NULL,
		lang      TEXT NOT NULL,
		name_fold TEXT NOT NULL,
		PRIMARY KEY (term_id, lang)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS term_names_by_name ON term_names(name_fold, lang, term_id)`,

	`CREATE TABLE IF NOT EXISTS users (
		id      INTEGER PRIMARY KEY,
		login   TEXT NOT NULL UNIQUE,
		role    TEXT NOT NULL,
		created TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS tokens (
		hash    TEXT PRIMARY KEY,
		user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
		created TEXT NOT NULL
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS tokens_by_user ON tokens(user_id)`,

	`CREATE TABLE IF NOT EXISTS index_marks (
		kind TEXT NOT NULL,
		id   INTEGER NOT NULL,
		seq  INTEGER NOT NULL,
		at   INTEGER NOT NULL,       -- Unix nanoseconds
		PRIMARY KEY (kind, id)
	) WITHOUT ROWID`,
	`CREATE UNIQUE INDEX IF NOT EXISTS index_marks_by_seq ON index_marks(seq)`,

	// The periodic jobs' state (jobstate.go). A database written before
	// it existed gains it here on open.
	`CREATE TABLE IF NOT EXISTS job_state (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	) WITHOUT ROWID`,

	// Webhooks (webhooks.go): endpoints as JSON documents, the state each
	// item was last reported in, and the delivery queue and log.
	`CREATE TABLE IF NOT EXISTS webhooks (
		id  INTEGER PRIMARY KEY,
		rev INTEGER NOT NULL,
		doc TEXT NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS webhook_items (
		kind     TEXT NOT NULL,
		id       INTEGER NOT NULL,
		resource TEXT NOT NULL,
		revision INTEGER NOT NULL,
		status   TEXT NOT NULL,
		PRIMARY KEY (kind, id)
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS webhook_deliveries (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		webhook_id INTEGER NOT NULL,
		msg_id     TEXT NOT NULL,
		item       TEXT NOT NULL,
		status     TEXT NOT NULL,
		next_at    INTEGER NOT NULL,   -- Unix nanoseconds
		created    INTEGER NOT NULL,   -- Unix nanoseconds
		doc        TEXT NOT NULL,
		payload    BLOB NOT NULL
	)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS webhook_deliveries_by_msg ON webhook_deliveries(webhook_id, msg_id)`,
	`CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries(status, webhook_id, item, seq)`,
}

// Store is a repository.Store on one SQLite file. It is safe for concurrent
// use, also by several processes on the same file.
//
// Its methods are declared on one type per concern, each holding the
// shared connections (conn) and each in the file of its concern:
// recordStore (posts.go), labelStore (terms.go), accountStore (users.go),
// webhookStore (webhooks.go), sourceStore (sources.go), markQueue
// (marks.go) and aggregateReads (aggregates.go). Store composes them and declares only the job state and
// its lifetime.
type Store struct {
	*conn
	recordStore
	labelStore
	accountStore
	webhookStore
	sourceStore
	markQueue
	aggregateReads
}

// conn is the database connections and statement caches every part of the
// store shares; it runs the reads and the write transactions.
type conn struct {
	// rdb serves reads on several connections at once.
	rdb *sql.DB
	// wdb has one connection; its transactions start with BEGIN IMMEDIATE.
	wdb    *sql.DB
	reads  stmtCache
	writes stmtCache
	// exclusive holds the locks of Exclusive.
	exclusive keyedMutex

	closeOnce sync.Once
	closeErr  error
}

var _ repository.Store = (*Store)(nil)

// newStore returns the store working on c.
func newStore(c *conn) *Store {
	return &Store{
		conn:           c,
		recordStore:    recordStore{c},
		labelStore:     labelStore{c},
		accountStore:   accountStore{c},
		webhookStore:   webhookStore{c},
		sourceStore:    sourceStore{c},
		markQueue:      markQueue{c},
		aggregateReads: aggregateReads{c},
	}
}

// dsn returns the driver data source name for path with the given
// parameters. The path is URI-escaped because the driver hands "file:" names
// to SQLite as URIs.
func dsn(path string, params ...string) string {
	u := url.URL{Path: filepath.ToSlash(path)}
	return "file:" + u.EscapedPath() + "?" + strings.Join(params, "&")
}

// Open opens (creating if needed) the database file at path, creates the
// schema and returns the store. Call Close when done.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	common := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
	}
	wdb, err := sql.Open("sqlite", dsn(abs, append(common, "_pragma=journal_mode(WAL)", "_txlock=immediate")...))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxIdleTime(0)
	wdb.SetConnMaxLifetime(0)
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: create schema in %s: %w", path, err)
	}
	// Readers need no journal_mode: WAL is a property of the file, set above.
	rdb, err := sql.Open("sqlite", dsn(abs, append(common, "_pragma=query_only(1)")...))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	rdb.SetMaxOpenConns(readers)
	rdb.SetMaxIdleConns(readers)
	rdb.SetConnMaxIdleTime(0)
	rdb.SetConnMaxLifetime(0)
	s := newStore(&conn{rdb: rdb, wdb: wdb})
	s.reads.db, s.writes.db = rdb, wdb
	if err := s.Ping(ctx); err != nil {
		s.Close(ctx)
		return nil, err
	}
	return s, nil
}

// migrate creates the schema in one write transaction, so that processes
// opening a new file at the same time do not trip over each other.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this program's %d", version, schemaVersion)
	}
	for _, q := range schema {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%w\n%s", err, q)
		}
	}
	if err := migrateAggregates(ctx, tx); err != nil {
		return err
	}
	for v := max(version, 1); v < schemaVersion; v++ {
		for _, q := range migrations[v-1] {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("migrate to version %d: %w\n%s", v+1, err, q)
			}
		}
	}
	if version < schemaVersion {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.rdb.QueryRowContext(ctx, "SELECT 1 FROM counters WHERE name = 'post'").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	return nil
}

// Close closes the database. Calling it again is harmless and returns the
// first call's result.
func (s *Store) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		// Best effort: let SQLite refresh its planner statistics if needed
		// (https://sqlite.org/lang_analyze.html#periodically_run_pragma_optimize_).
		s.wdb.ExecContext(ctx, "PRAGMA optimize")
		s.reads.close()
		s.writes.close()
		s.closeErr = errors.Join(s.rdb.Close(), s.wdb.Close())
	})
	return s.closeErr
}

// stmtCache keeps one prepared statement per query text. database/sql
// prepares it again on each connection as needed.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	// Prepare without holding mu: preparing may wait for a connection, and
	// the holder of that connection may need mu.
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[query]; ok {
		st.Close()
		return prev, nil
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[query] = st
	return st, nil
}

// lookup returns the prepared statement for query, nil if there is none yet.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// queryRow runs a cached read statement returning at most one row.
func (s *conn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := s.reads.get(ctx, query)
	if err != nil {
		// Let Scan report the error: run the query unprepared.
		return s.rdb.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// query runs a cached read statement.
func (s *conn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.reads.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// writeTx is one write transaction.
type writeTx struct {
	s   *conn
	ctx context.Context
	tx  *sql.Tx
	// now is taken once the write lock is held, so marks' times follow the
	// order of the writes.
	now time.Time
	// missed lists the queries that had no prepared statement yet.
	missed []string
}

// write runs fn in one write transaction and commits it unless fn fails.
func (s *conn) write(ctx context.Context, fn func(w *writeTx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	w := &writeTx{s: s, ctx: ctx, tx: tx, now: time.Now()}
	err = fn(w)
	if err != nil {
		tx.Rollback()
	} else if err = tx.Commit(); err != nil {
		err = fmt.Errorf("sqlite: commit: %w", err)
	}
	// The write connection is free again: prepare the statements this
	// transaction had to run unprepared (preparing on the pool while the
	// transaction held its only connection would wait forever).
	for _, q := range w.missed {
		s.writes.get(ctx, q)
	}
	return err
}

// stmt returns the cached prepared statement for query bound to the
// transaction, or nil (the caller then runs query unprepared).
func (w *writeTx) stmt(query string) *sql.Stmt {
	st := w.s.writes.lookup(query)
	if st == nil {
		w.missed = append(w.missed, query)
		return nil
	}
	return w.tx.StmtContext(w.ctx, st)
}

func (w *writeTx) exec(query string, args ...any) (sql.Result, error) {
	var res sql.Result
	var err error
	if st := w.stmt(query); st != nil {
		res, err = st.ExecContext(w.ctx, args...)
	} else {
		res, err = w.tx.ExecContext(w.ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return res, nil
}

// execSome runs a statement that must change a row: when it changes none
// it returns repository.ErrNotFound.
func (w *writeTx) execSome(query string, args ...any) error {
	res, err := w.exec(query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return repository.ErrNotFound
	}
	return nil
}

// queryRow runs a statement in the transaction; Scan reports its errors.
func (w *writeTx) queryRow(query string, args ...any) *sql.Row {
	if st := w.stmt(query); st != nil {
		return st.QueryRowContext(w.ctx, args...)
	}
	return w.tx.QueryRowContext(w.ctx, query, args...)
}

// ids runs a query returning one integer column and collects it.
func (w *writeTx) ids(query string, args ...any) ([]int64, error) {
	var rows *sql.Rows
	var err error
	if st := w.stmt(query); st != nil {
		rows, err = st.QueryContext(w.ctx, args...)
	} else {
		rows, err = w.tx.QueryContext(w.ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return scanIDs(rows)
}

// collect appends every row, read with scan, to out, closes rows and
// returns out with rows.Err. (out is returned as given when there are no
// rows: callers choose nil or empty.)
func collect[T any](rows *sql.Rows, out []T, scan func(row interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanIDs(rows *sql.Rows) ([]int64, error) {
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// next allocates n values from the named counter and returns the last one.
// A counter never passes repository.MaxID: the draw that would is refused
// with repository.ErrIDRange (SQLite would otherwise turn the sum into a
// float once it overflowed int64, and every later create would fail).
func (w *writeTx) next(counter string, n int) (int64, error) {
	var v int64
	err := w.queryRow(`UPDATE counters SET value = value + ? WHERE name = ? AND value <= ? - ? RETURNING value`,
		n, counter, repository.MaxID, n).Scan(&v)
	if errors.Is(err, errNoRows) {
		return 0, fmt.Errorf("sqlite: counter %s has reached %d: %w", counter, repository.MaxID, repository.ErrIDRange)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: counter %s: %w", counter, err)
	}
	return v, nil
}

// reserve makes sure the named counter never hands out id (used when a
// caller supplies its own ID, which must be within 1 and
// repository.MaxExplicitID).
func (w *writeTx) reserve(counter string, id int64) error {
	if err := w.reserveCheck(counter, id); err != nil {
		return err
	}
	_, err := w.exec(`UPDATE counters SET value = max(value, ?) WHERE name = ?`, id, counter)
	return err
}

// assign gives a new row of a table numbered by counter its ID: the next
// value of the counter when *id is 0; otherwise the caller's explicit ID,
// which no row may hold (existsQuery, "SELECT 1 FROM t WHERE id = ?",
// finds it: repository.ErrDuplicate) and which moves the counter past it
// (reserve).
func (w *writeTx) assign(counter, existsQuery string, id *int64) error {
	if *id == 0 {
		v, err := w.next(counter, 1)
		if err != nil {
			return err
		}
		*id = v
		return nil
	}
	if err := w.reserveCheck(counter, *id); err != nil {
		return err
	}
	var one int
	err := w.queryRow(existsQuery, *id).Scan(&one)
	if err == nil {
		return fmt.Errorf("sqlite: %s %d exists: %w", counter, *id, repository.ErrDuplicate)
	}
	if !errors.Is(err, errNoRows) {
		return notFound(err)
	}
	return w.reserve(counter, *id)
}

// reserveCheck refuses an explicit ID outside 1..repository.MaxExplicitID
// with repository.ErrIDRange, before anything is read or written.
func (w *writeTx) reserveCheck(counter string, id int64) error {
	if id <= 0 || id > repository.MaxExplicitID {
		return fmt.Errorf("sqlite: %s ID %d is outside 1..%d: %w", counter, id, repository.MaxExplicitID, repository.ErrIDRange)
	}
	return nil
}

// mark records (or renews) index marks for the items, each with a new
// sequence number.
func (w *writeTx) mark(kind repository.MarkKind, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	last, err := w.next("mark", len(ids))
	if err != nil {
		return err
	}
	seq := last - int64(len(ids))
	for _, id := range ids {
		seq++
		if _, err := w.exec(`INSERT INTO index_marks(kind, id, seq, at) VALUES (?, ?, ?, ?)
			ON CONFLICT(kind, id) DO UPDATE SET seq = excluded.seq, at = excluded.at,
				attempts = 0, last_error = '', next_at = 0`,
			string(kind), id, seq, w.now.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// jsonIDs encodes ids as a JSON array for json_each(?), which keeps list
// filters to one bound parameter whatever their length.
func jsonIDs(ids []int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

func jsonStrings(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fold lower-cases ASCII letters only, the case folding of the Title and
// Name filters (documented in the package comment).
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// errNoRows is sql.ErrNoRows, named for the files that do not import database/sql.
var errNoRows = sql.ErrNoRows

// notFound maps sql.ErrNoRows to repository.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return repository.ErrNotFound
	}
	return fmt.Errorf("sqlite: %w", err)
}

// sortedLangs returns the languages of t in a fixed order, so that slug
// allocation does not depend on map iteration.
func sortedLangs(t repository.Text) []string {
	langs := make([]string, 0, len(t))
	for l := range t {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	return langs
}
