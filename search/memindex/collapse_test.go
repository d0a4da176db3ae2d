package memindex

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// collapseDocs returns single events and series over two years from now:
// weekly series of up to 105 occurrences (every twentieth occurrence with
// an override, another title or status, when overrides), a few daily series and a few
// monthly ones (gaps of 30 days), long events, every status and flag,
// and now.
func collapseDocs(singles, series int, overrides bool) ([]search.EventDocument, int64) {
	r := rand.New(rand.NewPCG(11, 12))
	const now, day = int64(1_800_000_000), int64(86400)
	statuses := []string{"publish", "publish", "publish", "publish", "draft", "private", "future"}
	var docs []search.EventDocument
	base := func(id int64) search.EventDocument {
		start := now + int64(r.IntN(730*24)-60*24)*3600
		d := search.EventDocument{ID: id, Status: statuses[r.IntN(len(statuses))], Start: start, End: start + int64(r.IntN(5))*3600,
			PublishDate: now - id, Featured: r.IntN(4) == 0, Ticketed: r.IntN(3) == 0, HideFromListings: r.IntN(30) == 0,
			HasPassword: r.IntN(30) == 0, CategoryIDs: []int64{id % 7},
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("%s %d", benchWords[r.IntN(len(benchWords))], id)}}}
		if r.IntN(200) == 0 {
			d.End = start + 20*day
		}
		return d
	}
	for i := range singles {
		docs = append(docs, base(int64(i+1)))
	}
	for s := range series {
		d := base(int64(singles + s + 1))
		every, n := 7*day, 1+r.IntN(105)
		switch s % 20 {
		case 0:
			every, n = day, 2+r.IntN(60)
		case 1:
			every, n = 30*day, 2+r.IntN(24)
		}
		for k := range n {
			o := d
			o.Occurrence = fmt.Sprintf("k%03d", k)
			o.Start, o.End = d.Start+int64(k)*every, d.End+int64(k)*every
			if overrides && k%20 == 19 {
				if r.IntN(2) == 0 {
					o.Text = map[string]search.Text{"en": {Title: fmt.Sprintf("changed %d", k)}}
				} else {
					o.Status = statuses[r.IntN(len(statuses))]
				}
			}
			docs = append(docs, o)
		}
	}
	return docs, now
}

// collapsedQuery draws a collapsed list over collapseDocs' dates: the
// upcoming events, a month, a week, a day, from a date, up to a date, or
// a start and an end bound (cutting series); anonymous, an editor's or
// one status; featured sometimes; the first pages, pages deeper than
// collapsedPageMax, past the last; the total alone; and now and then a
// category, a word or facets (which take the path that decides groups).
func collapsedQuery(r *rand.Rand, now int64, pageMax int) search.EventQuery {
	const day = int64(86400)
	q := search.EventQuery{Lang: "en", CollapseSeries: true, Limit: 1 + r.IntN(20)}
	from := now + int64(r.IntN(800)-100)*day + int64(r.IntN(86400))
	switch r.IntN(8) {
	case 0:
		q.EndGT = search.Some(now)
	case 1:
		q.StartGTE, q.EndLTE = search.Some(from), search.Some(from+30*day)
	case 2:
		q.StartGTE, q.EndLTE = search.Some(from), search.Some(from+7*day)
	case 3:
		q.StartGTE, q.StartLT = search.Some(from), search.Some(from+day)
	case 4:
		q.StartGT = search.Some(from)
	case 5:
		q.EndLT = search.Some(from)
	case 6:
		q.StartGTE, q.EndLTE = search.Some(now), search.Some(now+2*366*day)
	default:
		q.EndGT, q.EndLTE = search.Some(from), search.Some(from+int64(r.IntN(400))*day)
	}
	switch r.IntN(4) {
	case 0, 1:
		q.Statuses, q.ExcludeHidden, q.ExcludeProtected = []string{"publish"}, true, true
	case 2:
		q.Statuses = []string{"publish", "draft", "private", "future"}
	default:
		q.Statuses = []string{[]string{"draft", "private", "future"}[r.IntN(3)]}
	}
	if r.IntN(4) == 0 {
		q.Featured = search.Some(r.IntN(2) == 0)
	}
	switch r.IntN(8) {
	case 0:
		q.Offset = r.IntN(pageMax)
	case 1:
		q.Offset = pageMax + r.IntN(3000)
	case 2:
		q.Offset, q.Limit = 0, 0
	case 3:
		q.Offset = 1_000_000
	default:
		q.Offset = r.IntN(40)
	}
	switch r.IntN(12) {
	case 0:
		q.CategoryIDs = []int64{int64(r.IntN(7))}
	case 1:
		q.Query = benchWords[r.IntN(len(benchWords))]
	case 2:
		q.Facets = []string{search.FacetCategories}
	}
	return q
}

