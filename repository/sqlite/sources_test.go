package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// sourceEvent returns a minimal event, imported from source id when id
// is not 0.
func sourceEvent(slug string, id int64) *repository.Record {
	p := &repository.Record{
		Kind: repository.KindEvent, Status: repository.StatusDraft, Date: time.Now().UTC(),
		Title: repository.Text{"en": slug}, Slug: repository.Text{"en": slug},
		Event: &repository.EventFields{StartLocal: "2031-03-16 10:00:00", EndLocal: "2031-03-16 11:00:00"},
	}
	if id != 0 {
		p.Source = &repository.SourceLink{SourceID: id, UID: slug + "@feed", Hash: "h"}
	}
	return p
}

// checkSourceItemsPlan fails unless SQLite answers SourceItems from
// posts_by_source, in record ID order, without reading every record.
func checkSourceItemsPlan(t *testing.T, s *Store) {
	t.Helper()
	plan := queryPlan(t, s, sourceItemsQuery, int64(1))
	t.Logf("plan:\n%s", plan)
	if !strings.Contains(plan, "SEARCH posts USING INDEX posts_by_source") {
		t.Errorf("SourceItems does not search posts_by_source:\n%s", plan)
	}
	for _, bad := range []string{"SCAN posts", "TEMP B-TREE"} {
		if strings.Contains(plan, bad) {
			t.Errorf("SourceItems plan has %q:\n%s", bad, plan)
		}
	}
}

// TestSourceItemsPlan pins that SourceItems reads the events of one
// source through the expression index on the documents' source ID,
// already sorted by ID: its cost grows with the source's events, not
// with the store.
func TestSourceItemsPlan(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTemp(t)
	for i, id := range []int64{0, 1, 0, 2, 1, 0} {
		if err := s.CreateRecord(ctx, sourceEvent(string(rune('a'+i)), id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.wdb.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	checkSourceItemsPlan(t, s)
	runs := queryPlan(t, s, listRunsQuery, int64(1), 10)
	if !strings.Contains(runs, "SEARCH source_runs USING INDEX source_runs_by_source (source_id=?)") || strings.Contains(runs, "TEMP B-TREE") {
		t.Errorf("ListSourceRuns plan:\n%s", runs)
	}
	// Only records with a link are in the (partial) index.
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM posts INDEXED BY posts_by_source
		WHERE json_extract(doc, '$.source.id') IS NOT NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("posts_by_source holds %d records, want the 3 imported ones", n)
	}
}

// TestMigrateSources: a version 5 database (before sources) opens at the
// current version: the tables and counters exist, and events that
// already carry a source link are found through the new index.
func TestMigrateSources(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := t.TempDir() + "/calendar.db"
	s := openPath(t, path)
	ev := sourceEvent("old", 4)
	if err := s.CreateRecord(ctx, ev); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP INDEX posts_by_source`,
		`DROP TABLE source_runs`,
		`DROP TABLE sources`,
		`DELETE FROM counters WHERE name IN ('source', 'source_run')`,
		`PRAGMA user_version = 5`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close(ctx)
	s = openPath(t, path) // a version 5 database
	defer s.Close(ctx)
	var version int
	if err := s.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
	items, err := s.SourceItems(ctx, 4)
	if err != nil || len(items) != 1 || items[0].RecordID != ev.ID || items[0].UID != "old@feed" {
		t.Fatalf("SourceItems after the migration = %+v, %v", items, err)
	}
	checkSourceItemsPlan(t, s)
	src := &repository.Source{URL: "https://a.example/cal.ics", Format: repository.SourceICS}
	if err := s.CreateSource(ctx, src); err != nil || src.ID != 1 {
		t.Fatalf("CreateSource after the migration: ID %d, %v", src.ID, err)
	}
	run := &repository.SourceRun{SourceID: src.ID, Status: repository.RunRunning}
	if err := s.CreateSourceRun(ctx, run); err != nil || run.ID != 1 {
		t.Fatalf("CreateSourceRun after the migration: ID %d, %v", run.ID, err)
	}
}
