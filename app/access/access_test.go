package access

import (
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// TestSeesLinked pins the rule for every role and status: a linked venue
// or organizer shows to whoever may read it on its own.
func TestSeesLinked(t *testing.T) {
	users := map[string]*repository.User{
		"anonymous":   nil,
		"contributor": {ID: 1, Role: repository.RoleContributor},
		"author":      {ID: 2, Role: repository.RoleAuthor},
		"editor":      {ID: 3, Role: repository.RoleEditor},
		"admin":       {ID: 4, Role: repository.RoleAdmin},
	}
	type rule struct {
		status string
		owner  int64
		sees   string // the readers who see it, space-separated
	}
	rules := []rule{
		{repository.StatusPublish, 3, "anonymous contributor author editor admin"},
		{repository.StatusDraft, 3, "editor admin"},
		{repository.StatusPending, 3, "editor admin"},
		{repository.StatusPrivate, 3, "editor admin"},
		{repository.StatusFuture, 3, "editor admin"},
		{repository.StatusTrash, 3, "editor admin"},
		{repository.StatusDraft, 1, "contributor editor admin"},
		{repository.StatusPending, 1, "contributor editor admin"},
		{repository.StatusPrivate, 2, "author editor admin"},
		{repository.StatusFuture, 2, "author editor admin"},
		{repository.StatusFuture, 1, "editor admin"}, // a contributor may not edit a scheduled post
	}
	for _, kind := range []repository.Kind{repository.KindVenue, repository.KindOrganizer} {
		for _, r := range rules {
			p := &repository.Record{Kind: kind, Status: r.status, Author: r.owner}
			for name, u := range users {
				want := strings.Contains(" "+r.sees+" ", " "+name+" ")
				if got := SeesLinked(u, p); got != want {
					t.Errorf("%s %s of user %d, read by %s: sees %v, want %v", r.status, kind, r.owner, name, got, want)
				}
			}
		}
	}
	img := &repository.Record{Kind: repository.KindImage, Status: repository.StatusDraft}
	if !SeesLinked(nil, img) {
		t.Error("images have no visibility of their own here")
	}
}

func TestCanEditPost(t *testing.T) {
	own := func(role repository.Role, status string) (*repository.User, *repository.Record) {
		return &repository.User{ID: 7, Role: role}, &repository.Record{Author: 7, Status: status}
	}
	tests := []struct {
		name   string
		role   repository.Role
		status string
		others bool
		want   bool
	}{
		{"contributor own draft", repository.RoleContributor, repository.StatusDraft, false, true},
		{"contributor own published", repository.RoleContributor, repository.StatusPublish, false, false},
		{"author own published", repository.RoleAuthor, repository.StatusPublish, false, true},
		{"author other's draft", repository.RoleAuthor, repository.StatusDraft, true, false},
		{"editor other's published", repository.RoleEditor, repository.StatusPublish, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, p := own(tt.role, tt.status)
			if tt.others {
				p.Author = 8
			}
			if got := CanEditRecord(u, p); got != tt.want {
				t.Errorf("CanEditPost = %v, want %v", got, tt.want)
			}
		})
	}
	if CanEditRecord(nil, &repository.Record{Status: repository.StatusDraft}) {
		t.Error("anonymous may edit")
	}
	if Forbidden(nil).Status != 401 || Forbidden(&repository.User{}).Status != 403 {
		t.Error("Forbidden: 401 for anonymous, 403 for the others")
	}
}

// TestReader checks the read decisions a request's Reader makes: the
// statuses a list shows, unlocking a protected post, and who sees every
// protected event.
func TestReader(t *testing.T) {
	editor := &repository.User{ID: 3, Role: repository.RoleEditor}
	author := &repository.User{ID: 2, Role: repository.RoleAuthor}
	locked := &repository.Record{Status: repository.StatusPublish, Author: 2, Password: "pw"}
	cases := []struct {
		name     string
		rd       Reader
		statuses string
		unlocks  bool
		seesAll  bool
	}{
		{"anonymous", Reader{}, "publish", false, false},
		{"anonymous, right password", Reader{Password: "pw"}, "publish", true, false},
		{"anonymous, wrong password", Reader{Password: "px"}, "publish", false, false},
		{"anonymous naming statuses", Reader{Statuses: []string{"draft"}}, "draft", false, false},
		{"author, own post, edit context", Reader{User: author, EditContext: true}, "publish future draft pending private", true, false},
		{"author, view context", Reader{User: author}, "publish future draft pending private", false, false},
		{"editor, edit context", Reader{User: editor, EditContext: true}, "publish future draft pending private", true, true},
		{"editor naming none of them", Reader{User: editor, Statuses: []string{}}, "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(c.rd.ListStatuses(), " "); got != c.statuses {
				t.Errorf("ListStatuses %q, want %q", got, c.statuses)
			}
			if got := c.rd.Unlocks(locked); got != c.unlocks {
				t.Errorf("Unlocks %v, want %v", got, c.unlocks)
			}
			if got := c.rd.SeesAllProtected(); got != c.seesAll {
				t.Errorf("SeesAllProtected %v, want %v", got, c.seesAll)
			}
		})
	}
}
