package wpimport_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/repository"
)

// usersSite is a site with an administrator, an editor, an author, a
// contributor and a subscriber, and records by some of them.
func usersSite() *replay.Site {
	byEditor, byAuthor, bySubscriber := replay.Event(1001, "Editor's night"), replay.Event(1002, "Author's night"), replay.Event(1003, "Subscriber's night")
	byEditor["author"], byAuthor["author"], bySubscriber["author"] = "2", "3", "5"
	venue := replay.Venue(1004, "Admin's hall") // author "1"
	return &replay.Site{
		Users: []map[string]any{
			replay.WPUser(1, "admin", "admin@example.org", "administrator"),
			replay.WPUser(2, "ed", "ed@example.org", "editor"),
			replay.WPUser(3, "au", "au@example.org", "author"),
			replay.WPUser(4, "co", "co@example.org", "contributor"),
			replay.WPUser(5, "sub", "sub@example.org", "subscriber"),
			replay.WPUser(6, "shop", "shop@example.org", "customer", "editor"),
		},
		Events: []map[string]any{byEditor, byAuthor, bySubscriber},
		Venues: []map[string]any{venue},
	}
}

// TestImportUsers (issue 34, finding 6): with Users, the source's users
// come over with their logins, e-mail addresses and mapped roles (the
// most capable one they have here), without passwords; a user already
// here with the same login is linked, not changed; others are skipped
// and listed; every record keeps its author. Later runs, with or without
// Users, change nothing; a role changed at the source is updated.
func TestImportUsers(t *testing.T) {
	site := usersSite()
	src := replay.NewSite(t, site)
	s := openSQLite(t)
	ctx := t.Context()
	local := &repository.User{Login: "Admin", Role: repository.RoleAdmin, Created: time.Now().UTC()}
	if err := s.CreateUser(ctx, local); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	opts := adminOptions(src, &logs)
	opts.Users = true
	rep := runImport(t, s, opts)
	var out bytes.Buffer
	rep.Print(&out)
	if rep.Users == nil || rep.Users.Created != 4 || len(rep.Users.Linked) != 1 || len(rep.Users.Skipped) != 1 {
		t.Fatalf("users report %+v\n%s", rep.Users, out.String())
	}
	if !strings.Contains(out.String(), `"sub" (subscriber)`) || !strings.Contains(out.String(), "token create --login") {
		t.Errorf("summary:\n%s", out.String())
	}
	want := map[string]struct {
		id    int64
		role  repository.Role
		email string
	}{
		"ed": {2, repository.RoleEditor, "ed@example.org"}, "au": {3, repository.RoleAuthor, "au@example.org"},
		"co": {4, repository.RoleContributor, "co@example.org"}, "shop": {6, repository.RoleEditor, "shop@example.org"},
	}
	for login, w := range want {
		u, err := s.GetUserByLogin(ctx, login)
		if err != nil {
			t.Fatalf("user %s: %v", login, err)
		}
		if u.ID != w.id || u.Role != w.role || u.Email != w.email || u.Origin == nil || u.Origin.ID != w.id {
			t.Errorf("user %s: %+v", login, u)
		}
		if toks, err := s.ListTokens(ctx, u.ID); err != nil || len(toks) != 0 {
			t.Errorf("user %s has tokens %v (%v)", login, toks, err)
		}
	}
	if _, err := s.GetUserByLogin(ctx, "sub"); err == nil {
		t.Errorf("the subscriber was imported")
	}
	if u, _ := s.GetUser(ctx, local.ID); u.Role != repository.RoleAdmin || u.Email != "" || u.Login != "Admin" {
		t.Errorf("the user who was here already changed: %+v", u)
	}
	authors := map[int64]int64{1001: 2, 1002: 3, 1003: 0, 1004: local.ID}
	checkAuthors := func(when string) {
		t.Helper()
		for id, want := range authors {
			p, err := s.GetRecord(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Author != want {
				t.Errorf("%s: record %d author %d, want %d", when, id, p.Author, want)
			}
		}
	}
	checkAuthors("first run")

	if again := runImport(t, s, opts); again.Changes() != 0 {
		t.Errorf("a second run with users changed %d", again.Changes())
	}
	plain := adminOptions(src, &logs)
	if again := runImport(t, s, plain); again.Changes() != 0 {
		t.Errorf("a run without users changed %d", again.Changes())
	}
	checkAuthors("after runs with and without users")

	site.Users[2]["roles"] = []string{"editor"}
	again := runImport(t, s, opts)
	if again.Users.Updated != 1 || again.Changes() != 1 {
		t.Errorf("after a role change at the source: users %+v, changes %d", again.Users, again.Changes())
	}
	if u, _ := s.GetUserByLogin(ctx, "au"); u.Role != repository.RoleEditor {
		t.Errorf("au's role %s, want editor", u.Role)
	}
}

// TestImportUsersNeedsAdmin: without credentials the source does not list
// its users: the run stops before writing anything and says what it
// needs.
func TestImportUsersNeedsAdmin(t *testing.T) {
	src := replay.NewSite(t, usersSite())
	s := openSQLite(t)
	opts := siteOptions(src)
	opts.Users = true
	_, err := wpimport.Run(t.Context(), s, opts)
	if err == nil || !strings.Contains(err.Error(), "administrator") {
		t.Fatalf("error %v, want it to say an administrator's credentials are needed", err)
	}
	if users, _ := s.ListUsers(t.Context()); len(users) != 0 {
		t.Errorf("users written: %v", users)
	}
	if _, err := s.GetRecord(t.Context(), 1001); err == nil {
		t.Errorf("records written")
	}
}
