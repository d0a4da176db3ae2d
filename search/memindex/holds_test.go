package memindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// probes returns words of text to search for: of ten letters or more (no
// other text of the test holds them), the first, one from the middle and
// the last (each in its own piece of the linking).
func probes(text string) []string {
	f := slices.DeleteFunc(strings.Fields(text), func(w string) bool { return len(w) < 10 })
	return []string{f[0], f[len(f)/2], f[len(f)-1]}
}

// The words every version of the documents of
// TestLargeDocumentHoldsTheLockBriefly holds, first and last.
const commonFirst, commonLast = "sharedvocablefirst", "sharedvocablelast"

// versionDoc returns document occ of event id in version v of texts: its
// text is texts[v] between the common words, and its one tag is v, so that
// a list by tag tells which version a query sees.
func versionDoc(id int64, occ string, texts []string, v int) search.EventDocument {
	d := hugeDraft(id, occ, commonFirst+" "+texts[v]+" "+commonLast)
	d.TagIDs = []int64{int64(v)}
	return d
}

// TestLargeDocumentHoldsTheLockBriefly writes, replaces and removes
// documents with a large description (28,000 characters, about 3,200
// distinct words, with holdWords lowered to 160 in proportion to the
// service's 200,000-character drafts and 1,024) and counts the words the writer links or unlinks in one hold of
// the lock (holds.maxHeld), the work a query waits for: at most
// holdWords, whatever the size of the document, where the whole document
// was linked in one hold before. Each time the writer releases the lock
// between pieces, queries must see each document whole in one version:
// the one before the write or, once swapped, the one after (never
// neither while both exist, never both, never back). A list without text
// and an IDs query hold it once, a list by its version's tag holds it and
// the other version's does not, the tag facet counts it under its
// version, a word of both versions finds it once, and a word of one
// version only finds it exactly while that version is seen. This covers
// a large document replaced by another large one, by a small one and the
// reverse, and a series whose occurrences share a large text replaced.
// After each write the index answers as if written at once.
func TestLargeDocumentHoldsTheLockBriefly(t *testing.T) {
	t.Parallel() // its knobs are its index's own
	// The bound is holdWords whatever its value: a smaller one here
	// (the service's is 1,024) gives as many releases per write with
	// documents a seventh of the service's drafts, so the checks at every
	// release cost a seventh.
	r := rand.New(rand.NewPCG(37, 1))
	x, _ := benchIndex(300)
	x.holdWords = 160
	// The versions: 1 and 2 large, 3 small (0: none).
	texts := []string{"", hugeDescription(r, 28000), hugeDescription(r, 28000),
		"a small version: manageable, uncomplicated, straightforward"}
	only := make([][]string, len(texts))
	for v := 1; v < len(texts); v++ {
		only[v] = probes(texts[v])
	}
	const id, series = int64(1 << 40), int64(1<<40 + 1)
	ids := []int64{id, series}
	keys := []docKey{{id, ""}, {series, "a"}, {series, "b"}, {series, "c"}}
	// before and after are the version of each document before and after
	// the write; seen the version each showed at the last release.
	var before, after, seen map[docKey]int

	// occurrences returns how many times q finds each document of the
	// probed events (in German when q has no language: the text the
	// others alias), and the result.
	occurrences := func(q search.EventQuery) (map[docKey]int, search.Result) {
		if q.Limit = 1000; q.Lang == "" {
			q.Lang = "de"
		}
		res, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[docKey]int{}
		for i, got := range res.IDs {
			switch {
			case slices.Contains(ids, got):
				out[docKey{got, res.Occurrence(i)}]++
			case q.Query != "" || q.IDs != nil:
				// Only the documents written hold the probed words.
				t.Errorf("%q finds event %d %q", q.Query, got, res.Occurrence(i))
			}
		}
		return out, res
	}
	// check checks what queries see at a release (at, for messages) and
	// returns the version of each document they see.
	check := func(t *testing.T, at string) map[docKey]int {
		t.Helper()
		listed, _ := occurrences(search.EventQuery{CategoryIDs: []int64{3}})
		shown := map[docKey]int{}
		for _, k := range keys {
			n := listed[k]
			if n > 1 {
				t.Errorf("%s: the list holds %v %d times", at, k, n)
			}
			for v := 1; v < len(texts); v++ {
				byTag, _ := occurrences(search.EventQuery{TagIDs: []int64{int64(v)}})
				if byTag[k] > 0 {
					if shown[k] != 0 {
						t.Errorf("%s: %v listed in versions %d and %d", at, k, shown[k], v)
					}
					shown[k] = v
				}
			}
			if (n > 0) != (shown[k] != 0) {
				t.Errorf("%s: %v listed %d times, in version %d by its tag", at, k, n, shown[k])
			}
			switch s := shown[k]; {
			case s != before[k] && s != after[k]:
				t.Errorf("%s: %v seen in version %d, want %d (before) or %d (after)", at, k, s, before[k], after[k])
			case s == before[k] && seen[k] == after[k] && before[k] != after[k]:
				t.Errorf("%s: %v seen in version %d again after version %d", at, k, s, after[k])
			}
		}
		byIDs, res := occurrences(search.EventQuery{IDs: ids, Facets: []string{search.FacetTags}})
		if !maps.Equal(byIDs, listed) {
			t.Errorf("%s: an IDs query finds %v, the list holds %v", at, byIDs, listed)
		}
		tags := map[string]int{}
		for _, v := range shown {
			if v != 0 {
				tags[strconv.Itoa(v)]++
			}
		}
		if res.Total != len(byIDs) || !maps.Equal(res.Facets[search.FacetTags], tags) {
			t.Errorf("%s: an IDs query counts %d, tags %v; want %d, %v", at, res.Total, res.Facets[search.FacetTags], len(byIDs), tags)
		}
		for v := 0; v < len(texts); v++ {
			words, want := only[v], map[docKey]int{}
			if v == 0 {
				words, want = []string{commonFirst, commonLast}, listed
			}
			for k, s := range shown {
				if v != 0 && s == v {
					want[k] = 1
				}
			}
			for _, w := range words {
				for _, q := range []search.EventQuery{{Lang: "de"}, {Lang: "en"}, {Lang: "de", Relevance: true}} {
					q.Query = w
					if found, _ := occurrences(q); !maps.Equal(found, want) {
						t.Errorf("%s: %q (%s, by relevance: %v) finds %v, want %v (seen: %v)", at, w, q.Lang, q.Relevance, found, want, shown)
					}
				}
			}
		}
		return shown
	}
	yields, swapped := 0, 0
	var hookT *testing.T
	x.yieldHook = func() {
		yields++
		shown := check(hookT, fmt.Sprintf("release %d", yields))
		for k, v := range shown {
			if v != seen[k] {
				swapped++
			}
		}
		seen = shown
	}
	doc := func(k docKey, v int) search.EventDocument { return versionDoc(k.id, k.occ, texts, v) }
	occs := func(v int) []search.EventDocument {
		return []search.EventDocument{doc(keys[1], v), doc(keys[2], v), doc(keys[3], v)}
	}
	cases := []struct {
		name  string
		write func()
		// after is the version of each document after the write.
		after map[docKey]int
		// swaps tells that the write replaces documents that readers
		// must see change version between two releases.
		swaps bool
	}{
		{"a new document", func() { x.Apply([]search.EventDocument{doc(keys[0], 1)}) },
			map[docKey]int{keys[0]: 1}, false},
		{"the document replaced by another text", func() { x.Apply([]search.EventDocument{doc(keys[0], 2)}) },
			map[docKey]int{keys[0]: 2}, true},
		{"three occurrences sharing the text", func() { x.Apply(occs(1)) },
			map[docKey]int{keys[0]: 2, keys[1]: 1, keys[2]: 1, keys[3]: 1}, false},
		{"the shared text of the occurrences replaced", func() { x.Apply(occs(2)) },
			map[docKey]int{keys[0]: 2, keys[1]: 2, keys[2]: 2, keys[3]: 2}, true},
		{"the document replaced by a small one", func() { x.Apply([]search.EventDocument{doc(keys[0], 3)}) },
			map[docKey]int{keys[0]: 3, keys[1]: 2, keys[2]: 2, keys[3]: 2}, false},
		{"the small document replaced by a large one", func() { x.Apply([]search.EventDocument{doc(keys[0], 1)}) },
			map[docKey]int{keys[0]: 1, keys[1]: 2, keys[2]: 2, keys[3]: 2}, false},
		{"the document removed", func() { x.Remove([]int64{id}) },
			map[docKey]int{keys[1]: 2, keys[2]: 2, keys[3]: 2}, false},
		{"the series removed", func() { x.Remove([]int64{series}) },
			map[docKey]int{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hookT, before, after, seen = t, after, c.after, maps.Clone(after)
			x.maxHeld, yields, swapped = 0, 0, 0
			count := x.Count()
			c.write()
			if x.maxHeld > x.holdWords {
				t.Errorf("%d words linked or unlinked in one hold of the lock, want at most %d", x.maxHeld, x.holdWords)
			}
			if yields == 0 {
				t.Error("the writer never released the lock between pieces")
			}
			if c.swaps && swapped == 0 {
				t.Error("no release saw a document in its new version (the test saw no swap)")
			}
			if !x.hidden.IsEmpty() {
				t.Errorf("slots %v still hidden after the write", x.hidden.ToArray())
			}
			before = c.after
			if shown := check(t, "after the write"); !maps.Equal(shown, c.after) {
				t.Errorf("after the write, seen %v, want %v", shown, c.after)
			}
			t.Logf("%d documents before, %d after; %d releases, at most %d words in one hold", count, x.Count(), yields, x.maxHeld)
		})
	}
}

