// Package storekit opens the embedded (SQLite) store of the sync packages'
// tests. It is apart from package testkit so that a test needing neither a
// store nor an index (sync/lease) links no SQLite, and one needing the
// store alone (sync/webhooks) links no Bleve (package indexkit opens both):
// each test binary is linked at every go test run.
package storekit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"
)

// OpenStore opens an embedded store in dir, closed when the test ends.
func OpenStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	path := filepath.Join(dir, "calendar.db")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		sqlitetest.Create(t, path) // a new store, made from a copy
	}
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}
