package mongo_test

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
)

// testNameKeysBackfill: terms stored without name_keys (before the name
// index) are found by name after the next Open.
func testNameKeysBackfill(t *testing.T, ctx context.Context, _ *mongo.Store) {
	uri := mongotest.Start(t)
	db := mongotest.Database(t)
	s, err := mongo.Open(ctx, uri, db)
	if err != nil {
		t.Fatal(err)
	}
	term := &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "Old Tag", "de": "Alter Tag"}, Slug: repository.Text{"en": "old-tag"}}
	if err := s.CreateLabel(ctx, term); err != nil {
		t.Fatal(err)
	}
	if err := mongo.StripNameKeysForTest(ctx, s); err != nil {
		t.Fatal(err)
	}
	found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelTag, Name: "old tag", NameLang: "en"})
	if err != nil || len(found) != 0 {
		t.Fatalf("before the backfill: %d found, %v (the test must start without keys)", len(found), err)
	}
	s.Close(ctx)
	s, err = mongo.Open(ctx, uri, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	for lang, name := range map[string]string{"en": "OLD TAG", "de": "alter tag"} {
		found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelTag, Name: name, NameLang: lang})
		if err != nil || len(found) != 1 || found[0].ID != term.ID {
			t.Errorf("after the backfill, %s %q: %v, %v", lang, name, found, err)
		}
	}
}
