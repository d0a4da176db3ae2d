package bleve

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
// memory index): go test ./search/bleve -run XXX -bench HugeEvent.
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
// loadEvents does, along with a document stored in the older form (every
// language written out).
func TestStoredEventRoundTrip(t *testing.T) {
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
			fields, err := eventFields(d)
			if err != nil {
				t.Fatal(err)
			}
			raw := fields[fieldDoc].(string)
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
