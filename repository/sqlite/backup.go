package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sqlitedriver "modernc.org/sqlite"
)

// Snapshots of the store (backups) and the checks of a snapshot file.
//
// Backup copies the database with SQLite's online backup API
// (sqlite3_backup_*, which modernc.org/sqlite exposes on its connections)
// inside one read transaction on a connection of its own: in WAL mode the
// writers go on meanwhile, and the copy is the database as of the
// transaction's start. The row counts Backup returns are read in that same
// transaction, so they are what the copy holds. The copy is then turned
// into a self-contained file (journal_mode DELETE: no -wal beside it).
//
// Check opens a snapshot file and tells whether it is a store this program
// can open: PRAGMA integrity_check, the schema version (PRAGMA
// user_version, from 1 to SchemaVersion), the store's own tables, and its
// row counts.

// SchemaVersion is the newest schema version this program writes (PRAGMA
// user_version); Open migrates an older database to it and refuses a newer
// one.
const SchemaVersion = schemaVersion

// A backup step that finds the source or the copy busy (SQLITE_BUSY,
// SQLITE_LOCKED: another connection's write holds a lock the step needs
// for a moment) is retried after busyStepWait, at most maxBusySteps
// times in one backup.
const (
	busyStepWait = 20 * time.Millisecond
	maxBusySteps = 500
)

// retryableStep reports whether a backup step's error is SQLITE_BUSY or
// SQLITE_LOCKED (extended codes included).
func retryableStep(err error) bool {
	var e *sqlitedriver.Error
	if !errors.As(err, &e) {
		return false
	}
	code := e.Code() & 0xff
	return code == 5 || code == 6 // SQLITE_BUSY, SQLITE_LOCKED
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backupPagesPerStep is how many pages one step of the online backup copies
// between checks of the context.
const backupPagesPerStep = 1024

// ErrNotStore reports that a file is not a store of this program: not an
// SQLite database, or one without the store's tables or schema version.
var ErrNotStore = errors.New("not an eventcal store")

// ErrNewerSchema reports a store written by a newer version of the program.
var ErrNewerSchema = errors.New("the store was written by a newer version of eventcal")

// ErrCorrupt reports a store that fails SQLite's integrity check.
var ErrCorrupt = errors.New("the store fails SQLite's integrity check")

// storeTables are the tables every store has since schema version 1; a
// file without one of them is not a store.
var storeTables = []string{"counters", "posts", "post_slugs", "terms", "users", "tokens", "index_marks"}

// Counts are the row counts of a store: the records by kind, the labels by
// taxonomy, and every table's rows (users, tokens, webhooks, and any table
// a later schema adds, which the counts follow without code changes).
type Counts struct {
	// Records counts the rows of posts by kind (event, venue, ...).
	Records map[string]int64 `json:"records"`
	// Labels counts the rows of terms by taxonomy (category, tag).
	Labels map[string]int64 `json:"labels"`
	// Tables counts the rows of every table.
	Tables map[string]int64 `json:"tables"`
}

// Equal reports whether c and o hold the same counts.
func (c *Counts) Equal(o *Counts) bool {
	eq := func(a, b map[string]int64) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || w != v {
				return false
			}
		}
		return true
	}
	return eq(c.Records, o.Records) && eq(c.Labels, o.Labels) && eq(c.Tables, o.Tables)
}

// Diff describes how o differs from c, one "name: c → o" per differing
// count, in name order ("" when they are equal).
func (c *Counts) Diff(o *Counts) string {
	var out []string
	diff := func(prefix string, a, b map[string]int64) {
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if a[k] != b[k] {
				out = append(out, fmt.Sprintf("%s %s: %d → %d", prefix, k, a[k], b[k]))
			}
		}
	}
	diff("records", c.Records, o.Records)
	diff("labels", c.Labels, o.Labels)
	diff("table", c.Tables, o.Tables)
	return strings.Join(out, "; ")
}

