package handlers

import (
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// posts serves the routes of one of the three post resources. Events,
// venues and organizers share their read, write and delete logic; what
// differs is declared here and in the kind-specific apply functions.
type posts struct {
	kind       repository.PostKind
	res        string // "event", "venue", "organizer": error codes and messages
	collection string // route segment
	nameField  string // request/response field holding the title
	cfg        *config.Config
	store      repository.Store
	render     *present.Renderer
	now        func() time.Time
	// search serves the venue and organizer lists.
	search search.Engine
	log    *slog.Logger
}

// postTypes returns the handlers of events, venues and organizers.
func (s *API) postTypes() (ev, ve, or *posts) {
	return &posts{kind: repository.KindEvent, res: "event", collection: "events", nameField: "title", cfg: s.cfg, store: s.store, render: s.render, now: s.now, search: s.search, log: s.log},
		&posts{kind: repository.KindVenue, res: "venue", collection: "venues", nameField: "venue", cfg: s.cfg, store: s.store, render: s.render, now: s.now, search: s.search, log: s.log},
		&posts{kind: repository.KindOrganizer, res: "organizer", collection: "organizers", nameField: "organizer", cfg: s.cfg, store: s.store, render: s.render, now: s.now, search: s.search, log: s.log}
}

// lookup says how a route addresses its item.
type lookup int

const (
	byID lookup = iota
	bySlug
)

// load finds the item a by-ID or by-slug route addresses. A missing
// item is 404 (docs/decisions.md, "Reads"); an ID of another kind is 400
// rest-invalid-event-id for events (as the original plugin answers) and
// 404 otherwise.
func (pt *posts) load(r *Request, how lookup) (*repository.Post, error) {
	if how == byID {
		id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
		p, err := pt.store.GetPost(r.ctx, id)
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
	def := pt.cfg.DefaultLanguage
	p, err := pt.store.GetPostBySlug(r.ctx, pt.kind, r.lang, slug)
	if errors.Is(err, repository.ErrNotFound) && r.lang != def {
		p, err = pt.store.GetPostBySlug(r.ctx, pt.kind, def, slug)
	}
	// A record with no slug in the request language or the default one
	// shows its first language's slug (docs/decisions.md, "Languages"): that
	// slug finds it too, and only when it is the one shown.
	for _, l := range pt.cfg.Languages {
		if !errors.Is(err, repository.ErrNotFound) {
			break
		}
		if l == r.lang || l == def {
			continue
		}
		p, err = pt.store.GetPostBySlug(r.ctx, pt.kind, l, slug)
		if err == nil && p.Slug.Get(r.lang, def, pt.cfg.Languages...) != slug {
			p, err = nil, repository.ErrNotFound
		}
	}
	if errors.Is(err, repository.ErrNotFound) {
		title := strings.ToUpper(pt.res[:1]) + pt.res[1:]
		return nil, apierr.New(404, "rest-"+pt.res+"-not-found", title+" with slug "+slug+" does not exist.")
	}
	return p, err
}

// readArgs declares the parameters of a single read.
func (pt *posts) readArgs() []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "The password of a password-protected event."},
		{Name: "context", Type: tString, Enum: []string{"view", "edit"}, Default: "view", Desc: "edit shows protected content to callers who may edit the item."},
	}
}

// deleteArgs declares the parameters of a delete.
func (pt *posts) deleteArgs() []Arg {
	return []Arg{
		{Name: "password", Type: tString, Desc: "Accepted for compatibility; irrelevant for deletes."},
		{Name: "force", Type: tBoolean, Default: false, Desc: "Delete permanently instead of moving to the trash (editors and admins)."},
	}
}

// get serves GET by ID or slug with the original plugin's visibility rules
// (access.CheckReadable): a trashed item the caller may not edit is 403
// …-no-longer-available, an unpublished one the caller may not read 403
// …-not-accessible, and a password-protected one 403 …-password-protected
// without the password.
func (pt *posts) get(how lookup) func(r *Request) error {
	return func(r *Request) error {
		p, err := pt.load(r, how)
		if err != nil {
			return err
		}
		if err := pt.checkReadable(r, p); err != nil {
			return err
		}
		return r.sendPost(200, p, true)
	}
}

