package replay

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRecordingsInTheRepository: the recordings are found from this
// package (the module root's app/wpimport/replay/testdata), every file
// INDEX.tsv lists is there with the status, authentication and path the
// index gives it, and there is no recording the index does not list.
func TestRecordingsInTheRepository(t *testing.T) {
	dir := Dir(t)
	here, err := filepath.Abs("testdata/tec-6.17.1")
	if err != nil {
		t.Fatal(err)
	}
	if dir != here {
		t.Fatalf("Dir = %s, want this package's testdata (%s)", dir, here)
	}
	index, err := os.ReadFile(filepath.Join(dir, "INDEX.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	got := Load(t)
	listed := 0
	for i, line := range strings.Split(strings.TrimRight(string(index), "\n"), "\n")[1:] {
		cols := strings.Split(line, "\t")
		if len(cols) < 4 {
			t.Fatalf("INDEX.tsv line %d: %q", i+2, line)
		}
		name := strings.TrimSuffix(cols[0], ".json")
		x := got[name]
		if x == nil {
			t.Errorf("%s: listed in INDEX.tsv, not loaded", cols[0])
			continue
		}
		listed++
		if status, _ := strconv.Atoi(cols[1]); x.Status != status || x.Request.Auth != cols[2] || x.Request.Path != cols[3] {
			t.Errorf("%s: recorded %d %s %s, index says %s %s %s", cols[0], x.Status, x.Request.Auth, x.Request.Path, cols[1], cols[2], cols[3])
		}
	}
	if listed != len(got) || listed < 145 {
		t.Errorf("%d recordings loaded, %d listed in INDEX.tsv (145 recorded)", len(got), listed)
	}
}
