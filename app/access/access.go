// Package access decides who may read or change what: the roles, the
// per-object rules, which linked records a reader may see and who may store
// unfiltered HTML. Every rule is a function of a caller (nil when anonymous)
// and a record; nothing here reads a request or the store.
package access

import (
	"crypto/subtle"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// The rules follow WordPress's roles as the original plugin maps them onto
// events, venues and organizers: contributors create and
// edit their own unpublished items; authors also publish and edit their own
// published items; editors and admins edit everything.

// rank orders the roles; anonymous callers rank 0.
func rank(u *repository.User) int {
	if u == nil {
		return 0
	}
	switch u.Role {
	case repository.RoleContributor:
		return 1
	case repository.RoleAuthor:
		return 2
	case repository.RoleEditor:
		return 3
	case repository.RoleAdmin:
		return 4
	}
	return 0
}

// CanCreateRecords is edit_posts: every role from contributor up.
func CanCreateRecords(u *repository.User) bool { return rank(u) >= 1 }

// CanPublish is publish_posts: author and up.
func CanPublish(u *repository.User) bool { return rank(u) >= 2 }

// CanEditOthers is edit_others_posts (and private posts): editor and up.
func CanEditOthers(u *repository.User) bool { return rank(u) >= 3 }

// wasPublished reports whether the post counts as published for the
// edit_published_posts check.
func wasPublished(p *repository.Record) bool {
	return p.Status == repository.StatusPublish || p.Status == repository.StatusFuture || p.Status == repository.StatusPrivate
}

// CanEditRecord is edit_post (and delete_post) on one object, WordPress's
// map_meta_cap: own unpublished items need edit_posts, own published items
// edit_published_posts, others' items edit_others_posts.
func CanEditRecord(u *repository.User, p *repository.Record) bool {
	if u == nil {
		return false
	}
	if p.Author != u.ID {
		return CanEditOthers(u)
	}
	if wasPublished(p) {
		return CanPublish(u)
	}
	return CanCreateRecords(u)
}

// CanReadRecord is read_post: published items for everyone, others for those
// who may edit them (private ones included).
func CanReadRecord(u *repository.User, p *repository.Record) bool {
	if p.Status == repository.StatusPublish {
		return true
	}
	return CanEditRecord(u, p)
}

// CanManageLabels reports whether u may create, update or delete terms of
// the taxonomy: categories need the events publish capability (author and
// up), tags manage_categories (editor and up), as in the original plugin.
func CanManageLabels(u *repository.User, tax repository.LabelKind) bool {
	if tax == repository.LabelCategory {
		return rank(u) >= 2
	}
	return rank(u) >= 3
}

// CanUploadFiles is upload_files: author and up (contributors may only use
// images that are already registered).
func CanUploadFiles(u *repository.User) bool { return rank(u) >= 2 }

// Forbidden is 401 for anonymous callers and 403 for others.
func Forbidden(u *repository.User) *apierr.Error {
	if u == nil {
		return apierr.Forbidden(401)
	}
	return apierr.Forbidden(403)
}

// IsAdmin reports whether u has the admin role (the admin routes, /metrics).
func IsAdmin(u *repository.User) bool { return rank(u) >= 4 }

// CanUnfilteredHTML is WordPress's unfiltered_html: editors and admins
// store any HTML in any field; the others' text goes through htmlpolicy.
func CanUnfilteredHTML(u *repository.User) bool { return rank(u) >= 3 }

// SeesLinked reports whether u may see linked record p embedded
// inside another record, in every output format (JSON, json_ld, the
// iCalendar feeds, webhook messages): a venue or organizer is shown only
// to a reader who may read it on its own (CanReadPost: published ones to
// everyone; draft, pending, private, future and trashed ones to those who
// may edit them). Images and terms have no status of their own here and
// are always shown. u is nil for an anonymous reader.
func SeesLinked(u *repository.User, p *repository.Record) bool {
	if p.Kind == repository.KindVenue || p.Kind == repository.KindOrganizer {
		return CanReadRecord(u, p)
	}
	return true
}

// DefaultStatuses are the statuses a list shows u when the request names
// none: every status but trash to those who may create posts (the store
// query then keeps only what they may read), published ones to the others.
func DefaultStatuses(u *repository.User) []string {
	if CanCreateRecords(u) {
		return []string{repository.StatusPublish, repository.StatusFuture, repository.StatusDraft, repository.StatusPending, repository.StatusPrivate}
	}
	return []string{repository.StatusPublish}
}

// Unlocks reports whether a reader sees a password-protected post: the
// right password, or context=edit (editContext) from a caller who may edit
// it.
func Unlocks(u *repository.User, p *repository.Record, password string, editContext bool) bool {
	if p.Password == "" {
		return true
	}
	if password != "" && subtle.ConstantTimeCompare([]byte(password), []byte(p.Password)) == 1 {
		return true
	}
	return editContext && CanEditRecord(u, p)
}

// CheckReadable is the read decision on one post of resource res ("event",
// "venue", "organizer"): trashed ones only for their editors, the others as
// CanReadPost, protected ones only when unlocked (Unlocks).
func CheckReadable(u *repository.User, p *repository.Record, res string, unlocked bool) error {
	if p.Status == repository.StatusTrash && !CanEditRecord(u, p) {
		return apierr.New(403, res+"-no-longer-available", "This "+res+" is no longer available")
	}
	if !CanReadRecord(u, p) {
		return apierr.New(403, res+"-not-accessible", "The requested "+res+" is not accessible")
	}
	if !unlocked {
		return apierr.New(403, res+"-password-protected", "The requested "+res+" is not accessible without a password")
	}
	return nil
}

// SeesAllProtected reports whether u, asking with context=edit
// (editContext), sees every protected event in lists and facets: editors
// and admins.
func SeesAllProtected(u *repository.User, editContext bool) bool {
	return editContext && u != nil && CanEditOthers(u) && CanPublish(u)
}

// Reader is what a read request says about who reads: the caller (nil
// when anonymous), the password sent, whether it asked for context=edit,
// and the statuses it named (nil when none). The read decisions of lists
// and single reads are its methods.
type Reader struct {
	User        *repository.User
	Password    string
	EditContext bool
	// Statuses are the statuses the request named (status=...), nil when
	// it named none.
	Statuses []string
}

// Unlocks reports whether the reader sees the protected fields of p
// (Unlocks).
func (rd Reader) Unlocks(p *repository.Record) bool {
	return Unlocks(rd.User, p, rd.Password, rd.EditContext)
}

// SeesAllProtected reports whether the reader sees every protected event
// in lists and facets (SeesAllProtected).
func (rd Reader) SeesAllProtected() bool { return SeesAllProtected(rd.User, rd.EditContext) }

// ListStatuses returns the statuses a list shows the reader: the ones it
// named, else DefaultStatuses.
func (rd Reader) ListStatuses() []string {
	if rd.Statuses != nil {
		return rd.Statuses
	}
	return DefaultStatuses(rd.User)
}
