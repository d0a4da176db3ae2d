package memindex

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/search"
)

// benchWords are the words of the load benchmark's events (bench/main.go).
var benchWords = []string{"jazz", "rock", "theatre", "poetry", "cinema", "opera", "dance", "market", "lecture", "workshop",
	"festival", "concert", "exhibition", "tasting", "comedy", "choir", "quartet", "ballet", "circus", "fair"}

// benchIndex builds n events shaped like the load benchmark's: two years
// of dates, 200 venues with points, 30 categories, 50 tags.
func benchIndex(n int) (*Index, int64) { return benchIndexSeries(n, 0) }

// benchIndexSeries is benchIndex with series of its events (every
// n/series-th) weekly series of 105 occurrences from their start (which
// is anywhere in the two years, unlike the load benchmark's:
// benchIndexThisWeek).
func benchIndexSeries(n, series int) (*Index, int64) { return benchIndexShaped(n, series, false) }

// benchIndexThisWeek is benchIndexSeries with every series starting in
// the week from now, as the load benchmark's -series mode writes them
// (bench/series.go): every week of the window then holds an occurrence
// of every series.
func benchIndexThisWeek(n, series int) (*Index, int64) { return benchIndexShaped(n, series, true) }

// benchIndexShaped builds benchIndexSeries's events, the series starting
// in the week from now when thisWeek.
func benchIndexShaped(n, series int, thisWeek bool) (*Index, int64) {
	docs, now := benchDocs(n, series, thisWeek)
	x := New()
	x.Apply(docs)
	return x, now
}

// benchNow is the benchmarks' now (2027-01-15).
const benchNow = int64(1_800_000_000)

// benchDocs returns the documents of benchIndexShaped (each event's
// documents together, in the order of their IDs) and now.
func benchDocs(n, series int, thisWeek bool) ([]search.EventDocument, int64) {
	r := rand.New(rand.NewPCG(1, 2))
	const now = benchNow
	docs := make([]search.EventDocument, n)
	for i := range docs {
		start := now + int64(r.IntN(730*24))*3600
		venue := int64(r.IntN(200))
		geo := &search.GeoPoint{Lat: 48 + float64(venue%20)*0.1, Lng: 2 + float64(venue/20)*0.1}
		docs[i] = search.EventDocument{
			ID: int64(i + 1), Status: "publish", Start: start, End: start + 7200, PublishDate: now - int64(i),
			Text:     map[string]search.Text{},
			Featured: r.IntN(5) == 0, CategoryIDs: []int64{int64(r.IntN(30))}, TagIDs: []int64{int64(r.IntN(50)), int64(r.IntN(50))},
			VenueIDs: []int64{venue}, OrganizerIDs: []int64{int64(r.IntN(100))}, HasGeo: true, Geo: geo,
		}
	}
	// Seven languages, as the service's default LANGUAGES, each falling
	// back to the one text (the documents' shape for untranslated events).
	for i := range docs {
		t := search.Text{
			Title:       fmt.Sprintf("%s %s %d", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], i),
			Description: fmt.Sprintf("An evening of %s and %s.", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))]),
		}
		for _, l := range []string{"nl", "en", "fr", "de", "it", "pl", "es"} {
			docs[i].Text[l] = t
		}
	}
	if series > 0 {
		every := n / series
		var all []search.EventDocument
		for i, d := range docs {
			if i%every != 0 {
				all = append(all, d)
				continue
			}
			if thisWeek {
				d.Start = now + int64(r.IntN(7*24))*3600
				d.End = d.Start + 7200
			}
			for k := range 105 {
				o := d
				o.Start, o.End = d.Start+int64(k)*7*86400, d.End+int64(k)*7*86400
				o.Occurrence = fmt.Sprintf("k%03d", k)
				all = append(all, o)
			}
		}
		docs = all
	}
	return docs, now
}

// benchQuery is one list row of the benchmarks.
type benchQuery struct {
	name string
	q    search.EventQuery
}

// with returns the default list window from now (two years, the first
// page, anonymous) changed by f.
func with(now int64, f func(q *search.EventQuery)) search.EventQuery {
	q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, ExcludeHidden: true, ExcludeProtected: true,
		StartGTE: search.Some(now), EndLTE: search.Some(now + 2*366*86400), Limit: 8}
	f(&q)
	return q
}

