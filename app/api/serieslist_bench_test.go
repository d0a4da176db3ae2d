package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// seriesWords are the words of the generated titles and descriptions
// (the load benchmark's).
var seriesWords = []string{"jazz", "rock", "theatre", "poetry", "cinema", "opera", "dance", "market", "lecture", "workshop",
	"festival", "concert", "exhibition", "tasting", "comedy", "choir", "quartet", "ballet", "circus", "fair"}

// seriesStack is an embedded stack (SQLite and the embedded engine)
// seeded like the load benchmark with -series: events straight into the
// store, every every-th of them a weekly series without an end (expanded
// to the recurrence horizon), indexed by the sync worker.
type seriesStack struct {
	cfg    *config.Config
	store  repository.Store
	engine *embedded.Engine
	cats   []int64
	quiet  *slog.Logger
}

// newSeriesStack seeds nEvents events of which nSeries are weekly series
// and waits until they are indexed.
func newSeriesStack(tb testing.TB, nEvents, nSeries int) *seriesStack {
	tb.Helper()
	dir := tb.TempDir()
	vars := map[string]string{"DATA_DIR": dir, "SITE_URL": "http://example.test"}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "calendar.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close(context.Background()) })
	eng, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	if err := eng.Init(ctx); err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &indexing.Worker{Store: st, Engine: eng, Log: quiet,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			MaxOccurrences: cfg.MaxSeriesOccurrences}}
	now := time.Now().UTC().Truncate(time.Second)
	post := func(p *repository.Record) int64 {
		p.Status, p.Date, p.Modified, p.Author = repository.StatusPublish, now, now, 1
		if err := st.CreateRecord(ctx, p); err != nil {
			tb.Fatal(err)
		}
		return p.ID
	}
	var venues, orgs, cats, tags []int64
	for i := range 200 {
		lat, lng := 48+float64(i%100)/50, 2+float64(i%70)/35
		name := fmt.Sprintf("Venue %d %s", i, seriesWords[i%len(seriesWords)])
		venues = append(venues, post(&repository.Record{Kind: repository.KindVenue, Title: repository.Text{"en": name},
			Slug: repository.Text{"en": repository.Slugify(name)},
			Venue: &repository.VenueFields{Address: strconv.Itoa(i) + " Main Street", City: "Lyon", Country: "France",
				ShowMap: true, ShowMapLink: true, GeoLat: &lat, GeoLng: &lng}}))
	}
	for i := range 100 {
		name := fmt.Sprintf("Organizer %d", i)
		orgs = append(orgs, post(&repository.Record{Kind: repository.KindOrganizer, Title: repository.Text{"en": name},
			Slug:      repository.Text{"en": repository.Slugify(name)},
			Organizer: &repository.OrganizerFields{Email: fmt.Sprintf("org%d@example.test", i)}}))
	}
	label := func(kind repository.LabelKind, name string) int64 {
		l := &repository.Label{Taxonomy: kind, Name: repository.Text{"en": name}, Slug: repository.Text{"en": repository.Slugify(name)}}
		if err := st.CreateLabel(ctx, l); err != nil {
			tb.Fatal(err)
		}
		return l.ID
	}
	for i := range 30 {
		cats = append(cats, label(repository.LabelCategory, fmt.Sprintf("Category %d", i)))
	}
	for i := range 50 {
		tags = append(tags, label(repository.LabelTag, fmt.Sprintf("tag-%d", i)))
	}
	every := 0
	if nSeries > 0 {
		every = max(1, nEvents/nSeries)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	today := now.Truncate(24 * time.Hour)
	word := func() string { return seriesWords[rng.IntN(len(seriesWords))] }
	for i := range nEvents {
		title := fmt.Sprintf("%s %s %d", word(), word(), i)
		start := today.Add(time.Duration(rng.IntN(730*24)) * time.Hour)
		e := &repository.EventFields{ShowMap: true, ShowMapLink: true,
			Featured: rng.IntN(5) == 0, Cost: []string{strconv.Itoa(rng.IntN(50)) + "$"},
			Venues: []int64{venues[rng.IntN(len(venues))]}, Organizers: []int64{orgs[rng.IntN(len(orgs))]},
			Categories: []int64{cats[rng.IntN(len(cats))]}, Tags: []int64{tags[rng.IntN(len(tags))]}}
		if every > 0 && i%every == 0 && i/every < nSeries {
			// The load benchmark's series: the first occurrence within
			// the coming week, then every week.
			start = today.Add(time.Duration(rng.IntN(7*24)) * time.Hour)
			e.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY"}}
		}
		local := start.In(cfg.Location)
		e.StartLocal, e.EndLocal = local.Format(time.DateTime), local.Add(2*time.Hour).Format(time.DateTime)
		e.StartUTC, e.EndUTC = start, start.Add(2*time.Hour)
		post(&repository.Record{Kind: repository.KindEvent, Title: repository.Text{"en": title},
			Content: repository.Text{"en": fmt.Sprintf("An evening of %s and %s.", word(), word())},
			Slug:    repository.Text{"en": repository.Slugify(title)}, Event: e})
	}
	flushCtx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	if err := w.Flush(flushCtx); err != nil {
		tb.Fatal(err)
	}
	return &seriesStack{cfg: cfg, store: st, engine: eng, cats: cats, quiet: quiet}
}

