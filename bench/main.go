// Command bench seeds the embedded stack and measures
// write rate, sync lag and read latency under concurrent load, next to the
// ceiling of a bare Fiber handler serving a pre-encoded body of the same
// size as a default events page.
//
//	go run ./bench -events 10000 -concurrency 8 -duration 10s
//	go run ./bench -growth              # creates/s at 2k, 25k, 50k and 100k events
//	go run ./bench -import 10000        # eventcal import of a generated TEC site (importbench.go)
//	go run ./bench -events 100000 -series 5000   # 5,000 weekly series (series.go)
//	go run ./bench -meilisim            # rows on the Meilisearch simulator (meilisim.go)
//	go run ./bench -sources 10000       # a 10,000-event iCalendar feed as a calendar source (sourcesbench.go)
//	go run ./bench -backup -export      # backups, portable exports and loads under read load (backupbench.go, exportbench.go)
//
// Events beyond the last -api-events are written to the store directly
// (fast seeding); the last ones, and every measured write, go through the
// HTTP API.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/sync/indexing"
)

func main() {
	events := flag.Int("events", 10000, "events to seed")
	venues := flag.Int("venues", 200, "venues to seed")
	organizers := flag.Int("organizers", 100, "organizers to seed")
	categories := flag.Int("categories", 30, "categories to seed")
	tags := flag.Int("tags", 50, "tags to seed")
	conc := flag.Int("concurrency", 8, "concurrent clients")
	dur := flag.Duration("duration", 8*time.Second, "duration of each read measurement")
	lagSamples := flag.Int("lag-samples", 200, "writes sampled for sync lag")
	dir := flag.String("data", "", "data directory (default: a new temporary one, removed afterwards)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the uncached read rows to this file")
	flag.StringVar(&memProfile, "memprofile", "", "write a heap profile, after the reindex, to this file")
	rows := flag.String("rows", "", "run only the uncached read rows whose name matches this regular expression (for profiling one row)")
	flag.BoolVar(&growth, "growth", false, "measure creates/s at each size of -growth-steps instead (growth.go)")
	flag.StringVar(&growthSteps, "growth-steps", "2000,25000,50000,100000", "store sizes of -growth")
	flag.IntVar(&growthCreates, "growth-creates", 1000, "creates measured through the API at each size of -growth")
	flag.StringVar(&storeKind, "store", "sqlite", "the store: sqlite (embedded), ferretdb (MongoDB over a FerretDB started in this process) or mongodb (-mongo-uri)")
	flag.StringVar(&mongoURI, "mongo-uri", "", "the MongoDB server of -store mongodb")
	flag.BoolVar(&noIDIndex, "ferretdb-plain", false, "with -store ferretdb: leave out the index mongotest.IndexIDLookups adds to FerretDB's SQLite files")
	flag.StringVar(&pprofAddr, "pprof", "", "serve net/http/pprof on this address (localhost:6060) for the whole run")
	flag.IntVar(&apiEvents, "api-events", 2000, "events seeded (and measured) through the API; the others are written to the store directly")
	flag.IntVar(&seriesCount, "series", 0, "of the events seeded into the store directly, this many are weekly series up to the recurrence horizon (series.go)")
	flag.DurationVar(&draftInterval, "draft-interval", 500*time.Millisecond, "how often the large-drafts rows post a 200,000-character draft (0: back to back)")
	flag.IntVar(&importEvents, "import", 0, "import a generated TEC source of this many events instead, and measure until the API lists them (importbench.go)")
	flag.Float64Var(&importRate, "import-rate", 0, "with -import: requests a second to the source (0: the importer's default; negative: no limit)")
	flag.IntVar(&startupEvents, "startup", 0, "measure start-up to ready and a full reindex on a store of this many events instead (startup.go; keep -data to measure again without seeding)")
	flag.StringVar(&startupProfile, "startup-profile", "", "with -startup: write CPU profiles of the start-up and the reindex to this path + .startup and .reindex")
	flag.Parse()
	servePprof()
	if importEvents > 0 {
		if err := runImportBench(importEvents, importRate); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if sourcesEvents > 0 {
		if err := runSourcesBench(sourcesEvents, *conc, *dur); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if startupEvents > 0 {
		if err := runStartup(startupEvents, *dir, startupProfile); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if meiliSimMode {
		if err := runMeiliSim(context.Background(), *dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if rowFilter, err = regexp.Compile(*rows); err != nil {
		fmt.Fprintln(os.Stderr, "-rows:", err)
		os.Exit(2)
	}
	if err := run(*events, *venues, *organizers, *categories, *tags, *conc, *dur, *lagSamples, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// cpuProfile is the -cpuprofile flag.
var cpuProfile string

// memProfile is the -memprofile flag.
var memProfile string

// rowFilter is the -rows flag.
var rowFilter *regexp.Regexp

// The -growth, -growth-steps, -growth-creates and -api-events flags.
var (
	growth        bool
	growthSteps   string
	growthCreates int
	apiEvents     int
)

// stack is the service under test, in process, on a loopback port.
type stack struct {
	base   string
	client *http.Client
	token  string
}

func run(nEvents, nVenues, nOrgs, nCats, nTags, conc int, dur time.Duration, lagSamples int, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "calendar-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, stopService, err := startService(ctx, dir, map[string]string{"ADMIN_TOKEN": "bench-admin"})
	if err != nil {
		return err
	}
	defer stopService()
	cfg, st, storeName, rawEngine, eng, w, quiet := svc.cfg, svc.store, svc.storeName, svc.rawEngine, svc.engine, svc.worker, svc.log
	s := &stack{base: svc.apiBase(), token: "bench-admin",
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc * 2, MaxConnsPerHost: conc * 2,
			DisableCompression: true}, Timeout: 30 * time.Second}} // compression only where a row asks for it
	// The same service without the result cache and the response cache
	// (on the same store and index), for the read rows.
	uncachedBase, stopUncached, err := serveUncached(cfg, st, rawEngine, w, quiet)
	if err != nil {
		return err
	}
	defer stopUncached()

	fmt.Fprintf(os.Stderr, "seeding %d venues, %d organizers, %d categories, %d tags, %d events with %d clients...\n", nVenues, nOrgs, nCats, nTags, nEvents, conc)
	rng := rand.New(rand.NewPCG(1, 2))
	venueIDs, err := s.seed(nVenues, conc, func(i int) map[string]any {
		return map[string]any{"venue": fmt.Sprintf("Venue %d %s", i, words[i%len(words)]), "city": cities[i%len(cities)],
			"address": fmt.Sprintf("%d Main Street", i), "geo_lat": 48 + float64(i%100)/50, "geo_lng": 2 + float64(i%70)/35}
	}, "venues", nil)
	if err != nil {
		return err
	}
	orgIDs, err := s.seed(nOrgs, conc, func(i int) map[string]any {
		return map[string]any{"organizer": fmt.Sprintf("Organizer %d", i), "email": fmt.Sprintf("org%d@example.test", i)}
	}, "organizers", nil)
	if err != nil {
		return err
	}
	catIDs, err := s.seed(nCats, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("Category %d", i)} }, "categories", nil)
	if err != nil {
		return err
	}
	tagIDs, err := s.seed(nTags, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("tag-%d", i)} }, "tags", nil)
	if err != nil {
		return err
	}
	// The worker indexes the places and terms (and runs their dependent
	// re-indexes, empty yet) before the events arrive, so that seeding
	// measures the events' writes rather than a backlog of cascades
	// walking the growing events (costly on FerretDB, where each step
	// scans every post).
	if err := flushWithin(ctx, w, 10*time.Minute); err != nil {
		return err
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	kit, err := newSeedKit(ctx, st, venueIDs, orgIDs, catIDs, tagIDs, today, cfg.Location)
	if err != nil {
		return err
	}
	if growth {
		steps, err := parseSteps(growthSteps)
		if err != nil {
			return err
		}
		return runGrowth(ctx, s, st, w, kit, steps, growthCreates, conc)
	}
	// The fast path: all but the last apiEvents events go straight to the store.
	if seriesCount > 0 {
		kit.seriesEvery = max(1, max(0, nEvents-apiEvents)/seriesCount)
	}
	phases := newPhaseClock()
	bulk, err := storeSeed(ctx, st, w, kit, 0, max(0, nEvents-apiEvents))
	if err != nil {
		return err
	}
	phases.done(fmt.Sprintf("seed of %d events into the store (the worker indexing meanwhile)", len(bulk)))
	nAPI := nEvents - len(bulk)
	var mu sync.Mutex
	eventBody := func(i int) map[string]any {
		mu.Lock()
		defer mu.Unlock()
		start := today.Add(time.Duration(rng.IntN(730*24)) * time.Hour)
		return map[string]any{
			"title":       fmt.Sprintf("%s %s %d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i),
			"description": fmt.Sprintf("An evening of %s and %s.", words[rng.IntN(len(words))], words[rng.IntN(len(words))]),
			"start_date":  start.Format("2006-01-02 15:04:05"), "end_date": start.Add(2 * time.Hour).Format("2006-01-02 15:04:05"),
			"venue": venueIDs[rng.IntN(len(venueIDs))], "organizer": []any{orgIDs[rng.IntN(len(orgIDs))]},
			"categories": []any{catIDs[rng.IntN(len(catIDs))]}, "tags": []any{tagIDs[rng.IntN(len(tagIDs))], tagIDs[rng.IntN(len(tagIDs))]},
			"featured": rng.IntN(5) == 0, "cost": strconv.Itoa(rng.IntN(50)) + "$",
		}
	}
	var createLat latencies
	t0 := time.Now()
	cmds0 := storeCommands.Load()
	seedCPU := cpuTime()
	eventIDs, err := s.seed(nAPI, conc, eventBody, "events", &createLat)
	if nAPI > 0 {
		fmt.Fprintf(os.Stderr, "cpu per request: POST /events: %.3f ms (%d requests, the worker's indexing meanwhile included)\n", float64(cpuTime()-seedCPU)/float64(nAPI)/1e6, nAPI)
	}
	if err != nil {
		return err
	}
	phases.done(fmt.Sprintf("seed of %d events through the API", nAPI))
	createRate := float64(nAPI) / time.Since(t0).Seconds()
	createCommands := "" // the worker's, indexing the creates meanwhile, included
	if storeKind != "sqlite" && nAPI > 0 {
		createCommands = fmt.Sprintf("%.2f (with the worker's)", float64(storeCommands.Load()-cmds0)/float64(nAPI))
	}
	eventIDs = append(bulk, eventIDs...)
	fmt.Fprintln(os.Stderr, "waiting for the index to catch up...")
	// An hour: on a busy machine the worker can trail a 1,000,000-event
	// seed by more than ten minutes (2026-11-27, at a load of 14).
	flushCtx, cancelFlush := context.WithTimeout(ctx, time.Hour)
	defer cancelFlush()
	if err := w.Flush(flushCtx); err != nil {
		return err
	}
	phases.done("the index catching up")

	fmt.Fprintln(os.Stderr, "measuring sync lag...")
	lag, err := s.syncLag(lagSamples, today)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "measuring sync lag while 100 writes/s arrive...")
	pacedLag, pacedRate, err := s.pacedLag(100, lagSamples/2, kit)
	if err != nil {
		return err
	}
	phases.done("sync lag")
	// Slugs for by-slug reads.
	slugs := make([]string, 0, 200)
	for i := 0; i < 200 && i < len(eventIDs); i++ {
		var ev struct {
			Slug string `json:"slug"`
		}
		if err := s.getJSON("/events/"+strconv.FormatInt(eventIDs[i], 10), &ev); err != nil {
			return err
		}
		slugs = append(slugs, ev.Slug)
	}
	// datePhrases are what frontends write for the start of a window
	// (read by the date-phrase parser, cached per minute).
	datePhrases := []string{"today", "tomorrow 9am", "+2 weeks", "first day of next month", "next wednesday 4pm", "next month"}
	type scenario struct {
		name string
		path func(r *rand.Rand) string
	}
	// The read rows run on the uncached service (serveUncached: no result
	// cache, no response cache), so they measure the engine, the store and
	// rendering; the cached rows follow (cacheBench).
	reads := []scenario{
		{"GET /events/{id}", func(r *rand.Rand) string { return "/events/" + strconv.FormatInt(eventIDs[r.IntN(len(eventIDs))], 10) }},
		{"GET /events/by-slug/{slug}", func(r *rand.Rand) string { return "/events/by-slug/" + url.PathEscape(slugs[r.IntN(len(slugs))]) }},
		{"GET /events (default)", func(r *rand.Rand) string { return "/events" }},
		{"GET /events (dates+category+featured, new each time)", func(r *rand.Rand) string {
			from := today.AddDate(0, 0, r.IntN(600))
			to := from.AddDate(0, 0, 30+r.IntN(150))
			return "/events?start_date=" + from.Format("2006-01-02") + "&end_date=" + to.Format("2006-01-02") +
				"&categories=" + strconv.FormatInt(catIDs[r.IntN(len(catIDs))], 10) + "&featured=" + strconv.FormatBool(r.IntN(2) == 0)
		}},
		{"GET /events (date phrases)", func(r *rand.Rand) string {
			return "/events?start_date=" + url.QueryEscape(datePhrases[r.IntN(len(datePhrases))]) + "&end_date=" + url.QueryEscape("+6 months") +
				"&categories=" + strconv.FormatInt(catIDs[r.IntN(len(catIDs))], 10)
		}},
		{"GET /events?search=", func(r *rand.Rand) string { return "/events?search=" + words[r.IntN(len(words))] }},
		{"GET /events (geo radius 50 km)", func(r *rand.Rand) string {
			return fmt.Sprintf("/events?geoloc_lat=%.3f&geoloc_lng=%.3f&geoloc_radius=50", 48+r.Float64()*2, 2+r.Float64()*2)
		}},
		{"GET /venues?search=", func(r *rand.Rand) string { return "/venues?search=" + cities[r.IntN(len(cities))] }},
		{"typeahead", typeaheadPath},
		{"GET /events?facets=categories,venue", func(r *rand.Rand) string {
			return "/events?facets=categories,venue&categories=" + strconv.FormatInt(catIDs[r.IntN(len(catIDs))], 10)
		}},
	}
	// The ceiling: a bare Fiber handler with a body as large as a default page.
	page, err := s.raw("/events")
	if err != nil {
		return err
	}
	ceilApp := fiber.New(fiber.Config{DisableStartupMessage: true})
	ceilApp.Get("/ceiling", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Send(page)
	})
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go ceilApp.Listener(cln)
	defer ceilApp.ShutdownWithTimeout(shutdownWait) //nolint:errcheck // the bench is ending
	ceiling := s.load("http://"+cln.Addr().String(), func(*rand.Rand) string { return "/ceiling" }, conc, dur)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(os.Stdout, "\nstore: %s; index: Bleve/memindex; %d events, %d clients, %s per read row, GOMAXPROCS=%d\n\n", storeName, nEvents, conc, dur, maxProcs())
	fmt.Fprintln(tw, "measurement\trequests/s\tp50 ms\tp99 ms\tof ceiling\tstore commands/request\t")
	fmt.Fprintf(tw, "POST /events (last %d of the seed)\t%.0f\t%.2f\t%.2f\t\t%s\t\n", nAPI, createRate, createLat.pct(50), createLat.pct(99), createCommands)
	fmt.Fprintf(tw, "sync lag (write → visible in list)\t\t%.1f\t%.1f\t\t\n", lag.pct(50), lag.pct(99))
	fmt.Fprintf(tw, "sync lag, %.0f writes/s arriving\t\t%.1f\t%.1f\t\t\n", pacedRate, pacedLag.pct(50), pacedLag.pct(99))
	fmt.Fprintln(tw, "uncached (no result or response cache):\t\t\t\t\t")
	stopProfile, err := startProfile(cpuProfile)
	if err != nil {
		return err
	}
	for _, sc := range reads {
		if !rowFilter.MatchString(sc.name) {
			continue
		}
		before := storeCommands.Load()
		gcBefore := sampleGC()
		res := s.load(uncachedBase, sc.path, conc, dur)
		gcRow(os.Stderr, sc.name, res.count, gcBefore, sampleGC())
		perRequest := ""
		if storeKind != "sqlite" && res.count > 0 {
			perRequest = fmt.Sprintf("%.2f", float64(storeCommands.Load()-before)/float64(res.count))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t%.2f\t%s\t\n", sc.name, res.rate, res.lat.pct(50), res.lat.pct(99), res.rate/ceiling.rate, perRequest)
		if res.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\n", res.errors)
		}
	}
	stopProfile()
	if seriesCount > 0 && rowFilter.MatchString("series") {
		if err := s.seriesRows(tw, uncachedBase, conc, dur, today); err != nil {
			return err
		}
	}
	if err := (&cacheBench{s: s, eventIDs: eventIDs, ceiling: ceiling.rate, conc: conc, dur: dur}).run(tw); err != nil {
		return err
	}
	fmt.Fprintf(tw, "ceiling: bare Fiber, %d-byte body\t%.0f\t%.2f\t%.2f\t1.00\t\n", len(page), ceiling.rate, ceiling.lat.pct(50), ceiling.lat.pct(99))
	// A full rebuild, as POST /admin/reindex runs it (zero downtime: a
	// new generation beside the live one, then the swap).
	phases.done("read rows")
	fmt.Fprintln(os.Stderr, "full reindex...")
	rx := indexing.NewReindexer(st, eng, w, quiet, nil, nil)
	t1 := time.Now()
	if _, err := rx.Start(ctx, "bench"); err != nil {
		return err
	}
	job, err := rx.Wait(ctx)
	if err != nil {
		return err
	}
	took := time.Since(t1)
	phases.done("full reindex")
	runtime.GC()
	fmt.Fprintf(tw, "full reindex: %d documents, %s\t%.0f docs/s\t%.1f s\t\t\t\n", job.Done, job.State, float64(job.Done)/took.Seconds(), took.Seconds())
	if indexed, err := rawEngine.CountEvents(ctx); err == nil {
		fmt.Fprintf(tw, "event documents in the index (an occurrence is one)\t%d\t\t\t\t\n", indexed)
	}
	fmt.Fprintf(tw, "process RSS after the reindex (MiB)\t%.0f\t\t\t\t\n", rssMiB())
	fmt.Fprintf(tw, "process peak RSS until then (MiB)\t%.0f\t\t\t\t\n", peakRSSMiB())
	phases.write(tw)
	if backupBench {
		fmt.Fprintln(os.Stderr, "reads while backups run...")
		if err := s.backupRows(tw, st, dir, uncachedBase, conc, dur); err != nil {
			return err
		}
	}
	if exportBench {
		fmt.Fprintln(os.Stderr, "reads while exports and loads run...")
		if err := s.exportRows(tw, cfg, st, dir, uncachedBase, conc, dur); err != nil {
			return err
		}
	}
	if rowFilter.MatchString("large drafts") {
		fmt.Fprintln(os.Stderr, "reads while large drafts arrive...")
		if err := s.draftRows(tw, rawEngine, uncachedBase, cfg.Languages, conc, dur, today); err != nil {
			return err
		}
	}
	if memProfile != "" {
		f, err := os.Create(memProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	return tw.Flush()
}

func maxProcs() int { return runtimeGOMAXPROCS() }

// latencies collects durations in milliseconds.
type latencies struct {
	mu sync.Mutex
	ms []float64
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.ms = append(l.ms, float64(d.Microseconds())/1000)
	l.mu.Unlock()
}

// pct returns the p-th percentile.
func (l *latencies) pct(p float64) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ms) == 0 {
		return 0
	}
	sort.Float64s(l.ms)
	i := int(float64(len(l.ms)-1) * p / 100)
	return l.ms[i]
}

// seed creates n items through the API with conc clients and returns their IDs in order.
func (s *stack) seed(n, conc int, body func(i int) map[string]any, coll string, lat *latencies) ([]int64, error) {
	ids := make([]int64, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				start := time.Now()
				id, err := s.create(coll, body(i))
				if err != nil {
					firstErr.Store(err)
					return
				}
				if lat != nil {
					lat.add(time.Since(start))
				}
				ids[i] = id
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return nil, err
	}
	return ids, nil
}

// create POSTs one item and returns its ID.
func (s *stack) create(coll string, body map[string]any) (int64, error) {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.base+"/"+coll, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 {
		return 0, fmt.Errorf("POST %s: %d %s", coll, res.StatusCode, out)
	}
	var v struct {
		ID int64 `json:"id"`
	}
	return v.ID, json.Unmarshal(out, &v)
}

// raw GETs a path and returns the body.
func (s *stack) raw(path string) ([]byte, error) {
	res, err := s.client.Get(s.base + path)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return b, err
}

// getJSON GETs a path into v.
func (s *stack) getJSON(path string, v any) error {
	b, err := s.raw(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// probeSeq numbers the probe events of syncLag.
var probeSeq atomic.Int64

// syncLag writes events one by one and polls the list until each shows.
func (s *stack) syncLag(n int, today time.Time) (*latencies, error) {
	lat := &latencies{}
	for i := 0; i < n; i++ {
		word := fmt.Sprintf("lagprobe%d", probeSeq.Add(1)) // unique across calls
		start := today.AddDate(0, 0, 3)
		if _, err := s.create("events", map[string]any{"title": "Probe " + word, "start_date": start.Format("2006-01-02 15:04:05"),
			"end_date": start.Add(time.Hour).Format("2006-01-02 15:04:05")}); err != nil {
			return nil, err
		}
		accepted := time.Now()
		deadline := accepted.Add(30 * time.Second)
		for {
			var page struct {
				Total int `json:"total"`
			}
			if err := s.getJSON("/events?search="+word, &page); err != nil {
				return nil, err
			}
			if page.Total > 0 {
				lat.add(time.Since(accepted))
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("event %s not visible after 30 s", word)
			}
			time.Sleep(2 * time.Millisecond) // polling interval of the probe, not a wait for a result
		}
	}
	return lat, nil
}

// loadResult is one measurement.
type loadResult struct {
	rate   float64
	lat    *latencies
	errors int64
	count  int64 // requests answered
}

// load runs conc clients against base+path(r) for dur, expecting 200 OK.
func (s *stack) load(base string, path func(*rand.Rand) string, conc int, dur time.Duration) loadResult {
	return s.loadWith(base, path, nil, http.StatusOK, conc, dur)
}

var words = []string{"jazz", "rock", "theatre", "poetry", "cinema", "opera", "dance", "market", "lecture", "workshop",
	"festival", "concert", "exhibition", "tasting", "comedy", "choir", "quartet", "ballet", "circus", "fair"}

var cities = []string{"Paris", "Lyon", "Amsterdam", "Berlin", "Madrid", "Rome", "Warsaw", "Brussels", "Gent", "Utrecht"}
