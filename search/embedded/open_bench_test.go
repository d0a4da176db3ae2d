package embedded

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/calendar/eventcal/search/searchtest"
	"github.com/golang/snappy"
)

// BenchmarkOpen measures opening an engine whose event store holds
// OPEN_BENCH_EVENTS events (default 20,000): reading events.db back into
// the in-memory index, which is most of the service's start-up. The
// events are the fixtures' (three languages, each its own text), up to
// 100,000 distinct ones repeated under other IDs. With OPEN_BENCH_DIR
// set, the store is kept there and reused by the next run (seeded only
// when it has none). It reports the process's CPU seconds per open
// (cpu-s/op: on a shared machine they compare better than wall time):
//
//	OPEN_BENCH_EVENTS=1000000 OPEN_BENCH_DIR=/tmp/open1m go test ./search/embedded -run '^$' -bench 'Open$' -benchtime 2x -cpuprofile cpu.prof
func BenchmarkOpen(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("OPEN_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("OPEN_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "events.db")); errors.Is(err, os.ErrNotExist) {
		seedOpenBench(b, dir, n)
	}
	var cpu time.Duration
	for b.Loop() {
		cpu0 := cpuTime()
		e, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
		b.ReportMetric(float64(e.cur.queries.Count()), "docs")
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// seedOpenBench writes n events straight into the event store of a new
// engine under dir (not into its in-memory index).
func seedOpenBench(b *testing.B, dir string, n int) {
	e, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	f := searchtest.Generate(3, min(n, 100000), 50, 20)
	var put []storedDoc
	for i := range n {
		d := f.Events[i%len(f.Events)]
		d.ID += int64(i/len(f.Events)) * 10_000_000
		put = append(put, storedDoc{d.Key(), snappy.Encode(nil, encodeEvent(d, ""))})
		if len(put) == 20000 || i == n-1 {
			if err := e.cur.events.write(b.Context(), put, nil, "seed"); err != nil {
				b.Fatal(err)
			}
			put = put[:0]
		}
	}
}
