package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// cacheBench measures the cached rows: the service's own app (result and
// response caches on, one-minute TTL as with the embedded stack): the
// default page, 100 event pages, revalidation with the page's ETag (304s),
// and the default page gzip- and brotli-encoded.
type cacheBench struct {
	s        *stack
	eventIDs []int64
	ceiling  float64
	conc     int
	dur      time.Duration
}

// run measures the cached rows and writes them to tw.
func (b *cacheBench) run(tw *tabwriter.Writer) error {
	items := b.eventIDs[:min(100, len(b.eventIDs))]
	for _, id := range items {
		if _, err := b.s.raw("/events/" + strconv.FormatInt(id, 10)); err != nil {
			return err
		}
	}
	item := func(r *rand.Rand) string { return "/events/" + strconv.FormatInt(items[r.IntN(len(items))], 10) }
	fixed := func(p string) func(*rand.Rand) string { return func(*rand.Rand) string { return p } }

	fmt.Fprintln(tw, "cached (the service as it runs):\t\t\t\t\t")
	for _, m := range []struct {
		name   string
		path   func(*rand.Rand) string
		header http.Header
		want   int
	}{
		{"cached GET /events (default)", fixed("/events"), nil, 200},
		{"cached GET /events/{id} (100 events)", item, nil, 200},
		{"cached GET /events, If-None-Match (304)", fixed("/events"), http.Header{"If-None-Match": nil}, 304},
		{"cached GET /events, Accept-Encoding: gzip", fixed("/events"), http.Header{"Accept-Encoding": {"gzip"}}, 200},
		{"cached GET /events, Accept-Encoding: br", fixed("/events"), http.Header{"Accept-Encoding": {"br"}}, 200},
	} {
		if _, ok := m.header["If-None-Match"]; ok {
			// The page's ETag as of now: the default list moves with the
			// clock (an event that ends leaves it), so an ETag read
			// before the previous row may be stale once the cached page
			// expired (one minute) and was rendered again.
			etag, err := b.etag("/events")
			if err != nil {
				return err
			}
			m.header = http.Header{"If-None-Match": {etag}}
		}
		r := b.s.loadWith(b.s.base, m.path, m.header, m.want, b.conc, b.dur)
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t\n", m.name, r.rate, r.lat.pct(50), r.lat.pct(99), r.rate/b.ceiling)
		if r.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\n", r.errors)
		}
	}
	return nil
}

// etag returns the ETag of the page at path.
func (b *cacheBench) etag(path string) (string, error) {
	res, err := b.s.client.Get(b.s.base + path)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.Header.Get("ETag"), nil
}

// startProfile starts a CPU profile into path (nothing when path is
// empty) and returns the function that stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// rssMiB returns the process's resident set size in MiB (Linux; 0
// elsewhere).
func rssMiB() float64 {
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(raw), &size, &resident); err != nil {
		return 0
	}
	return float64(resident*int64(os.Getpagesize())) / (1 << 20)
}

// loadWith runs conc clients against base+path(r) for dur, sending header
// with every request and counting an answer other than want as an error.
func (s *stack) loadWith(base string, path func(*rand.Rand) string, header http.Header, want, conc int, dur time.Duration) loadResult {
	lat := &latencies{}
	var count, errs atomic.Int64
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for time.Now().Before(stop) {
				req, _ := http.NewRequest(http.MethodGet, base+path(r), nil)
				for k, v := range header {
					req.Header[k] = v
				}
				start := time.Now()
				res, err := s.client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != want {
					errs.Add(1)
				}
				lat.add(time.Since(start))
				count.Add(1)
			}
		}(uint64(c + 1))
	}
	start := time.Now()
	wg.Wait()
	return loadResult{rate: float64(count.Load()) / time.Since(start).Seconds(), lat: lat, errors: errs.Load(), count: count.Load()}
}

// peakRSSMiB returns the highest resident set size the process has had,
// in MiB (VmHWM; Linux, 0 elsewhere).
func peakRSSMiB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb); err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}

// phaseClock times the phases of a run, in wall and CPU time (the CPU
// time hardly depends on what else runs on the machine), for the table.
type phaseClock struct {
	wall time.Time
	cpu  time.Duration
	rows []phaseRow
}

// phaseRow is one timed phase.
type phaseRow struct {
	name      string
	wall, cpu time.Duration
}

// newPhaseClock starts timing the first phase.
func newPhaseClock() *phaseClock { return &phaseClock{wall: time.Now(), cpu: cpuTime()} }

// done ends the phase running (name) and starts the next.
func (c *phaseClock) done(name string) {
	now, cpu := time.Now(), cpuTime()
	c.rows = append(c.rows, phaseRow{name, now.Sub(c.wall), cpu - c.cpu})
	c.wall, c.cpu = now, cpu
	fmt.Fprintf(os.Stderr, "%s: %.1f s (%.1f s CPU)\n", name, c.rows[len(c.rows)-1].wall.Seconds(), c.rows[len(c.rows)-1].cpu.Seconds())
}

// write adds the phases to the table.
func (c *phaseClock) write(tw io.Writer) {
	for _, r := range c.rows {
		fmt.Fprintf(tw, "phase: %s (wall s, CPU s)\t\t%.1f\t%.1f\t\t\t\n", r.name, r.wall.Seconds(), r.cpu.Seconds())
	}
}
