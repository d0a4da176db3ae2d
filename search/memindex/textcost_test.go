package memindex

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// bytesPerRun returns the bytes that run allocates, the least of ten
// batches (the count is the process's: another goroutine only adds to a
// batch), with no collection while measuring.
func bytesPerRun(run func()) float64 {
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	run()
	least := math.Inf(1)
	for range 10 {
		var before, after runtime.MemStats
		const runs = 10
		runtime.ReadMemStats(&before)
		for range runs {
			run()
		}
		runtime.ReadMemStats(&after)
		least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/runs)
	}
	return least
}

// TestAliasedMatchCopies bounds what finding a word's rows allocates
// when the documents' text in the query's language is another
// language's (an alias, as for every untranslated event): the rows are
// one bitmap made once, not also narrowed to the aliased rows (which
// hold them whole: a copy of each container) nor joined into an empty
// result (another copy). Before, the bytes were about three times the
// result's size.
func TestAliasedMatchCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 45,000 documents")
	}
	if raceEnabled {
		t.Skip("the race detector allocates for itself: the bounds are for the plain build")
	}
	x, _ := benchIndexThisWeek(4000, 400)
	for _, c := range []struct {
		name string
		lang string
		term search.Term
	}{
		{"word", "en", search.Term{Word: "jazz"}},
		{"prefix", "fr", search.Term{Word: "co", Prefix: true}},
		{"long prefix", "nl", search.Term{Word: "conc", Prefix: true}},
		{"typo", "en", search.Term{Word: "concret", Typos: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x.mu.RLock()
			defer x.mu.RUnlock()
			p := x.plan(search.EventQuery{Lang: c.lang})
			l := x.langs[c.lang]
			if l == nil || len(l.aliases) == 0 {
				t.Fatalf("language %q has no aliases: the test reads nothing", c.lang)
			}
			m, _, _ := x.match(p, l, c.term, false)
			size := float64(m.GetSizeInBytes())
			if m.GetCardinality() < 1000 {
				t.Fatalf("%d rows match: too few to weigh the copies", m.GetCardinality())
			}
			got := bytesPerRun(func() { x.match(p, l, c.term, false) })
			t.Logf("%d rows, %.1f KB the bitmap, %.1f KB allocated", m.GetCardinality(), size/1024, got/1024)
			if got > 1.5*size+2048 {
				t.Errorf("matching allocated %.1f KB, want at most 1.5 times the rows' bitmap (%.1f KB) and 2 KB", got/1024, size/1024)
			}
		})
	}
}

// TestRelevanceCached checks that a relevance query asked again, the
// index unchanged, finds its words' rows and ways of matching in the
// match cache (no word read: Index.Checked does not move) and its score
// tiers there too (it allocates less than one bitmap of its
// candidates, for a query with enough candidates for the tiers), with
// the same result; and that a write of one of its
// words drops them (the words are read again, and the result holds the
// new event), and its removal too.
func TestRelevanceCached(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 45,000 documents")
	}
	x, now := benchIndexThisWeek(4000, 400)
	for _, c := range []struct {
		name, query string
		// tiered: the query's candidates outside groups are enough for
		// the score tiers (rankedTiers; the others' matches are scored
		// one by one, which allocates for each).
		tiered bool
	}{
		{"two words", "jazz concert", false},
		{"one prefix", "c", true},
		{"word and typo", "jazz cnocert ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := with(now, func(q *search.EventQuery) { q.Query = c.query; q.Relevance = true })
			run := func() search.Result {
				res, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := run()
			if first.Total < x.minCounted {
				t.Fatalf("%d matches: too few for the score tiers", first.Total)
			}
			checked := x.Checked()
			again := run()
			if n := x.Checked() - checked; n != 0 {
				t.Errorf("asked again, the query read %d words, want 0 (kept)", n)
			}
			if again.Total != first.Total || !slices.Equal(again.IDs, first.IDs) {
				t.Errorf("asked again: %d %v, first %d %v", again.Total, again.IDs, first.Total, first.IDs)
			}
			if c.tiered && !raceEnabled {
				x.mu.RLock()
				p := x.plan(q)
				cands := float64(p.cands.GetSizeInBytes())
				p.scratch.release()
				x.mu.RUnlock()
				got := bytesPerRun(func() { run() })
				t.Logf("%.1f KB a query again (the candidates' bitmap: %.1f KB)", got/1024, cands/1024)
				if got > cands {
					t.Errorf("asked again, the query allocated %.1f KB, want less than its candidates' bitmap (%.1f KB): its tiers made again", got/1024, cands/1024)
				}
			}
			// A write of a matching word drops what was kept.
			start := now + 3600
			x.Apply([]search.EventDocument{{ID: 8_000_001, Status: "publish", Start: start, End: start + 60,
				Text: map[string]search.Text{"en": {Title: "jazz concert " + c.name}}}})
			checked = x.Checked()
			after := run()
			if x.Checked() == checked {
				t.Errorf("after a write of its words, the query read no word: kept past the write")
			}
			if after.Total != first.Total+1 {
				t.Errorf("after the write: %d matches, want %d", after.Total, first.Total+1)
			}
			x.Remove([]int64{8_000_001})
			if res := run(); res.Total != first.Total || !slices.Equal(res.IDs, first.IDs) {
				t.Errorf("after its removal: %d %v, want %d %v", res.Total, res.IDs, first.Total, first.IDs)
			}
		})
	}
}

