package memindex

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// eventEngine is the index behind the event half of search.Engine, so that
// the conformance suite's series part runs on it directly.
type eventEngine struct{ x *Index }

func (e eventEngine) Init(context.Context) error { return nil }
func (e eventEngine) IndexEvents(_ context.Context, docs []search.EventDocument) error {
	e.x.Apply(docs)
	return nil
}
func (e eventEngine) IndexPlaces(context.Context, []search.PlaceDocument) error { return nil }
func (e eventEngine) DeleteEvents(_ context.Context, ids []int64) error {
	e.x.Remove(ids)
	return nil
}
func (e eventEngine) DeletePlaces(context.Context, search.PlaceKind, []int64) error { return nil }
func (e eventEngine) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	return e.x.Search(ctx, q)
}
func (e eventEngine) SearchPlaces(context.Context, search.PlaceQuery) (search.Result, error) {
	return search.Result{}, nil
}
func (e eventEngine) CountEvents(context.Context) (int, error)                   { return e.x.Count(), nil }
func (e eventEngine) CountPlaces(context.Context, search.PlaceKind) (int, error) { return 0, nil }
func (e eventEngine) Ping(context.Context) error                                 { return nil }
func (e eventEngine) Close() error                                               { return nil }

// TestSeriesConformance runs the suite's recurring-events part on the
// index: occurrences filtered, counted, collapsed and paged as the
// reference says, and writes replacing all the documents of an event,
// linked one word per chunk (every document's words over many holds of
// the lock). The usual chunk size runs the same part through the
// embedded engine (search/embedded's TestConformance/Series), whose event
// queries this index answers. It runs again with every query that has
// candidates paged and counted by firstCounted and rankedTiers.
func TestSeriesConformance(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	d := defaultKnobs
	for _, c := range []struct{ counted, mode int }{{d.minCounted, d.countedMode}, {0, countFromKinds}, {0, countInside}} {
		t.Run(fmt.Sprintf("counted from %d candidates", c.counted), func(t *testing.T) {
			t.Parallel()
			searchtest.RunSeries(t, func(*testing.T) search.Engine {
				return eventEngine{newWith(func(k *knobs) { k.chunkWords, k.holdWords, k.minCounted, k.countedMode = 1, 1, c.counted, c.mode })}
			})
		})
	}
}

// TestEntryStays32Bytes: the series number lives in the entry's padding;
// the date order's memory does not grow with it.
func TestEntryStays32Bytes(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(entry{}); n != 32 {
		t.Errorf("entry is %d bytes, want 32", n)
	}
}

// TestSeriesNumbersAreReused: a series that leaves gives its number back,
// so the collapsed lists' bit set stays as large as the series indexed at
// once, not all that ever were.
func TestSeriesNumbersAreReused(t *testing.T) {
	t.Parallel()
	x := New()
	base := search.EventDocument{Status: "publish", Text: map[string]search.Text{"en": {Title: "Weekly"}}}
	for round := range 50 {
		a, b := base, base
		a.ID, b.ID = int64(2*round+1), int64(2*round+2)
		x.Apply(append(searchtest.Occurrences(a, 3, 7*86400), searchtest.Occurrences(b, 2, 86400)...))
		b.Occurrence = ""
		x.Apply([]search.EventDocument{b}) // series b becomes a single event
		x.Remove([]int64{a.ID})
		x.Remove([]int64{b.ID})
	}
	if x.seriesMax > 2 || len(x.seriesOf) != 0 {
		t.Errorf("after 100 series came and went: %d numbers given, %d held; want at most 2 and 0", x.seriesMax, len(x.seriesOf))
	}
}

// TestSeriesAgreeWithReferenceAfterChanges indexes generated events of
// which many are series with overrides (searchtest.WithSeries), then
// edits whole series (a new text for every occurrence, an override of
// one, a series made single and a single made a series), removes and
// restores events, and checks generated queries (with and without
// CollapseSeries) against the reference after each round: the groups of
// uniform occurrences and the date order must agree on every filter,
// total, page, occurrence key and facet.
func TestSeriesAgreeWithReferenceAfterChanges(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	d := defaultKnobs
	for _, c := range []struct{ chunk, deep, counted, mode int }{
		{d.chunkWords, d.deepOffset, d.minCounted, d.countedMode}, {3, 0, d.minCounted, d.countedMode},
		// Every page with candidates walked and counted by firstCounted,
		// from the kinds' cardinalities, or else inside the dates.
		{3, 0, 0, countFromKinds}, {3, 0, 0, countInside},
	} {
		t.Run(fmt.Sprintf("chunks of %d words, pages found by their start past offset %d, counted from %d candidates, counting mode %d", c.chunk, c.deep, c.counted, c.mode), func(t *testing.T) {
			t.Parallel()
			seriesAgree(t, func(k *knobs) {
				k.chunkWords, k.holdWords, k.deepOffset, k.minCounted, k.countedMode = c.chunk, min(k.holdWords, c.chunk), c.deep, c.counted, c.mode
			})
		})
	}
}