// querier is what counting needs: a connection or a database.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// countRows reads the counts of the database q reads.
func countRows(ctx context.Context, q querier) (*Counts, error) {
	c := &Counts{Records: map[string]int64{}, Labels: map[string]int64{}, Tables: map[string]int64{}}
	grouped := func(query string, into map[string]int64) error {
		rows, err := q.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			if err := rows.Scan(&k, &n); err != nil {
				return err
			}
			into[k] = n
		}
		return rows.Err()
	}
	if err := grouped(`SELECT kind, count(*) FROM posts GROUP BY kind`, c.Records); err != nil {
		return nil, fmt.Errorf("sqlite: count records: %w", err)
	}
	if err := grouped(`SELECT taxonomy, count(*) FROM terms GROUP BY taxonomy`, c.Labels); err != nil {
		return nil, fmt.Errorf("sqlite: count labels: %w", err)
	}
	tables, err := tableNames(ctx, q)
	if err != nil {
		return nil, err
	}
	for _, name := range tables {
		var n int64
		rows, err := q.QueryContext(ctx, `SELECT count(*) FROM "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
		if err != nil {
			return nil, fmt.Errorf("sqlite: count %s: %w", name, err)
		}
		if rows.Next() {
			err = rows.Scan(&n)
		}
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite: count %s: %w", name, err)
		}
		c.Tables[name] = n
	}
	return c, nil
}

// tableNames lists the database's own tables (SQLite's internal ones
// aside), in name order.
func tableNames(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// backuper is the online backup of a modernc.org/sqlite connection.
type backuper interface {
	NewBackup(dstURI string) (*sqlitedriver.Backup, error)
}

// Backup writes a consistent snapshot of the store to dst and returns the
// row counts the snapshot holds, read in the read transaction the copy is
// made in. Writers are not blocked meanwhile. dst must not exist, or be an
// empty file the caller created with the mode it wants; it is removed on
// failure, and the caller renames it into place once checked (Check). The
// file is self-contained (journal_mode DELETE).
func (s *Store) Backup(ctx context.Context, dst string) (*Counts, error) {
	abs, err := filepath.Abs(dst)
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	if st, err := os.Lstat(abs); err == nil && (!st.Mode().IsRegular() || st.Size() > 0) {
		return nil, fmt.Errorf("sqlite: backup: %s already exists", dst)
	}
	c, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	defer c.Close()
	// A read transaction over the counts and the copy: BEGIN is deferred,
	// the first SELECT takes the snapshot the copy then reads.
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, fmt.Errorf("sqlite: backup: %w", err)
	}
	defer func() {
		if _, err := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			// Never hand a connection with an open transaction back to the
			// pool.
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	counts, err := countRows(ctx, c)
	if err != nil {
		return nil, err
	}
	err = c.Raw(func(dc any) error {
		b, ok := dc.(backuper)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) has no online backup", dc)
		}
		bk, err := b.NewBackup(dsn(abs))
		if err != nil {
			return err
		}
		for busy := 0; ; {
			more, err := bk.Step(backupPagesPerStep)
			if retryableStep(err) && busy < maxBusySteps {
				// SQLITE_BUSY and SQLITE_LOCKED leave the backup as it
				// was: SQLite's documentation says to retry the step.
				busy++
				more, err = true, sleepCtx(ctx, busyStepWait)
			}
			if err == nil && more {
				err = ctx.Err()
			}
			if err != nil || !more {
				return errors.Join(err, bk.Finish())
			}
		}
	})
	if err != nil {
		removeDB(abs)
		return nil, fmt.Errorf("sqlite: backup to %s: %w", dst, err)
	}
	// The copy carries the source's WAL flag in its header: make it a
	// single file.
	db, err := sql.Open("sqlite", dsn(abs))
	if err == nil {
		db.SetMaxOpenConns(1)
		_, err = db.ExecContext(ctx, "PRAGMA journal_mode=DELETE")
		err = errors.Join(err, db.Close())
	}
	if err != nil {
		removeDB(abs)
		return nil, fmt.Errorf("sqlite: backup to %s: %w", dst, err)
	}
	return counts, nil
}

// removeDB removes a database file and its journals.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

// FileInfo is what Check found in a store file.
type FileInfo struct {
	// Version is the file's schema version (PRAGMA user_version).
	Version int
	// Counts are its row counts.
	Counts *Counts
}

// Check opens the database file at path and checks that it is a store this
// program can open: an SQLite database (else ErrNotStore) with the store's
// tables and a schema version from 1 to SchemaVersion (ErrNewerSchema
// above it) that passes PRAGMA integrity_check (ErrCorrupt). It returns its
// version and row counts. Its errors do not name the file. The file must be one the caller owns: Check
// leaves it in journal_mode DELETE (a single file).
func Check(ctx context.Context, path string) (*FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file", ErrNotStore)
	}
	// No _pragma: opening must neither create the file nor change it
	// before the checks.
	db, err := sql.Open("sqlite", dsn(abs, "mode=rw"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStore, err)
	}
	tables, err := tableNames(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStore, err)
	}
	for _, name := range storeTables {
		if !slices.Contains(tables, name) {
			return nil, fmt.Errorf("%w: it has no table %s", ErrNotStore, name)
		}
	}
	if version < 1 {
		return nil, fmt.Errorf("%w: it has no schema version", ErrNotStore)
	}
	if version > SchemaVersion {
		return nil, fmt.Errorf("%w (schema version %d; this one knows up to %d): use a newer eventcal", ErrNewerSchema, version, SchemaVersion)
	}
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return nil, fmt.Errorf("integrity check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
		}
		return nil, fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		return nil, err
	}
	counts, err := countRows(ctx, db)
	if err != nil {
		return nil, err
	}
	return &FileInfo{Version: version, Counts: counts}, nil
}

// RowCounts returns the store's row counts now (see Counts).
func (s *Store) RowCounts(ctx context.Context) (*Counts, error) {
	c, err := s.rdb.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	defer func() {
		if _, err := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return countRows(ctx, c)
}
