package memindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestFacetBucketsAgreeWithReference indexes generated events (many of
// them series with overrides), then moves, edits and removes them in
// rounds, and checks the facets (and totals) of generated queries against
// the reference after each round, with buckets of an hour (mostly one
// document each), a week (the default), four months (values kept as bit
// sets) and one bucket for everything: every way a bucket is counted
// (whole, by a category's cells, as a bit set, cut by the dates) must
// give the reference's counts. At the end, with every event removed, the
// buckets and value numbers are gone.
func TestFacetBucketsAgreeWithReference(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	var (
		mu    sync.Mutex
		taken [numPaths]uint64
	)
	t.Run("widths", func(t *testing.T) { // returns when every width is done
		for i, width := range []int64{3600, 7 * 86400, 120 * 86400, 1 << 50, 7 * 86400} {
			shift := []uint{1, 3, 2, 3, 0}[i] // spans of 2, 8, 4, 8 and 1 buckets
			t.Run(fmt.Sprintf("buckets of %d s, spans of %d", width, 1<<shift), func(t *testing.T) {
				t.Parallel()
				paths := facetBucketsAgree(t, func(k *knobs) {
					// Every list with list filters or none read by the buckets.
					k.facetWidth, k.bucketListMin, k.bucketBlocks, k.spanShift = width, 0, 0, shift
				})
				mu.Lock()
				defer mu.Unlock()
				for p, n := range paths {
					taken[p] += n
				}
			})
		}
	})
	// A single bucket is its span's only one: held whole, it is counted
	// as a span, and the buckets' ways are taken at the other widths.
	for p, n := range taken {
		if n == 0 {
			t.Errorf("no bucket was counted by way %d at any width: the test does not exercise it", p)
		}
	}
}

// facetBucketsAgree is TestFacetBucketsAgreeWithReference with the
// knobs that tune sets (the widths); it returns how many buckets were
// counted each way.
func facetBucketsAgree(t *testing.T, tune func(*knobs)) (paths [numPaths]uint64) {
	f := searchtest.Generate(13, 700, 30, 12)
	fs := searchtest.WithSeries(f)
	r := rand.New(rand.NewPCG(31, 32))
	ls := newLiveSeries(fs.Events)
	tune(ls.x.knobs)
	x, live, order, write, all := ls.x, ls.live, ls.order, ls.write, ls.all
	// Loaded in one call into an empty index (the bulk load), then the
	// same events written again one batch at a time.
	write(order)
	checkFacets(t, "loaded", x, all(), f, r)
	write(order[:1])
	write(order[1:9])
	write(order[9:])
	checkFacets(t, "rewritten", x, all(), f, r)
	cats := categoriesOf(fs.Events)
	for round := 1; round <= 3; round++ {
		var changed []int64
		for _, id := range order {
			docs := live[id]
			if len(docs) == 0 || r.IntN(3) > 0 {
				continue
			}
			other := fs.Events[r.IntN(len(fs.Events))]
			for i := range docs {
				d := &docs[i]
				switch r.IntN(4) {
				case 0: // moved, into another bucket most often
					shift := int64(r.IntN(60*86400)) - 30*86400
					d.Start, d.End = d.Start+shift, d.End+shift
				case 1: // other values
					d.CategoryIDs = slices.Clone(other.CategoryIDs)
					if c := cats[r.IntN(len(cats))]; !slices.Contains(d.CategoryIDs, c) {
						d.CategoryIDs = append(d.CategoryIDs, c) // no repeats: a document has none
					}
					d.VenueIDs, d.TagIDs, d.OrganizerIDs = other.VenueIDs, other.TagIDs, other.OrganizerIDs
				case 2: // another kind
					d.Status, d.Featured, d.Ticketed = other.Status, !d.Featured, other.Ticketed
					d.HideFromListings, d.HasPassword = other.HideFromListings, other.HasPassword
				default: // ends later: the bucket's end bound grows
					d.End += int64(r.IntN(90 * 86400))
				}
			}
			changed = append(changed, id)
		}
		write(changed)
		gone, saved := ls.removeSome(r, 6)
		checkFacets(t, fmt.Sprintf("round %d, removed", round), x, all(), f, r)
		for _, id := range gone[:len(gone)/2] {
			live[id] = saved[id]
		}
		write(gone[:len(gone)/2])
		checkFacets(t, fmt.Sprintf("round %d", round), x, all(), f, r)
	}
	for p := range paths {
		paths[p] = x.facets.paths[p].Load()
	}
	for _, p := range []int{pathSet, pathCut} {
		if paths[p] == 0 {
			t.Errorf("no bucket was counted by way %d: the test does not exercise it", p)
		}
	}
	// (A span held whole counts its buckets by its values or a
	// category's cells: with one bucket, every bucket held whole.)
	if paths[pathWhole]+paths[pathCells]+paths[pathSpan] == 0 {
		t.Error("no bucket held whole was counted: the test does not exercise them")
	}
	if x.facets.listWork.Load() == 0 {
		t.Error("no list was read by the buckets: the test does not exercise facetIndex.each")
	}
	x.Remove(order)
	if len(x.facets.buckets) != 0 || len(x.facets.nums) != 0 || len(x.facets.spans) != 0 {
		t.Errorf("after removing everything: %d buckets, %d bucket numbers, %d spans", len(x.facets.buckets), len(x.facets.nums), len(x.facets.spans))
	}
	for l, n := range x.facets.values {
		if len(n.num) != 0 || len(n.free) != len(n.ids) {
			t.Errorf("list filter %d keeps %d value numbers (%d free of %d)", l, len(n.num), len(n.free), len(n.ids))
		}
	}
	return paths
}

// categoriesOf returns the distinct categories of docs.
func categoriesOf(docs []search.EventDocument) []int64 {
	var out []int64
	for _, d := range docs {
		for _, c := range d.CategoryIDs {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// checkFacets runs generated queries that ask for facets, most of them
// with only the filters the buckets decide (dates, statuses, flags, list
// filters, often one category; a third of them for the total and facets
// only), against x and the reference over docs: totals, pages (with their
// occurrence keys) and facets.
func checkFacets(t *testing.T, round string, x *Index, docs []search.EventDocument, f *searchtest.Fixtures, r *rand.Rand) {
	t.Helper()
	if x.Count() != len(docs) {
		t.Fatalf("%s: Count %d, want %d", round, x.Count(), len(docs))
	}
	cats := categoriesOf(docs)
	ref := searchtest.NewReference(docs)
	for i := 0; i < 300; i++ {
		q := randomQuery(r, f, docs)
		facets := slices.Clone(search.EventFacets)
		r.Shuffle(len(facets), func(i, j int) { facets[i], facets[j] = facets[j], facets[i] })
		q.Facets = facets[:1+r.IntN(len(facets))]
		if r.IntN(4) > 0 {
			q.Query, q.IDs, q.Near, q.ParentID, q.Relevance = "", nil, search.Opt[search.GeoCircle]{}, search.Opt[int64]{}, false
		}
		if r.IntN(2) == 0 {
			q.CategoryIDs = []int64{cats[r.IntN(len(cats))]}
		}
		if r.IntN(3) == 0 {
			q.Statuses, q.ExcludeHidden, q.ExcludeProtected = []string{"publish"}, true, true // anonymous
		}
		q.CollapseSeries = r.IntN(3) == 0
		if r.IntN(3) == 0 {
			q.Offset, q.Limit = 0, 0 // the total and facets only (countOnly)
		}
		wp, got, err := searchAlongside(t.Context(), x, ref, q)
		if err != nil {
			t.Fatalf("%s: %+v: %v", round, q, err)
		}
		want, wantF := wp.res, wp.facets
		if got.Total != want.Total {
			t.Fatalf("%s: %+v: total %d, want %d", round, q, got.Total, want.Total)
		}
		if !q.Relevance || q.Query == "" {
			gotOcc := occurrencesOf(got)
			if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(gotOcc, want.Occurrences) {
				t.Fatalf("%s: %+v: page %v %q, want %v %q", round, q, got.IDs, gotOcc, want.IDs, want.Occurrences)
			}
		}
		if fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
			t.Fatalf("%s: %+v: facets\n got %v\nwant %v", round, q, got.Facets, wantF)
		}
	}
}

// TestFacetWorkDoesNotGrowWithMatches counts the steps of a query's
// facets (facetIndex.work: counts, cells and postings read, bit set words,
// documents' dates read), not its time: over the same weeks, the facets of
// ten times the matches take the same steps, whether the matches grow by
// a category's events or by a flag the query no longer filters on (a step
// more per kind and week kept); a window that cuts weeks adds at most the
// documents of the two weeks it cuts. The old count visited every match.
func TestFacetWorkDoesNotGrowWithMatches(t *testing.T) {
	t.Parallel()
	x, docs, t0 := workIndex()
	from, to := t0+5*week, t0+45*week
	cutFrom, cutTo := from+3*86400, to+2*86400 // cuts weeks 5 and 45
	facets := []string{search.FacetCategories, search.FacetVenue, search.FacetTags, search.FacetFeatured}
	window := func(from, to int64, f func(q *search.EventQuery)) search.EventQuery {
		q := search.EventQuery{StartGTE: search.Some(from), StartLT: search.Some(to), Facets: facets}
		f(&q)
		return q
	}
	all := func(*search.EventQuery) {}
	pairs := []struct {
		name      string
		few, many search.EventQuery
		edges     bool
		// kinds is how many kinds the many query keeps per kind the few
		// one keeps, when the cells count it: a week's cells of a kind
		// the query does not keep are passed over (addCells), so the
		// steps may grow that many times (not with the matches).
		kinds uint64
	}{
		{"category 1, then category 2", window(from, to, func(q *search.EventQuery) { q.CategoryIDs = []int64{1} }),
			window(from, to, func(q *search.EventQuery) { q.CategoryIDs = []int64{2} }), false, 1},
		{"featured, then every event", window(from, to, func(q *search.EventQuery) { q.Featured = search.Some(true) }),
			window(from, to, all), false, 1},
		{"featured of category 2, then category 2", window(from, to, func(q *search.EventQuery) {
			q.CategoryIDs, q.Featured = []int64{2}, search.Some(true)
		}), window(from, to, func(q *search.EventQuery) { q.CategoryIDs = []int64{2} }), false, 2},
		{"category 1 or 2: featured, then all", window(from, to, func(q *search.EventQuery) {
			q.CategoryIDs, q.Featured = []int64{1, 2}, search.Some(true)
		}), window(from, to, func(q *search.EventQuery) { q.CategoryIDs = []int64{1, 2} }), false, 1},
		{"cut weeks: category 1, then category 2", window(cutFrom, cutTo, func(q *search.EventQuery) { q.CategoryIDs = []int64{1} }),
			window(cutFrom, cutTo, func(q *search.EventQuery) { q.CategoryIDs = []int64{2} }), true, 1},
		{"cut weeks: featured, then every event", window(cutFrom, cutTo, func(q *search.EventQuery) { q.Featured = search.Some(true) }),
			window(cutFrom, cutTo, all), true, 1},
	}
	perWeek := events / weeks
	for _, c := range pairs {
		t.Run(c.name, func(t *testing.T) {
			few, fewWork := facetRun(t, x, docs, c.few)
			many, manyWork := facetRun(t, x, docs, c.many)
			if many < 9*few {
				t.Fatalf("%d matches, then %d: the case does not grow the matches ten times", few, many)
			}
			if fewWork == 0 {
				t.Fatal("no step counted: the facets were not counted from the buckets")
			}
			// The steps grow by at most a step per kind (two) and week,
			// and the documents of the two weeks cut.
			slack := uint64(2 * weeks)
			if c.edges {
				slack += uint64(2 * perWeek)
			}
			if manyWork > c.kinds*fewWork+slack {
				t.Errorf("%d matches: %d steps; %d matches: %d steps (allowed: %d)",
					few, fewWork, many, manyWork, c.kinds*fewWork+slack)
			}
			t.Logf("%d matches: %d steps; %d matches: %d steps", few, fewWork, many, manyWork)
		})
	}
}

// facetRun runs q, checks its facets against the reference, and returns
// its total and the steps its facets took.
func facetRun(t *testing.T, x *Index, docs []search.EventDocument, q search.EventQuery) (int, uint64) {
	t.Helper()
	before := x.facets.work.Load()
	got, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	work := x.facets.work.Load() - before
	if want := searchtest.ExpectedFacets(docs, q); fmt.Sprint(got.Facets) != fmt.Sprint(want) {
		t.Fatalf("%+v: facets\n got %v\nwant %v", q, got.Facets, want)
	}
	return got.Total, work
}

// TestFacetBucketsAtTheEndsOfTime checks the facets of events at the ends
// of int64 and around zero (buckets before and after the epoch, the first
// and last bucket numbers), some ending before they start, against the
// reference, for windows that hold, cut or miss their buckets.
func TestFacetBucketsAtTheEndsOfTime(t *testing.T) {
	t.Parallel()
	facetWidth := defaultKnobs.facetWidth
	starts := []int64{math.MinInt64, math.MinInt64 + 1, -facetWidth - 1, -facetWidth, -1, 0, 1, facetWidth - 1, facetWidth,
		math.MaxInt64 - 1, math.MaxInt64}
	var docs []search.EventDocument
	for i, s := range starts {
		for k := range 3 {
			end := s
			switch k {
			case 1:
				end = s - 10 // ends before it starts
				if end > s {
					end = s
				}
			case 2:
				end = math.MaxInt64
			}
			docs = append(docs, search.EventDocument{
				ID: int64(10*i + k + 1), Status: "publish", Start: s, End: end, CategoryIDs: []int64{int64(1 + k%2)},
				VenueIDs: []int64{int64(i % 3)}, Featured: k == 0,
			})
		}
	}
	x := New()
	x.Apply(docs)
	some := search.Some[int64]
	var none search.Opt[int64]
	for _, tc := range []struct {
		name          string
		gte, lt, endB search.Opt[int64]
	}{
		{"every date", none, none, none},
		{"from zero", some(0), none, none},
		{"before zero", none, some(0), none},
		{"around zero", some(-facetWidth), some(facetWidth), none},
		{"ending by zero", none, none, some(0)},
		{"the last second", some(math.MaxInt64), none, none},
		{"the first second", none, some(math.MinInt64 + 1), none},
	} {
		for _, cats := range [][]int64{nil, {1}, {1, 2}} {
			q := search.EventQuery{StartGTE: tc.gte, StartLT: tc.lt, EndLTE: tc.endB, CategoryIDs: cats, Facets: search.EventFacets}
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if want := searchtest.ExpectedFacets(docs, q); fmt.Sprint(got.Facets) != fmt.Sprint(want) {
				t.Errorf("%s, categories %v: facets\n got %v\nwant %v", tc.name, cats, got.Facets, want)
			}
		}
	}
}

// TestListsByBucketsAgreeWithReference runs the engine's agreement tests
// (generated events and series, changed in rounds, with generated queries
// of every filter, order and page, deep pages found by their start) with
// every list that has list filters, or no candidates at all, read by the
// facet buckets (facetIndex.each), so that its pages and totals are
// checked as the date order's.
func TestListsByBucketsAgreeWithReference(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	t.Run("events", func(t *testing.T) {
		t.Parallel()
		agreesAfterChanges(t, func(k *knobs) { k.bucketListMin, k.bucketBlocks = 0, 0 })
	})
	t.Run("series, pages found by their start", func(t *testing.T) {
		t.Parallel()
		seriesAgree(t, func(k *knobs) { k.bucketListMin, k.bucketBlocks, k.deepOffset = 0, 0, 0 })
	})
}

// The shape of workIndex: events over weeks from a week's start.
const (
	week   = 7 * 86400
	weeks  = 50
	events = 20000
)

// workIndex returns an index of events over weeks weeks from t0 (a
// week's start), its documents and t0: the j-th event of its week (j)
// every one of category 2, one in ten (j%20 < 2) of category 1 too, one in
// ten (j%10 == 0) featured; the events of category 1 have every kind,
// venue and tag that the others have, in each week.
func workIndex() (*Index, []search.EventDocument, int64) {
	const t0 = 1_800_086_400 - 1_800_086_400%week
	docs := make([]search.EventDocument, events)
	for i := range docs {
		j := i / weeks
		start := int64(t0 + (i%weeks)*week + j)
		cats := []int64{2}
		if j%20 < 2 {
			cats = append(cats, 1)
		}
		docs[i] = search.EventDocument{
			ID: int64(i + 1), Status: "publish", Start: start, End: start + 3600, CategoryIDs: cats,
			VenueIDs: []int64{int64(100 + (j/20)%8)}, TagIDs: []int64{int64(200 + (j/20)%3)}, Featured: j%10 == 0,
		}
	}
	x := New()
	x.Apply(docs)
	return x, docs, t0
}

// listSteps is the work lists did so far: the buckets' steps
// (facetIndex.listWork, and work for a total alone) and the date order's
// entries and candidates read (Index.visited: a first page found by
// firstCounted).
func listSteps(x *Index) uint64 {
	return x.facets.listWork.Load() + x.facets.work.Load() + x.visited.Load()
}

// TestListWorkByBucketsDoesNotGrowWithMatches counts the steps of lists
// read by the buckets (facetIndex.listWork; and work, for a total alone,
// which countOnly counts), not their time: the first page of a category's
// events, and a page deep into them, take the same steps for a category
// on ten times the events, and so does their total; reading the
// candidates one by one (as before) took a step per candidate.
func TestListWorkByBucketsDoesNotGrowWithMatches(t *testing.T) {
	t.Parallel()
	x, docs, t0 := workIndex()
	for _, page := range []struct{ offset, limit int }{{0, 10}, {3000, 10}, {0, 0}} {
		t.Run(fmt.Sprintf("offset %d, limit %d", page.offset, page.limit), func(t *testing.T) {
			var totals []int
			var steps []uint64
			for _, cat := range []int64{1, 2} {
				q := search.EventQuery{StartGTE: search.Some(t0), CategoryIDs: []int64{cat}, Offset: page.offset, Limit: page.limit}
				steps0 := listSteps(x)
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				want := searchtest.ExpectedEvents(docs, q)
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
					t.Fatalf("category %d: %d %v, want %d %v", cat, got.Total, got.IDs, want.Total, want.IDs)
				}
				totals, steps = append(totals, got.Total), append(steps, listSteps(x)-steps0)
			}
			if totals[1] < 9*totals[0] {
				t.Fatalf("totals %v: the case does not grow the matches ten times", totals)
			}
			// As many steps, give or take a few per week (a category's
			// documents are numbers or a bit set, of their own length;
			// a week or span counted from the category's cells takes a
			// step per kind, where the week of a page is read).
			if steps[0] == 0 || steps[1] > steps[0]+8*weeks {
				t.Errorf("%d matches: %d steps; %d matches: %d steps (want as many, not none)", totals[0], steps[0], totals[1], steps[1])
			}
			t.Logf("%d matches: %d steps; %d matches: %d steps", totals[0], steps[0], totals[1], steps[1])
		})
	}
}

// TestFacetsWhileWriting runs facet queries and category lists while a
// writer moves, edits and removes events (run it with -race: the buckets
// are read under the read lock, written under the write lock), then
// checks them against the reference once the writes are done.
func TestFacetsWhileWriting(t *testing.T) {
	t.Parallel()
	f := searchtest.Generate(17, 300, 20, 8)
	x := New()
	x.Apply(f.Events)
	cats := categoriesOf(f.Events)
	query := func(i int) search.EventQuery {
		return search.EventQuery{CategoryIDs: []int64{cats[i%len(cats)]}, Facets: search.EventFacets, Limit: i % 3,
			StartGTE: search.Some(f.Events[i%len(f.Events)].Start)}
	}
	live := map[int64]search.EventDocument{}
	for _, d := range f.Events {
		live[d.ID] = d
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(5, 6))
		for range 200 {
			d := f.Events[r.IntN(len(f.Events))]
			d.Start += int64(r.IntN(20*86400)) - 10*86400
			d.End = d.Start + 3600
			d.CategoryIDs = []int64{cats[r.IntN(len(cats))]}
			x.Apply([]search.EventDocument{d})
			live[d.ID] = d
			if r.IntN(4) == 0 {
				id := f.Events[r.IntN(len(f.Events))].ID
				x.Remove([]int64{id})
				delete(live, id)
			}
		}
	}()
	queries := 0
	for running := true; running; queries++ {
		if _, err := x.Search(t.Context(), query(queries)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			running = false
		default:
		}
	}
	docs := make([]search.EventDocument, 0, len(live))
	for _, d := range live {
		docs = append(docs, d)
	}
	for i := range 50 {
		q := query(i)
		got, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		want := searchtest.ExpectedEvents(docs, q)
		if wantF := searchtest.ExpectedFacets(docs, q); got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) ||
			fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
			t.Fatalf("%+v after %d queries during the writes: %d %v %v, want %d %v %v", q, queries, got.Total, got.IDs, got.Facets,
				want.Total, want.IDs, wantF)
		}
	}
}

