package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// storeCounts returns the row counts of the embedded store in dir, as
// "backup" prints them.
func storeCounts(t *testing.T, dir string) string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	c, err := st.RowCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printCounts(&b, c)
	return b.String()
}

// fields returns the line of out that starts with name, its fields
// joined by single spaces.
func fields(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// TestExportAndLoadCommands: "export --out FILE" writes the file with
// mode 0600 (and nothing else beside it), printing its size and the
// lines of each type; "load FILE" into a new DATA_DIR creates the store,
// loads everything (a token made on the first store authenticates on the
// second) and prints what it created; a second load changes nothing and
// says so; a file cut short is refused and changes nothing.
func TestExportAndLoadCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedEvents(t, dir, 5)
	env := map[string]string{"DATA_DIR": dir, "LANGUAGES": "en,fr"}
	if r := runCLI(t, env, "user", "add", "--login", "ed", "--role", "editor"); r.code != exitOK {
		t.Fatalf("user add: %d %s", r.code, r.stderr)
	}
	tok := runCLI(t, env, "token", "create", "--login", "ed")
	if tok.code != exitOK {
		t.Fatalf("token create: %d %s", tok.code, tok.stderr)
	}
	secret := strings.TrimSpace(tok.stdout)

	outDir := filepath.Join(t.TempDir(), "exports")
	file := filepath.Join(outDir, "calendar.jsonl")
	r := runCLI(t, env, "export", "--out", file)
	if r.code != exitOK {
		t.Fatalf("export: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v, %v", st, err)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("size     %d bytes", st.Size())) || fields(r.stdout, "record") != "record 5" ||
		fields(r.stdout, "user") != "user 1" || fields(r.stdout, "token") != "token 1" {
		t.Errorf("export printed:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "keep it as a secret") {
		t.Errorf("export does not say the file is a secret:\n%s", r.stderr)
	}
	if got := listDir(t, outDir); got != "calendar.jsonl" {
		t.Errorf("beside the export: %q", got)
	}
	if got := listDir(t, dir); got != "calendar.db calendar.db-shm calendar.db-wal" && got != "calendar.db" {
		t.Errorf("the snapshot was left in DATA_DIR: %q", got)
	}

	dir2 := filepath.Join(t.TempDir(), "new")
	env2 := map[string]string{"DATA_DIR": dir2, "LANGUAGES": "en,fr"}
	r = runCLI(t, env2, "load", file)
	if r.code != exitOK {
		t.Fatalf("load: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "created a new store at") || fields(r.stdout, "record") != "record 5 0 0" || fields(r.stdout, "token") != "token 1 0 0" {
		t.Errorf("load printed:\n%s\n%s", r.stdout, r.stderr)
	}
	if got, want := storeCounts(t, dir2), storeCounts(t, dir); got != want {
		t.Errorf("the loaded store counts\n%s\nthe first\n%s", got, want)
	}
	s2, err := sqlite.Open(context.Background(), filepath.Join(dir2, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := s2.UserByTokenHash(context.Background(), repository.HashToken(secret))
	s2.Close(context.Background())
	if err != nil || u.Login != "ed" {
		t.Errorf("the first store's token on the second: %v, %v", u, err)
	}

	r = runCLI(t, env2, "load", file)
	if r.code != exitOK || fields(r.stdout, "record") != "record 0 0 5" || fields(r.stdout, "user") != "user 0 0 1" {
		t.Errorf("second load: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}
	dir3 := t.TempDir()
	seedEvents(t, dir3, 1)
	before := storeCounts(t, dir3)
	r = runCLI(t, map[string]string{"DATA_DIR": dir3, "LANGUAGES": "en,fr"}, "load", cut)
	if r.code != exitFailure || !strings.Contains(r.stderr, "the file was cut short") {
		t.Errorf("a file cut short: exit %d\n%s", r.code, r.stderr)
	}
	if after := storeCounts(t, dir3); after != before {
		t.Errorf("a refused load changed the store:\n%s\n%s", before, after)
	}
}

// TestExportAndLoadUsage: export without --out or onto the store, and
// load without a file or of a missing file, are refused before anything
// is written.
func TestExportAndLoadUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"export without --out", []string{"export"}, exitUsage, "--out is required"},
		{"export onto the store", []string{"export", "--out", "STORE"}, exitUsage, "is the store itself"},
		{"load without a file", []string{"load"}, exitUsage, "name the export file to load"},
		{"load of a missing file", []string{"load", "MISSING"}, exitFailure, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			seedEvents(t, dir, 1)
			before := listDir(t, dir)
			var args []string
			for _, a := range tt.args {
				a = strings.ReplaceAll(a, "STORE", filepath.Join(dir, "calendar.db"))
				args = append(args, strings.ReplaceAll(a, "MISSING", filepath.Join(dir, "missing.jsonl")))
			}
			r := runCLI(t, map[string]string{"DATA_DIR": dir}, args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, want %d; stderr %q does not say %q", r.code, tt.code, r.stderr, tt.stderr)
			}
			if after := listDir(t, dir); after != before {
				t.Errorf("DATA_DIR changed: %q -> %q", before, after)
			}
		})
	}
}