// TestLargeDocumentTouchesTheCacheBriefly writes, replaces and removes a
// large document (28,000 characters, with holdWords lowered to 160 as in
// TestLargeDocumentHoldsTheLockBriefly) while the match cache holds
// entries, queries filling it again at every release of the lock, and
// counts the entries the writer checks against changed words or rows in
// one hold (holds.maxTouched), work the queries wait for as for the words
// linked: at most an entry per word of the hold and two more per entry
// (hiding and showing the row), where showing the row checked every
// entry against each of its tens of thousands of words in one hold
// before. After each write the queries answer as a fresh index does.
func TestLargeDocumentTouchesTheCacheBriefly(t *testing.T) {
	t.Parallel() // its knobs are its index's own
	r := rand.New(rand.NewPCG(37, 3))
	x, now := benchIndex(300)
	x.holdWords = 160
	text := hugeDescription(r, 28000)
	// Words of the document and others, prefixes and typos, for
	// published and for draft rows.
	words := append(probes(text), "jazz", "j", "ja", "th", "festivl ", "jazz c")
	query := func(w, status string) search.EventQuery {
		return with(now, func(q *search.EventQuery) { q.Query, q.Statuses = w, []string{status} })
	}
	queries := func(t *testing.T, x *Index) []search.Result {
		var res []search.Result
		for _, status := range []string{"publish", "draft"} {
			res = append(res, searchWords(t, x, words, func(w string) search.EventQuery { return query(w, status) })...)
		}
		return res
	}
	releases := 0
	x.yieldHook = func() {
		releases++
		queries(t, x)
	}
	for _, c := range []struct {
		name   string
		status string
		remove bool
	}{
		{"a large draft", "draft", false},
		{"replaced by a large published version", "publish", false},
		{"removed", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			queries(t, x)
			if len(x.matches.m) == 0 {
				t.Fatal("no entry in the match cache: the test measures nothing")
			}
			x.maxTouched, releases = 0, 0
			var fresh *Index
			if c.remove {
				x.Remove([]int64{1 << 40})
				fresh, _ = benchIndex(300)
			} else {
				d := hugeDraft(1<<40, "", text+" "+c.status)
				d.Status = c.status
				x.Apply([]search.EventDocument{d})
				fresh, _ = benchIndex(300)
				fresh.Apply([]search.EventDocument{d})
			}
			if releases == 0 {
				t.Fatal("the write never released the lock: the test measures nothing")
			}
			if bound := (x.holdWords + 2) * matchCacheMax; x.maxTouched > bound {
				t.Errorf("%d match cache entries checked in one hold of the lock, want at most %d", x.maxTouched, bound)
			}
			t.Logf("%d releases, at most %d entries checked in one hold", releases, x.maxTouched)
			got, want := queries(t, x), queries(t, fresh)
			for i := range want {
				if got[i].Total != want[i].Total || !slices.Equal(got[i].IDs, want[i].IDs) {
					t.Errorf("query %d: total %d, %v; want %d, %v", i, got[i].Total, got[i].IDs, want[i].Total, want[i].IDs)
				}
			}
		})
	}
}

