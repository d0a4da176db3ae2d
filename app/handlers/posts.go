package handlers

import (
	"errors"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// postType describes one of the three post resources. Events, venues and
// organizers share their read, write and delete logic; what differs is
// declared here and in the kind-specific apply functions.
type postType struct {
	kind       repository.PostKind
	res        string // "event", "venue", "organizer": error codes and messages
	collection string // route segment
	nameField  string // request/response field holding the title
}

// postTypes returns the event, venue and organizer descriptors.
func (s *API) postTypes() (ev, ve, or *postType) {
	return &postType{kind: repository.KindEvent, res: "event", collection: "events", nameField: "title"},
		&postType{kind: repository.KindVenue, res: "venue", collection: "venues", nameField: "venue"},
		&postType{kind: repository.KindOrganizer, res: "organizer", collection: "organizers", nameField: "organizer"}
}

// lookup says how a route addresses its item.
type lookup int

const (
	byID lookup = iota
	bySlug
)

// loadPost finds the item a by-ID or by-slug route addresses. A missing
// item is 404 (decisions.md); an ID of another kind is 400
// rest-invalid-event-id for events (reference 5) and 404 otherwise.
func (r *Request) loadPost(pt *postType, how lookup) (*repository.Post, error) {
	if how == byID {
		id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
		p, err := r.s.store.GetPost(r.ctx, id)
		if errors.Is(err, repository.ErrNotFound) {
			return nil, apierr.NotFound(pt.res, id)
		}
		if err != nil {
			return nil, err
		}
		if p.Kind != pt.kind {
			if pt.kind == repository.KindEvent {
				return nil, apierr.New(400, "rest-invalid-event-id", "The specified ID is not a valid event.")
			}
			return nil, apierr.NotFound(pt.res, id)
		}
		return p, nil
	}
	slug, err := url.PathUnescape(r.c.Params("slug"))
	if err != nil {
		slug = r.c.Params("slug")
	}
	def := r.s.cfg.DefaultLanguage
	p, err := r.s.store.GetPostBySlug(r.ctx, pt.kind, r.lang, slug)
	if errors.Is(err, repository.ErrNotFound) && r.lang != def {
		p, err = r.s.store.GetPostBySlug(r.ctx, pt.kind, def, slug)
	}
	// A record with no slug in the request language or the default one
	// shows its first language's slug (decisions.md, "Languages"): that
	// slug finds it too, and only when it is the one shown.
	for _, l := range r.s.cfg.Languages {
		if !errors.Is(err, repository.ErrNotFound) {
			break
		}
		if l == r.lang || l == def {
			continue
		}
		p, err = r.s.store.GetPostBySlug(r.ctx, pt.kind, l, slug)
		if err == nil && p.Slug.Get(r.lang, def, r.s.cfg.Languages...) != slug {
			p, err = nil, repository.ErrNotFound
		}
	}
	if errors.Is(err, repository.ErrNotFound) {
		title := strings.ToUpper(pt.res[:1]) + pt.res[1:]
		return nil, apierr.New(404, "rest-"+pt.res+"-not-found", title+" with slug "+slug+" does not exist.")
	}
	return p, err
}

// postReadArgs declares the parameters of a single read.
func (s *API) postReadArgs(pt *postType) []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "The password of a password-protected event."},
		{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected content to callers who may edit the item."},
	}
}

// postDeleteArgs declares the parameters of a delete.
func (s *API) postDeleteArgs(pt *postType) []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "Accepted for compatibility; irrelevant for deletes."},
		{Name: "force", Type: tBoolean, Default: false, Desc: "Delete permanently instead of moving to the trash (editors and admins)."},
	}
}

// getPost serves GET by ID or slug with the visibility rules of reference
// 5 and 7.2.
func (s *API) getPost(pt *postType, how lookup) func(r *Request) error {
	return func(r *Request) error {
		p, err := r.loadPost(pt, how)
		if err != nil {
			return err
		}
		if err := r.checkReadable(pt, p); err != nil {
			return err
		}
		return r.sendPost(200, p, true)
	}
}

