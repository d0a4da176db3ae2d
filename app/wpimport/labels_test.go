package wpimport_test

import (
	"errors"
	"testing"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// TestLabelsCheckedAsTheAPI: the importer writes categories and tags
// through the calendar's labels service, so a label the API refuses is
// refused alike: a source category named as a category already here (at
// the same parent) fails with the API's term_exists message and is not
// stored, while a tag of that name and another category are imported.
func TestLabelsCheckedAsTheAPI(t *testing.T) {
	t.Parallel()
	s := openSQLite(t)
	ctx := t.Context()
	labels := calendar.NewLabels(calendar.LabelsDeps{Store: s})
	admin := &repository.User{ID: 1, Login: "admin", Role: repository.RoleAdmin}
	name := "Music"
	here, err := labels.Create(ctx, admin, "en", repository.LabelCategory, &calendar.LabelInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	// What the API answers for a second category of that name.
	_, apiErr := labels.Create(ctx, admin, "en", repository.LabelCategory, &calendar.LabelInput{Name: &name})
	if apiErr == nil {
		t.Fatal("the API accepts a second category Music")
	}
	cat := func(id int64, name, slug string) map[string]any {
		c := replay.Term(id, name, slug)
		c["taxonomy"], c["parent"] = "tribe_events_cat", 0
		return c
	}
	src := replay.NewSite(t, &replay.Site{
		Categories: []map[string]any{cat(601, "Music", "music-src"), cat(602, "Theatre", "theatre")},
		Tags:       []map[string]any{replay.Term(603, "Music", "music")},
	})
	rep := runImport(t, s, siteOptions(src))
	var failed []wpimport.Failure
	for _, k := range rep.Kinds {
		failed = append(failed, k.Failed...)
	}
	var ae *apierr.Error
	if !errors.As(apiErr, &ae) || ae.Code != "term_exists" {
		t.Fatalf("the API answers %v, want term_exists", apiErr)
	}
	if len(failed) != 1 || failed[0].Kind != wpimport.KindCategory || failed[0].ID != 601 || failed[0].Field != "name" || failed[0].Reason != ae.Message {
		t.Errorf("failures %+v; want category 601 refused with %q", failed, apiErr)
	}
	if _, err := s.GetLabel(ctx, 601); err == nil {
		t.Error("category 601 is stored")
	}
	for _, id := range []int64{here.ID, 602, 603} {
		if _, err := s.GetLabel(ctx, id); err != nil {
			t.Errorf("label %d: %v", id, err)
		}
	}
}
