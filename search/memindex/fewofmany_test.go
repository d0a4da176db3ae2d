package memindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// fewOfManyDocs returns the load benchmark's shape in small: weekly
// series that all start in the week from now (an occurrence of each in
// every week), single events over the weeks, many of them at the same
// hour, in two categories.
func fewOfManyDocs(now int64, series, singles, weeks int) []search.EventDocument {
	r := rand.New(rand.NewPCG(7, 8))
	var docs []search.EventDocument
	id := int64(1)
	for range series {
		start := now + int64(r.IntN(7*24))*3600
		d := search.EventDocument{ID: id, Status: "publish", CategoryIDs: []int64{1 + id%2},
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("series %d", id)}}}
		for k := range weeks {
			o := d
			o.Start = start + int64(k)*7*86400
			o.End = o.Start + 7200
			o.Occurrence = fmt.Sprintf("k%03d", k)
			docs = append(docs, o)
		}
		id++
	}
	for range singles {
		start := now + int64(r.IntN(weeks*7*24))*3600
		docs = append(docs, search.EventDocument{ID: id, Status: "publish", Start: start, End: start + 3600,
			CategoryIDs: []int64{1 + id%2}, Featured: r.IntN(3) == 0,
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("single %d", id)}}})
		id++
	}
	return docs
}

// TestBucketListsOrderFewOfMany: a list read by the buckets whose dates
// cut a week holding many matches (every series' occurrence of that
// week) orders only its page's first matches and the ties of the last
// start, not every match of the week (facetIndex.ordered), and still
// reads the first offset+limit matches in the date order, then every
// other match once: with each's skip refusing to count, without a skip
// (a list with candidates), and through Search (against the reference).
func TestBucketListsOrderFewOfMany(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const now = int64(1_800_000_000)
	docs := fewOfManyDocs(now, 600, 900, 12)
	x := newWith(func(k *knobs) { k.bucketListMin, k.bucketBlocks = 0, 0 }) // every list of the window read by the buckets
	x.Apply(docs)
	if x.nGrouped == 0 {
		t.Fatal("no groups: the series' occurrences should form groups")
	}
	for _, c := range []struct {
		name          string
		from          int64
		offset, limit int
		categories    []int64
		featured      bool
	}{
		{"default list", now + 3600, 0, 10, nil, false},
		{"first match", now + 3600, 0, 1, nil, false},
		{"page 3", now + 3600, 20, 10, nil, false},
		{"a category, from the third day", now + 2*86400 + 1800, 0, 10, []int64{2}, false},
		{"featured, from the next week's middle", now + 10*86400, 0, 5, nil, true},
		{"a deep page (every match ordered)", now + 3600, 300, 50, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, StartGTE: search.Some(c.from),
				EndLTE: search.Some(now + 2*366*86400), Offset: c.offset, Limit: c.limit, CategoryIDs: c.categories}
			if c.featured {
				q.Featured = search.Some(true)
			}
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := searchtest.ExpectedEvents(docs, q)
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(occurrences(got), want.Occurrences) {
				t.Fatalf("page %v %q of %d, want %v %q of %d", got.IDs, occurrences(got), got.Total, want.IDs, want.Occurrences, want.Total)
			}
			// The first offset+limit matches of the reference, in order.
			need := c.offset + c.limit
			head := q
			head.Offset, head.Limit = 0, need
			first := searchtest.ExpectedEvents(docs, head)
			skips := []struct {
				name string
				fn   func(n int) bool
			}{{"skip refusing", func(int) bool { return false }}}
			if len(c.categories) > 0 {
				// (Without candidates the buckets read a list only for a
				// caller that counts: takes.)
				skips = append(skips, skips[0])
				skips[1].name, skips[1].fn = "no skip", nil
			}
			for _, skip := range skips {
				p := x.plan(q)
				p.decideGroups(x, q.Limit)
				before := x.facets.ordered.Load()
				var read []uint32
				p.each(x, need, func(e *entry) { read = append(read, e.slot) }, skip.fn)
				ordered := x.facets.ordered.Load() - before
				if len(read) != want.Total {
					t.Fatalf("%s: read %d matches, want %d", skip.name, len(read), want.Total)
				}
				seen := map[uint32]bool{}
				for _, slot := range read {
					if seen[slot] {
						t.Fatalf("%s: slot %d read twice", skip.name, slot)
					}
					seen[slot] = true
				}
				for i := range min(need, len(read)) {
					r := &x.rows[read[i]]
					if r.id != first.IDs[i] || x.occNames.occString(r.occ) != first.Occurrence(i) {
						t.Fatalf("%s: match %d is %d %q, want %d %q", skip.name, i, r.id, x.occNames.occString(r.occ), first.IDs[i], first.Occurrence(i))
					}
				}
				// A page of few: its matches and the ties of its last
				// start (a few an hour here), not the week's hundreds.
				if limit := uint64(need*fewFirst + 64); need*fewFirst <= 600 && ordered > limit {
					t.Errorf("%s: %d matches ordered for the first %d, want at most %d", skip.name, ordered, need, limit)
				}
			}
		})
	}
}

