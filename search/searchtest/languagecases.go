package searchtest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// RunLanguages checks the language rules of text search on records in
// every combination of languages: a list with words in language L searches
// the text in L, falling back field by field to the default language, then
// to the record's first language (the document builder resolves the text
// of every configured language that way). The records are in the default
// language only, in French only, in both with different words, with only
// the title translated, and a series one of whose occurrences has a French
// title of its own; the queries are in the default language, in French and
// in a language no record has, with paging, totals, facets and collapsed
// series. Every engine must return exactly the same lists, whatever it
// stores (Meilisearch writes each distinct text once: search/meili).
func RunLanguages(t *testing.T, newEngine func(t *testing.T) search.Engine) {
	testLanguageCases(t, openEngine(t, newEngine))
}

// languageDocs returns the documents of the language records, in start
// order: 1 default only, 2 French only, 3 both, 4 title translated, and
// the three occurrences of series 5 (the second with a French title).
func languageDocs() []search.EventDocument {
	langs := []string{"en", "fr", "de", "nl"}
	const def = "en"
	resolve := func(title, desc repository.Text) map[string]search.Text {
		out := map[string]search.Text{}
		for _, l := range langs {
			out[l] = search.Text{Title: title.Get(l, def, langs...), Description: desc.Get(l, def, langs...)}
		}
		return out
	}
	const base = 1_900_000_000
	event := func(id int64, hour int64, featured bool, title, desc repository.Text) search.EventDocument {
		start := base + hour*3600
		return search.EventDocument{ID: id, Status: "publish", Text: resolve(title, desc), Featured: featured,
			Start: start, End: start + 3600, StartLocal: start, EndLocal: start + 3600,
			CategoryIDs: []int64{}, TagIDs: []int64{}, VenueIDs: []int64{}, OrganizerIDs: []int64{}}
	}
	docs := []search.EventDocument{
		event(1, 1, true, repository.Text{"en": "Harbour concert calendarium"}, repository.Text{"en": "Brass band on the quay"}),
		event(2, 2, false, repository.Text{"fr": "Concert portuaire calendarium"}, repository.Text{"fr": "Fanfare sur le quai"}),
		event(3, 3, true, repository.Text{"en": "Lantern parade calendarium", "fr": "Défilé des lampions calendarium"},
			repository.Text{"en": "Children walking", "fr": "Enfants qui marchent"}),
		event(4, 4, false, repository.Text{"en": "Market day calendarium", "fr": "Jour de marché calendarium"},
			repository.Text{"en": "Cheese stalls"}),
	}
	title := repository.Text{"en": "Choir rehearsal calendarium"}
	desc := repository.Text{"en": "Singing practice"}
	series := Occurrences(event(5, 5, false, title, desc), 3, 86400)
	over := maps.Clone(title)
	over["fr"] = "Répétition spéciale calendarium"
	series[1].Text = resolve(over, desc)
	return append(docs, series...)
}