// checkReadable applies the trash, status and password rules to a single read.
func (pt *posts) checkReadable(r *Request, p *repository.Post) error {
	return access.CheckReadable(r.user, p, pt.res, r.reader.Unlocks(p))
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

// post serves POST on a collection (201).
func (pt *posts) post(r *Request) error {
	if !access.CanCreatePosts(r.user) {
		return access.Forbidden(r.user)
	}
	p, _, err := pt.create(r, r.bag)
	if err != nil {
		return err
	}
	return r.sendPost(201, p, false)
}

// create writes a new post from b (the declared validators passed),
// reusing a duplicate venue or organizer (same name, and description when
// sent, as the original plugin detects them). Everything is decided
// (prepareWrite, check) before anything is written (writePlan). It
// returns the post and whether it was newly made.
func (pt *posts) create(r *Request, b *input.Bag) (*repository.Post, bool, error) {
	plan, err := pt.prepareWrite(r, b, nil)
	if err != nil {
		return nil, false, err
	}
	if err := plan.check(r, nil); err != nil {
		return nil, false, err
	}
	if pt.kind != repository.KindEvent {
		return pt.createPlace(r, plan)
	}
	p, err := pt.createNew(r, plan)
	return p, err == nil, err
}

// newPost is a new, empty post of the handler's kind by the caller.
func (pt *posts) newPost(r *Request) *repository.Post {
	now := pt.now().UTC().Truncate(time.Second)
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
	return p
}

// createNew commits a checked plan (what it links to) and stores a new
// post from it; when that fails, what the commit made is undone.
func (pt *posts) createNew(r *Request, plan *writePlan) (*repository.Post, error) {
	p, err := pt.createCommitted(r, plan)
	if err != nil {
		plan.undo(r)
		return nil, err
	}
	return p, nil
}

// createCommitted is createNew without the undo.
func (pt *posts) createCommitted(r *Request, plan *writePlan) (*repository.Post, error) {
	if err := plan.commit(r); err != nil {
		return nil, err
	}
	p := pt.newPost(r)
	if err := plan.apply(r, p); err != nil {
		return nil, err
	}
	if err := pt.store.CreatePost(r.ctx, p); err != nil {
		return nil, err
	}
	pt.countsChanged(p)
	return p, nil
}

// countsChanged drops the cached counts of the terms of the given events
// (before and after a write).
func (pt *posts) countsChanged(posts ...*repository.Post) {
	if ids := present.EventTerms(posts...); len(ids) > 0 {
		pt.render.Counts.Invalidate(ids...)
	}
}

// findDuplicate returns a non-trashed venue or organizer with the same name
// (case-insensitive) and, when a description is sent, the same description,
// among those the caller may read (linkrules.go).
func (pt *posts) findDuplicate(r *Request, b *input.Bag) (*repository.Post, error) {
	name := strings.TrimSpace(b.Str(pt.nameField))
	if name == "" {
		return nil, nil
	}
	cands, err := pt.store.FindPosts(r.ctx, repository.PostQuery{Kind: pt.kind, Title: name, TitleLang: r.lang,
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
			if c.Content.Get(r.lang, pt.cfg.DefaultLanguage) != d {
				continue
			}
		}
		return c, nil
	}
	return nil, nil
}

// loadEditable finds the item a write route addresses (loadPost) and
// refuses a caller who may not edit it.
func (pt *posts) loadEditable(r *Request, how lookup) (*repository.Post, error) {
	cur, err := pt.load(r, how)
	if err != nil {
		return nil, err
	}
	if !access.CanEditPost(r.user, cur) {
		return nil, access.Forbidden(r.user)
	}
	return cur, nil
}

// update serves POST/PUT/PATCH on one item: a partial update.
func (pt *posts) update(how lookup) func(r *Request) error {
	return func(r *Request) error {
		cur, err := pt.loadEditable(r, how)
		if err != nil {
			return err
		}
		plan, err := pt.prepareWrite(r, r.bag, cur)
		if err != nil {
			return err
		}
		if err := plan.check(r, cur); err != nil {
			return err
		}
		p, err := pt.updateCommitted(r, plan, cur)
		if err != nil {
			plan.undo(r)
		}
		if errors.Is(err, repository.ErrNotFound) {
			return apierr.NotFound(pt.res, cur.ID)
		}
		if err != nil {
			return err
		}
		pt.countsChanged(cur, p)
		return r.sendPost(200, p, false)
	}
}

// updateCommitted commits a checked plan and writes it onto the post cur.
func (pt *posts) updateCommitted(r *Request, plan *writePlan, cur *repository.Post) (*repository.Post, error) {
	if err := plan.commit(r); err != nil {
		return nil, err
	}
	if e := cur.Event; e != nil && (plan.setVenues || plan.setOrganizers) {
		// The venues and organizers an event leaves need reindexing
		// (has_events, only_with_upcoming); mark them before the write.
		if err := pt.store.MarkForIndexing(r.ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
			return nil, err
		}
	}
	return pt.store.UpdatePost(r.ctx, cur.ID, func(p *repository.Post) error {
		return plan.apply(r, p)
	})
}

// delete serves DELETE: trash (200 with the trashed item), 410 when
// already trashed, or a permanent delete with force (editors and admins).
// Trashing or deleting a venue or organizer unlinks it from every event.
func (pt *posts) delete(how lookup) func(r *Request) error {
	return func(r *Request) error {
		cur, err := pt.loadEditable(r, how)
		if err != nil {
			return err
		}
		force, _ := input.AsBool(r.bag.Values["force"])
		if force {
			if !access.CanEditOthers(r.user) {
				return access.Forbidden(r.user)
			}
			if pt.kind != repository.KindEvent {
				if _, err := pt.store.UnlinkPost(r.ctx, cur.ID); err != nil {
					return err
				}
			} else if e := cur.Event; e != nil {
				if err := pt.store.MarkForIndexing(r.ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
					return err
				}
			}
			if err := pt.store.DeletePost(r.ctx, cur.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
				return err
			}
			pt.countsChanged(cur)
			return r.sendPost(200, cur, false)
		}
		if cur.Status == repository.StatusTrash {
			return apierr.New(410, pt.res+"-is-in-trash", "The "+pt.res+" is already trashed")
		}
		now := pt.now().UTC().Truncate(time.Second)
		p, err := pt.store.UpdatePost(r.ctx, cur.ID, func(p *repository.Post) error {
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
			if _, err := pt.store.UnlinkPost(r.ctx, cur.ID); err != nil {
				return err
			}
		}
		pt.countsChanged(cur)
		return r.sendPost(200, p, false)
	}
}

// validURL reports whether s is an absolute http(s) URL the service
// stores (input.WebURL).
func validURL(s string) bool { return input.WebURL(s) }

// imageURLExtension is input.ImageURLExtension.
func imageURLExtension(raw string) (string, bool) { return input.ImageURLExtension(raw) }