// TestFacetsOfManyCategories: documents with many categories and tags
// (past the 32 keys categoryCells keeps on its stack, up to 400
// categories, as an import may hold) give the reference's facets and
// totals, for all events and for each category's page (a bucket counted
// by the category's cells), after the load, after a rewrite that takes
// some categories away and after removing half of the documents; with
// every document removed, no bucket is left.
func TestFacetsOfManyCategories(t *testing.T) {
	for _, tc := range []struct {
		name       string
		docs, cats int // documents; categories and tags of the largest
	}{
		{"few", 6, 3},
		{"past the stack keys", 12, 40},
		{"four hundred", 3, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := searchtest.Generate(7, tc.docs, 10, 4)
			docs := slices.Clone(f.Events)
			for i := range docs {
				n := tc.cats - i%3 // sizes differ: not every document holds every category
				docs[i].CategoryIDs, docs[i].TagIDs = nil, nil
				for c := range n {
					docs[i].CategoryIDs = append(docs[i].CategoryIDs, int64(1000+c))
					docs[i].TagIDs = append(docs[i].TagIDs, int64(5000+(c*7)%tc.cats)) // distinct: 7 and the sizes are coprime
				}
			}
			x := New()
			x.Apply(docs)
			check := func(when string, docs []search.EventDocument) {
				t.Helper()
				for _, cat := range []int64{0, 1000, int64(1000 + tc.cats - 1), int64(1000 + tc.cats/2)} {
					q := search.EventQuery{Lang: "en", Limit: 10, Facets: search.EventFacets}
					if cat != 0 {
						q.CategoryIDs = []int64{cat}
					}
					got, err := x.Search(t.Context(), q)
					if err != nil {
						t.Fatal(err)
					}
					want := searchtest.ExpectedEvents(docs, q)
					if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
						t.Fatalf("%s, category %d: total %d %v, want %d %v", when, cat, got.Total, got.IDs, want.Total, want.IDs)
					}
					if want := searchtest.ExpectedFacets(docs, q); fmt.Sprint(got.Facets) != fmt.Sprint(want) {
						t.Fatalf("%s, category %d: facets\n got %v\nwant %v", when, cat, got.Facets, want)
					}
				}
			}
			check("loaded", docs)
			for i := range docs {
				docs[i].CategoryIDs = docs[i].CategoryIDs[:len(docs[i].CategoryIDs)*2/3]
			}
			x.Apply(docs)
			check("rewritten", docs)
			var gone []int64
			for _, d := range docs[:len(docs)/2] {
				gone = append(gone, d.ID)
			}
			x.Remove(gone)
			check("half removed", docs[len(docs)/2:])
			x.Remove(func() (ids []int64) {
				for _, d := range docs {
					ids = append(ids, d.ID)
				}
				return ids
			}())
			if len(x.facets.buckets) != 0 {
				t.Errorf("%d buckets left with every document removed", len(x.facets.buckets))
			}
		})
	}
}

