package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// openStore opens a store in a temporary directory holding n events.
func openStore(t *testing.T, n int) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	for range n {
		p := &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish,
			Title: repository.Text{"en": "E"}, Slug: repository.Text{"en": "e"}, Event: &repository.EventFields{}}
		if err := st.CreateRecord(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestNames: a backup's name holds its time in UTC to the second, and
// only such names are read back as backups.
func TestNames(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 9, 15, 0, 0, time.FixedZone("CET", 3600))
	if got := Name(at); got != "eventcal-20261127T081500Z.db" {
		t.Errorf("Name = %q", got)
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"eventcal-20261127T081500Z.db", true},
		{"eventcal-20261127T0815Z.db", false},
		{"eventcal-20261127T081500Z.db.tmp", false},
		{".eventcal-20261127T081500Z.db.123.tmp", false},
		{"eventcal-20261327T081500Z.db", false},
		{"calendar.db", false},
		{"eventcal-manual.db", false},
	}
	for _, tt := range tests {
		if _, ok := parseName(tt.name); ok != tt.ok {
			t.Errorf("parseName(%q) ok = %v, want %v", tt.name, ok, tt.ok)
		}
	}
}

// TestDir: Create names the backup for the clock's time, refuses a second
// one in the same second (ErrExists) and one while another runs
// (ErrRunning); List shows the backups newest first and nothing else;
// Prune removes the oldest beyond Keep only; without a store (MongoDB)
// every call answers ErrNotEmbedded.
func TestDir(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	d := &Dir{Path: filepath.Join(t.TempDir(), "backups"), Store: openStore(t, 2), Keep: 2, Now: func() time.Time { return now }}
	var made []string
	for i := range 4 {
		res, err := d.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Name != Name(now) || res.Counts.Records["event"] != 2 {
			t.Errorf("backup %d: %+v", i, res)
		}
		made = append(made, res.Name)
		if _, err := d.Create(ctx); !errors.Is(err, ErrExists) {
			t.Errorf("a second backup in the same second: %v", err)
		}
		now = now.Add(time.Hour)
	}
	if err := os.WriteFile(filepath.Join(d.Path, "keep-me.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d.running.Lock()
	if _, err := d.Create(ctx); !errors.Is(err, ErrRunning) {
		t.Errorf("Create while one runs: %v", err)
	}
	d.running.Unlock()
	removed, err := d.Prune()
	if err != nil || !slices.Equal(removed, []string{made[1], made[0]}) {
		t.Errorf("Prune = %v, %v; want the two oldest", removed, err)
	}
	entries, err := d.List()
	if err != nil || len(entries) != 2 || entries[0].Name != made[3] || entries[1].Name != made[2] {
		t.Errorf("List = %+v, %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(d.Path, "keep-me.db")); err != nil {
		t.Errorf("Prune removed a file it did not name: %v", err)
	}
	mongo := &Dir{Path: t.TempDir()}
	if _, err := mongo.Create(ctx); !errors.Is(err, ErrNotEmbedded) {
		t.Errorf("Create without a store: %v", err)
	}
	if _, err := mongo.List(); !errors.Is(err, ErrNotEmbedded) {
		t.Errorf("List without a store: %v", err)
	}
}

// TestWriteReplacesOnlyWhenComplete: a backup over an existing file
// replaces it once complete; a failed one (cancelled) leaves the old file
// and no temporary file.
func TestWriteReplacesOnlyWhenComplete(t *testing.T) {
	t.Parallel()
	st := openStore(t, 3)
	dir := t.TempDir()
	path := filepath.Join(dir, "latest.db")
	if err := os.WriteFile(path, []byte("yesterday"), 0o600); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Write(cancelled, st, path, time.Now()); err == nil {
		t.Fatal("a cancelled backup succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != "yesterday" {
		t.Errorf("a failed backup changed the file: %q", b)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".*")); len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
	res, err := Write(t.Context(), st, path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Size() != res.Size || info.Mode().Perm() != 0o600 || res.Counts.Records["event"] != 3 {
		t.Errorf("backup %+v; file %v, %v", res, info, err)
	}
}