// TestCollapsedByBucketsAgreesWithReference compares generated collapsed
// lists (collapsedQuery) with the reference over 3,000 single events and
// 600 series (weekly, daily, monthly, with overrides), after the bulk
// load and after writes (series moved, retitled, restatused, removed and
// written back), and checks that most took the path that decides no
// group (collapsedByBuckets), with 1,024-second buckets too (many buckets
// to a page), and with collapsedPageMax at 16 over series without
// overrides (most pages found by their start: deepCollapsed), and with
// dirtyMax at 3 (the writes drop the spans: the next list builds them
// anew).
func TestCollapsedByBucketsAgreesWithReference(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	week, dirtyMax := defaultKnobs.facetWidth, defaultKnobs.dirtyMax
	for _, c := range []struct {
		width, pageMax int64
		overrides      bool
		dirtyMax       int
	}{{week, 2048, true, dirtyMax}, {1024, 2048, true, dirtyMax}, {week, 16, false, dirtyMax}, {1024, 16, false, dirtyMax},
		{week, 2048, true, 3}} {
		t.Run(fmt.Sprint(c.width, "/", c.pageMax, "/", c.overrides, "/", c.dirtyMax), func(t *testing.T) {
			t.Parallel()
			all, now := collapseDocs(3000, 600, c.overrides)
			width := c.width
			ls := newLiveSeries(all)
			ls.x.facetWidth, ls.x.collapsedPageMax, ls.x.dirtyMax = c.width, int(c.pageMax), c.dirtyMax
			ls.write(ls.order)
			x, ref := ls.x, searchtest.NewReference(all)
			r := rand.New(rand.NewPCG(13, uint64(width)))
			byBuckets, queries := 0, 400
			for i := range queries {
				if i == queries/2 {
					ref = searchtest.NewReference(agreeWrites(r, ls))
				}
				q := collapsedQuery(r, now, int(c.pageMax))
				d0 := x.decided.Load()
				var (
					got search.Result
					err error
				)
				want := alongside(func() { got, err = x.Search(t.Context(), q) }, func() search.Result { return ref.Events(q) })
				if err != nil {
					t.Fatal(err)
				}
				if x.decided.Load() == d0 {
					byBuckets++
				}
				gotOcc := occurrencesOf(got)
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(gotOcc, want.Occurrences) {
					t.Fatalf("query %d %+v:\ngot  total %d, %v %q\nwant total %d, %v %q", i, q,
						got.Total, got.IDs, gotOcc, want.Total, want.IDs, want.Occurrences)
				}
			}
			t.Logf("%d of %d queries decided no group", byBuckets, queries)
			if byBuckets < queries/3 {
				t.Errorf("%d of %d queries decided no group: the path that decides none is not exercised", byBuckets, queries)
			}
		})
	}
}

