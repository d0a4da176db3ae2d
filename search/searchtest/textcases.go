package searchtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// This file holds the suite's text-search cases: the generated cases of
// each text-matching rule (search/text.go), the relevance order and the
// facets.

// textCases are generated cases of each text-matching rule
// (search/text.go): accents and case both ways, prefixes of every length,
// typos on each side of the length boundaries (4/5 and 8/9 characters),
// first-letter typos, transpositions, digits, queries over the word limit,
// HTML in descriptions, and every language.
func textCases(f *Fixtures) []eventCase {
	var cases []eventCase
	add := func(lang, query string, x expectation) {
		cases = append(cases, eventCase{name: fmt.Sprintf("text %s %q", lang, query), q: search.EventQuery{Lang: lang, Query: query}, expect: x})
	}
	// Accents and case, both ways.
	for _, query := range []string{"ete", "ÉTÉ", "Été", "cinema", "CINEMA", "cinéma", "theatre", "soiree", "marche ", "fete"} {
		add("fr", query, some)
	}
	add("nl", "een", some)
	add("en", "CAFE", some)
	add("en", "Jazz", some)
	// Every prefix of words of each language, as typed, and each prefix
	// followed by a space (a whole word).
	for lang, words := range map[string][]string{"en": {"festival", "exhibition", "nightclub", "rock-n-roll"}, "fr": {"atelier", "soirée"}, "nl": {"rondleiding"}} {
		for _, w := range words {
			r := []rune(w)
			for n := 1; n <= len(r); n++ {
				add(lang, string(r[:n]), any)
				add(lang, string(r[:n])+" ", any)
			}
		}
	}
	add("en", "j", some)
	add("en", "summer ja", some)
	// Typos: 4 characters allow none, 5 to 8 one with the same first
	// letter, 9 and more two (another first letter uses both).
	for _, tc := range []struct {
		query string
		x     expectation
	}{
		{"jazx ", none}, {"jazx", none}, {"jzaz ", none},
		{"nigth ", some}, {"nihgt ", some}, {"nght ", none}, {"nigt ", none}, {"might ", none}, {"nxxht ", none},
		{"festivxl ", some}, {"festivxx ", none}, {"fetsival ", some}, {"efstival ", none},
		{"nightclbu ", some}, {"nigthclbu ", some}, {"xightclub ", some}, {"xightclbu ", none}, {"ingthclub ", none}, {"inghtclub ", some},
		{"exhibitoin ", some}, {"exibitoin ", some}, {"xehibitoin ", none},
		{"concret ", some}, {"cnocert ", some}, {"ocncert ", none},
		{"festiv", some}, {"festvi", some}, {"fsetiv", some}, {"nightclbuxx", none}, {"exhibitoi", some},
		{"jazz nigth", some}, {"jaz night", none}, {"jazz nigth ", some}, {"nigth jaz", some},
		// A record word of digits is reached without typos only, but as a
		// prefix too; a query word of digits has the typos of its length
		// (Meilisearch's disableOnNumbers acts on the record's words).
		{"12345 ", some}, {"12346 ", none}, {"12354 ", none}, {"1234", some}, {"1235", none}, {"2025", some}, {"2026 ", none},
		{"1990s ", some}, {"19905 ", some}, {"19905", some}, {"1990x ", some}, {"1234s ", none},
		// "12345s" does not reach the digits "12345", but reaches
		// "12345&nbsp;" of an HTML description (htmlOf), which a " - "
		// used to join to the next "-": a no-break space is part of a word
		// (it folds to a space), and a word with a space is not digits only.
		{"12345s ", some},
		// Words are cut where charabia cuts them: '°' is part of a word.
		{"3°f ", some}, {"3°", some}, {"3°F", some}, {"°f ", none},
		// Markup and entities are not words.
		{"strong", none}, {"p ", none}, {"div ", none}, {"class ", none}, {"nbsp ", none}, {"eacute ", none}, {"script ", none},
	} {
		add("en", tc.query, tc.x)
	}
	// A word longer than search.MaxWordBytes matches nothing (and costs
	// no distance computation).
	add("en", "jazz "+strings.Repeat("1", search.MaxWordBytes+1), none)
	add("en", "jazz "+strings.Repeat("1", search.MaxWordBytes+1)+" ", none)
	add("fr", "ete theatre", any)
	add("fr", "cinéam ", some)
	add("nl", "rondlieding ", some)
	// Only the first ten distinct words count: the words of an event with
	// ten distinct words, then one that matches nothing.
	for _, d := range f.Events {
		t := d.Text["en"]
		words := slices.Compact(slices.Sorted(slices.Values(TextWords(t.Title, t.Description, t.Excerpt))))
		if len(words) < search.MaxQueryWords {
			continue
		}
		query := strings.Join(words[:search.MaxQueryWords], " ")
		add("en", query+" zzzqqq", some)
		add("en", query+" "+words[0]+" zzzqqq", some)
		add("en", strings.Join(words[:search.MaxQueryWords-1], " ")+" zzzqqq", none)
		break
	}
	return cases
}

