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
	for _, kind := range []repository.PostKind{repository.KindVenue, repository.KindOrganizer} {
		for _, r := range rules {
			p := &repository.Post{Kind: kind, Status: r.status, Author: r.owner}
			for name, u := range users {
				want := strings.Contains(" "+r.sees+" ", " "+name+" ")
				if got := SeesLinked(u, p); got != want {
					t.Errorf("%s %s of user %d, read by %s: sees %v, want %v", r.status, kind, r.owner, name, got, want)
				}
			}
		}
	}
	img := &repository.Post{Kind: repository.KindImage, Status: repository.StatusDraft}
	if !SeesLinked(nil, img) {
		t.Error("images have no visibility of their own here")
	}
}
