package memindex

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"testing"
	"time"
)

// BenchmarkGCMark measures what one garbage collection cycle costs with
// the load benchmark's index in the heap (SERIES_BENCH_EVENTS events of
// which SERIES_BENCH_SERIES weekly series, 100,000 and 5,000 by
// default, with occurrence keys of the service's form): each op is a full collection (runtime.GC), reported as the
// process's CPU (proc-cpu-ms/op, user+sys: nothing else runs) and the
// runtime's estimate of the collector's (gc-cpu-ms/op, from its workers'
// wall time, so inflated on a busy machine), with the heap's objects and
// live bytes, and the heap the collector must scan (scan-MiB: the
// objects that hold pointers, up to their last one). A structure made
// pointer-free (occKey, row) shows here as fewer objects, less heap to
// scan and less CPU a cycle: go test ./search/memindex -run '^$' -bench
// GCMark -benchtime 5x -cpu 1. With MEMINDEX_GCMARK_HEAP set to a file
// name, a heap profile is written there with the index in the heap (its
// inuse_objects by allocation site are what each cycle marks).
func BenchmarkGCMark(b *testing.B) {
	n, series := benchSeriesSize()
	docs, _ := benchDocs(n, series, true)
	for i := range docs {
		if docs[i].Occurrence != "" {
			// The service's keys (the occurrence's local start), not the
			// other benchmarks' short ones.
			docs[i].Occurrence = time.Unix(docs[i].Start, 0).UTC().Format("20060102T150405")
		}
	}
	x := New()
	x.Apply(docs)
	b.Logf("%d documents", x.Count())
	samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/heap/objects:objects"}, {Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	runtime.GC()
	metrics.Read(samples)
	cpu0, proc0 := samples[0].Value.Float64(), cpuTime()
	for b.Loop() {
		runtime.GC()
	}
	proc := cpuTime() - proc0
	metrics.Read(samples)
	b.ReportMetric((samples[0].Value.Float64()-cpu0)*1000/float64(b.N), "gc-cpu-ms/op")
	b.ReportMetric(float64(proc)/1e6/float64(b.N), "proc-cpu-ms/op")
	b.ReportMetric(float64(samples[1].Value.Uint64()), "objects")
	b.ReportMetric(float64(samples[2].Value.Uint64())/(1<<20), "live-MiB")
	b.ReportMetric(float64(samples[3].Value.Uint64())/(1<<20), "scan-MiB")
	if name := os.Getenv("MEMINDEX_GCMARK_HEAP"); name != "" {
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(x)
}
