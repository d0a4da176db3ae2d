package wpimport_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// TestUsersCheckedAsTheAccounts: the importer creates users through the
// calendar's accounts service, under its login rules: a source user
// whose login the service refuses (a control character, or over
// calendar.MaxLogin bytes) is skipped and listed, not stored; the others
// are created with the source's IDs.
func TestUsersCheckedAsTheAccounts(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("l", calendar.MaxLogin+1)
	src := replay.NewSite(t, &replay.Site{Users: []map[string]any{
		replay.WPUser(7, "ed", "ed@example.org", "editor"),
		replay.WPUser(8, "bad\x01login", "b@example.org", "editor"),
		replay.WPUser(9, long, "l@example.org", "author"),
	}})
	s := openSQLite(t)
	opts := adminOptions(src, &bytes.Buffer{})
	opts.Users = true
	rep := runImport(t, s, opts)
	if rep.Users == nil || rep.Users.Created != 1 || len(rep.Users.Skipped) != 2 {
		t.Fatalf("users report %+v", rep.Users)
	}
	users, err := s.ListUsers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var logins []string
	for _, u := range users {
		logins = append(logins, fmt.Sprintf("%d %s", u.ID, u.Login))
	}
	if want := []string{"7 ed"}; !slices.Equal(logins, want) {
		t.Errorf("users stored %q, want %q", logins, want)
	}
}