// TestDraftSkipsTheEntriesOfOtherVisibilities writes and then removes a
// large draft (28,000 characters, holdWords lowered to 160) while the match cache
// holds the entries of queries that read the draft's vocabulary or do
// not (published rows: the anonymous queries), queries filling it again
// at every release of the lock, and counts the entries checked in one
// hold (holds.maxTouched): an entry that does not read the draft's
// vocabulary costs a check per vocabulary of a hold's words, not one per
// word (then the writer checked every entry against each word of the
// hold, 160 × the entries). After each write the queries answer as a
// fresh index does.
func TestDraftSkipsTheEntriesOfOtherVisibilities(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const holdWords = 160
	text := hugeDescription(rand.New(rand.NewPCG(37, 5)), 28000)
	for _, c := range []struct {
		name     string
		statuses []string // of the queries
		bound    func(entries int) int
	}{
		// At most four vocabularies in one hold (title and body, in
		// the languages without aliases), and the hiding and showing
		// of the row.
		{"published rows", []string{"publish"}, func(entries int) int { return 6 * entries }},
		// Published and draft rows: these read the draft vocabulary, a
		// check per word of the hold.
		{"published and draft rows", []string{"publish", "draft"}, func(entries int) int { return (holdWords + 6) * entries }},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, now := benchIndex(300)
			x.holdWords = holdWords
			words := append(probes(text), "jazz", "j", "ja", "th", "festivl ", "jazz c", "concert")
			queries := func(t *testing.T, x *Index) []search.Result {
				return searchWords(t, x, words, func(w string) search.EventQuery {
					return with(now, func(q *search.EventQuery) { q.Query, q.Statuses = w, c.statuses })
				})
			}
			releases := 0
			x.yieldHook = func() {
				releases++
				queries(t, x)
			}
			d := hugeDraft(1<<40, "", text)
			for _, write := range []string{"applied", "removed"} {
				queries(t, x)
				entries := len(x.matches.m)
				if entries == 0 {
					t.Fatal("no entry in the match cache: the test measures nothing")
				}
				fresh, _ := benchIndex(300)
				if write == "applied" {
					fresh.Apply([]search.EventDocument{d})
				}
				x.maxTouched, releases = 0, 0
				if write == "applied" {
					x.Apply([]search.EventDocument{d})
				} else {
					x.Remove([]int64{d.ID})
				}
				if releases == 0 {
					t.Fatal("the write never released the lock: the test measures nothing")
				}
				if bound := c.bound(entries); x.maxTouched > bound {
					t.Errorf("draft %s: %d match cache entries checked in one hold of the lock (%d entries), want at most %d", write, x.maxTouched, entries, bound)
				}
				t.Logf("draft %s: %d releases, %d entries, at most %d checked in one hold", write, releases, entries, x.maxTouched)
				got, want := queries(t, x), queries(t, fresh)
				for i := range want {
					if got[i].Total != want[i].Total || !slices.Equal(got[i].IDs, want[i].IDs) {
						t.Errorf("draft %s, query %q: total %d, %v; want %d, %v", write, words[i], got[i].Total, got[i].IDs, want[i].Total, want[i].IDs)
					}
				}
			}
		})
	}
}

// searchWords answers the query q makes of each word on x, in order.
func searchWords(t *testing.T, x *Index, words []string, q func(w string) search.EventQuery) []search.Result {
	t.Helper()
	res := make([]search.Result, 0, len(words))
	for _, w := range words {
		got, err := x.Search(t.Context(), q(w))
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, got)
	}
	return res
}
