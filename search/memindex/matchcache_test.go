package memindex

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestMatchCacheKeepsWords runs typeahead queries (growing
// prefixes, two words, a typo, with a category, other statuses) twice
// and checks that the second run takes each word's rows from the match
// cache and that every answer is the reference's (a query whose first
// word's rows are the cache's, narrowed by the next word or a filter,
// leaves them as they were); then writes events and checks that the
// next queries find the new ones (a write drops the words it changes).
func TestMatchCacheKeepsWords(t *testing.T) {
	const now = int64(1_800_000_000)
	var docs []search.EventDocument
	for i := range 3000 {
		start := now + int64(i%500)*3600
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: []string{"publish", "draft"}[i%7/6], Start: start, End: start + 3600,
			CategoryIDs: []int64{int64(i % 5)}, Text: map[string]search.Text{"en": {Title: fmt.Sprintf("%s %s %d", benchWords[i%20], benchWords[i%7], i)}}})
	}
	x := New()
	x.Apply(docs)
	queries := func() []search.EventQuery {
		var qs []search.EventQuery
		for _, text := range []string{"j", "ja", "jaz", "jazz", "jazz c", "jazz co", "jazz cnocert ", "c", "co"} {
			q := search.EventQuery{Lang: "en", Query: text, Statuses: []string{"publish"}, ExcludeHidden: true, StartGTE: search.Some(now), Limit: 8}
			qs = append(qs, q)
			q.CategoryIDs = []int64{2}
			qs = append(qs, q)
			q.CategoryIDs, q.Statuses = nil, []string{"publish", "draft"}
			qs = append(qs, q)
		}
		return qs
	}
	check := func(round string) {
		t.Helper()
		for _, q := range queries() {
			got, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := searchtest.ExpectedEvents(docs, q)
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
				t.Fatalf("%s, %q (categories %v, statuses %v): total %d, %v; want %d, %v", round, q.Query, q.CategoryIDs, q.Statuses,
					got.Total, got.IDs, want.Total, want.IDs)
			}
		}
	}
	check("first")
	hits := x.matches.hits
	check("again")
	if x.matches.hits == hits {
		t.Error("the same queries again took no word's rows from the cache")
	}
	for i := range 50 {
		start := now + int64(i)*3600
		docs = append(docs, search.EventDocument{ID: int64(10000 + i), Status: "publish", Start: start, End: start + 60,
			CategoryIDs: []int64{2}, Text: map[string]search.Text{"en": {Title: "jazz concert, new"}}})
	}
	x.Apply(docs[len(docs)-50:])
	check("after a write")
}

// dropMatches empties x's match cache, as a test that counts the walks'
// work needs before each run.
func dropMatches(x *Index) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.matches.clear()
}

