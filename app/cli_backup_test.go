package app

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// apiClient sends JSON requests to a running service as ADMIN_TOKEN.
type apiClient struct {
	base, token string
	http        *http.Client
}

// send sends a request and decodes the JSON answer into out (when not
// nil); it returns the status.
func (a *apiClient) send(method, path string, body, out any) (int, error) {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rdr)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode >= 300 {
		return res.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		return res.StatusCode, json.Unmarshal(raw, out)
	}
	return res.StatusCode, nil
}

// create POSTs body to path and returns the new item's ID.
func (a *apiClient) create(path string, body any) (int64, error) {
	var item struct {
		ID int64 `json:"id"`
	}
	_, err := a.send("POST", path, body, &item)
	return item.ID, err
}

// TestBackupWhileWritingAndRestore: "eventcal backup" runs while a serving
// process takes writes from four clients (each creating events linked to
// venues and categories, then updating them). The backup, restored into a
// new DATA_DIR, holds every write acknowledged before the backup started
// (each event at least at the version acknowledged), every record in it
// decodes, every event's venue and categories exist, and its counts are
// those the backup printed. A service started on the restored DATA_DIR
// then lists every event (its index rebuilt from the store).
func TestBackupWhileWritingAndRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token", "DRAIN_DELAY": "0"}
	svc := startService(t, env)
	api := &apiClient{base: "http://" + svc.addr.String() + svc.cfg.APIRoot(), token: "ops-token", http: &http.Client{Timeout: time.Minute}}
	var venues, cats []int64
	for i := range 3 {
		v, err := api.create("/venues", map[string]any{"venue": fmt.Sprintf("Hall %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := api.create("/categories", map[string]any{"name": fmt.Sprintf("Genre %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		venues, cats = append(venues, v), append(cats, c)
	}
	day := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
	var (
		mu    sync.Mutex
		acked = map[int64]int{} // event ID -> version acknowledged
		total atomic.Int64      // acknowledged writes
		stop  atomic.Bool
		wg    sync.WaitGroup
		errs  = make(chan error, 4)
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				id, err := api.create("/events", map[string]any{"title": fmt.Sprintf("w%d-%d v0", g, i), "start_date": day + " 10:00:00",
					"end_date": day + " 11:00:00", "venue": venues[i%3], "categories": []int64{cats[(i+g)%3]}})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked[id] = 0
				mu.Unlock()
				total.Add(1)
				if _, err := api.send("POST", "/events/"+strconv.FormatInt(id, 10), map[string]any{"title": fmt.Sprintf("w%d-%d v1", g, i)}, nil); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked[id] = 1
				mu.Unlock()
				total.Add(1)
			}
		})
	}
	stopWriters := func() {
		stop.Store(true)
		wg.Wait()
		select {
		case err := <-errs:
			t.Fatalf("a writer failed: %v", err)
		default:
		}
	}
	deadline := testdeadline.Of(t)
	for total.Load() < 40 {
		if time.Now().After(deadline) {
			stopWriters()
			t.Fatal("the writers never got going")
		}
		time.Sleep(time.Millisecond) // polling the writers' progress
	}
	mu.Lock()
	before := make(map[int64]int, len(acked))
	for id, v := range acked {
		before[id] = v
	}
	mu.Unlock()
	atStart := total.Load()
	file := filepath.Join(t.TempDir(), "out", "calendar-backup.db")
	r := runCLI(t, map[string]string{"DATA_DIR": dir}, "backup", "--out", file)
	during := total.Load() - atStart
	stopWriters()
	if r.code != exitOK {
		t.Fatalf("backup: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%d writes acknowledged before the backup, %d while it ran", atStart, during)
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, %v", st, err)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("size     %d bytes", st.Size())) {
		t.Errorf("backup does not print the size %d:\n%s", st.Size(), r.stdout)
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*")); len(matches) > 0 {
		t.Errorf("temporary files left beside the backup: %v", matches)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	rr := runCLI(t, map[string]string{"DATA_DIR": restored}, "restore", file)
	if rr.code != exitOK {
		t.Fatalf("restore: exit %d\nstdout %s\nstderr %s", rr.code, rr.stdout, rr.stderr)
	}
	if rr.stdout != r.stdout[strings.Index(r.stdout, "records"):] {
		t.Errorf("restore's counts differ from backup's:\nbackup:\n%s\nrestore:\n%s", r.stdout, rr.stdout)
	}
	events := checkRestored(t, filepath.Join(restored, "calendar.db"), before, r.stdout, true)

	// A service on the restored DATA_DIR lists every event.
	svc2 := startService(t, map[string]string{"DATA_DIR": restored, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token", "DRAIN_DELAY": "0"})
	api2 := &apiClient{base: "http://" + svc2.addr.String() + svc2.cfg.APIRoot(), token: "ops-token", http: &http.Client{Timeout: time.Minute}}
	for {
		var list struct {
			Total int `json:"total"`
		}
		if _, err := api2.send("GET", "/events?per_page=1&start_date="+day, nil, &list); err == nil && list.Total == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored service never listed the %d events (last: %+v)\n%s", events, list, svc2.logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the index's rebuild
	}
}

// checkRestored opens the restored store at path and checks it holds
// every acknowledged write at its version, that every record decodes and
// every event's venue and categories exist, and that its counts are the
// ones "backup" printed (printed); with linked, that every event has one
// venue and one category. It returns the number of events.
func checkRestored(t *testing.T, path string, acked map[int64]int, printed string, linked bool) int {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	for id, version := range acked {
		p, err := st.GetRecord(ctx, id)
		if err != nil {
			t.Errorf("event %d, acknowledged before the backup: %v", id, err)
			continue
		}
		if got := p.Title["en"]; version == 1 && !strings.HasSuffix(got, " v1") {
			t.Errorf("event %d titled %q, acknowledged at v%d", id, got, version)
		}
	}
	counts, err := st.RowCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	printCounts(&buf, counts)
	if !strings.HasSuffix(printed, buf.String()) {
		t.Errorf("the restored store's counts differ from the backup's:\nprinted:\n%s\nrestored:\n%s", printed, buf.String())
	}
	// Every post row decodes; events' links resolve.
	found := map[string]int64{}
	events := 0
	for id := int64(1); found["all"] < counts.Tables["posts"]; id++ {
		p, err := st.GetRecord(ctx, id)
		if errors.Is(err, repository.ErrNotFound) {
			if id > 10*counts.Tables["posts"]+100 {
				t.Fatalf("only %d of %d posts found by ID", found["all"], counts.Tables["posts"])
			}
			continue
		}
		if err != nil {
			t.Fatalf("record %d does not decode: %v", id, err)
		}
		found["all"]++
		if p.Kind != repository.KindEvent {
			continue
		}
		events++
		if linked && (len(p.Event.Venues) != 1 || len(p.Event.Categories) != 1) {
			t.Errorf("event %d: venues %v, categories %v; each was written with one", id, p.Event.Venues, p.Event.Categories)
		}
		for _, v := range p.Event.Venues {
			if _, err := st.GetRecord(ctx, v); err != nil {
				t.Errorf("event %d: venue %d: %v", id, v, err)
			}
		}
		for _, c := range p.Event.Categories {
			if _, err := st.GetLabel(ctx, c); err != nil {
				t.Errorf("event %d: category %d: %v", id, c, err)
			}
		}
	}
	if int64(events) != counts.Records["event"] {
		t.Errorf("%d events found, %d counted", events, counts.Records["event"])
	}
	return events
}

// storeBackup writes a backup of a new store holding n events to a file
// and returns its path; version, when not 0, is written as its schema
// version afterwards.
func storeBackup(t *testing.T, n, version int) string {
	t.Helper()
	dir := t.TempDir()
	seedEvents(t, dir, n)
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	file := filepath.Join(t.TempDir(), "backup.db")
	if _, err := st.Backup(context.Background(), file); err != nil {
		t.Fatal(err)
	}
	if version != 0 {
		db, err := sql.Open("sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

// listDir returns the names in dir ("" when it does not exist).
func listDir(t *testing.T, dir string) string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return strings.Join(names, " ")
}

// TestRestoreRefuses: restore refuses a DATA_DIR that holds a store
// (unless --force, which moves the old files aside), a file that is not a
// store, a store of a newer schema, a DATA_DIR a service runs on, and
// MongoDB; a refusal changes nothing.
func TestRestoreRefuses(t *testing.T) {
	t.Parallel()
	good := storeBackup(t, 3, 0)
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := storeBackup(t, 1, sqlite.SchemaVersion+1)
	// occupied returns a DATA_DIR holding a store of one event and an index.
	occupied := func(t *testing.T) string {
		dir := t.TempDir()
		seedEvents(t, dir, 1)
		if err := os.MkdirAll(filepath.Join(dir, "index"), 0o750); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	tests := []struct {
		name     string
		dataDir  func(t *testing.T) string
		env      map[string]string
		args     []string
		code     int
		stderr   string
		restored bool
	}{
		{"a DATA_DIR holding a store", occupied, nil, []string{good}, exitUsage, "already holds a store (calendar.db, index in", false},
		{"a text file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, nil, []string{text}, exitFailure, "not an eventcal store: file is not a database", false},
		{"a store of a newer schema", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, nil, []string{newer}, exitFailure,
			fmt.Sprintf("newer version of eventcal (schema version %d; this one knows up to %d)", sqlite.SchemaVersion+1, sqlite.SchemaVersion), false},
		{"a missing file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, nil, []string{filepath.Join(t.TempDir(), "gone.db")}, exitFailure, "no such file", false},
		{"no file named", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, nil, nil, exitUsage, "name the backup file", false},
		{"MongoDB", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, map[string]string{"MONGO_URI": "mongodb://127.0.0.1:1/x"}, []string{good}, exitUsage, "mongorestore --oplogReplay", false},
		{"--force moves the old store aside", occupied, nil, []string{"--force", good}, exitOK, "Moved the old calendar.db, index aside into", true},
		{"into a new DATA_DIR", func(t *testing.T) string { return filepath.Join(t.TempDir(), "new") }, nil, []string{good}, exitOK, "The search index is rebuilt", true},
		{"into a DATA_DIR holding only backups", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o750); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, []string{good}, exitOK, "Restored", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tt.dataDir(t)
			env := map[string]string{"DATA_DIR": dir}
			for k, v := range tt.env {
				env[k] = v
			}
			beforeFiles := listDir(t, dir)
			r := runCLI(t, env, append([]string{"restore"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q does not say %q", r.code, tt.code, r.stderr, tt.stderr)
			}
			if !tt.restored {
				if after := listDir(t, dir); after != beforeFiles {
					t.Errorf("a refusal changed DATA_DIR: %q -> %q", beforeFiles, after)
				}
				return
			}
			if n := checkRestored(t, filepath.Join(dir, "calendar.db"), nil, r.stdout, false); n != 3 {
				t.Errorf("%d events restored, want 3", n)
			}
			if strings.HasPrefix(tt.name, "--force") {
				aside, _ := filepath.Glob(filepath.Join(dir, "before-restore-*"))
				if len(aside) != 1 || listDir(t, aside[0]) != "calendar.db index" {
					t.Errorf("moved aside: %v (%s)", aside, listDir(t, dir))
				}
			}
		})
	}
}

// TestRestoreRefusesARunningService: restore --force refuses a DATA_DIR
// whose index a running service holds, and changes nothing there.
func TestRestoreRefusesARunningService(t *testing.T) {
	t.Parallel()
	good := storeBackup(t, 2, 0)
	dir := t.TempDir()
	seedEvents(t, dir, 1)
	startService(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0"})
	before := listDir(t, dir)
	r := runCLI(t, map[string]string{"DATA_DIR": dir}, "restore", "--force", good)
	if r.code != exitFailure || !strings.Contains(r.stderr, "a running service?") {
		t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
	}
	if after := listDir(t, dir); after != before {
		t.Errorf("DATA_DIR changed: %q -> %q", before, after)
	}
}

// TestBackupRefuses: backup with MONGO_URI says to use mongodump and
// writes nothing (it does not even connect); without --out, or without a
// store in DATA_DIR, it refuses too and writes nothing.
func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stderr string
	}{
		{"MongoDB", map[string]string{"MONGO_URI": "mongodb://127.0.0.1:1/calendar"}, []string{"--out", "FILE"}, exitUsage,
			"back it up with mongodump --oplog on a replica set, and restore it with mongorestore --oplogReplay"},
		{"no --out", nil, nil, exitUsage, "--out is required"},
		{"no store", nil, []string{"--out", "FILE"}, exitFailure, "there is no store at"},
		{"the store itself", nil, []string{"--out", "STORE"}, exitUsage, "is the store itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dataDir := filepath.Join(t.TempDir(), "data")
			outDir := filepath.Join(t.TempDir(), "out")
			env := map[string]string{"DATA_DIR": dataDir}
			for k, v := range tt.env {
				env[k] = v
			}
			args := []string{"backup"}
			for _, a := range tt.args {
				a = strings.ReplaceAll(a, "STORE", filepath.Join(dataDir, "calendar.db"))
				args = append(args, strings.ReplaceAll(a, "FILE", filepath.Join(outDir, "b.db")))
			}
			r := runCLI(t, env, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q does not say %q", r.code, tt.code, r.stderr, tt.stderr)
			}
			if got := listDir(t, outDir) + listDir(t, dataDir); got != "" {
				t.Errorf("a refused backup wrote %q", got)
			}
		})
	}
}

// TestServeRunsScheduledBackups: serve runs BACKUP_SCHEDULE into
// BACKUP_DIR and keeps BACKUP_KEEP of them (the schedule itself is tested
// on a fake clock in sync/schedule; this is the wiring).
func TestServeRunsScheduledBackups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedEvents(t, dir, 2)
	backups := filepath.Join(t.TempDir(), "backups")
	startService(t, map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0",
		"BACKUP_SCHEDULE": "@every 1s", "BACKUP_KEEP": "1", "BACKUP_DIR": backups})
	// list returns the backups' names (not the temporary files).
	list := func() []string {
		var out []string
		for _, name := range strings.Fields(listDir(t, backups)) {
			if strings.HasPrefix(name, "eventcal-") && strings.HasSuffix(name, ".db") {
				out = append(out, name)
			}
		}
		return out
	}
	deadline := testdeadline.Of(t)
	waitFor := func(what string, ok func([]string) bool) []string {
		for {
			names := list()
			if ok(names) {
				return names
			}
			if time.Now().After(deadline) {
				t.Fatalf("never %s (backups: %v)", what, names)
			}
			time.Sleep(50 * time.Millisecond) // polling the schedule's runs
		}
	}
	first := waitFor("a first backup", func(n []string) bool { return len(n) == 1 })[0]
	// The second backup is written, then the first removed (BACKUP_KEEP=1).
	waitFor("a second backup alone", func(n []string) bool { return len(n) == 1 && n[0] != first })
}
