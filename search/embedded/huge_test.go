package embedded

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// hugeEvent returns an event whose description is 200,000 characters of
// random words (the description limit), in seven languages falling back
// to one text.
func hugeEvent(r *rand.Rand, id int64) search.EventDocument {
	var b strings.Builder
	for b.Len() < 200000-9 {
		n := 3 + r.IntN(10)
		for range n {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	t := search.Text{Title: "huge", Description: b.String()}
	d := search.EventDocument{ID: id, Status: "draft", Start: 1_800_000_000, End: 1_800_003_600, Text: map[string]search.Text{}}
	for _, l := range []string{"nl", "en", "fr", "de", "it", "pl", "es"} {
		d.Text[l] = t
	}
	return d
}

// BenchmarkIndexHugeEvent measures what indexing one event with a
// 200,000-character description costs the engine (stored document and
// memory index): go test ./search/embedded -run XXX -bench HugeEvent.
func BenchmarkIndexHugeEvent(b *testing.B) {
	e, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]search.EventDocument, b.N)
	for i := range docs {
		docs[i] = hugeEvent(r, int64(i+1))
	}
	b.ResetTimer()
	for i := range docs {
		if err := e.IndexEvents(b.Context(), docs[i:i+1]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStoredEventRoundTrip stores documents whose languages share texts
// (each distinct text is stored once) and reads them back whole, as
// eventStore.load does, along with a document stored in the older form (every
// language written out).
func TestStoredEventRoundTrip(t *testing.T) {
	t.Parallel()
	one := search.Text{Title: "Jazz <b>night</b>", Description: "Three &amp; bands", Excerpt: "x"}
	plain := search.Text{Title: "Jazz night", Description: "Three & bands", Excerpt: "x"}
	other := search.Text{Title: "Nuit du jazz"}
	for _, c := range []struct {
		name string
		text map[string]search.Text
		want map[string]search.Text
	}{
		{"untranslated", map[string]search.Text{"en": one, "fr": one, "nl": one}, map[string]search.Text{"en": plain, "fr": plain, "nl": plain}},
		{"one translation", map[string]search.Text{"en": one, "fr": other, "nl": one}, map[string]search.Text{"en": plain, "fr": other, "nl": plain}},
		{"no text", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := search.EventDocument{ID: 7, Status: "publish", Text: c.text, CategoryIDs: []int64{3}}
			raw := string(encodeEvent(d, ""))
			if c.name == "untranslated" && strings.Count(raw, "Three") != 1 {
				t.Errorf("the shared text is stored %d times: %s", strings.Count(raw, "Three"), raw)
			}
			got, err := decodeEvent([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Text, c.want) || got.ID != 7 || got.Status != "publish" || !slices.Equal(got.CategoryIDs, []int64{3}) {
				t.Errorf("read back %+v, want text %+v", got, c.want)
			}
		})
	}
	old := `{"id":9,"text":{"en":{"title":"A","description":"","excerpt":""},"fr":{"title":"A","description":"","excerpt":""}},"status":"draft"}`
	got, err := decodeEvent([]byte(old))
	if err != nil || len(got.Text) != 2 || got.Text["fr"].Title != "A" || got.ID != 9 {
		t.Errorf("older form: %+v, %v", got, err)
	}
}

// TestHiddenPlacesCostAnonymousSearchesNothing fills the venue index with
// the words of draft, pending and private venues and checks, by the number
// of dictionary words the typo expansions read (not by time), that an
// anonymous venue search does the same work as before and finds the same
// venues, while a search that may match drafts finds their words through
// typos.
func TestHiddenPlacesCostAnonymousSearchesNothing(t *testing.T) {
	e := mustOpen(t, t.TempDir())
	defer e.Close()
	r := rand.New(rand.NewPCG(9, 10))
	venue := func(id int64, status, text string) search.PlaceDocument {
		return search.PlaceDocument{ID: id, Kind: search.Venues, Status: status, PublishDate: id,
			Text:   map[string]search.Text{"en": {Title: text}},
			Fields: map[string]string{"city": text}, LastStart: map[string]int64{}}
	}
	var public []search.PlaceDocument
	for i := range 30 {
		public = append(public, venue(int64(i+1), "publish", "Paradiso "+randomWords(r, 3)))
	}
	if err := e.IndexPlaces(t.Context(), public); err != nil {
		t.Fatal(err)
	}
	queries := []string{"paradsio", "parardisoo", "qwertyuiop", "zzzzzzzzzz", "prdiso", "para"}
	run := func(statuses []string) (uint64, []search.Result) {
		before := dictWordsRead.Load()
		var out []search.Result
		for _, q := range queries {
			res, err := e.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: q, Statuses: statuses, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, res)
		}
		return dictWordsRead.Load() - before, out
	}
	anon := []string{"publish"}
	quietWork, quietResults := run(anon)
	if quietWork == 0 {
		t.Fatal("the expansions read no word: the test measures nothing")
	}
	var hidden []search.PlaceDocument
	for i := range 90 {
		hidden = append(hidden, venue(int64(1000+i), []string{"draft", "pending", "private"}[i%3], randomWords(r, 300)))
	}
	draftWord := strings.Fields(hidden[0].Text["en"].Title)[0]
	if err := e.IndexPlaces(t.Context(), hidden); err != nil {
		t.Fatal(err)
	}
	floodWork, floodResults := run(anon)
	if floodWork != quietWork {
		t.Errorf("anonymous venue searches read %d dictionary words after the hidden venues came, %d before", floodWork, quietWork)
	}
	if !reflect.DeepEqual(floodResults, quietResults) {
		t.Errorf("anonymous results changed: %v, before %v", floodResults, quietResults)
	}
	b := []byte(draftWord)
	b[2], b[3] = b[3], b[2]
	for _, c := range []struct {
		statuses []string
		want     int
	}{{nil, 1}, {[]string{"publish", "draft"}, 1}, {anon, 0}} {
		res, err := e.SearchPlaces(t.Context(), search.PlaceQuery{Kind: search.Venues, Lang: "en", Query: string(b), Statuses: c.statuses, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != c.want {
			t.Errorf("search %q with statuses %v: %v, want %d match", b, c.statuses, res.IDs, c.want)
		}
	}
}

// randomWords returns n random words of 10 letters, space-separated.
func randomWords(r *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		b := make([]byte, 10)
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	return strings.Join(words, " ")
}