// TestMatchCacheFollowsWrites runs a fixed pool of generated text
// queries (agreeQuery's, in the date order, so that their words' rows are
// the match cache's) between writes that change the rows of the words
// they keep: a new event holding them (published, a draft, in French
// only: no alias), an event retitled (its old words leave, new ones
// come), removed, written back, a series retitled or cut short (its
// group left and joined), a large document (linked or unlinked in
// pieces, its row hidden meanwhile) written, replaced and removed, a
// French text made its own and aliased again, and a write of words no
// query reads. After each write
// every answer must be the reference's; at each release of the lock in
// a write (yieldHook) every answer with the cache as it stands must be
// the answer once the cache is emptied. So an entry kept past a change
// of its rows fails it.
func TestMatchCacheFollowsWrites(t *testing.T) {
	t.Parallel() // its knobs are its index's own
	all, now := agreeDocs(1500)
	ls := newLiveSeries(all)
	ls.x.holdWords = 160
	ls.write(ls.order)
	x := ls.x
	r := rand.New(rand.NewPCG(41, 42))
	// A few plain ones (the upcoming events, anonymous or an editor's;
	// zanzibar is only in the writes), then drawn ones.
	var pool []search.EventQuery
	for _, text := range []string{"jazz", "ja", "festivl ", "concert c", "zanzibar", "zan"} {
		for _, statuses := range [][]string{{"publish"}, {"publish", "draft"}} {
			pool = append(pool, search.EventQuery{Lang: "en", Query: text, Statuses: statuses, ExcludeHidden: len(statuses) == 1,
				EndGT: search.Some(now), Limit: 10})
		}
	}
	// In French, the rows of the English words of the texts it aliases.
	pool = append(pool, search.EventQuery{Lang: "fr", Query: "jazz", Statuses: []string{"publish"}, EndGT: search.Some(now), Limit: 10})
	for len(pool) < 30 {
		q, _ := agreeQuery(r, now)
		if q.Query == "" || q.Offset > 100 {
			continue
		}
		q.Relevance = false
		pool = append(pool, q)
	}
	answers := func() []search.Result {
		out := make([]search.Result, len(pool))
		for i, q := range pool {
			res, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = res
		}
		return out
	}
	releases := 0
	x.yieldHook = func() {
		releases++
		kept := answers()
		dropMatches(x)
		for i, want := range answers() {
			got := kept[i]
			if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(occurrencesOf(got), occurrencesOf(want)) {
				t.Fatalf("release %d, %+v: with the cache total %d, %v; emptied %d, %v", releases, pool[i], got.Total, got.IDs, want.Total, want.IDs)
			}
		}
	}
	nextID := int64(1 << 30)
	event := func(status, title, description string) search.EventDocument {
		nextID++
		start := now + nextID%(200*86400)
		text := search.Text{Title: title, Description: description}
		return search.EventDocument{ID: nextID, Status: status, Start: start, End: start + 3600, PublishDate: now,
			CategoryIDs: []int64{nextID % 30}, Text: map[string]search.Text{"en": text, "fr": text}}
	}
	add := func(d search.EventDocument) {
		ls.order = append(ls.order, d.ID)
		ls.live[d.ID] = []search.EventDocument{d}
		ls.write([]int64{d.ID})
	}
	// some returns an event (one of a series when series) still there.
	some := func(series bool) int64 {
		for {
			id := ls.order[r.IntN(len(ls.order))]
			if docs := ls.live[id]; len(docs) > 0 && (len(docs) > 1) == series {
				return id
			}
		}
	}
	word := func() string { return benchWords[r.IntN(len(benchWords))] }
	every := strings.Join(benchWords, " ")
	var large int64
	writes := []struct {
		name  string
		write func()
	}{
		{"a new event holding kept words", func() { add(event("publish", every, "An evening of "+word())) }},
		{"a new draft holding kept words", func() { add(event("draft", every, "")) }},
		{"a new event in French only", func() {
			d := event("publish", "", "")
			d.Text = map[string]search.Text{"fr": {Title: "soirée " + word() + " " + word()}}
			add(d)
		}},
		{"an event retitled", func() {
			id := some(false)
			docs := slices.Clone(ls.live[id])
			docs[0].Text = retitled(docs[0].Text, word())
			ls.live[id] = docs
			ls.write([]int64{id})
		}},
		{"an English event removed", func() {
			d := event("publish", word()+" "+word(), "")
			delete(d.Text, "fr")
			add(d)
			answers()
			ls.x.Remove([]int64{d.ID})
			delete(ls.live, d.ID)
		}},
		{"an event removed and one written back", func() {
			gone, saved := ls.removeSome(r, 300)
			if len(gone) > 1 {
				ls.live[gone[0]] = saved[gone[0]]
				ls.write(gone[:1])
			}
		}},
		{"a series retitled", func() {
			// Its occurrences but the first linked as it (like), in
			// several holds, with a word few events hold.
			id := some(true)
			docs := slices.Clone(ls.live[id])
			w := []string{word(), "zanzibar"}[r.IntN(2)]
			for i := range docs {
				docs[i].Text = retitled(docs[i].Text, w)
			}
			ls.live[id] = docs
			ls.write([]int64{id})
		}},
		{"a series cut short", func() {
			id := some(true)
			docs := ls.live[id]
			ls.live[id] = slices.Clone(docs[:len(docs)/2])
			ls.write([]int64{id})
		}},
		{"a large event written or replaced", func() {
			// The kept words first, linked in the first hold (the row
			// hidden), no alias: the row shown again in the last hold
			// is all that tells of them then.
			d := event("publish", every, hugeDescription(r, 3000))
			delete(d.Text, "fr")
			if large != 0 {
				d.ID = large
			} else {
				large = d.ID
				ls.order = append(ls.order, d.ID)
			}
			ls.live[d.ID] = []search.EventDocument{d}
			ls.write([]int64{d.ID})
		}},
		{"a large event removed", func() {
			// The kept words last, unlinked in the last hold: the row
			// hidden in the first is all that tells of them before.
			d := event("publish", "large", hugeDescription(r, 3000)+" zanzibar "+every)
			delete(d.Text, "fr")
			add(d)
			answers()
			ls.x.Remove([]int64{d.ID})
			delete(ls.live, d.ID)
		}},
		{"a French text made its own, then aliased again", func() {
			id := some(false)
			docs := slices.Clone(ls.live[id])
			d := docs[0]
			d.Text = maps.Clone(d.Text)
			en := d.Text["en"]
			if d.Text["fr"] == en {
				d.Text["fr"] = search.Text{Title: word() + " en français"}
			} else {
				d.Text["fr"] = en
			}
			docs[0] = d
			ls.live[id] = docs
			ls.write([]int64{id})
		}},
		{"words no query reads", func() { add(event("publish", "bench write", "nothing else")) }},
	}
	answers() // the pool's words kept
	for round := range 3 {
		for _, w := range writes {
			w.write()
			ref := searchtest.NewReference(ls.all())
			for i, q := range pool {
				checkAgainstReference(t, x, ref, q, fmt.Sprintf("round %d, after %s, query %d", round, w.name, i))
			}
		}
	}
	t.Logf("%d releases checked; the cache: %d hits, %d misses, %d entries dropped by writes", releases, x.matches.hits, x.matches.misses, x.matches.dropped)
	if releases == 0 || x.matches.hits == 0 || x.matches.dropped == 0 {
		t.Error("no release, no word taken from the cache or none dropped: the test measures nothing")
	}
}

