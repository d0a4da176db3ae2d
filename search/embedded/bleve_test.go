package embedded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

func newTestEngine(t *testing.T) search.Engine {
	t.Helper()
	e, err := Open(t.TempDir())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return e
}

func TestConformance(t *testing.T) {
	t.Parallel()
	searchtest.Run(t, newTestEngine)
}

// small is a fixture set for the tests below that only need some data.
func small() *searchtest.Fixtures { return searchtest.Generate(3, 50, 8, 5) }

func mustOpen(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return e
}

func mustIndex(t *testing.T, e *Engine, f *searchtest.Fixtures) {
	t.Helper()
	if err := e.IndexEvents(t.Context(), f.Events); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	if err := e.IndexPlaces(t.Context(), f.Places()); err != nil {
		t.Fatalf("IndexPlaces: %v", err)
	}
}

func counts(t *testing.T, e *Engine) [3]int {
	t.Helper()
	var out [3]int
	var err [3]error
	out[0], err[0] = e.CountEvents(t.Context())
	out[1], err[1] = e.CountPlaces(t.Context(), search.Venues)
	out[2], err[2] = e.CountPlaces(t.Context(), search.Organizers)
	if e := errors.Join(err[:]...); e != nil {
		t.Fatalf("count: %v", e)
	}
	return out
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := small()
	e := mustOpen(t, dir)
	mustIndex(t, e, f)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	e = mustOpen(t, dir)
	defer e.Close()
	if got, want := counts(t, e), [3]int{len(f.Events), len(f.Venues), len(f.Organizers)}; got != want {
		t.Fatalf("counts after reopening = %v, want %v", got, want)
	}
	q := search.EventQuery{Lang: "en", Query: "jazz", Statuses: []string{"publish"}, Limit: 100}
	got, err := e.SearchEvents(t.Context(), q)
	if want := searchtest.ExpectedEvents(f.Events, q); err != nil || got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
		t.Fatalf("search after reopening = %+v, %v; want %+v", got, err, want)
	}
}

func TestOneProcessPerDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := mustOpen(t, dir)
	// A second Open that waited for the lock instead of failing would
	// hang here until go test's -timeout: no time budget is needed.
	second, err := Open(dir)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of a locked directory succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Closing releases the lock.
	mustOpen(t, dir).Close()
}

func TestMappingChangeRebuildsAllIndexes(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(t *testing.T, e *Engine, dir string){
		// The previous release recorded version 3, whose place indexes
		// hold hyphenated words whole ("open-air"): they are rebuilt.
		"mapping of version 3": func(t *testing.T, e *Engine, dir string) {
			fp, err := fingerprintAt(indexMapping(), 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, idx := range []interface{ SetInternal(k, v []byte) error }{e.cur.venues, e.cur.organizers} {
				if err := idx.SetInternal(fingerprintKey, []byte(fp)); err != nil {
					t.Fatal(err)
				}
			}
			e.Close()
		},
		"other mapping": func(t *testing.T, e *Engine, dir string) {
			if err := e.cur.venues.SetInternal(fingerprintKey, []byte("an older mapping")); err != nil {
				t.Fatal(err)
			}
			e.Close()
		},
		"missing index": func(t *testing.T, e *Engine, dir string) {
			e.Close()
			if err := os.RemoveAll(filepath.Join(dir, "organizers.bleve")); err != nil {
				t.Fatal(err)
			}
		},
		"other event format": func(t *testing.T, e *Engine, dir string) {
			err := e.cur.events.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(metaBucket).Put(formatKey, []byte("an older format"))
			})
			if err != nil {
				t.Fatal(err)
			}
			e.Close()
		},
		"missing event store": func(t *testing.T, e *Engine, dir string) {
			e.Close()
			if err := os.Remove(filepath.Join(dir, "events.db")); err != nil {
				t.Fatal(err)
			}
		},
		// An engine that kept the events in Bleve (events.bleve) left
		// no events.db: all are recreated, and the old directory goes.
		"events in bleve": func(t *testing.T, e *Engine, dir string) {
			e.Close()
			if err := os.Rename(filepath.Join(dir, "events.db"), filepath.Join(dir, "events.bleve")); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			e := mustOpen(t, dir)
			mustIndex(t, e, small())
			damage(t, e, dir)
			e = mustOpen(t, dir)
			defer e.Close()
			if got := dirEntries(t, dir); !slices.Equal(got, []string{"events.db", "organizers.bleve", "venues.bleve"}) {
				t.Errorf("entries after reopening = %q", got)
			}
			// All three are empty, so the sync worker's Populate (which
			// looks at the event count) refills all of them.
			if got := counts(t, e); got != [3]int{} {
				t.Fatalf("counts after rebuild = %v, want all 0", got)
			}
			// And the rebuilt indexes are current: reopening keeps data.
			mustIndex(t, e, small())
			e.Close()
			e = mustOpen(t, dir)
			if got := counts(t, e); got[0] == 0 {
				t.Fatalf("counts after reopening the rebuilt indexes = %v", got)
			}
		})
	}
}

