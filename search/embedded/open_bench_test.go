package embedded

import (
	"os"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/search/searchtest"
)

// BenchmarkOpen measures opening an engine whose event store holds the
// fixtures' events (OPEN_BENCH_EVENTS, default 20,000): reading events.db
// back into the in-memory index, as start-up does. go test
// ./search/embedded -run '^$' -bench Open -cpuprofile cpu.prof
func BenchmarkOpen(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("OPEN_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	e, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	f := searchtest.Generate(3, n, 50, 20)
	for lo := 0; lo < len(f.Events); lo += 5000 {
		if err := e.IndexEvents(b.Context(), f.Events[lo:min(lo+5000, len(f.Events))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		e, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