// checkReadable applies the trash, status and password rules to a single read.
func (r *Request) checkReadable(pt *postType, p *repository.Post) error {
	return access.CheckReadable(r.user, p, pt.res, r.unlocks(p))
}

// unlocks reports whether the request may see a protected post: the right
// password, or context=edit from a caller who may edit it.
func (r *Request) unlocks(p *repository.Post) bool {
	return access.Unlocks(r.user, p, r.bag.Str("password"), r.bag.Str("context") == "edit")
}

// sendPost renders one post of any kind.
func (r *Request) sendPost(status int, p *repository.Post, single bool) error {
	l, err := r.loadLinked([]*repository.Post{p})
	if err != nil {
		return err
	}
	v := present.View{Lang: r.lang, Single: single}
	switch p.Kind {
	case repository.KindEvent:
		return present.SendJSON(r.c, status, r.s.render.Event(p, l, v))
	case repository.KindVenue:
		return present.SendJSON(r.c, status, r.s.render.Venue(p, l, v))
	default:
		return present.SendJSON(r.c, status, r.s.render.Organizer(p, l, v))
	}
}

// createPost serves POST on a collection (201).
func (s *API) createPost(pt *postType) func(r *Request) error {
	return func(r *Request) error {
		if !access.CanCreatePosts(r.user) {
			return access.Forbidden(r.user)
		}
		p, _, err := r.create(pt, r.bag)
		if err != nil {
			return err
		}
		return r.sendPost(201, p, false)
	}
}

// create validates nothing (the caller did) and writes a new post from b,
// reusing a duplicate venue or organizer (reference 7.3). It returns the
// post and whether it was newly made.
func (r *Request) create(pt *postType, b *input.Bag) (*repository.Post, bool, error) {
	plan, err := r.prepareWrite(pt, b, nil)
	if err != nil {
		return nil, false, err
	}
	if pt.kind != repository.KindEvent {
		return r.createPlace(pt, plan)
	}
	p, err := r.createNew(pt, plan)
	return p, err == nil, err
}

// createNew commits a validated plan (what it links to) and stores a new
// post from it.
func (r *Request) createNew(pt *postType, plan *writePlan) (*repository.Post, error) {
	if err := plan.commit(r); err != nil {
		return nil, err
	}
	now := r.s.now().UTC().Truncate(time.Second)
	p := &repository.Post{Kind: pt.kind, Author: r.user.ID, Date: now, Modified: now}
	switch pt.kind {
	case repository.KindEvent:
		p.Event = &repository.EventFields{ShowMap: true, ShowMapLink: true,
			Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}
	case repository.KindVenue:
		p.Venue = &repository.VenueFields{ShowMap: true, ShowMapLink: true}
	case repository.KindOrganizer:
		p.Organizer = &repository.OrganizerFields{}
	}
	if err := plan.apply(r, p); err != nil {
		return nil, err
	}
	if err := r.s.store.CreatePost(r.ctx, p); err != nil {
		return nil, err
	}
	r.s.countsChanged(p)
	return p, nil
}

// countsChanged drops the cached counts of the terms of the given events
// (before and after a write).
func (s *API) countsChanged(posts ...*repository.Post) {
	if ids := present.EventTerms(posts...); len(ids) > 0 {
		s.render.Counts.Invalidate(ids...)
	}
}

// findDuplicate returns a non-trashed venue or organizer with the same name
// (case-insensitive) and, when a description is sent, the same description,
// among those the caller may read (linkrules.go).
func (r *Request) findDuplicate(pt *postType, b *input.Bag) (*repository.Post, error) {
	name := strings.TrimSpace(b.Str(pt.nameField))
	if name == "" {
		return nil, nil
	}
	cands, err := r.s.store.FindPosts(r.ctx, repository.PostQuery{Kind: pt.kind, Title: name, TitleLang: r.lang,
		ExcludeStatuses: []string{repository.StatusTrash}, Limit: 50})
	if err != nil {
		return nil, err
	}
	desc, hasDesc := b.Get("description")
	for _, c := range cands {
		if !access.CanReadPost(r.user, c) {
			continue
		}
		if hasDesc {
			d, _ := input.AsString(desc)
			if c.Content.Get(r.lang, r.s.cfg.DefaultLanguage) != d {
				continue
			}
		}
		return c, nil
	}
	return nil, nil
}

