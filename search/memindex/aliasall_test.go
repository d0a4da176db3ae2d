package memindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestAliasesAllSparesTheTest checks that a word match of a language
// whose text is another's for every event (the service's languages
// falling back to one text) takes the aliased language's rows without
// testing them against the alias rows (aliasesAll: the test was a tenth
// of a cold typeahead query's CPU with many series), that it tests them
// when some event has a text of its own in the language or a writer
// holds a row hidden, and that the hits are the same either way.
func TestAliasesAllSparesTheTest(t *testing.T) {
	const now = benchNow
	// docs returns events with the same text in three languages, own of
	// them (single events whose English text holds jazz) with a French
	// text of its own, which does not.
	docs := func(own int) []search.EventDocument {
		var out []search.EventDocument
		for i := range 300 {
			text := search.Text{Title: fmt.Sprintf("jazz concert %d", i), Description: "An evening of jazz."}
			if i%3 == 0 {
				text.Title = fmt.Sprintf("cinema club %d", i)
			}
			texts := map[string]search.Text{"en": text, "fr": text, "de": text}
			if i >= 1 && i <= own {
				texts["fr"] = search.Text{Title: fmt.Sprintf("soirée %d", i)}
			}
			d := search.EventDocument{ID: int64(i + 1), Status: "publish", Start: now + int64(i)*3600, End: now + int64(i)*3600 + 60, Text: texts}
			if i%10 == 0 {
				// A weekly series: groups, whose members match too.
				for k := range 20 {
					o := d
					o.Occurrence = fmt.Sprintf("w%02d", k)
					o.Start, o.End = d.Start+int64(k)*7*86400, d.End+int64(k)*7*86400
					out = append(out, o)
				}
				continue
			}
			out = append(out, d)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		own    int  // events with a French text of their own
		hidden bool // a row held hidden, as a writer linking in pieces does
		tested bool // the aliased rows are tested
	}{
		{"every text aliased", 0, false, false},
		{"one own text", 1, false, true},
		{"two own texts", 2, false, true},
		{"many own texts", 50, false, true},
		{"a row held hidden", 0, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := New()
			x.Apply(docs(c.own))
			if c.hidden {
				x.mu.Lock()
				x.hidden.Add(uint32(len(x.rows) - 1))
				x.mu.Unlock()
			}
			for _, words := range []string{"j", "jazz", "jazz c", "jazz concrt ", "soirée", "cinema"} {
				q := with(now, func(q *search.EventQuery) { q.Query = words; q.Lang = "fr"; q.Limit = 1000 })
				emptyMatches(x)
				before := x.aliasTested.Load()
				got, err := x.Search(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				tested := x.aliasTested.Load() - before
				aliasesAllTested = false
				emptyMatches(x)
				want, err := x.Search(t.Context(), q)
				aliasesAllTested = true
				if err != nil {
					t.Fatal(err)
				}
				if got.Total != want.Total || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Occurrences, want.Occurrences) {
					t.Errorf("%q: %d hits, testing every aliased match %d (or other pages)", words, got.Total, want.Total)
				}
				if words == "jazz" && want.Total == 0 {
					t.Errorf("%q: no hit: the test weighs nothing", words)
				}
				// ("soirée" matches only the French texts of their own.)
				if (tested > 0) != c.tested && words != "soirée" {
					t.Errorf("%q: %d aliased rows tested, want tested %v", words, tested, c.tested)
				}
			}
		})
	}
}
