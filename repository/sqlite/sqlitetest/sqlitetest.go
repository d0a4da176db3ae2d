// Package sqlitetest makes SQLite store files for the tests of other
// packages. A new store's Open creates the whole schema and runs every
// migration (about 35 ms); the tests of a package open hundreds of
// stores, so Create writes a copy of one database that a store created
// and closed once per test process, and Open then finds its schema
// current. Only tests import it; the tests of package sqlite open new
// files, which is what they test (Create's own test,
// TestCreateMatchesANewStore, is in package sqlite's test binary).
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/calendar/eventcal/repository/sqlite"
)

// template is the database file of a store created and closed once.
var template struct {
	once sync.Once
	data []byte
	err  error
}

// Create writes at path (a file that must not exist yet) the database of
// a new, empty store: sqlite.Open(path) then opens a store exactly as it
// leaves a new one. t fails if the file cannot be made.
func Create(t testing.TB, path string) {
	t.Helper()
	template.once.Do(func() { template.data, template.err = newTemplate() })
	if template.err != nil {
		t.Fatalf("sqlitetest: %v", template.err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	if _, err := f.Write(template.data); err != nil {
		f.Close()
		t.Fatalf("sqlitetest: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
}

// newTemplate creates a store in a temporary directory, closes it and
// returns its database file.
func newTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := st.Close(ctx); err != nil {
		return nil, err
	}
	// Closed, the store has written everything to its database file: a
	// write-ahead log left beside it would hold part of the schema.
	for _, side := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(path + side); err == nil && fi.Size() > 0 {
			return nil, fmt.Errorf("the closed template store left %s of %d bytes", side, fi.Size())
		}
	}
	return os.ReadFile(path)
}
