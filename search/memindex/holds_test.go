package memindex

import (
	"maps"
	"math/rand/v2"
	"slices"
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

// TestLargeDocumentHoldsTheLockBriefly writes, replaces and removes
// documents with a 200,000-character description (about 23,000 distinct
// words) and counts the words the writer links or unlinks in one hold of
// the lock (holds.maxHeld), the work a query waits for: at most
// holdWords, whatever the size of the document, where the whole document
// was linked in one hold before. Each time the writer releases the lock
// between pieces, queries must see all of the document or none of it: the
// occurrences a word of the document finds are those a list without text
// holds. After each write the index answers as if written at once.
func TestLargeDocumentHoldsTheLockBriefly(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 1))
	x, _ := benchIndex(300)
	textA, textB := hugeDescription(r, 199000), hugeDescription(r, 199000)
	const id, series = int64(1 << 40), int64(1<<40 + 1)
	ids := []int64{id, series}
	// probing are the words of the documents written, gone those no
	// document holds after the write, checked at each release of the lock.
	var probing, gone []string

	// occurrences returns the documents of the probed events that q finds
	// (in German when q has no language: the text the others alias).
	occurrences := func(q search.EventQuery) map[docKey]bool {
		if q.Limit = 1000; q.Lang == "" {
			q.Lang = "de"
		}
		res, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[docKey]bool{}
		for i, got := range res.IDs {
			occ := ""
			if res.Occurrences != nil {
				occ = res.Occurrences[i]
			}
			switch {
			case slices.Contains(ids, got):
				out[docKey{got, occ}] = true
			case q.Query != "":
				// Only the documents written hold the probed words.
				t.Errorf("%q finds event %d %q", q.Query, got, occ)
			}
		}
		return out
	}
	yields := 0
	defer func() { yieldHook = nil }()
	yieldHook = func() {
		yields++
		listed := occurrences(search.EventQuery{CategoryIDs: []int64{3}})
		for _, w := range probing {
			for _, q := range []search.EventQuery{{Lang: "de"}, {Lang: "en"}, {Lang: "de", Relevance: true}} {
				q.Query = w
				if found := occurrences(q); !maps.Equal(found, listed) {
					t.Errorf("release %d: %q (%s, by relevance: %v) finds %v, the list holds %v", yields, w, q.Lang, q.Relevance, found, listed)
				}
			}
		}
		for _, w := range gone {
			if found := occurrences(search.EventQuery{Query: w}); len(found) > 0 {
				t.Errorf("release %d: %q, a word of a text replaced or removed, finds %v", yields, w, found)
			}
		}
	}
	occ := func(k string) search.EventDocument { return hugeDraft(series, k, textB) }
	cases := []struct {
		name  string
		write func()
		// probe are the words of the documents written; found, the
		// documents each finds after the write.
		probe []string
		found map[docKey]bool
		// gone are words that no document holds after the write.
		gone []string
	}{
		{"a new document", func() { x.Apply([]search.EventDocument{hugeDraft(id, "", textA)}) },
			probes(textA), map[docKey]bool{{id, ""}: true}, nil},
		{"the document replaced by another text", func() { x.Apply([]search.EventDocument{hugeDraft(id, "", textB)}) },
			probes(textB), map[docKey]bool{{id, ""}: true}, probes(textA)},
		{"three occurrences sharing the text", func() { x.Apply([]search.EventDocument{occ("a"), occ("b"), occ("c")}) },
			probes(textB), map[docKey]bool{{id, ""}: true, {series, "a"}: true, {series, "b"}: true, {series, "c"}: true}, probes(textA)},
		{"the document removed", func() { x.Remove([]int64{id}) },
			probes(textB), map[docKey]bool{{series, "a"}: true, {series, "b"}: true, {series, "c"}: true}, probes(textA)},
		{"the series removed", func() { x.Remove([]int64{series}) },
			probes(textB), nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x.maxHeld, yields, probing, gone = 0, 0, c.probe, c.gone
			before := x.Count()
			c.write()
			if x.maxHeld > holdWords {
				t.Errorf("%d words linked or unlinked in one hold of the lock, want at most %d", x.maxHeld, holdWords)
			}
			if yields == 0 {
				t.Error("the writer never released the lock between pieces")
			}
			if !x.hidden.IsEmpty() {
				t.Errorf("slots %v still hidden after the write", x.hidden.ToArray())
			}
			for _, w := range c.probe {
				if got := occurrences(search.EventQuery{Query: w}); !maps.Equal(got, c.found) {
					t.Errorf("%q finds %v, want %v", w, got, c.found)
				}
			}
			for _, w := range c.gone {
				if got := occurrences(search.EventQuery{Query: w}); len(got) > 0 {
					t.Errorf("%q, a word no document holds, finds %v", w, got)
				}
			}
			if got := occurrences(search.EventQuery{CategoryIDs: []int64{3}}); !maps.Equal(got, c.found) {
				t.Errorf("the list holds %v, want %v", got, c.found)
			}
			t.Logf("%d documents before, %d after; %d releases, at most %d words in one hold", before, x.Count(), yields, x.maxHeld)
		})
	}
}
