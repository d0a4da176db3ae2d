package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
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

// BenchmarkUncachedRead measures the uncached read path of the embedded
// stack (SQLite and Bleve, no search result cache, no response cache):
// GET /events (the default list), and GET /events/{id}, called through
// the Fiber handler without a network. Everything it builds lives in the
// benchmark, so plain `go test` does not pay for it.
//
//	go test ./app -run XXX -bench UncachedRead -benchmem
func BenchmarkUncachedRead(b *testing.B) {
	const nEvents, nVenues, nOrgs, nCats, nTags = 2000, 60, 40, 12, 30
	dir := b.TempDir()
	vars := map[string]string{"DATA_DIR": dir, "SITE_URL": "http://example.test"}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "calendar.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(context.Background())
	eng, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	if err := eng.Init(ctx); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &indexing.Worker{Store: st, Engine: eng, Log: quiet,
		Docs: &indexing.DocBuilder{Store: st, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location}}
	now := time.Now().UTC().Truncate(24 * time.Hour) // the same data all day (dumpResponses)
	post := func(p *repository.Record) int64 {
		p.Status, p.Date, p.Modified, p.Author = repository.StatusPublish, now, now, 1
		if err := st.CreateRecord(ctx, p); err != nil {
			b.Fatal(err)
		}
		return p.ID
	}
	term := func(tax repository.LabelKind, name string) int64 {
		t := &repository.Label{Taxonomy: tax, Name: repository.Text{"en": name}, Slug: repository.Text{"en": repository.Slugify(name)}}
		if err := st.CreateLabel(ctx, t); err != nil {
			b.Fatal(err)
		}
		return t.ID
	}
	var venues, orgs, cats, tags []int64
	for i := range nVenues {
		lat, lng := 48+float64(i%100)/50, 2+float64(i%70)/35
		name := fmt.Sprintf("Venue %d", i)
		venues = append(venues, post(&repository.Record{Kind: repository.KindVenue, Title: repository.Text{"en": name},
			Slug: repository.Text{"en": repository.Slugify(name)},
			Venue: &repository.VenueFields{Address: strconv.Itoa(i) + " Main Street", City: "Lyon", Country: "France",
				ShowMap: true, ShowMapLink: true, GeoLat: &lat, GeoLng: &lng}}))
	}
	for i := range nOrgs {
		name := fmt.Sprintf("Organizer %d", i)
		orgs = append(orgs, post(&repository.Record{Kind: repository.KindOrganizer, Title: repository.Text{"en": name},
			Slug:      repository.Text{"en": repository.Slugify(name)},
			Organizer: &repository.OrganizerFields{Email: fmt.Sprintf("org%d@example.test", i), Phone: "555-0100"}}))
	}
	for i := range nCats {
		cats = append(cats, term(repository.LabelCategory, fmt.Sprintf("Category %d", i)))
	}
	for i := range nTags {
		tags = append(tags, term(repository.LabelTag, fmt.Sprintf("tag-%d", i)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	today := now.Truncate(24 * time.Hour)
	var events []int64
	for i := range nEvents {
		title := fmt.Sprintf("Concert night %d", i)
		start := today.Add(time.Duration(rng.IntN(730*24)) * time.Hour)
		local := start.In(cfg.Location)
		events = append(events, post(&repository.Record{Kind: repository.KindEvent, Title: repository.Text{"en": title},
			Content: repository.Text{"en": "An evening of jazz and <b>blues</b> in the old town."},
			Slug:    repository.Text{"en": repository.Slugify(title)},
			Event: &repository.EventFields{
				StartLocal: local.Format(time.DateTime), EndLocal: local.Add(2 * time.Hour).Format(time.DateTime),
				StartUTC: start, EndUTC: start.Add(2 * time.Hour), ShowMap: true, ShowMapLink: true,
				Featured: rng.IntN(5) == 0, Cost: []string{strconv.Itoa(rng.IntN(50)) + "$"},
				Venues: []int64{venues[rng.IntN(len(venues))]}, Organizers: []int64{orgs[rng.IntN(len(orgs))]},
				Categories: []int64{cats[rng.IntN(len(cats))]}, Tags: []int64{tags[rng.IntN(len(tags))], tags[rng.IntN(len(tags))]},
			}}))
	}
	if err := w.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	a, err := api.New(api.Options{Config: cfg, Store: st, Search: eng, Logger: quiet, ResponseCacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	h := a.Handler()
	get := func(b *testing.B, path string) {
		var fc fasthttp.RequestCtx
		fc.Request.SetRequestURI(path)
		fc.Request.Header.SetMethod("GET")
		h(&fc)
		if code := fc.Response.StatusCode(); code != 200 {
			b.Fatalf("%s: %d %s", path, code, fc.Response.Body())
		}
	}
	base := cfg.APIRoot()
	dumpResponses(b, h, base, events[0], venues[0])
	// The index merges its segments in the background for a while after
	// the seeding; its allocations and CPU would be counted against the
	// requests. Wait (30 s at most) until the allocations per request stop
	// falling.
	var ms runtime.MemStats
	best := uint64(math.MaxUint64)
	for start, calm := time.Now(), 0; calm < 3 && time.Since(start) < 30*time.Second; {
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		for range 50 {
			get(b, base+"/events")
		}
		runtime.ReadMemStats(&ms)
		per := (ms.Mallocs - before) / 50
		if best != math.MaxUint64 && per <= best+best/20 {
			calm++
		} else {
			calm = 0
		}
		best = min(best, per)
	}
	b.Run("list", func(b *testing.B) {
		path := base + "/events"
		get(b, path)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			get(b, path)
		}
	})
	// A list filtered by a category named by its slug (categories=): the
	// reference is resolved on every request unless kept.
	b.Run("list-categories", func(b *testing.B) {
		path := base + "/events?categories=category-1"
		get(b, path)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			get(b, path)
		}
	})
	// The same list with the engine's answer replayed: the app's part alone.
	replay := &replayEngine{Engine: eng}
	ra, err := api.New(api.Options{Config: cfg, Store: st, Search: replay, Logger: quiet, ResponseCacheBytes: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list-app", func(b *testing.B) {
		hh := h
		h = ra.Handler()
		defer func() { h = hh }()
		path := base + "/events"
		get(b, path) // records the engine's answer
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			get(b, path)
		}
	})
	// The same with concurrent clients (replay recorded above): kept
	// renderings are shared between requests (run it with -race too).
	b.Run("list-app-parallel", func(b *testing.B) {
		rh := ra.Handler()
		path := base + "/events"
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				var fc fasthttp.RequestCtx
				fc.Request.SetRequestURI(path)
				fc.Request.Header.SetMethod("GET")
				rh(&fc)
				if code := fc.Response.StatusCode(); code != 200 {
					b.Errorf("%s: %d", path, code)
					return
				}
			}
		})
	})
	b.Run("single", func(b *testing.B) {
		get(b, base+"/events/"+strconv.FormatInt(events[0], 10))
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			get(b, base+"/events/"+strconv.FormatInt(events[i%len(events)], 10))
		}
	})
}

