package api_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/repository/sqlite"
)

// withBackups rebuilds e's app with backups into dir (store nil: a
// MongoDB service's).
func (e *env) withBackups(t *testing.T, dir string, store *sqlite.Store) {
	t.Helper()
	a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Indexer: e.worker,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: e.clockNow, Identity: scenarioIdentity(),
		Backups: &backup.Dir{Path: dir, Store: store, Now: e.clockNow}})
	if err != nil {
		t.Fatal(err)
	}
	e.app = a
}

// TestAdminBackups: POST /admin/backups takes a backup into BACKUP_DIR and
// answers 201 with its name, size, time and counts; GET lists them newest
// first. Only admins may: anonymous callers get 401 and every other role
// 403, and their refused requests write nothing.
func TestAdminBackups(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "backups")
	e.withBackups(t, dir, e.store.(*sqlite.Store))
	e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01"})
	var cases []scenario
	for _, role := range []string{"", "contributor", "author", "editor"} {
		status := 403
		if role == "" {
			status = 401
		}
		cases = append(cases,
			scenario{name: "create as " + role, method: "POST", url: "admin/backups", as: role, status: status, want: map[string]any{"code": "rest_forbidden"}},
			scenario{name: "list as " + role, method: "GET", url: "admin/backups", as: role, status: status, want: map[string]any{"code": "rest_forbidden"}})
	}
	cases = append(cases, scenario{name: "none yet", method: "GET", url: "admin/backups", as: "admin", status: 200, want: map[string]any{"backups": []any{}}})
	e.run(t, cases)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("refused requests left BACKUP_DIR behind (%v)", err)
	}
	first := backup.Name(e.clockNow())
	e.run(t, []scenario{
		{name: "create", method: "POST", url: "admin/backups", as: "admin", status: 201, want: map[string]any{
			"name": first, "created": "2026-11-22T12:00:00Z", "counts.records.event": 1, "counts.tables.users": 6},
			check: func(t *testing.T, r *resp) {
				st, err := os.Stat(filepath.Join(dir, first))
				if err != nil || r.num("size") != float64(st.Size()) || st.Mode().Perm() != 0o600 {
					t.Errorf("size %v; file %v, %v", r.num("size"), st, err)
				}
			}},
		{name: "a second in the same second", method: "POST", url: "admin/backups", as: "token:admin-secret", status: 409, want: map[string]any{"code": "backup_exists"}},
	})
	e.setNow(e.now.Add(time.Hour))
	second := backup.Name(e.clockNow())
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.run(t, []scenario{
		{name: "create later", method: "POST", url: "admin/backups", as: "admin", status: 201, want: map[string]any{"name": second}},
		{name: "list newest first", method: "GET", url: "admin/backups", as: "admin", status: 200, want: map[string]any{
			"backups.0.name": second, "backups.0.created": "2026-11-22T13:00:00Z", "backups.1.name": first},
			check: func(t *testing.T, r *resp) {
				if l, _ := r.path("backups").([]any); len(l) != 2 {
					t.Errorf("backups = %v, want 2 (notes.txt is not one)", r.path("backups"))
				}
			}},
	})
}

// TestAdminBackupsWithMongoDB: with MongoDB both routes say to use
// mongodump (501), for admins; others are refused first.
func TestAdminBackupsWithMongoDB(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "backups")
	e.withBackups(t, dir, nil)
	e.run(t, []scenario{
		{name: "create", method: "POST", url: "admin/backups", as: "admin", status: 501, want: map[string]any{"code": "backup_not_supported"}, contains: []string{"mongodump --oplog"}},
		{name: "list", method: "GET", url: "admin/backups", as: "admin", status: 501, want: map[string]any{"code": "backup_not_supported"}},
		{name: "editor", method: "POST", url: "admin/backups", as: "editor", status: 403},
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("BACKUP_DIR was created (%v)", err)
	}
}