// listQueries returns the load benchmark's list rows over the window
// from now.
func listQueries(now int64) []benchQuery {
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	return []benchQuery{
		{"default", w(func(*search.EventQuery) {})},
		{"filtered", w(func(q *search.EventQuery) {
			q.StartGTE, q.EndLTE = search.Some(now+30*86400), search.Some(now+400*86400)
			q.CategoryIDs, q.Featured = []int64{7}, search.Some(true)
		})},
		{"search", w(func(q *search.EventQuery) { q.Query = "jazz" })},
		{"typeahead j", w(func(q *search.EventQuery) { q.Query = "j" })},
		{"typeahead jazz c", w(func(q *search.EventQuery) { q.Query = "jazz c" })},
		{"typo", w(func(q *search.EventQuery) { q.Query = "jazz cnocert " })},
		{"relevance", w(func(q *search.EventQuery) { q.Query = "jazz concert"; q.Relevance = true })},
		{"geo 50km", w(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: 48.5, Lng: 2.5}, RadiusKm: 50})
		})},
		{"facets", w(func(q *search.EventQuery) { q.Facets = []string{search.FacetCategories, search.FacetVenue} })},
	}
}

// runQueries runs each query as a sub-benchmark of b. With
// MEMINDEX_BENCH_WRITES set, one small write precedes each query: the
// cost of a service taking edits. With MEMINDEX_BENCH_COLD set, the match
// cache is emptied before each query, so that every query word's rows are
// found again (a search box typed into asks for ever new prefixes).
func runQueries(b *testing.B, x *Index, prefix string, qs []benchQuery) {
	for _, c := range qs {
		b.Run(prefix+c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			writes := os.Getenv("MEMINDEX_BENCH_WRITES") != ""
			cold := os.Getenv("MEMINDEX_BENCH_COLD") != ""
			for i := 0; b.Loop(); i++ {
				if cold {
					emptyMatches(x)
				}
				if writes {
					// One small write before each query, as a service
					// taking edits does: nothing kept between queries
					// survives it.
					x.Apply([]search.EventDocument{{ID: int64(9_000_000 + i%100), Status: "publish", Start: time.Now().Unix() + int64(i), End: time.Now().Unix() + int64(i) + 60,
						Text: map[string]search.Text{"en": {Title: fmt.Sprintf("bench write %d", i)}}}})
				}
				if _, err := x.Search(b.Context(), c.q); err != nil {
					b.Fatal(err)
				}
			}
			// The process's CPU time per query: on a shared machine the
			// wall time also holds the time other processes ran.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkSeriesSearch is BenchmarkSearch's list rows over 100,000
// events of which 5,000 are weekly series of 105 occurrences (620,000
// documents), with the collapsed list, the facets of one category and
// the rows an attacker would pick (deep pages, the relevance order of a
// one-letter prefix): go test ./search/memindex -run XXX -bench
// SeriesSearch.
func BenchmarkSeriesSearch(b *testing.B) {
	x, now := benchIndexSeries(benchSeriesSize())
	b.Logf("%d documents", x.Count())
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	runQueries(b, x, "", append(listQueries(now),
		benchQuery{"collapsed", w(func(q *search.EventQuery) { q.CollapseSeries = true })},
		benchQuery{"facets of one category", w(func(q *search.EventQuery) {
			q.CategoryIDs, q.Facets = []int64{7}, []string{search.FacetCategories, search.FacetVenue}
		})},
		benchQuery{"deep page", w(func(q *search.EventQuery) { q.Offset = 300000 })},
		benchQuery{"relevance, one prefix", w(func(q *search.EventQuery) { q.Query = "c"; q.Relevance = true })},
		benchQuery{"relevance, one prefix, deep page", w(func(q *search.EventQuery) { q.Query = "c"; q.Relevance = true; q.Offset = 200000 })},
		benchQuery{"collapsed, deep page", w(func(q *search.EventQuery) { q.CollapseSeries = true; q.Offset = 90000 })},
		benchQuery{"past the last page", w(func(q *search.EventQuery) { q.Offset = 5000000 })},
	))
}

// BenchmarkSeriesThisWeek is BenchmarkSeriesSearch's list rows over an
// index whose series all start in the week from now, as the load
// benchmark writes them: the first week of every window holds an
// occurrence of every series (SERIES_BENCH_EVENTS, SERIES_BENCH_SERIES).
func BenchmarkSeriesThisWeek(b *testing.B) {
	x, now := benchIndexThisWeek(benchSeriesSize())
	b.Logf("%d documents", x.Count())
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	runQueries(b, x, "", append(listQueries(now),
		benchQuery{"collapsed", w(func(q *search.EventQuery) { q.CollapseSeries = true })},
		benchQuery{"page 3", w(func(q *search.EventQuery) { q.Offset = 16 })},
		benchQuery{"total only", w(func(q *search.EventQuery) { q.Limit = 0 })},
		benchQuery{"from tomorrow", w(func(q *search.EventQuery) { q.StartGTE = search.Some(now + 86400) })},
	))
	runQueries(b, x, "", serviceQueries(now))
	runMix(b, x, "typeahead mix", typeaheadMix(now))
	// Each request of the mix alone, as a row of its own: the cost of
	// each kind (a short prefix, a longer one, two words, a typo).
	for i, q := range typeaheadMix(now) {
		runMix(b, x, "typeahead each/"+typeaheadQueries[i], []search.EventQuery{q})
	}
}

// typeaheadMix returns the load benchmark's typeahead requests
// (typeaheadQueries, bench's typeaheadPath) as queries of the default
// window from now.
func typeaheadMix(now int64) []search.EventQuery {
	var qs []search.EventQuery
	for _, t := range typeaheadQueries {
		qs = append(qs, with(now, func(q *search.EventQuery) { q.Query = t }))
	}
	return qs
}

// emptyMatches empties x's match cache: no word's rows kept from the
// query before, as for a search box's ever new prefixes, each a miss of
// the cache (MEMINDEX_BENCH_COLD).
func emptyMatches(x *Index) {
	x.mu.Lock()
	x.matches.clear()
	x.mu.Unlock()
}

// runMix runs the queries qs in turn, one per iteration, as the
// sub-benchmark name of b: a search box typed into asks each of them
// in turn. MEMINDEX_BENCH_COLD empties the match cache before each, as
// runQueries does.
func runMix(b *testing.B, x *Index, name string, qs []search.EventQuery) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		cold := os.Getenv("MEMINDEX_BENCH_COLD") != ""
		for i := 0; b.Loop(); i++ {
			if cold {
				emptyMatches(x)
			}
			if _, err := x.Search(b.Context(), qs[i%len(qs)]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// serviceQueries returns the engine queries the load benchmark's facets
// and collapsed rows send through the service for an anonymous reader
// (app/handlers' eventPage and eventFacets): the facets row's page of
// one category (protected events listed, redacted), then its count-only
// query (protected events left out) with the facets; and the collapsed
// list's page (protected events listed).
func serviceQueries(now int64) []benchQuery {
	w := func(f func(q *search.EventQuery)) search.EventQuery { return with(now, f) }
	return []benchQuery{
		{"service facets, page", w(func(q *search.EventQuery) { q.ExcludeProtected = false; q.CategoryIDs = []int64{7} })},
		{"service facets, counts", w(func(q *search.EventQuery) {
			q.CategoryIDs, q.Facets, q.Limit = []int64{7}, []string{search.FacetCategories, search.FacetVenue}, 0
		})},
		{"service collapsed", w(func(q *search.EventQuery) { q.ExcludeProtected = false; q.CollapseSeries = true })},
	}
}

// BenchmarkSearch measures the list queries of the load benchmark on the
// index alone: go test ./search/memindex -run XXX -bench Search.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		x, now := benchIndex(n)
		runQueries(b, x, fmt.Sprintf("%d/", n), listQueries(now))
	}
}

// BenchmarkApply measures one write of one event into an index of 100,000.
func BenchmarkApply(b *testing.B) {
	x, now := benchIndex(100000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x.Apply([]search.EventDocument{{ID: int64(i%1000 + 1), Status: "publish", Start: now + int64(i), End: now + int64(i) + 60,
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("jazz night %d", i)}}}})
	}
}

// BenchmarkBulkLoad measures filling an empty index with the load
// benchmark's shape of events and weekly series (every series starting
// in the week from now, every fourth event a series: bench's -startup
// 200000 -series 50000 at a tenth of the events), in CPU time per
// document: "batches" in writes of about reindexBatch documents that
// never split an event, as a full reindex (sync/indexing's scan) filled a
// new generation before NewBulk, "bulk batches" the same into NewBulk's
// index and its Finish, as a full reindex fills it now, and "load" in one
// write, as start-up reads events.db back (search/embedded). BULK_BENCH_EVENTS and BULK_BENCH_SERIES change
// the size: go test ./search/memindex -run XXX -bench BulkLoad -cpu 1
// -benchtime 3x.
func BenchmarkBulkLoad(b *testing.B) {
	n, series := 20000, 5000
	if v, err := strconv.Atoi(os.Getenv("BULK_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("BULK_BENCH_SERIES")); err == nil && v > 0 {
		series = v
	}
	docs, _ := benchDocs(n, series, true)
	batches := eventBatches(docs, reindexBatch)
	for _, c := range []struct {
		name    string
		batches [][]search.EventDocument
		bulk    bool
	}{{"batches", batches, false}, {"bulk batches", batches, true}, {"load", [][]search.EventDocument{docs}, false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu int64
			for b.Loop() {
				runtime.GC()
				cpu0 := cpuTime()
				x := New()
				if c.bulk {
					x = NewBulk()
				}
				for _, batch := range c.batches {
					x.Apply(batch)
				}
				x.Finish()
				cpu += cpuTime() - cpu0
				if x.Count() != len(docs) {
					b.Fatalf("%d documents indexed, want %d", x.Count(), len(docs))
				}
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(docs)), "cpu-ns/doc")
		})
	}
}

