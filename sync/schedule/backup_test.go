package schedule

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// TestScheduledBackupsWithRetention: BACKUP_SCHEDULE takes a backup at
// each of its times on the fake clock, each holding the events stored by
// then; after each one the oldest backups beyond BACKUP_KEEP are removed,
// and only files named as backups: exactly BACKUP_KEEP are left, the
// newest. A process without the lease takes none.
func TestScheduledBackupsWithRetention(t *testing.T) {
	t.Parallel()
	const keep = 3
	start := time.Date(2026, 11, 27, 7, 59, 30, 0, time.UTC)
	tests := []struct {
		name string
		held bool
	}{
		{"the lease holder backs up", true},
		{"another process's schedule skips", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStack(t)
			store := s.store.(*sqlite.Store)
			dir := filepath.Join(t.TempDir(), "backups")
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			// An old backup (pruned first), and files the feature did not
			// name (never pruned).
			others := []string{"notes.txt", "eventcal-manual.db", "eventcal-20261127T0700Z.db"}
			for _, name := range append([]string{"eventcal-20200101T000000Z.db"}, others...) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			lease := testkit.NewFakeLease(tt.held)
			clock := clockwork.NewFakeClockAt(start)
			r := indexing.NewReindexer(s.store, s.engine, s.worker, testkit.Quiet, clock.Now, lease)
			ran := make(runs, 100)
			startSchedule(t, Options{BackupCron: "0 * * * *", Backups: &backup.Dir{Path: dir, Store: store, Keep: keep, Now: clock.Now},
				Reindexer: r, Store: s.store, Notifier: s.worker, Lease: lease, afterRun: ran.after}, clock, 2)
			if !tt.held {
				clock.Advance(time.Hour)
				testkit.Eventually(t, "the jobs asked the lease", func() bool { return lease.CallCount() >= 2 })
				if got := names(t, dir); len(got) != len(others)+1 {
					t.Errorf("files after a run without the lease: %v", got)
				}
				return
			}
			var want []string
			next := start.Truncate(time.Hour).Add(time.Hour)
			for run := range 5 {
				s.Post(t, repository.KindEvent, "Event", repository.StatusPublish, start)
				clock.Advance(next.Sub(clock.Now()))
				for name := ran.next(t); name != jobBackup; name = ran.next(t) {
				}
				want = append(want, backup.Name(next))
				got := names(t, dir)
				for _, name := range others {
					if !slices.Contains(got, name) {
						t.Errorf("run %d removed %s, which is not a backup's name", run, name)
					}
				}
				// The newest backup holds the events stored by its time.
				info, err := sqlite.Check(t.Context(), copyOf(t, filepath.Join(dir, backup.Name(next))))
				if err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if n := info.Counts.Records["event"]; n != int64(run+1) {
					t.Errorf("run %d: the backup holds %d events, want %d", run, n, run+1)
				}
				next = next.Add(time.Hour)
				waitTimers(t, clock, 2)
			}
			d := &backup.Dir{Path: dir, Store: store}
			entries, err := d.List()
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, e := range entries {
				listed = append(listed, e.Name)
			}
			slices.Reverse(want)
			if !slices.Equal(listed, want[:keep]) {
				t.Errorf("backups left = %v, want the newest %d: %v", listed, keep, want[:keep])
			}
		})
	}
}

// names lists the files in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	return out
}

// copyOf copies a file into the test's temporary directory (Check changes
// the file it checks).
func copyOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}
