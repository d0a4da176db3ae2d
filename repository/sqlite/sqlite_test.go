package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/storetest"
)

// openTemp opens a store on a new file in the test's temporary directory.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "calendar.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openPath opens the store at path, failing the test on an error; the
// caller closes it (the tests that reopen a file close it in between).
func openPath(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newFile is the database file of a store created and closed once per
// test process: the conformance suite opens a copy for each of its
// subtests (openCopy) instead of creating the schema anew each time, an
// empty store as a restart finds it. The other tests open new files, and
// TestNewFileCopyOpensAsNew checks what a copy opens as.
var newFile struct {
	once sync.Once
	data []byte
	err  error
}

// openCopy opens a store on a copy of newFile in the test's temporary
// directory.
func openCopy(t *testing.T) *Store {
	t.Helper()
	newFile.once.Do(func() {
		dir, err := os.MkdirTemp("", "sqlite-newfile-")
		if err != nil {
			newFile.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "calendar.db")
		s, err := Open(context.Background(), path)
		if err != nil {
			newFile.err = err
			return
		}
		if err := s.Close(context.Background()); err != nil {
			newFile.err = err
			return
		}
		newFile.data, newFile.err = os.ReadFile(path)
	})
	if newFile.err != nil {
		t.Fatal(newFile.err)
	}
	path := filepath.Join(t.TempDir(), "calendar.db")
	if err := os.WriteFile(path, newFile.data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := openPath(t, path)
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// TestNewFileCopyOpensAsNew: a store opened on a copy of a closed new
// store's file (openCopy) has the schema of a new file's store closed and
// opened again (with the planner's statistics Close leaves).
func TestNewFileCopyOpensAsNew(t *testing.T) {
	t.Parallel()
	schema := func(s *Store) string {
		rows, err := s.rdb.QueryContext(t.Context(), "SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var typ, name, sql string
			if err := rows.Scan(&typ, &name, &sql); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s %s\n", typ, name, sql)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var version int
		if err := s.rdb.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "user_version %d\n", version)
		return b.String()
	}
	// A new file's store, closed (Close leaves the planner's statistics)
	// and opened again, as a restart finds it.
	path := filepath.Join(t.TempDir(), "calendar.db")
	if err := openPath(t, path).Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	reopened := openPath(t, path)
	t.Cleanup(func() { reopened.Close(context.Background()) })
	if got, want := schema(openCopy(t)), schema(reopened); got != want {
		t.Errorf("a copy's schema:\n%s\nwant a new file's, reopened:\n%s", got, want)
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) repository.Store { return openCopy(t) })
}

// writeMany creates n users and n posts in s from several goroutines and
// returns their IDs.
func writeMany(ctx context.Context, s repository.Store, name string, n int) (users, posts []int64, err error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				u := &repository.User{Login: fmt.Sprintf("%s-%d", name, i), Role: repository.RoleAuthor, Created: time.Now()}
				if err := s.CreateUser(ctx, u); err != nil {
					errs <- err
					return
				}
				p := &repository.Record{
					Kind: repository.KindEvent, Status: repository.StatusPublish,
					Title: repository.Text{"en": "Shared"}, Slug: repository.Text{"en": "shared"},
					Event: &repository.EventFields{Tags: []int64{int64(i)}},
				}
				if err := s.CreateRecord(ctx, p); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				users, posts = append(users, u.ID), append(posts, p.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	return users, posts, <-errs
}

func checkAllDistinct(t *testing.T, what string, ids []int64, want int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			t.Errorf("%s: ID %d is invalid or repeated", what, id)
		}
		seen[id] = true
	}
	if len(seen) != want {
		t.Errorf("%s: %d distinct IDs, want %d", what, len(seen), want)
	}
}

// TestTwoStoresOneFile opens the same file twice, as two processes would,
// and writes from both at once.
func TestTwoStoresOneFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openPath(t, path)
	defer a.Close(ctx)
	b := openPath(t, path)
	defer b.Close(ctx)

	const n = 40
	var wg sync.WaitGroup
	var usersA, postsA, usersB, postsB []int64
	var errA, errB error
	wg.Go(func() { usersA, postsA, errA = writeMany(ctx, a, "a", n) })
	wg.Go(func() { usersB, postsB, errB = writeMany(ctx, b, "b", n) })
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("writes failed: %v / %v", errA, errB)
	}
	checkAllDistinct(t, "user IDs", append(usersA, usersB...), 2*n)
	checkAllDistinct(t, "post IDs", append(postsA, postsB...), 2*n)

	// Each store sees the other's writes, with unique slugs across both.
	for _, s := range []*Store{a, b} {
		posts, err := s.FindRecords(ctx, repository.RecordQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(posts) != 2*n {
			t.Fatalf("store sees %d posts, want %d", len(posts), 2*n)
		}
		slugs := map[string]bool{}
		for _, p := range posts {
			if slugs[p.Slug["en"]] {
				t.Errorf("slug %q used twice", p.Slug["en"])
			}
			slugs[p.Slug["en"]] = true
		}
		if _, err := s.GetUserByLogin(ctx, "a-0"); err != nil {
			t.Errorf("GetUserByLogin(a-0): %v", err)
		}
		if _, err := s.GetUserByLogin(ctx, "b-0"); err != nil {
			t.Errorf("GetUserByLogin(b-0): %v", err)
		}
	}
	// A duplicate login is detected across stores too.
	if err := b.CreateUser(ctx, &repository.User{Login: "a-1", Role: repository.RoleAdmin}); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreateUser(login taken in the other store) = %v, want ErrDuplicate", err)
	}
	marks, err := a.PendingMarks(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 2*n {
		t.Errorf("%d marks, want %d (one per post, from both stores)", len(marks), 2*n)
	}
}

