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

// TestCountedPagesAgreeAtSize runs generated date-ordered queries whose
// candidates are many (common words, one-letter prefixes, typos, broad
// list filters, with dates, statuses, flags and pages of every kind) over
// indexes large enough for firstCounted (20,000 events, and 2,000 of
// which 100 weekly series), and checks that each gives the same page,
// occurrence keys and total as with firstCounted turned off (the reading
// of every match, itself checked against the reference by the agreement
// tests), and that firstCounted read fewer entries in all.
func TestCountedPagesAgreeAtSize(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	type index struct {
		name string
		x    *Index
		now  int64
	}
	x, now := benchIndex(20000)
	xs, nows := benchIndexSeries(2000, 100)
	for _, c := range []index{{"20000 events", x, now}, {"2000 events, 100 weekly series", xs, nows}} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			var workOn, workOff uint64
			for i := range 400 {
				q := countedQuery(r, c.now)
				before := c.x.visited.Load()
				on, err := c.x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				mid := c.x.visited.Load()
				off := searchWith(t, c.x, q, math.MaxInt)
				workOn, workOff = workOn+mid-before, workOff+c.x.visited.Load()-mid
				if on.Total != off.Total || !slices.Equal(on.IDs, off.IDs) || !slices.Equal(on.Occurrences, off.Occurrences) {
					t.Fatalf("query %d %+v:\ncounted: total %d, %v %v\nread:    total %d, %v %v", i, q, on.Total, on.IDs, on.Occurrences, off.Total, off.IDs, off.Occurrences)
				}
			}
			t.Logf("%d entries read counted, %d read whole", workOn, workOff)
			if workOn >= workOff {
				t.Errorf("the counted queries read %d entries, the read ones %d: firstCounted is not taken", workOn, workOff)
			}
		})
	}
}

