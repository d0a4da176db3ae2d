package memindex

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// agreeSize returns the number of events of TestAgreesWithReferenceAtSize
// (MEMINDEX_AGREE_EVENTS, default 20,000) and of its queries
// (MEMINDEX_AGREE_QUERIES, default 600).
func agreeSize(t *testing.T) (events, queries int) {
	events, queries = 20000, 600
	for _, v := range []struct {
		name string
		n    *int
	}{{"MEMINDEX_AGREE_EVENTS", &events}, {"MEMINDEX_AGREE_QUERIES", &queries}} {
		if s := os.Getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				t.Fatalf("%s: %q is not a size", v.name, s)
			}
			*v.n = n
		}
	}
	return events, queries
}

// agreeDocs returns n events shaped like the load benchmark's (three
// years of dates around now, 200 venues in a 2° box, of which every
// fortieth without a point, 30 categories, 50 tags, words of benchWords)
// with every status, flag and visibility, text in English and French (a
// third translated), and one in a thousand (at least 20) a weekly series
// of 105 occurrences, every twentieth of them with an override (another
// title, venue or status), so that both the groups and the date order
// hold occurrences; and now.
func agreeDocs(n int) ([]search.EventDocument, int64) {
	r := rand.New(rand.NewPCG(5, 6))
	const now = int64(1_800_000_000)
	word := func() string { return benchWords[r.IntN(len(benchWords))] }
	statuses := []string{"publish", "publish", "publish", "publish", "publish", "publish", "publish", "publish", "draft", "private", "future", "pending"}
	venue := func(d *search.EventDocument, v int64) {
		d.VenueIDs, d.HasGeo, d.Geo = []int64{v}, false, nil
		if v%40 != 0 {
			d.HasGeo, d.Geo = true, &search.GeoPoint{Lat: 48 + float64(v%100)/50, Lng: 2 + float64(v%70)/35}
		}
	}
	text := func(i int) map[string]search.Text {
		en := search.Text{Title: fmt.Sprintf("%s %s %d", word(), word(), i), Description: fmt.Sprintf("An evening of %s and %s.", word(), word())}
		fr := en
		if r.IntN(3) == 0 {
			fr = search.Text{Title: fmt.Sprintf("soirée %s %d", word(), i), Description: fmt.Sprintf("Une soirée de %s.", word())}
		}
		return map[string]search.Text{"en": en, "fr": fr}
	}
	every := n / max(20, n/1000)
	var docs []search.EventDocument
	for i := range n {
		start := now + int64(r.IntN(3*365*24)-365*24)*3600
		d := search.EventDocument{
			ID: int64(i + 1), Status: statuses[r.IntN(len(statuses))], Start: start, End: start + int64(r.IntN(4))*3600,
			PublishDate: now - int64(i), Text: text(i),
			Featured: r.IntN(5) == 0, Ticketed: r.IntN(3) == 0, HideFromListings: r.IntN(50) == 0, HasPassword: r.IntN(50) == 0,
			CategoryIDs: []int64{int64(r.IntN(30))}, OrganizerIDs: []int64{int64(r.IntN(100))},
		}
		if r.IntN(4) == 0 {
			if c := int64(r.IntN(30)); c != d.CategoryIDs[0] {
				d.CategoryIDs = append(d.CategoryIDs, c)
			}
		}
		for range r.IntN(3) {
			if tg := int64(r.IntN(50)); !slices.Contains(d.TagIDs, tg) {
				d.TagIDs = append(d.TagIDs, tg)
			}
		}
		if r.IntN(500) == 0 {
			d.End = start + 30*86400 // a long event
		}
		venue(&d, int64(r.IntN(200)))
		if i%every != 0 {
			docs = append(docs, d)
			continue
		}
		for k := range 105 {
			o := d
			o.Start, o.End = d.Start+int64(k)*7*86400, d.End+int64(k)*7*86400
			o.Occurrence = fmt.Sprintf("k%03d", k)
			if k%20 == 19 {
				switch r.IntN(3) {
				case 0:
					o.Text = text(i)
				case 1:
					venue(&o, int64(r.IntN(200)))
				default:
					o.Status = statuses[r.IntN(len(statuses))]
				}
			}
			docs = append(docs, o)
		}
	}
	return docs, now
}

