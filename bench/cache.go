package main

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// uncachedProfile is the -cpuprofile-uncached flag: a CPU profile of the
// uncached list rows alone.
var uncachedProfile string

// cacheBench is what the HTTP caching rows need from the main run.
type cacheBench struct {
	s        *stack
	cfg      *config.Config
	store    repository.Store
	engine   search.Engine // the engine without the result cache
	eventIDs []int64
	catIDs   []int64
	ceiling  float64
	conc     int
	dur      time.Duration
}

// row is one measured line of the table.
type row struct {
	name string
	res  loadResult
}

// cacheRows measures the rendered-response cache (hits, revalidation,
// gzip) on the main app, and the uncached path on a second app over the
// same store and index with every cache off: no response cache and no
// search result cache. Filtered rows change the filter on every request.
func (b *cacheBench) run(tw *tabwriter.Writer) error {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cold, err := app.New(app.Options{Config: b.cfg, Store: b.store, Search: b.engine, Logger: quiet, ResponseCacheBytes: -1})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go cold.Listener(ln)
	defer func() {
		b.s.client.CloseIdleConnections()
		_ = cold.ShutdownWithTimeout(time.Second)
	}()
	coldBase := "http://" + ln.Addr().String() + b.cfg.APIRoot()

	// Warm and read the validators of the cached rows.
	items := b.eventIDs[:min(100, len(b.eventIDs))]
	for _, id := range items {
		if _, err := b.s.raw("/events/" + strconv.FormatInt(id, 10)); err != nil {
			return err
		}
	}
	res, err := b.s.client.Get(b.s.base + "/events")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	etag := res.Header.Get("ETag")

	today := time.Now().UTC().Truncate(24 * time.Hour)
	filtered := func(r *rand.Rand) string {
		from := today.AddDate(0, 0, r.IntN(600))
		to := from.AddDate(0, 0, 30+r.IntN(150))
		return "/events?start_date=" + from.Format("2006-01-02") + "&end_date=" + to.Format("2006-01-02") +
			"&categories=" + strconv.FormatInt(b.catIDs[r.IntN(len(b.catIDs))], 10) + "&featured=" + strconv.FormatBool(r.IntN(2) == 0)
	}
	geo := func(r *rand.Rand) string {
		return fmt.Sprintf("/events?geoloc_lat=%.3f&geoloc_lng=%.3f&geoloc_radius=50", 48+r.Float64()*2, 2+r.Float64()*2)
	}
	item := func(r *rand.Rand) string { return "/events/" + strconv.FormatInt(items[r.IntN(len(items))], 10) }
	fixed := func(p string) func(*rand.Rand) string { return func(*rand.Rand) string { return p } }

	var rows []row
	measure := func(name, base string, path func(*rand.Rand) string, header http.Header, want int) {
		rows = append(rows, row{name, b.s.loadWith(base, path, header, want, b.conc, b.dur)})
	}
	measure("cached GET /events (default)", b.s.base, fixed("/events"), nil, 200)
	measure("cached GET /events/{id} (100 events)", b.s.base, item, nil, 200)
	measure("cached GET /events, If-None-Match (304)", b.s.base, fixed("/events"), http.Header{"If-None-Match": {etag}}, 304)
	measure("cached GET /events, Accept-Encoding: gzip", b.s.base, fixed("/events"), http.Header{"Accept-Encoding": {"gzip"}}, 200)
	measure("cached GET /events, Accept-Encoding: br", b.s.base, fixed("/events"), http.Header{"Accept-Encoding": {"br"}}, 200)

	if uncachedProfile != "" {
		f, err := os.Create(uncachedProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	measure("uncached GET /events (default)", coldBase, fixed("/events"), nil, 200)
	measure("uncached GET /events (dates+category+featured, new each time)", coldBase, filtered, nil, 200)
	measure("uncached GET /events (geo radius 50 km)", coldBase, geo, nil, 200)
	measure("uncached GET /events/{id}", coldBase, func(r *rand.Rand) string {
		return "/events/" + strconv.FormatInt(b.eventIDs[r.IntN(len(b.eventIDs))], 10)
	}, nil, 200)
	if uncachedProfile != "" {
		pprof.StopCPUProfile()
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.name, r.res.rate, r.res.lat.pct(50), r.res.lat.pct(99), r.res.rate/b.ceiling)
		if r.res.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\n", r.res.errors)
		}
	}
	return nil
}

// loadWith is load with request headers and the status every answer must
// have.
func (s *stack) loadWith(base string, path func(*rand.Rand) string, header http.Header, want, conc int, dur time.Duration) loadResult {
	lat := &latencies{}
	var count, errs atomic.Int64
	stop := time.Now().Add(dur)
	var wg gosync.WaitGroup
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 11))
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
	return loadResult{rate: float64(count.Load()) / time.Since(start).Seconds(), lat: lat, errors: errs.Load()}
}