// testRelevance checks that a relevance order returns the reference's set
// and total (engines may order equally good matches differently), and that
// paging it neither loses nor repeats a match.
func testRelevance(t *testing.T, e search.Engine, f *Fixtures) {
	for _, query := range []string{"jazz", "jazz nigth", "festiv", "concert night", "ete", "12345"} {
		t.Run(query, func(t *testing.T) {
			lang := "en"
			if query == "ete" {
				lang = "fr"
			}
			q := search.EventQuery{Lang: lang, Query: query, Relevance: true, Statuses: []string{"publish", "future", "private"}, Limit: wholeLimit}
			want := ExpectedEvents(f.Events, q)
			got, err := e.SearchEvents(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			if want.Total == 0 {
				t.Fatal("fixtures do not exercise the case: nothing matches")
			}
			if got.Total != want.Total || !slices.Equal(slices.Sorted(slices.Values(got.IDs)), slices.Sorted(slices.Values(want.IDs))) {
				t.Fatalf("Total %d IDs %v; want the set of %d IDs %v", got.Total, clip(got.IDs), want.Total, clip(want.IDs))
			}
			var paged []int64
			for off := 0; off < want.Total; off += 7 {
				q.Offset, q.Limit = off, 7
				page, err := e.SearchEvents(t.Context(), q)
				if err != nil || page.Total != want.Total {
					t.Fatalf("page at %d: total %d, %v", off, page.Total, err)
				}
				paged = append(paged, page.IDs...)
			}
			if !slices.Equal(paged, got.IDs) {
				t.Errorf("pages %v differ from the whole order %v", clip(paged), clip(got.IDs))
			}
		})
	}
}

// testRelevanceOrder checks the ranking promise: a record whose title
// matches every word exactly comes before one that matches only through
// typos in its description, though it starts later; without Relevance the
// date order holds.
func testRelevanceOrder(t *testing.T, e search.Engine) {
	docs := []search.EventDocument{
		{ID: 1, Start: 100, End: 200, Text: en("Garden party", "A concret in the nigth garden, every concret nigth of the summer")},
		{ID: 2, Start: 300, End: 400, Text: en("Concert Night", "In the garden")},
		{ID: 3, Start: 500, End: 600, Text: en("Quiet morning", "Nothing to hear")},
	}
	publishUnlinked(docs)
	indexAll(t, e, docs, nil)
	for _, tc := range []struct {
		q    search.EventQuery
		want []int64
	}{
		{search.EventQuery{Lang: "en", Query: "concert night", Relevance: true, Limit: 10}, []int64{2, 1}},
		{search.EventQuery{Lang: "en", Query: "concert night", Relevance: true, Limit: 1}, []int64{2}},
		{search.EventQuery{Lang: "en", Query: "concert night", Limit: 10}, []int64{1, 2}},
		{search.EventQuery{Lang: "en", Relevance: true, Limit: 10}, []int64{1, 2, 3}},
	} {
		got, err := e.SearchEvents(t.Context(), tc.q)
		if err != nil || !slices.Equal(got.IDs, tc.want) || got.Total != len(tc.want) && tc.q.Limit != 1 {
			t.Errorf("%+v: IDs %v total %d (%v), want %v", tc.q, got.IDs, got.Total, err, tc.want)
		}
	}
}

// testFacets checks facet counts against the reference: over the whole
// filtered result whatever the page, for every facet.
func testFacets(t *testing.T, e search.Engine, f *Fixtures) {
	for _, tc := range []struct {
		name string
		q    search.EventQuery
	}{
		{"all facets, no filter", search.EventQuery{Lang: "en", Facets: search.EventFacets, Limit: 5}},
		{"total only", search.EventQuery{Lang: "en", Facets: []string{search.FacetCategories, search.FacetVenue}}},
		{"filtered", search.EventQuery{Lang: "en", Facets: search.EventFacets, Statuses: []string{"publish"}, ExcludeProtected: true, CategoryIDs: []int64{3}, Offset: 2, Limit: 3}},
		{"with text", search.EventQuery{Lang: "en", Query: "jazz nigth", Facets: search.EventFacets, Limit: 2}},
		{"with relevance", search.EventQuery{Lang: "en", Query: "festiv", Relevance: true, Facets: []string{search.FacetTags, search.FacetFeatured, search.FacetTicketed}, Limit: 2}},
		{"matching nothing", search.EventQuery{Lang: "en", Query: "zzzqqq", Facets: []string{search.FacetOrganizer}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.SearchEvents(t.Context(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			want := ExpectedFacets(f.Events, tc.q)
			if fmt.Sprint(got.Facets) != fmt.Sprint(want) {
				t.Errorf("facets\n got %v\nwant %v", got.Facets, want)
			}
			if exp := ExpectedEvents(f.Events, tc.q); got.Total != exp.Total {
				t.Errorf("Total %d, want %d", got.Total, exp.Total)
			}
		})
	}
}

// en is the English text of a document.
func en(title, description string) map[string]search.Text {
	return map[string]search.Text{"en": {Title: title, Description: description}}
}

// publishUnlinked makes each event published and linked to no term,
// venue or organizer.
func publishUnlinked(docs []search.EventDocument) {
	for i := range docs {
		docs[i].Status, docs[i].CategoryIDs, docs[i].TagIDs, docs[i].VenueIDs, docs[i].OrganizerIDs = "publish", []int64{}, []int64{}, []int64{}, []int64{}
	}
}