// reindexBatch is the documents of one write of a full reindex
// (sync/indexing's batchDocs).
const reindexBatch = 2000

// eventBatches cuts docs (each event's documents together) into batches
// of at most size documents, or one event's documents when they are
// more, never splitting an event: Apply replaces all of an event's
// documents with those of one call.
func eventBatches(docs []search.EventDocument, size int) [][]search.EventDocument {
	var out [][]search.EventDocument
	for start := 0; start < len(docs); {
		end := start + 1
		for end < len(docs) && docs[end].ID == docs[end-1].ID {
			end++
		}
		for end < len(docs) {
			next := end + 1
			for next < len(docs) && docs[next].ID == docs[next-1].ID {
				next++
			}
			if next-start > size {
				break
			}
			end = next
		}
		out = append(out, docs[start:end])
		start = end
	}
	return out
}

// textSizes returns the index sizes of the text benchmarks: 100,000 and
// 1,000,000 events, or the comma-separated sizes in
// MEMINDEX_BENCH_SIZES (a smaller run while working).
func textSizes(b *testing.B) []int {
	v := os.Getenv("MEMINDEX_BENCH_SIZES")
	if v == "" {
		return []int{100000, 1000000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("MEMINDEX_BENCH_SIZES: %q is not a size", f)
		}
		out = append(out, n)
	}
	return out
}

