// Package indexkit opens the embedded store and Bleve index of the sync
// packages' tests that index (sync/indexing, sync/schedule). It is apart
// from package testkit so that the tests that need no index link no Bleve.
package indexkit

import (
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/internal/testkit/storekit"
)

// Open opens an embedded store and a Bleve index in a new temporary
// directory, both closed when the test ends; indexDir is the index's
// directory.
func Open(t *testing.T) (st *sqlite.Store, eng *embedded.Engine, indexDir string) {
	t.Helper()
	dir := t.TempDir()
	st = storekit.OpenStore(t, dir)
	indexDir = filepath.Join(dir, "index")
	eng, err := embedded.Open(indexDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return st, eng, indexDir
}