// TestLevelGroups checks the bucket sort of rankedTiers' group hits by
// level: every hit kept, each level's part holding its hits only.
func TestLevelGroups(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     []int32
		levels int
	}{
		{"none", nil, 2},
		{"one level", []int32{0, 0, 0}, 1},
		{"sorted", []int32{0, 0, 1, 2, 2}, 3},
		{"reversed", []int32{2, 2, 1, 0, 0}, 3},
		{"mixed", []int32{1, 0, 2, 1, 0, 2, 2, 1, 0, 3}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			gs := make([]groupHit, len(c.in))
			for i, k := range c.in {
				gs[i] = groupHit{lo: i, hi: int(k)} // hi holds the level, lo the hit
			}
			in := slices.Clone(c.in)
			parts := levelGroups(gs, in, c.levels)
			seen := map[int]bool{}
			for k, part := range parts {
				for _, h := range part {
					if h.hi != k {
						t.Errorf("level %d holds hit %d of level %d", k, h.lo, h.hi)
					}
					seen[h.lo] = true
				}
			}
			if len(seen) != len(c.in) {
				t.Errorf("%d hits in the parts, want %d", len(seen), len(c.in))
			}
		})
	}
}

// TestColdPrefixCopiesNoRows bounds what a search box's short prefix
// allocates in the date order when it misses the match cache (each new
// prefix typed does), in an index whose series' occurrences hold most of
// the prefix's rows: less than half the bitmap of those rows, so nothing
// that grows with them. Before, the query joined the prefix's title and
// body rows into a new bitmap (matchParts' FastOr) and copied those
// outside groups (the match cache's singles): more than the rows'
// bitmap.
func TestColdPrefixCopiesNoRows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 162,000 documents")
	}
	if raceEnabled {
		t.Skip("the race detector allocates for itself: the bounds are for the plain build")
	}
	const now, week = benchNow, 7 * 86400
	var docs []search.EventDocument
	for i := range 2000 {
		start := now + int64(i)*3600
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: "publish", Start: start, End: start + 7200,
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("jazz night %d", i), Description: "An evening of jazz and comedy."}}})
	}
	for s := range 40 {
		text := search.Text{Title: fmt.Sprintf("jazz concert %d", s), Description: "Jazz, every week."}
		if s%2 == 1 {
			text = search.Text{Title: fmt.Sprintf("cinema club %d", s), Description: "A film and a jazz concert."}
		}
		for k := range 4000 {
			start := now + int64(s)*3600 + int64(k)*week
			docs = append(docs, search.EventDocument{ID: int64(10000 + s), Occurrence: fmt.Sprintf("w%04d", k), Status: "publish",
				Start: start, End: start + 7200, Text: map[string]search.Text{"en": text}})
		}
	}
	x := New()
	x.Apply(docs)
	for _, word := range []string{"j", "ja", "co"} {
		t.Run(word, func(t *testing.T) {
			q := with(now, func(q *search.EventQuery) { q.Query = word })
			x.mu.RLock()
			p := x.plan(q)
			rows := p.cands
			p.scratch.release()
			x.mu.RUnlock()
			size := float64(rows.GetSizeInBytes())
			if rows.GetCardinality() < 100000 {
				t.Fatalf("%d rows match: too few to weigh the copies", rows.GetCardinality())
			}
			run := func() {
				x.mu.Lock()
				x.matches.clear() // a new prefix: a miss of the match cache
				x.mu.Unlock()
				res, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.IDs) != 8 || res.Total < 2000 {
					t.Fatalf("%d hits of %d: want a page of 8 of the thousands", len(res.IDs), res.Total)
				}
			}
			got := bytesPerRun(run)
			t.Logf("%d rows, %.1f KB their bitmap, %.1f KB allocated a query", rows.GetCardinality(), size/1024, got/1024)
			if got > size/2 {
				t.Errorf("a cold query allocated %.1f KB, want less than half its rows' bitmap (%.1f KB)", got/1024, size/2/1024)
			}
		})
	}
}