// typeaheadQueries are the load benchmark's typeahead requests (bench's
// typeaheadPath): the growing prefixes of two words, and two whole words
// the second with one typo.
var typeaheadQueries = []string{"j", "ja", "jaz", "jazz", "jazz c", "jazz co", "jazz con", "jazz concert",
	"f", "fe", "festival e", "festival exhib", "jazz cnocert ", "festival exhibitoin ", "c", "co"}

// BenchmarkTypeahead measures the load benchmark's typeahead requests
// (the date order, the first page of 8, anonymous) and its text searches
// over 100,000 and 1,000,000 events, where a common word matches a fifth
// of the events: go test ./search/memindex -run XXX -bench Typeahead.
func BenchmarkTypeahead(b *testing.B) {
	for _, n := range textSizes(b) {
		x, now := benchIndex(n)
		var qs []benchQuery
		for _, t := range typeaheadQueries {
			qs = append(qs, benchQuery{"typeahead " + t, with(now, func(q *search.EventQuery) { q.Query = t })})
		}
		qs = append(qs,
			benchQuery{"search jazz", with(now, func(q *search.EventQuery) { q.Query = "jazz" })},
			benchQuery{"search jazz, page 3", with(now, func(q *search.EventQuery) { q.Query = "jazz"; q.Offset = 16 })},
			benchQuery{"search jazz, next month", with(now, func(q *search.EventQuery) {
				q.Query = "jazz"
				q.StartGTE, q.EndLTE = search.Some(now+30*86400), search.Some(now+61*86400)
			})},
			benchQuery{"search jazz concert", with(now, func(q *search.EventQuery) { q.Query = "jazz concert" })},
			benchQuery{"relevance jazz", with(now, func(q *search.EventQuery) { q.Query = "jazz"; q.Relevance = true })},
			benchQuery{"relevance jazz c", with(now, func(q *search.EventQuery) { q.Query = "jazz c"; q.Relevance = true })},
			benchQuery{"relevance c", with(now, func(q *search.EventQuery) { q.Query = "c"; q.Relevance = true })},
		)
		runQueries(b, x, fmt.Sprintf("%d/", n), qs)
		runMix(b, x, fmt.Sprintf("%d/typeahead mix", n), typeaheadMix(now))
		x = nil
		runtime.GC()
	}
}

// benchSeriesSize returns the events and series of BenchmarkSeriesSearch:
// 100,000 and 5,000, or SERIES_BENCH_EVENTS and SERIES_BENCH_SERIES.
func benchSeriesSize() (int, int) {
	n, s := 100000, 5000
	if v, err := strconv.Atoi(os.Getenv("SERIES_BENCH_EVENTS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("SERIES_BENCH_SERIES")); err == nil && v > 0 {
		s = v
	}
	return n, s
}