// helperEnv names the database a helper process writes to.
const helperEnv = "EVENTCAL_SQLITE_HELPER_DB"

// TestHelperProcess is not a test: TestTwoProcesses runs the test binary
// again with it to write from a second process.
func TestHelperProcess(t *testing.T) {
	t.Parallel()
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	ctx := t.Context()
	s := openPath(t, path)
	defer s.Close(ctx)
	users, posts, err := writeMany(ctx, s, "child", 40)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal([][]int64{users, posts})
	fmt.Printf("\nIDS %s\n", out)
}

// TestTwoProcesses writes from this process and a child process at once.
func TestTwoProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "shared.db")
	s := openPath(t, path)
	defer s.Close(ctx)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	users, posts, err := writeMany(ctx, s, "parent", 40)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, stdout.String())
	}
	var child [][]int64
	_, line, ok := strings.Cut(stdout.String(), "\nIDS ")
	line, _, _ = strings.Cut(line, "\n")
	if !ok || json.Unmarshal([]byte(line), &child) != nil || len(child) != 2 {
		t.Fatalf("helper output: %s", stdout.String())
	}
	checkAllDistinct(t, "user IDs of both processes", append(users, child[0]...), 80)
	checkAllDistinct(t, "post IDs of both processes", append(posts, child[1]...), 80)
	if n, err := s.CountRecords(ctx, repository.RecordQuery{}); err != nil || n != 80 {
		t.Errorf("CountPosts = %d, %v; want 80", n, err)
	}
}

// TestReopen checks that data and sequences survive closing the store.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// Characters that mean something in a URI must not confuse the driver.
	path := filepath.Join(t.TempDir(), "dir with space?#%", "calendar.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	s := openPath(t, path)
	p := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Slug: repository.Text{"en": "hall"}, Venue: &repository.VenueFields{City: "Gent"}}
	if err := s.CreateRecord(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	q := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Slug: repository.Text{"en": "hall"}, Venue: &repository.VenueFields{City: "Gent"}}
	if err := s.CreateRecord(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not where asked: %v", err)
	}
	s = openPath(t, path)
	defer s.Close(ctx)
	got, err := s.GetRecordBySlug(ctx, repository.KindVenue, "en", "hall")
	if err != nil || got.ID != q.ID || got.Venue.City != "Gent" {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	r := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Slug: repository.Text{"en": "hall"}, Venue: &repository.VenueFields{}}
	if err := s.CreateRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.ID <= q.ID || r.Slug["en"] != "hall-2" {
		t.Errorf("after reopen: new post %d slug %q, want ID > %d and hall-2", r.ID, r.Slug["en"], q.ID)
	}
}

// TestNewerSchema refuses a database written by a newer program.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	if _, err := s.wdb.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	if s, err := Open(ctx, path); err == nil {
		s.Close(ctx)
		t.Fatal("Open accepted a newer schema")
	}
}

