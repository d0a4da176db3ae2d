package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// newEvent returns an event to create, titled title.
func newEvent(title string) *repository.Record {
	return &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish,
		Title: repository.Text{"en": title}, Slug: repository.Text{"en": "e"}, Event: &repository.EventFields{}}
}

// TestBackupWhileWriting: a backup taken while four goroutines create
// records holds every record whose write returned before the backup began,
// its counts are those of the copy (read in the copy's transaction), and
// the copy is one file that opens as a store.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := openPath(t, filepath.Join(dir, "calendar.db"))
	defer s.Close(ctx)
	var (
		mu    sync.Mutex
		acked []int64
		stop  atomic.Bool
		wg    sync.WaitGroup
		errs  = make(chan error, 4)
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				p := newEvent(fmt.Sprintf("w%d-%d", g, i))
				if err := s.CreateRecord(ctx, p); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, p.ID)
				mu.Unlock()
			}
		})
	}
	// Let the writers get going: wait for 40 acknowledged writes.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		time.Sleep(time.Millisecond) // polling the writers' progress
	}
	mu.Lock()
	before := append([]int64(nil), acked...)
	mu.Unlock()
	dst := filepath.Join(dir, "copy.db")
	counts, err := s.Backup(ctx, dst)
	stop.Store(true)
	wg.Wait()
	close(errs)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("a writer failed: %v", err)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(dst + suffix); err == nil {
			t.Errorf("%s is left beside the copy", filepath.Base(dst+suffix))
		}
	}
	info, err := Check(ctx, dst)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if info.Version != SchemaVersion {
		t.Errorf("version %d, want %d", info.Version, SchemaVersion)
	}
	if !counts.Equal(info.Counts) {
		t.Errorf("the counts read with the copy differ from the copy's: %s", counts.Diff(info.Counts))
	}
	if counts.Records["event"] < int64(len(before)) || counts.Tables["posts"] != counts.Records["event"] {
		t.Errorf("counts %+v; %d events were acknowledged before the backup", counts, len(before))
	}
	copied := openPath(t, dst)
	defer copied.Close(ctx)
	for _, id := range before {
		if _, err := copied.GetRecord(ctx, id); err != nil {
			t.Errorf("record %d, acknowledged before the backup: %v", id, err)
		}
	}
}

// TestBackupRefusesAnExistingFile: Backup never writes over a file.
func TestBackupRefusesAnExistingFile(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	dst := filepath.Join(t.TempDir(), "there.db")
	if err := os.WriteFile(dst, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Backup(t.Context(), dst); err == nil {
		t.Fatal("Backup wrote over an existing file")
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep me" {
		t.Errorf("the existing file changed: %q", b)
	}
}

// TestCheckRefuses: Check tells a store of this program from a file that
// is not one, a store of a newer schema and a damaged store.
func TestCheckRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// backupOf returns a fresh backup of a store holding 300 events.
	src := openTemp(t)
	for i := range 300 {
		if err := src.CreateRecord(ctx, newEvent(fmt.Sprintf("event %d with a title long enough to fill pages", i))); err != nil {
			t.Fatal(err)
		}
	}
	backupOf := func(t *testing.T) string {
		dst := filepath.Join(t.TempDir(), "b.db")
		if _, err := src.Backup(ctx, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	exec := func(t *testing.T, path string, stmts ...string) {
		db, err := sql.Open("sqlite", dsn(path))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range stmts {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name string
		make func(t *testing.T) string
		want error
	}{
		{"a text file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "notes.db")
			if err := os.WriteFile(p, []byte("these are not the rows you are looking for\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, ErrNotStore},
		{"an empty file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "empty.db")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, ErrNotStore},
		{"another program's database", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "other.db")
			exec(t, p, "CREATE TABLE things(id INTEGER PRIMARY KEY)", "PRAGMA user_version = 3")
			return p
		}, ErrNotStore},
		{"a store of a newer schema", func(t *testing.T) string {
			p := backupOf(t)
			exec(t, p, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1))
			return p
		}, ErrNewerSchema},
		{"a damaged store", func(t *testing.T) string {
			p := backupOf(t)
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			// Garbage over the second half of the file: pages of the posts
			// table, its indexes and side tables (page 1, the schema, is
			// left alone).
			junk := make([]byte, st.Size()/2)
			for i := range junk {
				junk[i] = byte(i*7 + 3)
			}
			if _, err := f.WriteAt(junk, st.Size()-int64(len(junk))); err != nil {
				t.Fatal(err)
			}
			return p
		}, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(ctx, tt.make(t))
			if !errors.Is(err, tt.want) {
				t.Errorf("Check = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("a good backup", func(t *testing.T) {
		info, err := Check(ctx, backupOf(t))
		if err != nil || info.Counts.Records["event"] != 300 || info.Counts.Tables["users"] != 0 {
			t.Errorf("Check = %+v, %v", info, err)
		}
	})
}

// TestBackupCarriesEveryTable: a table the code does not know (as a later
// migration adds) is copied and counted without any change to Backup.
func TestBackupCarriesEveryTable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := openPath(t, filepath.Join(dir, "calendar.db"))
	defer s.Close(ctx)
	if _, err := s.wdb.ExecContext(ctx, `CREATE TABLE later_things (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		if _, err := s.wdb.ExecContext(ctx, `INSERT INTO later_things(doc) VALUES (?)`, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(dir, "copy.db")
	counts, err := s.Backup(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Check(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if counts.Tables["later_things"] != 7 || info.Counts.Tables["later_things"] != 7 {
		t.Errorf("later_things counted %d in the store, %d in the copy; want 7", counts.Tables["later_things"], info.Counts.Tables["later_things"])
	}
}