// agreeQuery draws a query over agreeDocs' events of one of eight kinds
// (a word, a typeahead prefix of one to four letters, a word and a
// prefix, a typo, a radius, facets, categories, dates alone), with the
// others' filters drawn too: dates, categories, tags, venues, featured,
// ticketed, statuses (anonymous, editors', others), a radius, facets,
// series collapsed, the relevance order, pages. It returns the query and
// its kind.
func agreeQuery(r *rand.Rand, now int64) (search.EventQuery, string) {
	q := search.EventQuery{Lang: []string{"en", "fr"}[r.IntN(2)], Limit: r.IntN(21)}
	maybe := func(p int) bool { return r.IntN(p) == 0 }
	w := benchWords[r.IntN(len(benchWords))]
	near := func() {
		q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: 48 + r.Float64()*2, Lng: 2 + r.Float64()*2},
			RadiusKm: []float64{0.5, 5, 20, 50, 80, 300}[r.IntN(6)]})
	}
	facets := func() {
		fs := slices.Clone(search.EventFacets)
		r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		q.Facets = fs[:1+r.IntN(len(fs))]
	}
	kinds := []string{"word", "prefix", "word and prefix", "typo", "radius", "facets", "categories", "dates"}
	kind := kinds[r.IntN(len(kinds))]
	switch kind {
	case "word":
		q.Query = w
	case "prefix":
		q.Query = w[:1+r.IntN(4)]
	case "word and prefix":
		q.Query = w + " " + benchWords[r.IntN(len(benchWords))][:1+r.IntN(4)]
	case "typo":
		b := []byte(benchWords[r.IntN(len(benchWords))])
		b[1], b[2] = b[2], b[1]
		q.Query = w + " " + string(b) + " "
	case "radius":
		near()
	case "facets":
		facets()
	case "categories":
		for range 1 + r.IntN(6) {
			q.CategoryIDs = append(q.CategoryIDs, int64(r.IntN(30)))
		}
	}
	if !q.Near.Set && maybe(4) {
		near()
	}
	if q.Facets == nil && maybe(4) {
		facets()
	}
	if q.CategoryIDs == nil && maybe(5) {
		q.CategoryIDs = []int64{int64(r.IntN(30))}
	}
	if maybe(10) {
		q.TagIDs = []int64{int64(r.IntN(50)), int64(r.IntN(50))}
	}
	if maybe(12) {
		q.VenueIDs = []int64{int64(r.IntN(200))}
	}
	switch r.IntN(6) {
	case 0, 1, 2: // anonymous
		q.Statuses, q.ExcludeHidden, q.ExcludeProtected = []string{"publish"}, true, true
	case 3:
		q.Statuses = []string{"publish", "draft", "pending", "future", "private"}
	case 4:
		q.Statuses = []string{[]string{"draft", "private", "future", "pending"}[r.IntN(4)]}
	}
	if q.Query != "" && maybe(3) {
		q.Relevance = true
	}
	day := int64(86400)
	switch r.IntN(5) {
	case 0, 1: // the upcoming events (the default list)
		q.EndGT = search.Some(now)
	case 2: // a month
		from := now + int64(r.IntN(700)-300)*day
		q.StartGTE, q.EndLTE = search.Some(from), search.Some(from+30*day)
	case 3: // from a date, and ends before another
		q.StartGT = search.Some(now + int64(r.IntN(800)-300)*day)
		q.EndLT = search.Some(now + int64(r.IntN(900)-200)*day)
	}
	if maybe(3) {
		q.Featured = search.Some(maybe(2))
	}
	if maybe(8) {
		q.Ticketed = search.Some(maybe(2))
	}
	q.CollapseSeries = maybe(4)
	switch r.IntN(6) {
	case 0:
		q.Offset = r.IntN(100)
	case 1:
		q.Offset = r.IntN(5000)
	case 2:
		q.Offset, q.Limit = 0, 0 // the total (and facets) only
	}
	return q, kind
}

