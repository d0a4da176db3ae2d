package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"
)

// TestCreateMatchesANewStore: a store opened on a file Create made holds
// what a store opened on a new file holds (every table, index and
// trigger, every row, the schema version), for each file Create makes. It is package sqlitetest's test, kept in
// package sqlite's test binary (as an external test) so that sqlitetest
// has no test binary of its own linking SQLite again at every go test run.
func TestCreateMatchesANewStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "new.db"), filepath.Join(dir, "made.db"), filepath.Join(dir, "made2.db")}
	for i, p := range paths {
		if i > 0 {
			sqlitetest.Create(t, p)
		}
		st, err := sqlite.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(t, paths[0])
	for _, p := range paths[1:] {
		if got := dump(t, p); got != want {
			t.Errorf("%s:\n%s\nwant (a new store):\n%s", filepath.Base(p), got, want)
		}
	}
}

// dump is the schema (sqlite_master), every table's rows and the
// user_version of the database file path, as text.
func dump(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	var tables []string
	rows, err := db.Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var typ, name, def string
		if err := rows.Scan(&typ, &name, &def); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %s\n", typ, name, def)
		if typ == "table" {
			tables = append(tables, name)
		}
		n++
	}
	rows.Close()
	if n < 10 {
		t.Fatalf("%s has %d schema objects", path, n)
	}
	for _, table := range tables {
		_, rows := sqlitetest.Rows(t, db, table)
		for _, vals := range rows {
			fmt.Fprintf(&b, "%s %v\n", table, vals)
		}
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "user_version %d\n", v)
	return b.String()
}