// TestGroupsInDatesBounds checks the counted groups' conditions on the
// bounds of a plan: which bounds it counts from, and that gaps wider than
// the dates make it decline.
func TestGroupsInDatesBounds(t *testing.T) {
	const week = int64(7 * 86400)
	x := New()
	var docs []search.EventDocument
	for s := range 4 {
		for k := range 10 {
			st := int64(s)*3600 + int64(k)*week
			docs = append(docs, search.EventDocument{ID: int64(s + 1), Occurrence: fmt.Sprint(k), Status: "publish", Start: st, End: st + 3600,
				Text: map[string]search.Text{"en": {Title: "x"}}})
		}
	}
	x.Apply(docs)
	inf, ninf := int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range []struct {
		name                               string
		startMin, startMax, endMin, endMax int64
		want                               int
		ok                                 bool
	}{
		{"no bounds", ninf, inf, ninf, inf, 4, true},
		{"from the third week", 2 * week, inf, ninf, inf, 4, true},
		{"after the last", 10 * week, inf, ninf, inf, 0, true},
		{"up to a week (as wide as a gap)", ninf, week, ninf, inf, 4, true},
		{"a day (narrower than a gap)", week, week + 86400, ninf, inf, 0, false},
		{"a start and an end bound", week, 3 * week, ninf, 3 * week, 4, true},
		{"an end bound below", ninf, inf, 9*week + 3600 + 2*3600, inf, 2, true},
		{"both end bounds", ninf, inf, 0, 5 * week, 4, true},
		{"a start bound a duration below the end bound", ninf, 3 * week, ninf, 4 * week, 4, true},
		{"a start bound within a duration of the end bound", ninf, 4*week - 1800, ninf, 4 * week, 0, false},
	} {
		p := &plan{startMin: c.startMin, startMax: c.startMax, endMin: c.endMin, endMax: c.endMax}
		got, ok := p.groupsInDates(x)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkGroupSpans measures the build of the groups' spans that the
// first collapsed list after a write to a group pays (groupSpans), over
// 50,000 groups: all anew, and after a write changed one group (merged)
// or 20 (a write of 2,000 occurrences): go test ./search/memindex -run
// '^$' -bench GroupSpans.
func BenchmarkGroupSpans(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var docs []search.EventDocument
	for s := range 50000 {
		st := int64(1_800_000_000) + int64(r.IntN(730*24))*3600
		for k := range 3 {
			o := st + int64(k)*7*86400
			docs = append(docs, search.EventDocument{ID: int64(s + 1), Occurrence: fmt.Sprint(k), Status: "publish", Start: o, End: o + 3600,
				Featured: s%5 == 0, Text: map[string]search.Text{"en": {Title: "x"}}})
		}
	}
	x := New()
	x.Apply(docs)
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, changed := range []int{0, 1, 20} {
		name := fmt.Sprintf("%d changed", changed)
		if changed == 0 {
			name = "all anew"
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				// (As a write does, under the write lock: nothing else
				// runs here.)
				if changed == 0 {
					x.collapse.spans.Store(nil)
					x.collapse.gen++
				}
				for k := range changed {
					x.collapse.touch(x.groups[(i*changed+k)%len(x.groups)], x.groups)
				}
				x.groupSpans()
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestCollapsedWhileWriting runs collapsed lists on three goroutines
// while a writer rewrites, moves and removes series (run it with -race:
// the groups' spans are built by queries under the read lock, ordered by
// spansMu, from the groups that writers change under the write lock),
// then checks them against the reference once the writes are done.
func TestCollapsedWhileWriting(t *testing.T) {
	t.Parallel()
	all, now := collapseDocs(300, 60, false)
	ls := newLiveSeries(all)
	ls.write(ls.order)
	query := func(i int) search.EventQuery {
		return search.EventQuery{Lang: "en", CollapseSeries: true, Statuses: []string{"publish"}, Limit: 10, Offset: i % 40,
			StartGTE: search.Some(now + int64(i%30)*86400), EndLTE: search.Some(now + 700*86400)}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := rand.New(rand.NewPCG(9, 10))
		for range 60 {
			id := ls.order[300+r.IntN(60)] // a series
			docs := slices.Clone(ls.live[id])
			shift := int64(r.IntN(20*86400)) - 10*86400
			for k := range docs {
				docs[k].Start, docs[k].End = docs[k].Start+shift, docs[k].End+shift
			}
			if len(docs) > 0 {
				ls.live[id] = docs
				ls.write([]int64{id})
			}
			if r.IntN(5) == 0 {
				ls.removeSome(r, 60)
			}
		}
	}()
	errs := make(chan error, 3)
	for g := range 3 {
		go func() {
			for i := g; ; i += 3 {
				if _, err := ls.x.Search(t.Context(), query(i)); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
			}
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	docs := ls.all()
	for i := range 40 {
		q := query(i)
		got, err := ls.x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if want := searchtest.ExpectedEvents(docs, q); got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
			t.Fatalf("%+v after the writes: %d %v, want %d %v", q, got.Total, got.IDs, want.Total, want.IDs)
		}
	}
}