// seriesAgree is TestSeriesAgreeWithReferenceAfterChanges with the knobs
// that tune sets (nil: the defaults) on its index.
func seriesAgree(t *testing.T, tune func(*knobs)) {
	f := searchtest.Generate(9, 400, 30, 12)
	fs := searchtest.WithSeries(f)
	r := rand.New(rand.NewPCG(21, 22))
	ls := newLiveSeries(fs.Events)
	if tune != nil {
		tune(ls.x.knobs)
	}
	x, live, order, write, all := ls.x, ls.live, ls.order, ls.write, ls.all
	write(order[:1])
	write(order[1:9])
	write(order[9:])
	if len(x.groups) == 0 {
		t.Fatal("no group of uniform occurrences: the test does not exercise groups")
	}
	checkSeries(t, "indexed", x, all(), f, r)
	const day = 86400
	for round := 1; round <= 3; round++ {
		var changed []int64
		for _, id := range order {
			docs := live[id]
			if len(docs) == 0 || r.IntN(4) > 0 {
				continue
			}
			switch k := r.IntN(5); {
			case k == 0 && docs[0].Occurrence != "":
				// Every occurrence gets another title: a new template.
				for i := range docs {
					docs[i].Text = retitled(docs[i].Text, fmt.Sprintf("round%d", round))
				}
			case k == 1 && len(docs) > 2:
				// One occurrence gets an override (a venue, featured).
				i := r.IntN(len(docs))
				docs[i].VenueIDs, docs[i].Featured = []int64{f.Venues[r.IntN(len(f.Venues))].ID}, !docs[i].Featured
			case k == 2 && docs[0].Occurrence != "":
				// The series becomes a single event.
				one := docs[0]
				one.Occurrence = ""
				docs = []search.EventDocument{one}
			case k == 3 && docs[0].Occurrence == "":
				// A single event becomes a series, daily.
				docs = searchtest.Occurrences(docs[0], 2+r.IntN(20), day)
			default:
				// Moved: every occurrence an hour later.
				for i := range docs {
					docs[i].Start += 3600
					docs[i].End += 3600
				}
			}
			live[id] = docs
			changed = append(changed, id)
		}
		write(changed)
		gone, saved := ls.removeSome(r, 8)
		checkSeries(t, fmt.Sprintf("round %d, removed", round), x, all(), f, r)
		back := gone[:len(gone)/2]
		for _, id := range back {
			live[id] = saved[id]
		}
		write(back)
		checkSeries(t, fmt.Sprintf("round %d", round), x, all(), f, r)
	}
	x.Remove(order)
	if x.Count() != 0 || len(x.groups) != 0 || x.nGrouped != 0 || !x.reps.IsEmpty() || !x.grouped.IsEmpty() || len(x.order) != 0 {
		t.Fatalf("after removing everything: %d documents, %d groups, %d grouped, %d representatives, %d blocks",
			x.Count(), len(x.groups), x.nGrouped, x.reps.GetCardinality(), len(x.order))
	}
}

// retitled returns text with word added to every language's title.
func retitled(text map[string]search.Text, word string) map[string]search.Text {
	out := make(map[string]search.Text, len(text))
	for l, t := range text {
		t.Title += " " + word
		out[l] = t
	}
	return out
}

// checkSeries runs generated queries, half of them collapsed, against x
// and the reference over docs: totals, pages with their occurrence keys,
// and facets.
func checkSeries(t *testing.T, round string, x *Index, docs []search.EventDocument, f *searchtest.Fixtures, r *rand.Rand) {
	t.Helper()
	if x.Count() != len(docs) {
		t.Fatalf("%s: Count %d, want %d", round, x.Count(), len(docs))
	}
	ref := searchtest.NewReference(docs)
	for i := 0; i < 400; i++ {
		q := randomQuery(r, f, docs)
		q.CollapseSeries = r.IntN(2) == 0
		wp, got, err := searchAlongside(t.Context(), x, ref, q)
		if err != nil {
			t.Fatalf("%s: %+v: %v", round, q, err)
		}
		want, wantF := wp.res, wp.facets
		if q.Relevance && q.Query != "" {
			want = rankedReference(x, ref, q)
		}
		if got.Total != want.Total {
			t.Fatalf("%s: %+v: total %d, want %d", round, q, got.Total, want.Total)
		}
		gotOcc := occurrencesOf(got)
		if !slices.Equal(got.IDs, want.IDs) || !slices.Equal(gotOcc, want.Occurrences) {
			t.Fatalf("%s: %+v: page %v %q, want %v %q", round, q, got.IDs, gotOcc, want.IDs, want.Occurrences)
		}
		if fmt.Sprint(got.Facets) != fmt.Sprint(wantF) {
			t.Fatalf("%s: %+v: facets %v, want %v", round, q, got.Facets, wantF)
		}
	}
}