// testLanguageCases indexes languageDocs and runs the table.
func testLanguageCases(t *testing.T, e search.Engine) {
	docs := languageDocs()
	indexAll(t, e, docs, nil)
	// want lists positions in docs (start order): 4, 5 and 6 are the
	// series' occurrences.
	cases := []struct {
		lang, query    string
		offset, limit  int
		collapse       bool
		want           []int
		total          int // -1: len(want)
		featuredFacets map[string]int
	}{
		// The default language.
		{lang: "en", query: "harbour", want: []int{0}},
		{lang: "en", query: "quay", want: []int{0}},
		{lang: "en", query: "portuaire", want: []int{1}}, // French only: found by its French text
		{lang: "en", query: "lantern", want: []int{2}},
		{lang: "en", query: "defile", want: nil}, // the English text wins
		{lang: "en", query: "market cheese", want: []int{3}},
		{lang: "en", query: "choir", want: []int{4, 5, 6}},
		{lang: "en", query: "speciale", want: nil},
		// French.
		{lang: "fr", query: "harbour quay", want: []int{0}}, // no French: the default text
		{lang: "fr", query: "portuaire quai", want: []int{1}},
		{lang: "fr", query: "defile enfants", want: []int{2}},
		{lang: "fr", query: "lantern", want: nil}, // a translation hides the default text
		{lang: "fr", query: "children", want: nil},
		{lang: "fr", query: "jour cheese", want: []int{3}}, // the title translated, the description not
		{lang: "fr", query: "market", want: nil},
		{lang: "fr", query: "choir", want: []int{4, 6}},
		{lang: "fr", query: "speciale singing", want: []int{5}},
		{lang: "fr", query: "singing", want: []int{4, 5, 6}},
		{lang: "fr", query: "singing", collapse: true, want: []int{4}},
		{lang: "fr", query: "choir", collapse: true, want: []int{4}},
		// A language no record has: the default text, else the first.
		{lang: "de", query: "lantern children", want: []int{2}},
		{lang: "de", query: "defile", want: nil},
		{lang: "de", query: "portuaire", want: []int{1}},
		{lang: "de", query: "market cheese", want: []int{3}},
		{lang: "nl", query: "choir", want: []int{4, 5, 6}},
		// Pages, totals and facets over every record, in each language.
		{lang: "fr", query: "calendarium", want: []int{0, 1, 2, 3, 4, 5, 6}, featuredFacets: map[string]int{"true": 2, "false": 5}},
		{lang: "fr", query: "calendarium", offset: 2, limit: 3, want: []int{2, 3, 4}, total: 7},
		{lang: "fr", query: "calendarium", offset: 6, limit: 3, want: []int{6}, total: 7},
		{lang: "fr", query: "calendarium", collapse: true, want: []int{0, 1, 2, 3, 4}, featuredFacets: map[string]int{"true": 2, "false": 5}},
		{lang: "fr", query: "calendarium", collapse: true, offset: 3, limit: 5, want: []int{3, 4}, total: 5},
		{lang: "fr", query: "calendarium", limit: -1, want: nil, total: 7},
		{lang: "en", query: "calendarium", offset: 1, limit: 2, want: []int{1, 2}, total: 7, featuredFacets: map[string]int{"true": 2, "false": 5}},
		{lang: "de", query: "calendarium", collapse: true, offset: 1, limit: 2, want: []int{1, 2}, total: 5},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s %q offset %d limit %d collapse %v", c.lang, c.query, c.offset, c.limit, c.collapse)
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			limit := c.limit
			switch {
			case limit == 0:
				limit = 20
			case limit < 0:
				limit = 0
			}
			q := search.EventQuery{Lang: c.lang, Query: c.query, Statuses: []string{"publish"}, Offset: c.offset, Limit: limit, CollapseSeries: c.collapse}
			if c.featuredFacets != nil {
				q.Facets = []string{search.FacetFeatured}
			}
			want := search.Result{IDs: []int64{}, Total: c.total}
			if c.total == 0 {
				want.Total = len(c.want)
			}
			for _, i := range c.want {
				want.IDs = append(want.IDs, docs[i].ID)
				if docs[i].Occurrence != "" && want.Occurrences == nil {
					want.Occurrences = make([]string, len(want.IDs)-1)
				}
				if want.Occurrences != nil {
					want.Occurrences = append(want.Occurrences, docs[i].Occurrence)
				}
			}
			expect(t, func(ctx context.Context) error {
				got := searchEvents(ctx, e, q)
				if err := compare(want, got); err != nil {
					return err
				}
				if c.featuredFacets != nil && !maps.Equal(got.Facets[search.FacetFeatured], c.featuredFacets) {
					return fmt.Errorf("featured facet = %v, want %v", got.Facets[search.FacetFeatured], c.featuredFacets)
				}
				return nil
			})
		})
	}
}