// TestMatchCacheKeepsUnrelatedWords keeps the rows of a few words
// (typeahead prefixes, a word, two words, a typo) for anonymous queries
// in English, then writes one event of each kind and checks, by the
// cache's misses (not by time), which words' rows the next queries make
// again: none after a write of other words, of a draft, or of French
// words only; those of the words the event holds after a published
// English one, or its removal, and those only; and that every answer is
// the reference's.
func TestMatchCacheKeepsUnrelatedWords(t *testing.T) {
	const now = int64(1_800_000_000)
	var docs []search.EventDocument
	for i := range 2000 {
		start := now + int64(i%400)*3600
		docs = append(docs, search.EventDocument{ID: int64(i + 1), Status: "publish", Start: start, End: start + 3600,
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("%s %s %d", benchWords[i%20], benchWords[i%7], i)}}})
	}
	x := New()
	x.Apply(docs)
	queries := []string{"j", "ja", "jazz", "jazz co", "festivl ", "rock", "th"}
	id := int64(100000)
	for _, c := range []struct {
		name    string
		status  string
		lang    string
		title   string
		rebuilt []string
		// remove: the event removed (0: the event is written).
		remove int64
	}{
		{"other words", "publish", "en", "bench write 1", nil, 0},
		{"a draft", "draft", "en", "jazz festival", nil, 0},
		{"French words only", "publish", "fr", "jazz festival rock", nil, 0},
		{"a published jazz concert", "publish", "en", "jazz concert", []string{"j", "ja", "jazz", "jazz co"}, 0},
		{"a published festival", "publish", "en", "festival", []string{"festivl "}, 0},
		{"a published theatre", "publish", "en", "theatre", []string{"th"}, 0},
		{"the jazz concert removed", "", "", "", []string{"j", "ja", "jazz", "jazz co"}, 100004},
		{"the festival removed", "", "", "", []string{"festivl "}, 100005},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func() map[string]bool {
				missed := map[string]bool{}
				for _, text := range queries {
					q := search.EventQuery{Lang: "en", Query: text, Statuses: []string{"publish"}, ExcludeHidden: true, ExcludeProtected: true,
						StartGTE: search.Some(now), Limit: 8}
					misses := x.matches.misses
					got, err := x.Search(t.Context(), q)
					if err != nil {
						t.Fatal(err)
					}
					missed[text] = x.matches.misses != misses
					want := searchtest.ExpectedEvents(docs, q)
					if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) {
						t.Fatalf("%q: total %d, %v; want %d, %v", text, got.Total, got.IDs, want.Total, want.IDs)
					}
				}
				return missed
			}
			run()
			if missed := run(); slices.Contains(slices.Collect(maps.Values(missed)), true) {
				t.Fatalf("the same queries again made rows again: %v", missed)
			}
			if c.remove != 0 {
				docs = slices.DeleteFunc(docs, func(d search.EventDocument) bool { return d.ID == c.remove })
				x.Remove([]int64{c.remove})
			} else {
				id++
				d := search.EventDocument{ID: id, Status: c.status, Start: now + 7200, End: now + 10800,
					Text: map[string]search.Text{c.lang: {Title: c.title}}}
				docs = append(docs, d)
				x.Apply([]search.EventDocument{d})
			}
			missed := run()
			for _, text := range queries {
				if want := slices.Contains(c.rebuilt, text); missed[text] != want {
					t.Errorf("after %s, %q: rows made again %v, want %v", c.name, text, missed[text], want)
				}
			}
		})
	}
}
