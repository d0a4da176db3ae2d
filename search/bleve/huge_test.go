package bleve

import (
	"math/rand/v2"
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