// rankedReference returns the page of a relevance query by brute force:
// the reference's matches (searchtest), each scored by the index's own
// scores (the reference has none), sorted by score, date, ID and
// occurrence key, each series' first kept when collapsed.
func rankedReference(x *Index, ref *searchtest.Reference, q search.EventQuery) search.Result {
	whole := q
	whole.Offset, whole.Limit, whole.CollapseSeries = 0, ref.Len()+1, false
	all := ref.Events(whole)
	p := x.plan(q)
	type hit struct {
		id    int64
		occ   string
		score float64
		date  int64
	}
	hits := make([]hit, len(all.IDs))
	for i, id := range all.IDs {
		occ := all.Occurrence(i)
		slot, _ := x.slotOf(docKey{id, occ})
		date := x.ents[slot].start
		if q.Sort == search.ByPublishDate {
			date = x.bodyOf(slot).pub
		}
		hits[i] = hit{id: id, occ: occ, score: p.score(slot), date: date}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.date, b.date), cmp.Compare(a.id, b.id), cmp.Compare(a.occ, b.occ))
	})
	if q.CollapseSeries {
		seen := map[int64]bool{}
		hits = slices.DeleteFunc(hits, func(h hit) bool {
			if h.occ == "" {
				return false
			}
			dup := seen[h.id]
			seen[h.id] = true
			return dup
		})
	}
	res := search.Result{Total: len(hits), IDs: []int64{}, Occurrences: []string{}}
	for _, h := range hits[min(max(q.Offset, 0), len(hits)):min(max(q.Offset, 0)+max(q.Limit, 0), len(hits))] {
		res.IDs = append(res.IDs, h.id)
		res.Occurrences = append(res.Occurrences, h.occ)
	}
	return res
}

// liveSeries is an index under test fed with the documents of generated
// events and series, kept by event (live) in the order they first came
// (order): write applies the current documents of some events, all
// returns every event's.
type liveSeries struct {
	x     *Index
	live  map[int64][]search.EventDocument
	order []int64
}

// newLiveSeries returns an empty index and the documents of events by
// event.
func newLiveSeries(events []search.EventDocument) *liveSeries {
	ls := &liveSeries{x: New(), live: map[int64][]search.EventDocument{}}
	for _, d := range events {
		if _, ok := ls.live[d.ID]; !ok {
			ls.order = append(ls.order, d.ID)
		}
		ls.live[d.ID] = append(ls.live[d.ID], d)
	}
	return ls
}

// write applies the current documents of the events ids.
func (ls *liveSeries) write(ids []int64) {
	var docs []search.EventDocument
	for _, id := range ids {
		docs = append(docs, ls.live[id]...)
	}
	ls.x.Apply(docs)
}

// all returns the current documents of every event, in order.
func (ls *liveSeries) all() []search.EventDocument {
	var docs []search.EventDocument
	for _, id := range ls.order {
		docs = append(docs, ls.live[id]...)
	}
	return docs
}

// removeSome removes about one in oneIn of the events still there (r
// draws them) from the index and from live, and returns them with their
// documents.
func (ls *liveSeries) removeSome(r *rand.Rand, oneIn int) ([]int64, map[int64][]search.EventDocument) {
	var gone []int64
	for _, id := range ls.order {
		if len(ls.live[id]) > 0 && r.IntN(oneIn) == 0 {
			gone = append(gone, id)
		}
	}
	ls.x.Remove(gone)
	saved := map[int64][]search.EventDocument{}
	for _, id := range gone {
		saved[id] = ls.live[id]
		delete(ls.live, id)
	}
	return gone, saved
}