// TestCategoryWorkGrowsWithSpansNotWeeks counts the steps (not the time)
// of a category's facets and of its list's total over windows of 16 to
// 256 weeks, some cutting weeks at both ends: the weeks inside a span the
// dates hold whole are counted from the span's cells at once, so the
// steps are at most those of a span's or a week's cells (the most any
// holds) per whole span and per week at the window's edges (fewer than
// two spans' worth), and the documents of the two weeks the dates cut;
// and the total of a category's list takes a step per kind of each of
// them, and the first week read. Counting each week's cells (as before)
// took a week's cells per week of the window.
func TestCategoryWorkGrowsWithSpansNotWeeks(t *testing.T) {
	t.Parallel()
	const (
		nWeeks  = 256
		perWeek = 24
	)
	t0 := int64(1_800_086_400 - 1_800_086_400%week)
	var docs []search.EventDocument
	for w := range nWeeks {
		for j := range perWeek {
			start := t0 + int64(w)*week + int64(j)*3600
			docs = append(docs, search.EventDocument{
				ID: int64(len(docs) + 1), Status: "publish", Start: start, End: start + 3600,
				CategoryIDs: []int64{int64(1 + j%3)}, VenueIDs: []int64{int64(100 + j%6)}, TagIDs: []int64{int64(200 + j%4)},
				Featured: j%4 == 0,
			})
		}
	}
	x := New()
	x.Apply(docs)
	// The most cells (and kinds) a week or span holds of category 1.
	most, kinds := 0, 0
	for _, bs := range []map[int64]*fbucket{x.facets.buckets, x.facets.spans} {
		for _, b := range bs {
			if cc := b.byCategory[1]; cc != nil {
				most = max(most, len(cc.cs))
			}
			kinds = max(kinds, len(b.kinds))
		}
	}
	span := int64(1) << x.spanShift
	for _, c := range []struct {
		name     string
		from, to int64
	}{
		{"16 weeks", t0, t0 + 16*week},
		{"64 weeks", t0 + 8*week, t0 + 72*week},
		{"256 weeks", t0, t0 + nWeeks*week},
		{"250 weeks, cut at both ends", t0 + 3*week + 86400, t0 + 253*week + 86400},
	} {
		t.Run(c.name, func(t *testing.T) {
			weeksIn := (c.to - c.from + week - 1) / week
			// Whole spans, and at most span-1 weeks at each edge and the
			// two weeks cut.
			units := uint64(weeksIn/span + 2*span)
			q := search.EventQuery{StartGTE: search.Some(c.from), StartLT: search.Some(c.to), CategoryIDs: []int64{1},
				Facets: []string{search.FacetCategories, search.FacetVenue, search.FacetTags}}
			_, steps := facetRun(t, x, docs, q)
			if limit := units*uint64(most) + 2*perWeek; steps == 0 || steps > limit {
				t.Errorf("%d weeks: facets took %d steps (allowed: %d, a week's cells each %d)", weeksIn, steps, limit, uint64(weeksIn)*uint64(most))
			}
			q.Facets, q.Limit = nil, 8
			before := x.facets.listWork.Load()
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if want := searchtest.ExpectedEvents(docs, q); got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
				t.Fatalf("list: %d %v, want %d %v", got.Total, got.IDs, want.Total, want.IDs)
			}
			listSteps := x.facets.listWork.Load() - before
			if limit := units*uint64(kinds) + 4*perWeek; listSteps > limit {
				t.Errorf("%d weeks: the list took %d steps (allowed: %d)", weeksIn, listSteps, limit)
			}
			t.Logf("%d weeks: facets %d steps, list %d steps (%d cells, %d kinds at most)", weeksIn, steps, listSteps, most, kinds)
		})
	}
}
