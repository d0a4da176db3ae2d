package memindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
)

// randomWords returns n random lower-case words of the given length.
func randomWords(r *rand.Rand, n, length int) []string {
	out := make([]string, n)
	b := make([]byte, length)
	for i := range out {
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		out[i] = string(b)
	}
	return out
}

// floodEvent returns an event whose description is words.
func floodEvent(id int64, status string, words []string) search.EventDocument {
	text := search.Text{Title: fmt.Sprintf("flood %d", id), Description: strings.Join(words, " ")}
	return search.EventDocument{
		ID: id, Status: status, Start: 1_800_000_000 + id, End: 1_800_003_600 + id, PublishDate: 1_700_000_000,
		Text: map[string]search.Text{"en": text, "fr": text},
	}
}

// TestHiddenWordFloodCostsAnonymousSearchesNothing floods the index with
// the words of events an anonymous caller cannot see (drafts, pending,
// private, and published ones that are protected or hidden from listings),
// and checks, by the number of vocabulary words the walks read (not by
// time), that an anonymous search does the same work as before the flood
// and finds the same events, while a search by a caller who may see the
// drafts finds their words by the same typo rules.
func TestHiddenWordFloodCostsAnonymousSearchesNothing(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	x, _ := benchIndex(500)
	anonymous := func(query string) search.EventQuery {
		return search.EventQuery{Lang: "en", Query: query, Statuses: []string{"publish"}, ExcludeHidden: true, ExcludeProtected: true, Limit: 10}
	}
	queries := []string{"jaz", "jazz cnocert ", "exhbition", "festivl", "konzert", "qwertyuiop", "zzzzzzzzzz", "wrkshop", "a", "ex"}
	for range 10 {
		queries = append(queries, randomWords(r, 1, 10)[0]) // the probe: 10 random letters
	}
	// run runs qs after emptying the match cache, so that the walks
	// are counted (a write of other words leaves it).
	run := func(qs []search.EventQuery) (uint64, []search.Result) {
		dropMatches(x)
		before := x.Checked()
		var out []search.Result
		for _, q := range qs {
			res, err := x.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
		return x.Checked() - before, out
	}
	var anon []search.EventQuery
	for _, q := range queries {
		anon = append(anon, anonymous(q))
	}
	quietWork, quietResults := run(anon)
	if quietWork == 0 {
		t.Fatal("the walks read no word: the test measures nothing")
	}

	// The flood: 60 drafts of 3,500 random words (the issue's), and a few
	// events of every other hidden kind.
	id := int64(100000)
	var flood []search.EventDocument
	var draftWord string
	for range 60 {
		words := randomWords(r, 3500, 10)
		draftWord = words[0]
		id++
		flood = append(flood, floodEvent(id, "draft", words))
	}
	for _, status := range []string{"pending", "private", "future"} {
		id++
		flood = append(flood, floodEvent(id, status, randomWords(r, 2000, 10)))
	}
	id++
	protected := floodEvent(id, "publish", randomWords(r, 2000, 10))
	protected.HasPassword = true
	id++
	hidden := floodEvent(id, "publish", randomWords(r, 2000, 10))
	hidden.HideFromListings = true
	x.Apply(append(flood, protected, hidden))

	// The flood is of vocabularies no anonymous query reads: the
	// words the queries kept are all kept (no walk again).
	before := x.Checked()
	for _, q := range anon {
		if _, err := x.Search(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	if n := x.Checked() - before; n != 0 {
		t.Errorf("anonymous searches read %d vocabulary words after the flood before the cache was emptied, want 0 (all kept)", n)
	}
	floodWork, floodResults := run(anon)
	if floodWork != quietWork {
		t.Errorf("anonymous searches read %d vocabulary words after the flood, %d before", floodWork, quietWork)
	}
	for i := range anon {
		if !slices.Equal(floodResults[i].IDs, quietResults[i].IDs) || floodResults[i].Total != quietResults[i].Total {
			t.Errorf("%q: %v (%d) after the flood, %v (%d) before", anon[i].Query,
				floodResults[i].IDs, floodResults[i].Total, quietResults[i].IDs, quietResults[i].Total)
		}
	}

	// A caller who may see drafts finds a draft's word through one typo
	// (a transposition after the first letter) and through two, as a
	// prefix too; an anonymous caller does not.
	b := []byte(draftWord)
	b[2], b[3] = b[3], b[2]
	oneTypo := string(b)
	b[5], b[6] = b[6], b[5]
	twoTypos := string(b)
	editor := []string{"publish", "future", "draft", "pending", "private"}
	for _, c := range []struct {
		query string
		want  int
	}{{draftWord, 1}, {oneTypo + " ", 1}, {twoTypos + " ", 1}, {oneTypo[:7], 1}, {draftWord[:4] + "x" + draftWord[4:], 1}} {
		q := search.EventQuery{Lang: "fr", Query: c.query, Statuses: editor, Limit: 10}
		res, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total < c.want || !slices.Contains(res.IDs, int64(100060)) {
			t.Errorf("editor search %q: %v (%d), want the draft 100060", c.query, res.IDs, res.Total)
		}
		q.Statuses = []string{"publish"}
		q.ExcludeHidden, q.ExcludeProtected = true, true
		if res, _ := x.Search(t.Context(), q); res.Total != 0 {
			t.Errorf("anonymous search %q: %v, want nothing", c.query, res.IDs)
		}
	}
	// The walk of a query that may match the drafts reads their words:
	// the counter measures what the flood would have cost.
	editorWork, _ := run([]search.EventQuery{{Lang: "en", Query: queries[len(queries)-1], Statuses: editor, Limit: 10}})
	if editorWork < 1000 {
		t.Errorf("an editor's search read %d words: the flood is not in its vocabularies", editorWork)
	}
}

// TestReadersProceedWhileIndexing indexes huge documents (about 10,000
// words each, a 200,000-character description's worth of short words)
// while a reader runs queries, and pauses the writer after it has
// tokenized a chunk (outside the lock): the reader's queries must all
// complete while the writer is paused, which they could not if the writer
// held the lock while it tokenizes. Each huge document is its own chunk,
// so the lock is released between them.
func TestReadersProceedWhileIndexing(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	r := rand.New(rand.NewPCG(7, 8))
	x, _ := benchIndex(300)
	var huge []search.EventDocument
	for i := range 5 {
		huge = append(huge, floodEvent(int64(200000+i), "draft", randomWords(r, 10000, 8)))
	}
	deadline := testdeadline.Context(t) // a hang fails, never a slow machine

	paused, release := make(chan struct{}), make(chan struct{})
	chunks := 0
	x.preparedHook = func() {
		if chunks++; chunks == 1 {
			close(paused)
			<-release
		}
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		x.Apply(huge)
	}()
	select {
	case <-paused:
	case <-deadline.Done():
		t.Fatal("the writer never finished preparing its first chunk")
	}
	// The writer holds its documents' words, ready, and waits: every
	// query must answer now.
	done := make(chan int)
	go func() {
		n := 0
		for i := range 50 {
			q := search.EventQuery{Lang: "en", Statuses: []string{"publish"}, Limit: 8}
			if i%2 == 1 {
				q.Query = []string{"jaz", "cnocert", "exhbition "}[i%3]
			}
			if _, err := x.Search(deadline, q); err == nil {
				n++
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n != 50 {
			t.Errorf("%d of 50 queries answered", n)
		}
	case <-deadline.Done():
		t.Fatal("the reader blocked while the writer was paused outside the lock")
	}
	close(release)
	// Readers keep going while the rest is linked.
	readers := make(chan struct{})
	go func() {
		defer close(readers)
		for {
			select {
			case <-written:
				return
			default:
			}
			if _, err := x.Search(deadline, search.EventQuery{Lang: "en", Query: "jazz", Limit: 8}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-written:
	case <-deadline.Done():
		t.Fatal("the write did not finish")
	}
	<-readers
	if chunks != len(huge) {
		t.Errorf("the write took %d chunks, want one per huge document (%d)", chunks, len(huge))
	}
	for _, d := range huge {
		w := strings.Fields(d.Text["en"].Description)[123]
		res, _ := x.Search(t.Context(), search.EventQuery{Lang: "fr", Query: w, Limit: 8})
		if !slices.Equal(res.IDs, []int64{d.ID}) {
			t.Errorf("%q: %v, want [%d]", w, res.IDs, d.ID)
		}
	}
}
