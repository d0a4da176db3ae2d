package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search/meili"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/sync/indexing"
)

// The simulator mode (-meilisim): the service with Meilisearch as its
// search engine, where the Meilisearch server is the simulator
// (search/meili/meilisim) running in this process. Its figures are the
// SIMULATOR's: it models Meilisearch's task queue, autobatching and limits,
// not its indexing or search speed, so they say how the service's own
// work (documents built, requests cut and sent, tasks awaited, pages
// merged) grows, never what a real Meilisearch server does. Rows:
//
//   - large daily series: -meili-series series of -meili-series-days
//     daily occurrences with a -meili-description-chars description, in
//     every configured language (LANGUAGES en,fr,nl), each created through
//     the API and timed until every occurrence is searchable; right after
//     each is created (while the worker sends it), a small event is
//     created and timed until it is listed (the sync lag behind a large
//     series: the worker indexes it between two requests of the series);
//   - deep editor page: an editor's list over both event indexes
//     (status=publish,draft), collapsed (hide_subsequent_recurrences) and
//     not, at page 1 and at the last page of -meili-events events.

// The -meilisim flags.
var (
	meiliSimMode    bool
	meiliSimVersion string
	meiliSimEvents  int
	meiliSeries     int
	meiliSeriesDays int
	meiliDescChars  int
	meiliSamples    int
	meiliReqBytes   int
)

func init() {
	flag.BoolVar(&meiliSimMode, "meilisim", false, "run the simulator rows instead: the service on the Meilisearch simulator, in process (meilisim.go)")
	flag.StringVar(&meiliSimVersion, "meili-version", meilisim.DefaultVersion, "with -meilisim: the Meilisearch version the simulator models")
	flag.IntVar(&meiliSimEvents, "meili-events", 2000, "with -meilisim: events seeded (a quarter of them drafts) for the deep-page rows")
	flag.IntVar(&meiliSeries, "meili-series", 3, "with -meilisim: large daily series created")
	flag.IntVar(&meiliSeriesDays, "meili-series-days", 730, "with -meilisim: occurrences of each daily series")
	flag.IntVar(&meiliDescChars, "meili-description-chars", 200000, "with -meilisim: characters of each series' description")
	flag.IntVar(&meiliSamples, "meili-samples", 20, "with -meilisim: requests timed per deep-page row")
	flag.IntVar(&meiliReqBytes, "meili-request-bytes", 0, "with -meilisim: the engine's request budget (MEILI_MAX_REQUEST_BYTES; 0: the default), so that a small run sends a series in several requests")
}

