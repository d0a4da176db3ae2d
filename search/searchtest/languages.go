package searchtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/indexing"
)

// docStore is the part of the store the document builder reads for records
// without links: nothing is linked, so every lookup finds nothing.
type docStore struct{ repository.Store }

func (docStore) GetRecords(context.Context, []int64) (map[int64]*repository.Record, error) {
	return map[int64]*repository.Record{}, nil
}

func (docStore) GetLabels(context.Context, []int64) (map[int64]*repository.Label, error) {
	return map[int64]*repository.Label{}, nil
}

func (docStore) PlaceEvents(context.Context, repository.Kind, []int64) (map[int64]repository.PlaceEvents, error) {
	return map[int64]repository.PlaceEvents{}, nil
}

// testSingleLanguage checks the language fallback (docs/decisions.md,
// "Languages") end to end at the index: records written in one language
// only (or in languages other than the default) go through the sync
// worker's document builder and are found by a search in every language,
// by the text of the default language when they have it, else of their
// first language in LANGUAGES order.
func testSingleLanguage(t *testing.T, e search.Engine) {
	ctx := t.Context()
	b := &indexing.DocBuilder{Store: docStore{}, Languages: []string{"nl", "en", "fr", "de"}, DefaultLanguage: "en", Location: time.UTC}
	start := time.Date(2027, 6, 21, 18, 0, 0, 0, time.UTC)
	event := func(id int64, title, content repository.Text) *repository.Record {
		s := start.Add(time.Duration(id) * time.Hour)
		return &repository.Record{ID: id, Kind: repository.KindEvent, Status: repository.StatusPublish, Date: start,
			Title: title, Content: content,
			Event: &repository.EventFields{StartUTC: s, EndUTC: s.Add(time.Hour), StartLocal: s.Format("2006-01-02 15:04:05"), EndLocal: s.Add(time.Hour).Format("2006-01-02 15:04:05")}}
	}
	events, err := b.Events(ctx, []*repository.Record{
		event(1, repository.Text{"fr": "Fête de la musique"}, repository.Text{"fr": "Concerts gratuits"}),
		event(2, repository.Text{"en": "Jazz night", "fr": "Soirée jazz"}, nil),
		event(3, repository.Text{"nl": "Koningsdag", "fr": "Fête du roi"}, nil),
	})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	places, err := b.Places(ctx, []*repository.Record{
		{ID: 11, Kind: repository.KindVenue, Status: repository.StatusPublish, Date: start, Title: repository.Text{"fr": "Salle des fêtes"}, Venue: &repository.VenueFields{}},
		{ID: 12, Kind: repository.KindOrganizer, Status: repository.StatusPublish, Date: start, Title: repository.Text{"de": "Stadtfest Verein"}, Organizer: &repository.OrganizerFields{}},
	})
	if err != nil {
		t.Fatalf("Places: %v", err)
	}
	indexAll(t, e, events, places)

	eventCases := []struct {
		lang, query string
		want        []int64
	}{
		{"en", "fete", []int64{1}},       // French only: its French title in English
		{"en", "gratuits", []int64{1}},   // and its French description
		{"de", "fete", []int64{1}},       // in a third language too
		{"fr", "fete", []int64{1, 3}},    // its own language
		{"en", "koningsdag", []int64{3}}, // no default text: the first language (nl before fr)
		{"en", "roi", nil},               // not the later one
		{"en", "soiree", nil},            // the default language's text wins
		{"fr", "soiree", []int64{2}},     // a translation is searched in its language
		{"nl", "jazz night", []int64{2}}, // no Dutch: the default language
		{"fr", "night", nil},             // a translation hides the default text in its language
		{"de", "night", []int64{2}},      // but not in a language the event lacks
		{"en", "musique gratuits", []int64{1}},
	}
	for _, c := range eventCases {
		t.Run(fmt.Sprintf("events %s %q", c.lang, c.query), func(t *testing.T) {
			q := search.EventQuery{Lang: c.lang, Query: c.query, Statuses: []string{repository.StatusPublish}, Limit: 10}
			expect(t, func(ctx context.Context) error {
				return compare(search.Result{Total: len(c.want), IDs: c.want}, searchEvents(ctx, e, q))
			})
		})
	}
	placeCases := []struct {
		kind        search.PlaceKind
		lang, query string
		want        []int64
	}{
		{search.Venues, "en", "salle", []int64{11}},
		{search.Venues, "nl", "fetes", []int64{11}},
		{search.Organizers, "en", "stadtfest", []int64{12}},
		{search.Organizers, "fr", "verein", []int64{12}},
	}
	for _, c := range placeCases {
		t.Run(fmt.Sprintf("%s %s %q", c.kind, c.lang, c.query), func(t *testing.T) {
			q := search.PlaceQuery{Kind: c.kind, Lang: c.lang, Query: c.query, Statuses: []string{repository.StatusPublish}, Limit: 10}
			expect(t, func(ctx context.Context) error {
				return compare(search.Result{Total: len(c.want), IDs: c.want}, searchPlaces(ctx, e, q))
			})
		})
	}
	// The documents themselves: every configured language is present.
	for _, d := range events {
		for _, l := range b.Languages {
			if _, ok := d.Text[l]; !ok {
				t.Errorf("event %d: no %s text", d.ID, l)
			}
		}
	}
	if got := events[0].Text["en"].Title; got != "Fête de la musique" {
		t.Errorf("event 1 en title = %q, want the French one", got)
	}
}
