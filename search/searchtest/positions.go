package searchtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// testPositionLimit checks that every engine makes the same words of a
// very long attribute searchable: the first search.MaxAttributeWords
// (Meilisearch's 65,536 positions per attribute). A description of words
// and spaces whose last searchable word is "zyxwvut" and whose next word
// is "qponmlk": the first is found, the second by no engine; a word of
// the excerpt (another attribute) and of the title still are.
func testPositionLimit(t *testing.T, e search.Engine) {
	filler := strings.Repeat("aa ", search.MaxAttributeWords-1)
	start := time.Date(2027, 6, 21, 18, 0, 0, 0, time.UTC).Unix()
	doc := search.EventDocument{ID: 1, Status: repository.StatusPublish, Start: start, End: start + 3600,
		CategoryIDs: []int64{}, CategorySlugs: []string{}, TagIDs: []int64{}, TagSlugs: []string{}, VenueIDs: []int64{}, OrganizerIDs: []int64{},
		Text: map[string]search.Text{"en": {Title: "Marathon", Description: filler + "zyxwvut qponmlk", Excerpt: "hkjgfds"}}}
	if n := len(search.Words(doc.Text["en"].Description)); n != search.MaxAttributeWords+1 {
		t.Fatalf("the description has %d words, want %d", n, search.MaxAttributeWords+1)
	}
	indexAll(t, e, []search.EventDocument{doc}, nil)
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"zyxwvut ", []int64{1}}, // the last searchable word
		{"qponmlk ", nil},        // the first past the limit
		{"hkjgfds ", []int64{1}}, // the excerpt is an attribute of its own
		{"marathon ", []int64{1}},
	} {
		t.Run(fmt.Sprintf("%q", c.query), func(t *testing.T) {
			q := search.EventQuery{Lang: "en", Query: c.query, Statuses: []string{repository.StatusPublish}, Limit: 10}
			expect(t, func(ctx context.Context) error {
				return compare(search.Result{Total: len(c.want), IDs: c.want}, searchEvents(ctx, e, q))
			})
		})
	}
}