// occurrences returns the occurrence keys of a result's page.
func occurrences(res search.Result) []string {
	out := make([]string, len(res.IDs))
	for i := range res.IDs {
		out[i] = res.Occurrence(i)
	}
	return out
}

// TestCollapsedWalkOrdersFewOfMany: a collapsed list read by the buckets
// (walkCollapsed, and deepCollapsed's walk from its page's start) over a
// week holding an occurrence of every series orders only its page's
// first matches and the ties of their last start (facetIndex.ordered),
// not the week's every match, and lists what the reference lists.
func TestCollapsedWalkOrdersFewOfMany(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const now = int64(1_800_000_000)
	const series = 600
	docs := fewOfManyDocs(now, series, 900, 12)
	x := New()
	x.Apply(docs)
	if x.nGrouped == 0 {
		t.Fatal("no groups: the series' occurrences should form groups")
	}
	for _, c := range []struct {
		name          string
		from          int64
		offset, limit int
		featured      bool
		pageMax       int
	}{
		{"first page", now, 0, 8, false, 2048},
		{"first match", now, 0, 1, false, 2048},
		{"page 3", now, 16, 8, false, 2048},
		{"from the third day", now + 2*86400 + 1800, 0, 10, false, 2048},
		{"featured", now, 0, 5, true, 2048},
		{"past the first week", now, 640, 10, false, 2048},
		{"a page found by its start", now, 40, 8, false, 16},
		{"a page found by its start, past the first week", now, 700, 8, false, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			x.collapsedPageMax = c.pageMax // (no query runs meanwhile)
			q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, StartGTE: search.Some(c.from),
				EndLTE: search.Some(now + 2*366*86400), Offset: c.offset, Limit: c.limit, CollapseSeries: true}
			if c.featured {
				q.Featured = search.Some(true)
			}
			walked, before := x.facets.listWork.Load(), x.facets.ordered.Load()
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			ordered := x.facets.ordered.Load() - before
			if x.facets.listWork.Load() == walked {
				t.Fatal("the buckets were not walked: the path under test did not run")
			}
			want := searchtest.ExpectedEvents(docs, q)
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(occurrences(got), want.Occurrences) {
				t.Fatalf("page %v %q of %d, want %v %q of %d", got.IDs, occurrences(got), got.Total, want.IDs, want.Occurrences, want.Total)
			}
			// A first page of a few in the week of every series: its
			// matches and the ties of their last start (a few an hour),
			// not the week's more than 600.
			if need := c.offset + c.limit; need*fewFirst <= series && ordered > uint64(2*need+64) {
				t.Errorf("%d matches ordered for a page ending at %d, want at most %d", ordered, need, 2*need+64)
			}
		})
	}
}

// TestCollapsedWalkFewOfManyAgrees compares generated collapsed lists
// over fewOfManyDocs (a week holding an occurrence of every series, many
// starts tied at the hour) with the reference: from a start within the
// first weeks, the first pages and pages past the first week, the page
// walked from the start of the dates or found by its start.
func TestCollapsedWalkFewOfManyAgrees(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const now = int64(1_800_000_000)
	docs := fewOfManyDocs(now, 400, 600, 10)
	x := New()
	x.Apply(docs)
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 300 {
		x.collapsedPageMax = []int{16, 2048}[r.IntN(2)] // (no query runs meanwhile)
		q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, CollapseSeries: true,
			StartGTE: search.Some(now + int64(r.IntN(3*7*24))*3600 + int64(r.IntN(2))*1800), EndLTE: search.Some(now + 2*366*86400),
			Limit: 1 + r.IntN(20)}
		switch r.IntN(3) {
		case 0:
			q.Offset = r.IntN(40)
		case 1:
			q.Offset = r.IntN(700)
		}
		if r.IntN(4) == 0 {
			q.Featured = search.Some(r.IntN(2) == 0)
		}
		got, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		want := searchtest.ExpectedEvents(docs, q)
		if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(occurrences(got), want.Occurrences) {
			t.Fatalf("query %d (%+v, page max %d): page %v %q of %d, want %v %q of %d", i, q, x.collapsedPageMax,
				got.IDs, occurrences(got), got.Total, want.IDs, want.Occurrences, want.Total)
		}
	}
}