// searchWith runs q with firstCounted taken from minCounted candidates.
func searchWith(t *testing.T, x *Index, q search.EventQuery, counted int) search.Result {
	t.Helper()
	defer func(m int) { x.minCounted = m }(x.minCounted)
	x.minCounted = counted // (no query runs meanwhile)
	res, err := x.Search(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// countedQuery draws a date-ordered query over benchIndex's events with
// many candidates.
func countedQuery(r *rand.Rand, now int64) search.EventQuery {
	q := search.EventQuery{Lang: []string{"en", "de", "pl"}[r.IntN(3)], Limit: r.IntN(20)}
	maybe := func(p int) bool { return r.IntN(p) == 0 }
	w := benchWords[r.IntN(len(benchWords))]
	switch r.IntN(6) {
	case 0:
		q.Query = w
	case 1:
		q.Query = w[:1+r.IntN(len(w))] // a growing prefix
	case 2:
		q.Query = w + " " + benchWords[r.IntN(len(benchWords))][:1]
	case 3:
		b := []byte(benchWords[r.IntN(len(benchWords))])
		b[1], b[2] = b[2], b[1]
		q.Query = w + " " + string(b) + " " // a typo
	case 4:
		q.Query = "evening"
	default:
		q.CategoryIDs = []int64{int64(r.IntN(30)), int64(r.IntN(30)), int64(r.IntN(30))}
	}
	if maybe(2) {
		q.Statuses, q.ExcludeHidden, q.ExcludeProtected = []string{"publish"}, true, true
	}
	if q.Query != "" && maybe(2) {
		q.Relevance = true
	}
	day := int64(86400)
	switch r.IntN(4) {
	case 0: // the upcoming events
		q.StartGTE, q.EndLTE = search.Some(now), search.Some(now+2*366*day)
	case 1: // a month
		from := now + int64(r.IntN(700))*day
		q.StartGTE, q.EndLTE = search.Some(from), search.Some(from+30*day)
	case 2: // from a date, and ends before another
		q.StartGT = search.Some(now + int64(r.IntN(700))*day)
		q.EndLT = search.Some(now + int64(r.IntN(800))*day)
	}
	if maybe(3) {
		q.Featured = search.Some(maybe(2))
	}
	switch r.IntN(4) {
	case 0:
		q.Offset = r.IntN(100)
	case 1:
		q.Offset = r.IntN(5000)
	}
	return q
}

// TestSearchWorkDoesNotGrowWithMatches counts the date order's entries
// and candidates that a list reads (Index.visited), not its time, for
// the first page of a word, a prefix and a typo that match 10 times more
// events than another (half of 40,000 events against one in twenty), in
// the date order and in the relevance order (by score tiers): the
// common word must not cost more than twice the rarer one, and both give
// their exact totals.
func TestSearchWorkDoesNotGrowWithMatches(t *testing.T) {
	const n, now = 40000, int64(1_800_000_000)
	docs := make([]search.EventDocument, n)
	for i := range docs {
		title := fmt.Sprintf("event %d", i)
		switch {
		case i%20 == 0:
			title += " raremark"
		case i%2 == 0:
			title += " commonword"
		}
		start := now + int64(i%997)*3600
		docs[i] = search.EventDocument{ID: int64(i + 1), Status: "publish", Start: start, End: start + 3600, PublishDate: now,
			Text: map[string]search.Text{"en": {Title: title}}}
	}
	x := New()
	x.Apply(docs)
	list := func(query string) search.EventQuery {
		return search.EventQuery{Lang: "en", Query: query, Statuses: []string{"publish"}, ExcludeHidden: true, ExcludeProtected: true,
			StartGTE: search.Some(now), Limit: 8}
	}
	for _, c := range []struct {
		common, rare string
		relevance    bool
	}{
		{"commonword", "raremark", false},
		{"commo", "raremar", false},         // a prefix
		{"comnonword ", "raremrak ", false}, // a typo
		{"commonword", "raremark", true},
		{"event commo", "event raremar", true},
	} {
		t.Run(fmt.Sprintf("%s, relevance %v", c.common, c.relevance), func(t *testing.T) {
			work := map[string]uint64{}
			for word, total := range map[string]int{c.common: n/2 - n/20, c.rare: n / 20} {
				q := list(word)
				q.Relevance = c.relevance
				before := x.visited.Load()
				res, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				work[word] = x.visited.Load() - before
				if res.Total != total || len(res.IDs) != 8 {
					t.Errorf("%q: total %d, %d IDs; want %d, 8", word, res.Total, len(res.IDs), total)
				}
			}
			if work[c.common] > 2*work[c.rare] {
				t.Errorf("the first page of %q (%d events) read %d entries, of %q (%d) %d: the work grows with the matches",
					c.common, n/2-n/20, work[c.common], c.rare, n/20, work[c.rare])
			}
			t.Logf("%q: %d entries read, %q: %d", c.common, work[c.common], c.rare, work[c.rare])
		})
	}
}

// TestShortPrefixReadsNoWords counts the vocabulary words that a prefix
// term compares (Index.Checked): a prefix of one or two letters reads its
// words' joined rows (vocabulary.prefixes) instead of walking the 3,000
// words that start with it, and finds the events the reference finds (in
// the relevance order, those that walking the words finds), also after
// some of them are replaced and removed; a prefix of three letters still
// walks its words.
func TestShortPrefixReadsNoWords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const now = int64(1_800_000_000)
	var docs []search.EventDocument
	for i, w := range randomWords(r, 3000, 7) {
		w = "c" + w[1:]
		title, body := "event "+w, "about it"
		if i%3 == 0 {
			title, body = body, "an evening of "+w // in the body only
		}
		if i%5 == 0 {
			title += " c" // the exact word too
		}
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: "publish", Start: now + int64(i%97)*3600, End: now + int64(i%97)*3600 + 60,
			PublishDate: now, Text: map[string]search.Text{"en": {Title: title, Description: body}}})
	}
	x := New()
	x.Apply(docs)
	live := map[int64]search.EventDocument{}
	for _, d := range docs {
		live[d.ID] = d
	}
	check := func(round string) {
		all := slices.Collect(func(yield func(search.EventDocument) bool) {
			for _, d := range live {
				if !yield(d) {
					return
				}
			}
		})
		for _, c := range []struct {
			query   string
			maxRead uint64
		}{{"c", 1}, {"c", 1}, {"ca", 1}, {"cab", 3000}} {
			for _, relevance := range []bool{false, true} {
				q := search.EventQuery{Lang: "en", Query: c.query, Relevance: relevance, Limit: 20}
				before := x.Checked()
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				read := x.Checked() - before
				want := searchtest.ExpectedEvents(all, q)
				if relevance {
					// The reference does not rank: the same query walking
					// the words does.
					joinedPrefixes = false
					want, err = x.Search(t.Context(), q)
					joinedPrefixes = true
					if err != nil {
						t.Fatal(err)
					}
				}
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
					t.Errorf("%s: %q (relevance %v): total %d, %v; want %d, %v", round, c.query, relevance, got.Total, got.IDs, want.Total, want.IDs)
				}
				if read > c.maxRead {
					t.Errorf("%s: %q read %d words, want at most %d", round, c.query, read, c.maxRead)
				}
			}
		}
	}
	check("indexed")
	var changed []search.EventDocument
	var gone []int64
	for i, d := range docs {
		switch i % 7 {
		case 0:
			d.Text = map[string]search.Text{"en": {Title: "renamed " + d.Text["en"].Title[6:] + "x"}}
			changed = append(changed, d)
			live[d.ID] = d
		case 1:
			gone = append(gone, d.ID)
			delete(live, d.ID)
		}
	}
	x.Apply(changed)
	x.Remove(gone)
	check("changed")
}