// runMeiliSim runs the simulator rows and prints their table.
func runMeiliSim(ctx context.Context, dir string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "calendar-bench-meilisim-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	sim, err := meilisim.NewChecked(meilisim.Options{Version: meiliSimVersion})
	if err != nil {
		return err
	}
	defer sim.Close()
	sim.Mu.Lock()
	sim.Emulate = true // searches answer from the stored documents
	sim.Mu.Unlock()
	simLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	simSrv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go simSrv.Serve(simLn) //nolint:errcheck // closed at the end
	defer simSrv.Close()
	simURL := "http://" + simLn.Addr().String()

	env := map[string]string{"DATA_DIR": dir, "LOG_LEVEL": "error", "ADMIN_TOKEN": "bench-admin", "MEILI_URL": simURL,
		"LANGUAGES": "en,fr,nl", "DEFAULT_LANGUAGE": "en"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	st, storeName, closeStore, err := openStore(ctx, dir)
	if err != nil {
		return err
	}
	defer closeStore()
	eng, err := meili.Open(ctx, cfg.MeiliURL, "", meili.Options{Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, MaxRequestBytes: meiliReqBytes})
	if err != nil {
		return err
	}
	defer eng.Close()
	if err := eng.Init(ctx); err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &indexing.Worker{Store: st, Engine: eng, Log: quiet,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			Horizon: cfg.RecurrenceHorizon, MaxOccurrences: cfg.MaxSeriesOccurrences}}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.Run(wctx)
	// No result or response cache: every request reaches the engine.
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: eng, Indexer: w, Logger: quiet, ResponseCacheBytes: -1, NoRecurrenceCache: true})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go a.Listener(ln) //nolint:errcheck // shut down at the end
	defer func() { _ = a.ShutdownWithTimeout(shutdownWait) }()
	s := &stack{base: "http://" + ln.Addr().String() + cfg.APIRoot(), token: "bench-admin",
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 5 * time.Minute}}

	fmt.Fprintf(os.Stderr, "simulator %s at %s; seeding %d events...\n", meiliSimVersion, simURL, meiliSimEvents)
	venueIDs, err := s.seed(10, 2, func(i int) map[string]any {
		return map[string]any{"venue": fmt.Sprintf("Venue %d", i), "city": cities[i%len(cities)]}
	}, "venues", nil)
	if err != nil {
		return err
	}
	orgIDs, err := s.seed(5, 2, func(i int) map[string]any { return map[string]any{"organizer": fmt.Sprintf("Organizer %d", i)} }, "organizers", nil)
	if err != nil {
		return err
	}
	catIDs, err := s.seed(5, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("Category %d", i)} }, "categories", nil)
	if err != nil {
		return err
	}
	tagIDs, err := s.seed(5, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("tag-%d", i)} }, "tags", nil)
	if err != nil {
		return err
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	kit, err := newSeedKit(ctx, st, venueIDs, orgIDs, catIDs, tagIDs, today, cfg.Location)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range meiliSimEvents {
		p := kit.eventPost(i, rng)
		if i%4 == 0 {
			p.Status = repository.StatusDraft
		}
		if err := st.CreateRecord(ctx, p); err != nil {
			return err
		}
		if i%256 == 0 {
			w.Notify()
		}
	}
	w.Notify()
	if err := flushWithin(ctx, w, 30*time.Minute); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(os.Stdout, "\nSIMULATOR rows: store %s; Meilisearch SIMULATOR (meilisim, modelling v%s) in this process, not a Meilisearch server;\n"+
		"LANGUAGES en,fr,nl; no result or response cache; GOMAXPROCS=%d\n\n", storeName, meiliSimVersion, maxProcs())
	fmt.Fprintln(tw, "simulator measurement\tp50\tmax\tsamples\t")

	fmt.Fprintln(os.Stderr, "large daily series...")
	var seriesLag, smallLag latencies
	for i := range meiliSeries {
		word := fmt.Sprintf("largeseries%d", probeSeq.Add(1))
		start := today.AddDate(0, 0, 1).Add(19 * time.Hour)
		t0 := time.Now()
		if _, err := s.create("events", map[string]any{"title": "Daily " + word, "description": longText(meiliDescChars, uint64(i)),
			"start_date": start.Format(time.DateTime), "end_date": start.Add(time.Hour).Format(time.DateTime),
			"recurrence": map[string]any{"rules": []any{"FREQ=DAILY;COUNT=" + strconv.Itoa(meiliSeriesDays)}}}); err != nil {
			return err
		}
		// A small write right behind the series, while the worker sends
		// it: listed after at most a request or two of the series
		// (sync/interleave.go), not after all of it.
		small := fmt.Sprintf("smallprobe%d", probeSeq.Add(1))
		t1 := time.Now()
		if _, err := s.create("events", map[string]any{"title": "Probe " + small, "start_date": start.Format(time.DateTime),
			"end_date": start.Add(time.Hour).Format(time.DateTime)}); err != nil {
			return err
		}
		if _, err := s.waitListed("/events?per_page=1&search="+small, 1, 10*time.Minute); err != nil {
			return fmt.Errorf("small write behind a large series: %w", err)
		}
		smallLag.add(time.Since(t1))
		if _, err := s.waitListed("/events?per_page=1&search="+word, meiliSeriesDays, 30*time.Minute); err != nil {
			return fmt.Errorf("large series: %w", err)
		}
		seriesLag.add(time.Since(t0))
	}
	fmt.Fprintf(tw, "daily series of %d occurrences, %d-character description: create → every occurrence searchable\t%s\t%s\t%d\t\n",
		meiliSeriesDays, meiliDescChars, seconds(seriesLag.pct(50)), seconds(seriesLag.pct(100)), meiliSeries)
	fmt.Fprintf(tw, "small write made right after it (while it is sent): create → listed\t%s\t%s\t%d\t\n",
		seconds(smallLag.pct(50)), seconds(smallLag.pct(100)), meiliSeries)

	fmt.Fprintln(os.Stderr, "deep editor pages...")
	for _, row := range []struct{ name, query string }{
		{"editor list, publish+draft", "status=publish,draft&per_page=50"},
		{"editor list, publish+draft, collapsed", "status=publish,draft&hide_subsequent_recurrences=true&per_page=50"},
	} {
		body, err := s.getAuthJSON("/events?" + row.query + "&page=1")
		if err != nil {
			return err
		}
		var first struct {
			Total int `json:"total"`
		}
		if err := json.Unmarshal(body, &first); err != nil {
			return err
		}
		last := max(1, (first.Total+49)/50)
		for _, page := range []int{1, last} {
			var lat latencies
			for range meiliSamples {
				t0 := time.Now()
				if err := s.getAuth(fmt.Sprintf("/events?%s&page=%d", row.query, page)); err != nil {
					return err
				}
				lat.add(time.Since(t0))
			}
			fmt.Fprintf(tw, "%s (%d matches), page %d (offset %d)\t%.2f ms\t%.2f ms\t%d\t\n", row.name, first.Total, page, (page-1)*50,
				lat.pct(50), lat.pct(100), meiliSamples)
		}
	}
	return tw.Flush()
}

// seconds formats milliseconds as seconds.
func seconds(ms float64) string { return fmt.Sprintf("%.2f s", ms/1000) }

// longText returns n characters of random words (seeded).
func longText(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteString(fmt.Sprintf("%d ", rng.IntN(1000)))
	}
	return b.String()[:n]
}

// getAuth GETs a path as the editor (the admin token) and expects 200.
func (s *stack) getAuth(path string) error {
	_, err := s.getAuthJSON(path)
	return err
}

// getAuthJSON GETs a path as the editor and returns the body.
func (s *stack) getAuthJSON(path string) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %.300s", path, res.StatusCode, body)
	}
	return body, err
}

// waitListed polls path (as the editor) until its total reaches want, and
// returns the total.
func (s *stack) waitListed(path string, want int, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	for {
		body, err := s.getAuthJSON(path)
		if err != nil {
			return 0, err
		}
		var page struct {
			Total int `json:"total"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, err
		}
		if page.Total >= want {
			return page.Total, nil
		}
		if time.Now().After(deadline) {
			return page.Total, fmt.Errorf("%s: total %d after %s, want %d", path, page.Total, within, want)
		}
		time.Sleep(5 * time.Millisecond) // polling interval of the probe, not a wait for a result
	}
}
