package memindex

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// heapInUse returns the bytes of live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemory builds the load benchmark's index at 200,000 events, at
// 100,000 events with 5,000 weekly series, and at the sizes
// MEMINDEX_MEMORY_EVENTS lists (comma-separated), and reports the live
// heap the index holds (MiB) and its bytes per document:
// go test ./search/memindex -run '^$' -bench Memory -benchtime 1x.
func BenchmarkMemory(b *testing.B) {
	type size struct{ n, series int }
	sizes := []size{{200000, 0}, {100000, 5000}}
	for _, s := range strings.Split(os.Getenv("MEMINDEX_MEMORY_EVENTS"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			sizes = append(sizes, size{n, 0})
		}
	}
	for _, s := range sizes {
		b.Run(strconv.Itoa(s.n)+"/series "+strconv.Itoa(s.series), func(b *testing.B) {
			for b.Loop() {
				before := heapInUse()
				x, _ := benchIndexSeries(s.n, s.series)
				after := heapInUse()
				b.ReportMetric(float64(after-before)/(1<<20), "MiB")
				b.ReportMetric(float64(after-before)/float64(x.Count()), "B/doc")
				if p := os.Getenv("MEMINDEX_HEAP_PROFILE"); p != "" {
					f, err := os.Create(p + "." + strconv.Itoa(s.n) + "." + strconv.Itoa(s.series))
					if err != nil {
						b.Fatal(err)
					}
					pprof.WriteHeapProfile(f)
					f.Close()
				}
				runtime.KeepAlive(x)
			}
		})
	}
}

// TestRowSize pins what every document costs in its row and entry (on a
// 64-bit platform, as the service runs): 144 and 32 bytes. The row held the entry again, the
// statuses as strings and a slice per list filter (264 bytes).
func TestRowSize(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"row", unsafe.Sizeof(row{}), 144},
		{"entry", unsafe.Sizeof(entry{}), 32},
	} {
		if c.got > c.want {
			t.Errorf("%s: %d bytes, want at most %d", c.name, c.got, c.want)
		}
	}
}
