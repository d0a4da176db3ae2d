package main

import (
	"fmt"
	"io"
	"runtime/metrics"
	"syscall"
	"time"
)

// gcSample is what the process's runtime reports at one moment: the
// garbage collector's cycles and CPU, the process's CPU, and the heap's
// allocations, so that a read row can report its share of each (gcRow).
type gcSample struct {
	at                 time.Time
	cycles             uint64
	gcCPU, totalCPU    float64
	allocs, allocBytes uint64
	liveHeap           uint64
	procCPU            time.Duration
}

// gcMetrics are the runtime/metrics a gcSample reads, in its order.
var gcMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/gc/heap/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/gc/heap/live:bytes",
}

// sampleGC reads a gcSample.
func sampleGC() gcSample {
	ms := make([]metrics.Sample, len(gcMetrics))
	for i, name := range gcMetrics {
		ms[i].Name = name
	}
	metrics.Read(ms)
	u := func(i int) uint64 {
		if ms[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return ms[i].Value.Uint64()
	}
	f := func(i int) float64 {
		if ms[i].Value.Kind() != metrics.KindFloat64 {
			return 0
		}
		return ms[i].Value.Float64()
	}
	s := gcSample{at: time.Now(), cycles: u(0), gcCPU: f(1), totalCPU: f(2), allocs: u(3), allocBytes: u(4), liveHeap: u(5)}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.procCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return s
}

// gcRow writes, for a read row of requests between the samples a and b,
// the garbage collector's cycles a second and its share of the CPU the
// runtime accounts (marking, assists and pauses; write barriers are in
// the mutator's), the process's CPU per request (user+sys, the load
// generator's included) and the heap allocations per request (the load
// generator's included), and the live heap at the last cycle.
func gcRow(w io.Writer, name string, requests int64, a, b gcSample) {
	secs := b.at.Sub(a.at).Seconds()
	if requests <= 0 || secs <= 0 {
		return
	}
	share := 0.0
	if cpu := b.totalCPU - a.totalCPU; cpu > 0 {
		share = 100 * (b.gcCPU - a.gcCPU) / cpu
	}
	n := float64(requests)
	fmt.Fprintf(w, "gc: %s: %d requests, %.2f GC cycles/s, GC %.1f%% of CPU, %.3f ms CPU/request, %.0f allocs/request, %.1f KB/request, live heap %.0f MiB\n",
		name, requests, float64(b.cycles-a.cycles)/secs, share,
		float64((b.procCPU-a.procCPU).Microseconds())/1000/n,
		float64(b.allocs-a.allocs)/n, float64(b.allocBytes-a.allocBytes)/1024/n,
		float64(b.liveHeap)/(1<<20))
}