// loadEditable finds the item a write route addresses (loadPost) and
// refuses a caller who may not edit it.
func (r *Request) loadEditable(pt *postType, how lookup) (*repository.Post, error) {
	cur, err := r.loadPost(pt, how)
	if err != nil {
		return nil, err
	}
	if !access.CanEditPost(r.user, cur) {
		return nil, access.Forbidden(r.user)
	}
	return cur, nil
}

// updatePost serves POST/PUT/PATCH on one item: a partial update.
func (s *API) updatePost(pt *postType, how lookup) func(r *Request) error {
	return func(r *Request) error {
		cur, err := r.loadEditable(pt, how)
		if err != nil {
			return err
		}
		plan, err := r.prepareWrite(pt, r.bag, cur)
		if err != nil {
			return err
		}
		if err := plan.commit(r); err != nil {
			return err
		}
		if e := cur.Event; e != nil && (plan.setVenues || plan.setOrganizers) {
			// The venues and organizers an event leaves need reindexing
			// (has_events, only_with_upcoming); mark them before the write.
			if err := s.store.MarkForIndexing(r.ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
				return err
			}
		}
		p, err := s.store.UpdatePost(r.ctx, cur.ID, func(p *repository.Post) error {
			return plan.apply(r, p)
		})
		if errors.Is(err, repository.ErrNotFound) {
			return apierr.NotFound(pt.res, cur.ID)
		}
		if err != nil {
			return err
		}
		s.countsChanged(cur, p)
		return r.sendPost(200, p, false)
	}
}

// deletePost serves DELETE: trash (200 with the trashed item), 410 when
// already trashed, or a permanent delete with force (editors and admins).
// Trashing or deleting a venue or organizer unlinks it from every event.
func (s *API) deletePost(pt *postType, how lookup) func(r *Request) error {
	return func(r *Request) error {
		cur, err := r.loadEditable(pt, how)
		if err != nil {
			return err
		}
		force, _ := input.AsBool(r.bag.Values["force"])
		if force {
			if !access.CanEditOthers(r.user) {
				return access.Forbidden(r.user)
			}
			if pt.kind != repository.KindEvent {
				if _, err := s.store.UnlinkPost(r.ctx, cur.ID); err != nil {
					return err
				}
			} else if e := cur.Event; e != nil {
				if err := s.store.MarkForIndexing(r.ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
					return err
				}
			}
			if err := s.store.DeletePost(r.ctx, cur.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
				return err
			}
			s.countsChanged(cur)
			return r.sendPost(200, cur, false)
		}
		if cur.Status == repository.StatusTrash {
			return apierr.New(410, pt.res+"-is-in-trash", "The "+pt.res+" is already trashed")
		}
		now := s.now().UTC().Truncate(time.Second)
		p, err := s.store.UpdatePost(r.ctx, cur.ID, func(p *repository.Post) error {
			if p.Status == repository.StatusTrash {
				return apierr.New(410, pt.res+"-is-in-trash", "The "+pt.res+" is already trashed")
			}
			p.Status = repository.StatusTrash
			p.Modified = now
			return nil
		})
		if err != nil {
			return err
		}
		if pt.kind != repository.KindEvent {
			if _, err := s.store.UnlinkPost(r.ctx, cur.ID); err != nil {
				return err
			}
		}
		s.countsChanged(cur)
		return r.sendPost(200, p, false)
	}
}

// validURL reports whether s is an absolute http(s) URL with a host.
func validURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || strings.ContainsAny(s, " \t\n") {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// imageExtensions are the file types accepted as image URLs; a URL without
// an extension is accepted too (the service never fetches it).
var imageExtensions = map[string]bool{"jpg": true, "jpeg": true, "png": true, "gif": true, "webp": true,
	"avif": true, "svg": true, "bmp": true, "ico": true, "tif": true, "tiff": true, "heic": true}

// imageURLExtension returns the lower-case extension of a URL's path and
// whether it is acceptable for an image.
func imageURLExtension(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(u.Path), "."))
	if ext == "" {
		return "", true
	}
	return ext, imageExtensions[ext]
}
