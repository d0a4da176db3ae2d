package embedded

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// BenchmarkRebuild measures a full reindex's engine side: a rebuild of
// an empty engine filled with REBUILD_BENCH_EVENTS events (default
// 10,000; the fixtures', three languages) of which every fourth is a
// weekly series of REBUILD_BENCH_OCCURRENCES occurrences (default 105)
// differing in their dates only, written as sync/indexing's scan writes
// them (batches of about 2,000 documents that never split an event),
// then committed. It reports the process's CPU per document
// (cpu-ns/doc), which compares better than wall time on a shared
// machine:
//
//	go test ./search/embedded -run '^$' -bench 'Rebuild$' -benchtime 2x
func BenchmarkRebuild(b *testing.B) {
	n, occs := 10000, 105
	if v, err := strconv.Atoi(os.Getenv("REBUILD_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("REBUILD_BENCH_OCCURRENCES")); err == nil && v > 0 {
		occs = v
	}
	f := searchtest.Generate(3, n, 50, 20)
	var batches [][]search.EventDocument
	var batch []search.EventDocument
	docs := 0
	for i, d := range f.Events {
		event := []search.EventDocument{d}
		if i%4 == 0 {
			event = event[:0]
			for k := range occs {
				o := d
				o.Start, o.End = d.Start+int64(k)*7*86400, d.End+int64(k)*7*86400
				o.Occurrence = fmt.Sprintf("%d", o.Start)
				event = append(event, o)
			}
		}
		if len(batch) > 0 && len(batch)+len(event) > 2000 {
			batches, batch = append(batches, batch), nil
		}
		batch = append(batch, event...)
		docs += len(event)
	}
	batches = append(batches, batch)
	var cpu int64
	for b.Loop() {
		dir := b.TempDir()
		e, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		cpu0 := cpuTime()
		rb, err := e.BeginRebuild(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range batches {
			if err := rb.IndexEvents(b.Context(), batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := rb.Commit(b.Context()); err != nil {
			b.Fatal(err)
		}
		cpu += int64(cpuTime() - cpu0)
		if got, _ := e.CountEvents(b.Context()); got != docs {
			b.Fatalf("%d documents, want %d", got, docs)
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(docs), "cpu-ns/doc")
}
