package sqlite

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// TestMigrateWebhookCounter: a version 6 database (endpoints numbered by
// SQLite's rowid, no webhook counter) opens at the current version with
// the counter at the largest endpoint ID stored, and from then on a
// deleted endpoint's ID is never handed out again.
func TestMigrateWebhookCounter(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := t.TempDir() + "/calendar.db"
	s := openPath(t, path)
	hook := func(url string) *repository.Webhook {
		return &repository.Webhook{URL: url, Events: []string{"*"}, Secret: "whsec_eA==", Active: true,
			Created: time.Unix(0, 0).UTC(), Updated: time.Unix(0, 0).UTC()}
	}
	for _, u := range []string{"https://a.example/", "https://b.example/", "https://c.example/"} {
		if err := s.CreateWebhook(ctx, hook(u)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteWebhook(ctx, 1); err != nil { // below the largest: known after the migration
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM counters WHERE name = 'webhook'`,
		`PRAGMA user_version = 6`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close(ctx)
	s = openPath(t, path) // a version 6 database
	defer s.Close(ctx)
	var version int
	if err := s.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", version, err, schemaVersion)
	}
	seqs, err := s.Sequences(ctx)
	if err != nil || seqs[repository.SeqWebhooks] != 3 {
		t.Fatalf("Sequences after the migration = %v, %v; want webhooks 3", seqs, err)
	}
	d := hook("https://d.example/")
	if err := s.CreateWebhook(ctx, d); err != nil || d.ID != 4 {
		t.Fatalf("CreateWebhook after the migration: ID %d, %v; want 4", d.ID, err)
	}
	if err := s.DeleteWebhook(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	e := hook("https://e.example/")
	if err := s.CreateWebhook(ctx, e); err != nil || e.ID != 5 {
		t.Fatalf("CreateWebhook after deleting the newest: ID %d, %v; want 5", e.ID, err)
	}
}

// TestRaiseSequencesAtomic: a raise is one transaction: when one of its
// writes fails, no sequence is raised.
func TestRaiseSequencesAtomic(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTemp(t)
	// A trigger makes the raise of the source_run counter fail, after the
	// record counter (earlier in SequenceNames) was raised in the same
	// transaction.
	if _, err := s.wdb.ExecContext(ctx, `CREATE TRIGGER refuse_runs BEFORE UPDATE ON counters
		WHEN NEW.name = 'source_run' BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	err := s.RaiseSequences(ctx, map[string]int64{repository.SeqRecords: 100, repository.SeqSourceRuns: 100})
	if err == nil {
		t.Fatal("RaiseSequences with a failing write: no error")
	}
	seqs, err := s.Sequences(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seqs[repository.SeqRecords] != 0 || seqs[repository.SeqSourceRuns] != 0 {
		t.Errorf("Sequences after the failed raise = %v; want none raised", seqs)
	}
}
