package app

import (
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// Permissions follow WordPress's roles as the original plugin maps them onto
// events, venues and organizers (reference 10.1): contributors create and
// edit their own unpublished items; authors also publish and edit their own
// published items; editors and admins edit everything.

// roleRank orders the roles; anonymous callers rank 0.
func roleRank(u *repository.User) int {
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

// canCreatePosts is edit_posts: every role from contributor up.
func canCreatePosts(u *repository.User) bool { return roleRank(u) >= 1 }

// canPublish is publish_posts: author and up.
func canPublish(u *repository.User) bool { return roleRank(u) >= 2 }

// canEditOthers is edit_others_posts (and private posts): editor and up.
func canEditOthers(u *repository.User) bool { return roleRank(u) >= 3 }

// wasPublished reports whether the post counts as published for the
// edit_published_posts check.
func wasPublished(p *repository.Post) bool {
	return p.Status == repository.StatusPublish || p.Status == repository.StatusFuture || p.Status == repository.StatusPrivate
}

// canEditPost is edit_post (and delete_post) on one object, WordPress's
// map_meta_cap: own unpublished items need edit_posts, own published items
// edit_published_posts, others' items edit_others_posts.
func canEditPost(u *repository.User, p *repository.Post) bool {
	if u == nil {
		return false
	}
	if p.Author != u.ID {
		return canEditOthers(u)
	}
	if wasPublished(p) {
		return canPublish(u)
	}
	return canCreatePosts(u)
}

// canReadPost is read_post: published items for everyone, others for those
// who may edit them (private ones included).
func canReadPost(u *repository.User, p *repository.Post) bool {
	if p.Status == repository.StatusPublish {
		return true
	}
	return canEditPost(u, p)
}

// canManageTerms reports whether u may create, update or delete terms of
// the taxonomy: categories need the events publish capability (author and
// up), tags manage_categories (editor and up) (reference 10.1).
func canManageTerms(u *repository.User, tax repository.Taxonomy) bool {
	if tax == repository.TaxCategory {
		return roleRank(u) >= 2
	}
	return roleRank(u) >= 3
}

// canUploadFiles is upload_files: author and up (contributors may only use
// images that are already registered).
func canUploadFiles(u *repository.User) bool { return roleRank(u) >= 2 }

// forbidden is 401 for anonymous callers and 403 for others.
func forbidden(u *repository.User) *apierr.Error {
	if u == nil {
		return apierr.Forbidden(401)
	}
	return apierr.Forbidden(403)
}