// dumpResponses writes some read responses into $RENDER_BENCH_DUMP (when
// set), to compare two versions of the renderer byte for byte.
func dumpResponses(b *testing.B, h fasthttp.RequestHandler, base string, event, venue int64) {
	dir := os.Getenv("RENDER_BENCH_DUMP")
	if dir == "" {
		return
	}
	paths := []string{"/events", "/events?per_page=50&page=2", "/events?search=concert&highlight=true",
		"/events?_fields=id,venue.venue,start_date_details", "/events?_envelope=1&tags=tag-1",
		"/events/" + strconv.FormatInt(event, 10), "/venues", "/organizers?per_page=20", "/venues/" + strconv.FormatInt(venue, 10)}
	for i, p := range paths {
		var fc fasthttp.RequestCtx
		for range 2 { // the second answer comes from warm caches
			fc.Response.Reset()
			fc.Request.SetRequestURI(base + p)
			fc.Request.Header.SetMethod("GET")
			h(&fc)
		}
		out := fmt.Sprintf("%s\n%d\n%s\n%s\n", p, fc.Response.StatusCode(), fc.Response.Header.String(), fc.Response.Body())
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".txt"), []byte(out), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// replayEngine answers every event query with the answer the wrapped
// engine gave the first one.
type replayEngine struct {
	search.Engine
	mu   sync.Mutex
	last *search.Result
}

// SearchEvents records or replays an answer.
func (e *replayEngine) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last != nil {
		return *e.last, nil
	}
	res, err := e.Engine.SearchEvents(ctx, q)
	if err == nil {
		e.last = &res
	}
	return res, err
}