// TestClosedStore fails calls cleanly after Close.
func TestClosedStore(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := t.Context()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping after Close succeeded")
	}
	if _, err := s.GetRecord(ctx, 1); err == nil || errors.Is(err, repository.ErrNotFound) {
		t.Errorf("GetPost after Close = %v, want a store error", err)
	}
}

func BenchmarkGetPost(b *testing.B) {
	ctx := b.Context()
	s := openPath(b, filepath.Join(b.TempDir(), "bench.db"))
	defer s.Close(ctx)
	var ids []int64
	for i := range 1000 {
		p := &repository.Record{
			Kind: repository.KindEvent, Status: repository.StatusPublish,
			Title:   repository.Text{"en": fmt.Sprintf("Event %d", i), "nl": "Evenement"},
			Content: repository.Text{"en": strings.Repeat("Lorem ipsum dolor sit amet. ", 40)},
			Slug:    repository.Text{"en": "event"},
			Event:   &repository.EventFields{StartUTC: time.Now(), Categories: []int64{1, 2}, Venues: []int64{3}},
		}
		if err := s.CreateRecord(ctx, p); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := s.GetRecord(ctx, ids[i%len(ids)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

func BenchmarkUpdatePost(b *testing.B) {
	ctx := b.Context()
	s := openPath(b, filepath.Join(b.TempDir(), "bench.db"))
	defer s.Close(ctx)
	p := &repository.Record{Kind: repository.KindEvent, Status: repository.StatusPublish, Slug: repository.Text{"en": "e"}, Event: &repository.EventFields{}}
	if err := s.CreateRecord(ctx, p); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.UpdateRecord(ctx, p.ID, func(p *repository.Record) error {
			p.Title.Set("en", fmt.Sprint(i))
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMigrateMarkFailures: a version 3 database (index_marks without the
// failure columns) opens at the current version, its marks due, and
// failures can be recorded.
func TestMigrateMarkFailures(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	if err := s.MarkForIndexing(ctx, repository.MarkPost, []int64{7}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP INDEX index_marks_failing`,
		`ALTER TABLE index_marks DROP COLUMN attempts`,
		`ALTER TABLE index_marks DROP COLUMN last_error`,
		`ALTER TABLE index_marks DROP COLUMN next_at`,
		`ALTER TABLE users DROP COLUMN email`,
		`ALTER TABLE users DROP COLUMN origin`,
		`PRAGMA user_version = 3`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close(ctx)
	s = openPath(t, path) // a version 3 database
	defer s.Close(ctx)
	due, err := s.DueMarks(ctx, time.Now(), 0)
	if err != nil || len(due) != 1 || due[0].ID != 7 || due[0].Attempts != 0 {
		t.Fatalf("DueMarks after the migration = %+v, %v", due, err)
	}
	m := due[0]
	m.Attempts, m.LastError, m.NextAttempt = 1, "refused", time.Now().Add(time.Hour)
	if err := s.FailMark(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, n, err := s.FailingMarks(ctx, 10); err != nil || n != 1 {
		t.Errorf("FailingMarks after the migration = %d, %v", n, err)
	}
}

// TestMigrateUserEmail: a version 4 database (users without e-mail and
// origin)
// opens at the current version with its users kept, and e-mail
// addresses can then be stored.
func TestMigrateUserEmail(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "calendar.db")
	s := openPath(t, path)
	old := &repository.User{Login: "before", Role: repository.RoleEditor, Created: time.Now().UTC()}
	if err := s.CreateUser(ctx, old); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE users DROP COLUMN email`, `ALTER TABLE users DROP COLUMN origin`, `PRAGMA user_version = 4`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close(ctx)
	s = openPath(t, path) // a version 4 database
	defer s.Close(ctx)
	got, err := s.GetUserByLogin(ctx, "before")
	if err != nil || got.Role != repository.RoleEditor || got.Email != "" {
		t.Fatalf("the user after the migration: %+v, %v", got, err)
	}
	u := &repository.User{Login: "after", Role: repository.RoleAuthor, Created: time.Now().UTC(), Email: "after@example.org"}
	if err := s.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetUser(ctx, u.ID); err != nil || got.Email != "after@example.org" {
		t.Fatalf("e-mail after the migration: %+v, %v", got, err)
	}
}
