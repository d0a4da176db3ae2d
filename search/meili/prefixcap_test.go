package meili

import (
	"fmt"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestPrefixCap: a prefix that Meilisearch did not store at indexing (more
// than 4 bytes, or fewer than 100 words) reaches only the first 1,000
// words starting with it, in byte order (MAX_PREFIX_COUNT); a stored one
// reaches them all. The contract's own engines have no cap (the
// difference docs/operators.md, "Meilisearch", describes). Runs against the fake,
// which models the cap (prefixReach), and a real server.
func TestPrefixCap(t *testing.T) {
	t.Parallel()
	tg := newTarget(t)
	e := tg.engine(t, tg.master, Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	// ωωω0000 … ωωω1099, one word per event. Greek letters take two
	// bytes: "ωωω" is 6 bytes (over the 4 of a stored prefix) but 3
	// characters, so no query below allows a typo (which would add the
	// typo derivations, capped at 150 words, to the count).
	const n = 1100
	docs := make([]search.EventDocument, n)
	for i := range docs {
		docs[i] = search.EventDocument{ID: int64(i + 1), Status: "publish",
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("ωωω%04d", i)}}}
	}
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  int
	}{
		{"ωωω", 1000},  // 6 bytes, not stored: the first 1,000 words
		{"ΩΩΩ", 1000},  // (folded)
		{"ωωω1", 100},  // 100 words: under the cap
		{"ωωω0", 1000}, // exactly 1,000 words: all of them
		{"ωω", n},      // 4 bytes and 100 words or more: stored, no cap
		{"ωωω ", 0},    // not a prefix: the word itself only
	}
	for _, tt := range tests {
		res, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "en", Query: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != tt.want {
			t.Errorf("%q: total %d, want %d", tt.query, res.Total, tt.want)
		}
	}
}
