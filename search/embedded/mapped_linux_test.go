package embedded

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// mappedKiB returns the resident size of the process's mappings of the
// file at path, in KiB (/proc/self/smaps).
func mappedKiB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's first line: its address range, ... its path
			in = fields[len(fields)-1] == path
			continue
		}
		if in && fields[0] == "Rss:" {
			n, err := strconv.Atoi(fields[1])
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}

// TestMappedPagesReleased: the pages of events.db that a load (every
// page) or a full rebuild's writes read through bbolt's mapping leave the
// process's resident set once the open or the commit is done, where they
// stayed resident (as much memory again as the file) before.
func TestMappedPagesReleased(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var docs []search.EventDocument
	for i := range 40 {
		docs = append(docs, seriesDocs(int64(1000+10*i), 105)...)
	}
	e := mustOpen(t, dir)
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "events.db")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fileKiB := int(st.Size() / 1024)
	// What a load maps: every page (checked here, so that the test
	// would notice if bbolt stopped reading through a mapping).
	s, ok, err := openEventStore(path)
	if err != nil || !ok {
		t.Fatalf("openEventStore: %v, %v", ok, err)
	}
	if _, err := s.load(func([]search.EventDocument) {}); err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, path); got < fileKiB/2 {
		t.Fatalf("after a load %d KiB of the %d KiB file are resident; the test expects most", got, fileKiB)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}

	const most = 64 // KiB: the meta pages and the few a check reads
	e = mustOpen(t, dir)
	defer e.Close()
	if got := mappedKiB(t, path); got > most {
		t.Errorf("after Open %d KiB of the %d KiB file stay resident, want at most %d", got, fileKiB, most)
	}
	rb, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// One write per series, in an order that is not the keys' (as a
	// scan's pages are not), so that the writes walk the pages written
	// before.
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(40) {
		if err := rb.IndexEvents(t.Context(), docs[i*106:(i+1)*106]); err != nil {
			t.Fatal(err)
		}
	}
	// However the rebuild's pages became resident (its writes read
	// pages through the mapping, as many as fit since its last growth;
	// here a read of every page), the commit releases them.
	if _, err := rb.(*rebuild).gen.events.load(func([]search.EventDocument) {}); err != nil {
		t.Fatal(err)
	}
	newPath := filepath.Join(dir, "events.db.1")
	if got := mappedKiB(t, newPath); got < 4*most {
		t.Fatalf("before the commit %d KiB of the new file are resident; the test expects more than %d", got, 4*most)
	}
	if err := rb.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, newPath); got > most {
		t.Errorf("after a rebuild %d KiB of the new file stay resident, want at most %d", got, most)
	}
}