// TestListsDecideNoGroup counts the groups that queries decide and the
// steps they take (Index.decided, listSteps), not their time, over
// weekly series of 60 occurrences and single events, first with 40
// series, then with 400: a list without words or IDs (the default
// window, a category, facets, a radius, a deep page, the total alone)
// decides no group and reads the series' occurrences in the facet
// buckets (with 400 series, in under a quarter as many steps as it has
// matches); a search
// decides only the groups it matches; the first pages of a collapsed list
// and its deep pages decide none either (collapsedByBuckets,
// deepCollapsed). Before the buckets held the groups' members,
// every list decided every group.
func TestListsDecideNoGroup(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const weeks, week = 60, 7 * 86400
	build := func(series int) (*Index, []search.EventDocument) {
		var docs []search.EventDocument
		for s := range series + 200 {
			id := int64(s + 1)
			text := search.Text{Title: fmt.Sprintf("concert %d", s)}
			if s%10 == 0 {
				text.Title = fmt.Sprintf("opera %d", s)
			}
			d := search.EventDocument{ID: id, Status: "publish", PublishDate: 5, CategoryIDs: []int64{id % 3}, VenueIDs: []int64{id % 5},
				HasGeo: true, Geo: &search.GeoPoint{Lat: 48 + float64(id%5), Lng: 2}, Text: map[string]search.Text{"en": text}}
			start := int64(s%weeks)*week + int64(s)*60
			if s >= series {
				d.Start, d.End = start, start+3600
				docs = append(docs, d)
				continue
			}
			for k := range weeks {
				o := d
				o.Occurrence = fmt.Sprintf("k%03d", k)
				o.Start, o.End = int64(k)*week+int64(s)*60, int64(k)*week+int64(s)*60+3600
				docs = append(docs, o)
			}
		}
		x := newWith(func(k *knobs) { k.bucketBlocks = 0 }) // (a small index: the buckets read its lists as a large one's)
		x.Apply(docs)
		return x, docs
	}
	window := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, StartGTE: search.Some(int64(5 * week)), EndLTE: search.Some(int64(50 * week)), Limit: 10}
	with := func(f func(q *search.EventQuery)) search.EventQuery {
		q := window
		f(&q)
		return q
	}
	lists := []struct {
		name string
		q    search.EventQuery
	}{
		{"the window", window},
		{"a category", with(func(q *search.EventQuery) { q.CategoryIDs = []int64{1} })},
		{"facets", with(func(q *search.EventQuery) { q.Facets = []string{search.FacetCategories, search.FacetVenue} })},
		{"a radius", with(func(q *search.EventQuery) {
			q.Near = search.Some(search.GeoCircle{Center: search.GeoPoint{Lat: 48, Lng: 2}, RadiusKm: 10})
		})},
		{"a deep page", with(func(q *search.EventQuery) { q.Offset = 3000 })},
		{"the total alone", with(func(q *search.EventQuery) { q.Limit = 0 })},
	}
	for _, series := range []int{40, 400} {
		x, docs := build(series)
		if len(x.groups) != series {
			t.Fatalf("%d groups, want %d", len(x.groups), series)
		}
		check := func(name string, q search.EventQuery) (decided, steps uint64, total int) {
			d0, s0 := x.decided.Load(), listSteps(x)
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := searchtest.ExpectedEvents(docs, q)
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
				t.Fatalf("%d series, %s: total %d, page %v; want %d, %v", series, name, got.Total, got.IDs, want.Total, want.IDs)
			}
			return x.decided.Load() - d0, listSteps(x) - s0, got.Total
		}
		for _, l := range lists {
			decided, steps, total := check(l.name, l.q)
			if decided != 0 {
				t.Errorf("%d series, %s: %d groups decided, want none", series, l.name, decided)
			}
			if series == 400 && (total < 3000 || steps*4 > uint64(total)) {
				t.Errorf("%d series, %s: %d steps for %d matches, want under a quarter (of at least 3,000)", series, l.name, steps, total)
			}
			t.Logf("%d series, %s: %d steps, %d matches", series, l.name, steps, total)
		}
		if decided, _, _ := check("a search", with(func(q *search.EventQuery) { q.Query = "opera" })); decided > uint64(series/10+1) {
			t.Errorf("%d series, a search: %d groups decided, want at most the %d it matches", series, decided, series/10+1)
		}
		if decided, steps, _ := check("collapsed", with(func(q *search.EventQuery) { q.CollapseSeries = true })); decided != 0 || steps > 4000 {
			t.Errorf("%d series, collapsed: %d groups decided, %d steps; want none, and at most 4,000 steps", series, decided, steps)
		} else {
			t.Logf("%d series, collapsed: %d steps", series, steps)
		}
		x.collapsedPageMax = 16 // (a small index: its deep pages are found by their start, as a large one's; no query runs meanwhile)
		decided, steps, _ := check("collapsed, a deep page", with(func(q *search.EventQuery) { q.CollapseSeries, q.Offset = true, 300 }))
		if decided != 0 || steps > 20000 {
			t.Errorf("%d series, collapsed, a deep page: %d groups decided, %d steps; want none, and at most 20,000 steps", series, decided, steps)
		} else {
			t.Logf("%d series, collapsed, a deep page: %d steps", series, steps)
		}
	}
}