// handler is the uncached service on the stack (no result cache, no
// response cache, no kept expansions: the load benchmark's read rows),
// reading the store through wrap when it is not nil and answering event
// queries with eng (the stack's engine when nil).
func (s *seriesStack) handler(tb testing.TB, eng search.Engine, wrap func(repository.Store) repository.Store) fasthttp.RequestHandler {
	tb.Helper()
	if eng == nil {
		eng = s.engine
	}
	var st repository.Store = s.store
	if wrap != nil {
		st = wrap(st)
	}
	a, err := api.New(api.Options{Config: s.cfg, Store: st, Search: eng, Logger: s.quiet, ResponseCacheBytes: -1, NoRecurrenceCache: true})
	if err != nil {
		tb.Fatal(err)
	}
	return a.Handler()
}

// get requests path from h and fails unless it answers 200.
func get(tb testing.TB, h fasthttp.RequestHandler, path string) *fasthttp.Response {
	var fc fasthttp.RequestCtx
	fc.Request.SetRequestURI(path)
	fc.Request.Header.SetMethod("GET")
	h(&fc)
	if code := fc.Response.StatusCode(); code != 200 {
		tb.Fatalf("%s: %d %s", path, code, fc.Response.Body())
	}
	return &fc.Response
}

// seriesListRows are the load benchmark's list rows.
func seriesListRows(s *seriesStack) []struct{ name, path string } {
	today := time.Now().UTC().Truncate(24 * time.Hour)
	cat := strconv.FormatInt(s.cats[7], 10)
	return []struct{ name, path string }{
		{"default", "/events"},
		{"search", "/events?search=jazz"},
		{"typeahead", "/events?search=jazz%20c"},
		{"collapsed", "/events?hide_subsequent_recurrences=true"},
		{"filtered", "/events?start_date=" + today.AddDate(0, 0, 30).Format(time.DateOnly) + "&end_date=" +
			today.AddDate(0, 0, 120).Format(time.DateOnly) + "&categories=" + cat + "&featured=true"},
		{"facets", "/events?facets=categories,venue&categories=" + cat},
	}
}

// processCPU is the process's CPU time (user and system), in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkSeriesList measures the CPU of the uncached list rows through
// the handler (no network) on a store with many weekly series: each row
// whole ("<row>") and the service's part alone ("<row>/app": the engine's
// answer replayed). cpu-ns/op is the process's CPU per request (garbage
// collection included). SERIES_LIST_EVENTS and SERIES_LIST_SERIES set the
// size (4,000 events of which 1,000 series by default):
//
//	SERIES_LIST_EVENTS=100000 SERIES_LIST_SERIES=50000 go test ./app/api -run '^$' -bench SeriesList -cpu 1 -benchtime 200x
func BenchmarkSeriesList(b *testing.B) {
	n, series := 4000, 1000
	if v, err := strconv.Atoi(os.Getenv("SERIES_LIST_EVENTS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("SERIES_LIST_SERIES")); err == nil && v >= 0 {
		series = v
	}
	s := newSeriesStack(b, n, series)
	docs, err := s.engine.CountEvents(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events, %d series, %d index documents", n, series, docs)
	base := s.cfg.APIRoot()
	full := s.handler(b, nil, nil)
	for _, row := range seriesListRows(s) {
		replay := &replayEngine{Engine: s.engine}
		app := s.handler(b, replay, nil)
		for _, c := range []struct {
			name string
			h    fasthttp.RequestHandler
		}{{row.name, full}, {row.name + "/app", app}} {
			b.Run(c.name, func(b *testing.B) {
				get(b, c.h, base+row.path) // warm (and record the replayed answer)
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					get(b, c.h, base+row.path)
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