func TestWordAnalyzerIsWords(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "Jazz", "  JAZZ night!! ", "open-air - rock-n-roll", "don't 3.14 x/y (a)",
		"CAFÉ Théâtre ÉTÉ", "Straße İstanbul één", "日本語 テキスト", "emoji 🎷 sax", "tab\tnew\nline",
		"a--b -- -", "info@jazz-club.example", "+33 1 23 45",
	} {
		tokens := wordAnalyzer{}.Analyze([]byte(in))
		var got []string
		for i, tok := range tokens {
			got = append(got, string(tok.Term))
			if tok.Position != i+1 {
				t.Errorf("%q: token %d = %v, not at its position", in, i, tok)
			}
		}
		if want := search.Words(in); !slices.Equal(got, want) {
			t.Errorf("%q: tokens %q, want search.Words %q", in, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := mustOpen(t, t.TempDir())
	if err := e.IndexPlaces(ctx, []search.PlaceDocument{{ID: 1, Kind: search.Venues}, {ID: 2, Kind: "stage"}}); err == nil {
		t.Error("IndexPlaces with an unknown kind succeeded")
	}
	if got := counts(t, e); got != [3]int{} {
		t.Errorf("a failed IndexPlaces wrote something: counts %v", got)
	}
	if _, err := e.SearchPlaces(ctx, search.PlaceQuery{Kind: "stage"}); err == nil {
		t.Error("SearchPlaces with an unknown kind succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.SearchEvents(cancelled, search.EventQuery{Limit: 8}); !errors.Is(err, context.Canceled) {
		t.Errorf("search with a cancelled context: %v, want context.Canceled", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.SearchEvents(ctx, search.EventQuery{Limit: 8}); !errors.Is(err, search.ErrUnavailable) {
		t.Errorf("search after Close: %v, want ErrUnavailable", err)
	}
	if err := e.Ping(ctx); !errors.Is(err, search.ErrUnavailable) {
		t.Errorf("Ping after Close: %v, want ErrUnavailable", err)
	}
}

// TestNearIsExactHaversine puts points at exactly the query radius where
// a distance with another earth model (Bleve's own, an earth diameter
// varying with latitude) would differ most from search.DistanceKm: near the equator, at high latitudes and
// across the antimeridian. Radii sit on a point's distance and one float
// step below it.
func TestNearIsExactHaversine(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := mustOpen(t, t.TempDir())
	defer e.Close()
	centers := []search.GeoPoint{{Lat: 0.5, Lng: 10}, {Lat: 45, Lng: -73}, {Lat: 70, Lng: 25}, {Lat: -33.9, Lng: 179.99}, {Lat: 89.5, Lng: 0}}
	var docs []search.EventDocument
	id := int64(1)
	for _, c := range centers {
		for k := range 40 {
			// Points on a spiral out to about 60 km, both sides of the
			// antimeridian for the centre on it.
			angle := float64(k) * 0.7
			dist := 0.01 + float64(k)*1.5 // km
			lat := c.Lat + dist/111.2*math.Cos(angle)
			lng := c.Lng + dist/(111.2*math.Cos(c.Lat*math.Pi/180))*math.Sin(angle)
			if lng > 180 {
				lng -= 360
			}
			p := search.GeoPoint{Lat: math.Min(lat, 90), Lng: lng}
			docs = append(docs, search.EventDocument{ID: id, Start: id, Geo: &p, HasGeo: true, Status: "publish"})
			id++
		}
	}
	if err := e.IndexEvents(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, c := range centers {
		for _, d := range docs {
			r := search.DistanceKm(*d.Geo, c)
			if r > 100 || int(d.ID)%3 != 0 {
				continue
			}
			for _, radius := range []float64{r, math.Nextafter(r, 0)} {
				q := search.EventQuery{Near: search.Some(search.GeoCircle{Center: c, RadiusKm: radius}), Limit: 1000}
				got, err := e.SearchEvents(ctx, q)
				want := searchtest.ExpectedEvents(docs, q)
				if err != nil || got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
					t.Errorf("near %v within %v km: got %v (total %d), %v; want %v (total %d)", c, radius, got.IDs, got.Total, err, want.IDs, want.Total)
				}
			}
		}
	}
}

// BenchmarkSearchEvents indexes 10,000 generated events and runs the
// default list (published, in the default two-year window, hidden events
// excluded, first page of 8) and a typical filtered list (the same plus a
// category and featured).
func BenchmarkSearchEvents(b *testing.B) {
	e, f := benchEngine(b)
	ctx := context.Background()
	window := search.EventQuery{
		Statuses: []string{"publish"}, StartGTE: search.Some(f.Now), EndLTE: search.Some(f.Now + 2*365*86400 - 1),
		ExcludeHidden: true, Limit: 8,
	}
	filtered := window
	filtered.CategoryIDs, filtered.Featured = []int64{3}, search.Some(true)
	text := window
	text.Lang, text.Query = "en", "jazz concert"
	near := window
	near.Near = search.Some(search.GeoCircle{Center: f.Cities[1], RadiusKm: 10})
	for name, q := range map[string]search.EventQuery{"default": window, "filtered": filtered, "text": text, "near": near} {
		want := searchtest.ExpectedEvents(f.Events, q)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				got, err := e.SearchEvents(ctx, q)
				if err != nil || got.Total != want.Total {
					b.Fatalf("got %+v, %v; want total %d", got, err, want.Total)
				}
			}
			b.ReportMetric(float64(want.Total), "matches")
		})
	}
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "eventcal-search")
	defer os.RemoveAll(dir)
	e, err := Open(dir) // one process per directory: Bleve locks it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	ctx := context.Background()
	_ = e.IndexEvents(ctx, []search.EventDocument{{ID: 7, Status: "publish", Start: 100, End: 200,
		Text: map[string]search.Text{"en": {Title: "Open-air jazz night"}}}})
	r, _ := e.SearchEvents(ctx, search.EventQuery{Lang: "en", Query: "JAZZ open-air", Limit: 8})
	fmt.Println(r.IDs, r.Total)
	// Output: [7] 1
}

// benchEngine returns an engine (closed when b ends) holding 10,000
// generated events, indexed 1,000 a batch, and their fixtures.
func benchEngine(b *testing.B) (*Engine, *searchtest.Fixtures) {
	b.Helper()
	f := searchtest.Generate(42, 10000, 300, 150)
	e, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	start := time.Now()
	for chunk := range slices.Chunk(f.Events, 1000) {
		if err := e.IndexEvents(context.Background(), chunk); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("indexed %d events in %s", len(f.Events), time.Since(start).Round(time.Millisecond))
	return e, f
}

// TestHyphenatedWordsAfterReopen: the event store keeps each event's text,
// not its words; the words are cut when the store is loaded at open, so an
// event written before '-' separated words is found by each part after a
// restart, with no rebuild. The place indexes are rebuilt instead
// (mappingVersion 4: TestMappingChangeRebuildsAllIndexes).
func TestHyphenatedWordsAfterReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := mustOpen(t, dir)
	doc := search.EventDocument{ID: 7, Status: "publish", Start: 100, End: 200,
		Text: map[string]search.Text{"en": {Title: "Late-night Comedy Club"}}}
	if err := e.IndexEvents(t.Context(), []search.EventDocument{doc}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = mustOpen(t, dir)
	defer e.Close()
	for _, q := range []string{"night", "late-night", "LATE-NIG"} {
		r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: q, Limit: 10})
		if err != nil || !slices.Equal(r.IDs, []int64{7}) {
			t.Errorf("after reopening, %q = %v, %v; want [7]", q, r.IDs, err)
		}
	}
}