// TestAgreesWithReferenceAtSize runs generated queries of every kind
// (agreeQuery) over agreeDocs' events at a size that takes every path of
// the index's structures (counted pages, score tiers, prefixes, facet
// buckets, the radius list by points, block summaries, groups), and
// checks each page, occurrence keys, total and facets against the
// reference (searchtest), as the other agreement tests do: half the
// queries after the bulk load, half after writes (one event in a hundred
// moved, retitled, at another venue or of another kind; one in two
// hundred removed, and a tenth of those written back). The size is
// 20,000 events (MEMINDEX_AGREE_EVENTS) and 600 queries
// (MEMINDEX_AGREE_QUERIES); run once at a million:
// MEMINDEX_AGREE_EVENTS=1000000 MEMINDEX_AGREE_QUERIES=300 go test
// ./search/memindex -run TestAgreesWithReferenceAtSize -v -timeout 3h.
func TestAgreesWithReferenceAtSize(t *testing.T) {
	t.Parallel() // sets none of the package's knobs: runs beside the other parallel tests
	n, queries := agreeSize(t)
	all, now := agreeDocs(n)
	ls := newLiveSeries(all)
	ls.write(ls.order)
	x, ref := ls.x, searchtest.NewReference(all)
	t.Logf("%d events, %d documents, %d groups", n, ref.Len(), len(x.groups))
	r := rand.New(rand.NewPCG(7, 8))
	kinds := map[string]int{}
	features := map[string]int{}
	visited, counted := x.visited.Load(), x.facets.work.Load()
	for i := range queries {
		if i == queries/2 {
			ref = searchtest.NewReference(agreeWrites(r, ls))
			t.Logf("after the writes: %d documents, %d groups", ref.Len(), len(x.groups))
		}
		if x.Count() != ref.Len() {
			t.Fatalf("Count %d, want %d", x.Count(), ref.Len())
		}
		q, kind := agreeQuery(r, now)
		kinds[kind]++
		for name, on := range map[string]bool{"radius": q.Near.Set, "facets": q.Facets != nil, "collapsed": q.CollapseSeries,
			"relevance": q.Relevance, "categories": q.CategoryIDs != nil, "featured": q.Featured.Set, "anonymous": q.ExcludeHidden,
			"total only": q.Limit == 0} {
			if on {
				features[name]++
			}
		}
		checkAgainstReference(t, x, ref, q, fmt.Sprintf("query %d (%s)", i, kind))
	}
	t.Logf("%d queries agree: by kind %v; with %v", queries, kinds, features)
	if x.visited.Load() == visited || x.facets.work.Load() == counted {
		t.Error("no list read the date order, or no facets were counted from the buckets: the queries do not exercise them")
	}
}

// agreeWrites changes the events of ls (every occurrence of a series
// alike): one in a hundred moved by up to a month, retitled, at another
// venue, or of another status and flags, written; one in two hundred
// removed, and a tenth of those written back. It returns the documents
// of every event.
func agreeWrites(r *rand.Rand, ls *liveSeries) []search.EventDocument {
	var changed []int64
	for _, id := range ls.order {
		docs := ls.live[id]
		if len(docs) == 0 || r.IntN(100) > 0 {
			continue
		}
		how, shift, v := r.IntN(4), int64(r.IntN(60*86400)-30*86400), int64(r.IntN(200))
		word := benchWords[r.IntN(len(benchWords))]
		docs = slices.Clone(docs)
		for i := range docs {
			d := &docs[i]
			switch how {
			case 0:
				d.Start, d.End = d.Start+shift, d.End+shift
			case 1:
				d.Text = retitled(d.Text, word)
			case 2:
				d.VenueIDs, d.HasGeo, d.Geo = []int64{v}, true, &search.GeoPoint{Lat: 48 + float64(v%100)/50, Lng: 2 + float64(v%70)/35}
			default:
				d.Status, d.Featured, d.HideFromListings = []string{"publish", "draft", "private"}[v%3], !d.Featured, v%7 == 0
			}
		}
		ls.live[id] = docs
		changed = append(changed, id)
	}
	ls.write(changed)
	gone, saved := ls.removeSome(r, 200)
	back := gone[:len(gone)/10]
	for _, id := range back {
		ls.live[id] = saved[id]
	}
	ls.write(back)
	return ls.all()
}

// checkAgainstReference runs q on x and fails t, naming the query by
// name, unless its total, page (IDs and occurrences) and facets are the
// reference's over ref's documents (the ranked reference for a relevance
// search).
func checkAgainstReference(t *testing.T, x *Index, ref *searchtest.Reference, q search.EventQuery, name string) {
	t.Helper()
	got, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	want, wantF := ref.EventsAndFacets(q)
	if q.Relevance && q.Query != "" {
		want = rankedReference(x, ref, q)
	}
	gotOcc := occurrencesOf(got)
	if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(gotOcc, want.Occurrences) {
		t.Fatalf("%s %+v:\ngot  total %d, %v %q\nwant total %d, %v %q", name, q,
			got.Total, got.IDs, gotOcc, want.Total, want.IDs, want.Occurrences)
	}
	if fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
		t.Fatalf("%s %+v: facets\n got %v\nwant %v", name, q, got.Facets, wantF)
	}
}

// occurrencesOf returns the occurrence key of each hit of r, in order,
// to compare with the reference's Occurrences.
func occurrencesOf(r search.Result) []string {
	occ := make([]string, len(r.IDs))
	for k := range r.IDs {
		occ[k] = r.Occurrence(k)
	}
	return occ
}
