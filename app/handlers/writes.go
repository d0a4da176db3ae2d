package handlers

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/repository"
)

// linkRef is one item of a venue or organizer value: an existing ID or
// inline data to create (or reuse) an item from, with its validated plan.
type linkRef struct {
	id   int64
	data *input.Bag
	plan *writePlan // for inline data: prepared and checked by prepareWrite
}

// writePlan is a validated write. A write decides everything, then
// writes, in this order:
//
//  1. the declared validators (the route's arguments);
//  2. prepareWrite: look-ups (links, author, image, term names), which
//     resolve names to "to be created" references, and the plans of
//     inline venues and organizers (each prepared and checked the same
//     way);
//  3. check: apply runs on a scratch copy of the record, with placeholder
//     IDs for what is still to be created, so every rule of apply (dates,
//     end before start, time zone, recurrence, document bounds) and the
//     store's record size bound have passed before anything is written;
//  4. commit: the linked records are created (or reused), recorded in the
//     plan's undo log;
//  5. the main record is written (apply again, on the record the store
//     hands over).
//
// A refused request therefore stops at 1-3 and leaves nothing behind.
// Linked records come before the main record because the main record
// holds their IDs: written the other way round, a failure would leave a
// record pointing at records that do not exist, visible to every reader.
// Only a failure of step 5 (a store error, or a concurrent change that
// makes apply refuse the fresh record) comes after linked records were
// made; undo then removes what this request created (best effort, logged).
// The occurrence change (occurrences.go) links existing records only and
// is tried on a copy of the series before its index marks are written.
type writePlan struct {
	pt  *posts
	b   *input.Bag
	cur *repository.Post // nil on create

	venues, organizers       []linkRef
	setVenues, setOrganizers bool
	categories, tags         []any
	setCategories, setTags   bool
	catRefs, tagRefs         []termRef
	imageURL                 string
	imageID                  int64
	setImage                 bool
	author                   int64
	setAuthor                bool
	// resolved by commit (check fills them with placeholders)
	venueIDs, organizerIDs, categoryIDs, tagIDs []int64
	// made is the undo log of commit: what this request created or changed
	// beside the main record.
	made []madeRecord
}

// prepareWrite checks what the declared validators cannot (links to other
// items, authors, image rights) without writing anything.
func (pt *posts) prepareWrite(r *Request, b *input.Bag, cur *repository.Post) (*writePlan, error) {
	plan := &writePlan{pt: pt, b: b, cur: cur}
	var errs apierr.Params
	if v, ok := b.Get("author"); ok {
		id, _ := input.AsInt(v)
		u, err := pt.store.GetUser(r.ctx, id)
		switch {
		case errors.Is(err, repository.ErrNotFound):
			errs.InvalidValue("author", fmt.Sprintf("There is no user with ID %d.", id), v)
		case err != nil:
			return nil, err
		case u.ID != r.user.ID && !access.CanEditOthers(r.user):
			return nil, apierr.New(403, "rest_cannot_edit_others", "Sorry, you are not allowed to write items as this user.")
		default:
			plan.author, plan.setAuthor = id, true
		}
	}
	if v, ok := b.Get("image"); ok {
		plan.setImage = true
		switch {
		case input.IsEmptyValue(v):
		case isIntLike(v):
			id, _ := input.AsInt(v)
			img, err := pt.store.GetPost(r.ctx, id)
			if errors.Is(err, repository.ErrNotFound) || (err == nil && img.Kind != repository.KindImage) {
				errs.InvalidValue("image", fmt.Sprintf("There is no image with ID %d: send the ID of a registered image or an image URL.", id), v)
			} else if err != nil {
				return nil, err
			}
			plan.imageID = id
		default:
			if !access.CanUploadFiles(r.user) {
				errs.Invalid("image", "Sorry, you are not allowed to register images from URLs: send the ID of a registered image instead.")
			}
			plan.imageURL, _ = v.(string)
		}
	}
	if pt.kind == repository.KindEvent {
		for _, l := range []struct {
			name string
			kind repository.PostKind
			dst  *[]linkRef
			set  *bool
		}{{"venue", repository.KindVenue, &plan.venues, &plan.setVenues}, {"organizer", repository.KindOrganizer, &plan.organizers, &plan.setOrganizers}} {
			v, ok := b.Get(l.name)
			if !ok {
				continue
			}
			*l.set = true
			var current []int64
			if cur != nil && cur.Event != nil {
				current = append(append(current, cur.Event.Venues...), cur.Event.Organizers...)
			}
			refs, msg, err := r.parseLinks(v, l.kind, current)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				errs.InvalidValue(l.name, msg, v)
			}
			*l.dst = refs
		}
		if v, ok := b.Get("categories"); ok {
			plan.categories, plan.setCategories = termItems(v), true
		}
		if v, ok := b.Get("tags"); ok {
			plan.tags, plan.setTags = termItems(v), true
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	var err error
	if plan.setCategories {
		if plan.catRefs, err = r.lookupTerms(repository.TaxCategory, plan.categories); err != nil {
			return nil, err
		}
	}
	if plan.setTags {
		if plan.tagRefs, err = r.lookupTerms(repository.TaxTag, plan.tags); err != nil {
			return nil, err
		}
	}
	_, ve, or := r.s.postTypes()
	for _, l := range []struct {
		refs []linkRef
		pt   *posts
	}{{plan.venues, ve}, {plan.organizers, or}} {
		for i := range l.refs {
			if l.refs[i].data == nil {
				continue
			}
			sub, err := l.pt.prepareWrite(r, l.refs[i].data, nil)
			if err != nil {
				return nil, err
			}
			if err := sub.check(r, nil); err != nil {
				return nil, err
			}
			l.refs[i].plan = sub
		}
	}
	return plan, nil
}

// isIntLike reports whether v is a whole number or a numeric string.
func isIntLike(v any) bool {
	_, ok := input.AsInt(v)
	return ok
}

// termItems turns a categories/tags value into its items ("" or [] → none).
func termItems(v any) []any {
	if input.IsEmptyValue(v) {
		return []any{}
	}
	return input.AsList(v)
}

// parseLinks reads a venue or organizer value (as the original plugin
// does, plus several venues and CSV organizer IDs: docs/decisions.md,
// "Writes"):
// empty values unlink; scalars are IDs or CSV of IDs; objects are {id} or
// inline data; lists mix them. IDs must be existing items of the kind;
// inline data must pass the kind's create validation. An ID the caller may
// not read counts as missing unless current (the event's links) has it.
func (r *Request) parseLinks(v any, kind repository.PostKind, current []int64) ([]linkRef, string, error) {
	if input.IsEmptyValue(v) {
		return []linkRef{}, "", nil
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	case string:
		items = input.AsList(x)
	default:
		items = []any{x}
	}
	var refs []linkRef
	var ids []int64
	_, ve, or := r.s.postTypes()
	pt := ve
	if kind == repository.KindOrganizer {
		pt = or
	}
	for _, it := range items {
		if input.IsEmptyValue(it) {
			continue
		}
		switch x := it.(type) {
		case map[string]any:
			if idv, ok := x["id"]; ok && !input.IsEmptyValue(idv) {
				id, ok := input.AsInt(idv)
				if !ok || id <= 0 {
					return nil, linkForms(kind, idv), nil
				}
				refs = append(refs, linkRef{id: id})
				ids = append(ids, id)
				continue
			}
			sub := input.BagOf(x)
			if err := r.validateBag(sub, pt.writeArgs(true)); err != nil {
				var ae *apierr.Error
				if errors.As(err, &ae) {
					return nil, "Invalid " + string(kind) + " data (an object without id creates a " + string(kind) + "): " + ae.Message, nil
				}
				return nil, "", err
			}
			refs = append(refs, linkRef{data: sub})
		default:
			id, ok := input.AsInt(it)
			if !ok || id <= 0 {
				return nil, linkForms(kind, it), nil
			}
			refs = append(refs, linkRef{id: id})
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		found, err := r.s.store.GetPosts(r.ctx, ids)
		if err != nil {
			return nil, "", err
		}
		for _, id := range ids {
			if p := found[id]; p == nil || p.Kind != kind || !r.mayLink(p, current) {
				return nil, fmt.Sprintf("There is no %s with ID %d.", kind, id), nil
			}
		}
	}
	if refs == nil {
		refs = []linkRef{}
	}
	return refs, "", nil
}

// commit creates what the write links to (after check passed): inline venues and organizers
// (or their duplicates), unknown categories and tags, and new image URLs.
func (plan *writePlan) commit(r *Request) error {
	var err error
	_, ve, or := r.s.postTypes()
	for _, l := range []struct {
		refs []linkRef
		set  bool
		pt   *posts
		dst  *[]int64
	}{
		{plan.venues, plan.setVenues, ve, &plan.venueIDs},
		{plan.organizers, plan.setOrganizers, or, &plan.organizerIDs},
	} {
		if !l.set {
			continue
		}
		ids := []int64{}
		for _, ref := range l.refs {
			id := ref.id
			if ref.plan != nil {
				p, isNew, err := l.pt.createPlace(r, ref.plan)
				plan.made = append(plan.made, ref.plan.made...)
				ref.plan.made = nil
				if err != nil {
					return err
				}
				if isNew {
					plan.made = append(plan.made, madeRecord{post: p.ID})
				}
				id = p.ID
			}
			if !contains(ids, id) {
				ids = append(ids, id)
			}
		}
		*l.dst = ids
	}
	if plan.setCategories {
		if plan.categoryIDs, err = r.createTerms(repository.TaxCategory, plan.catRefs, &plan.made); err != nil {
			return err
		}
	}
	if plan.setTags {
		if plan.tagIDs, err = r.createTerms(repository.TaxTag, plan.tagRefs, &plan.made); err != nil {
			return err
		}
	}
	if plan.imageURL != "" {
		if plan.imageID, err = r.registerImage(plan.imageURL, &plan.made); err != nil {
			return err
		}
	}
	return nil
}

// registerImage returns the image registered for a URL, registering it
// (with an ID from the post sequence) when new. The URL is never fetched.
func (r *Request) registerImage(u string, made *[]madeRecord) (int64, error) {
	found, err := r.s.store.FindPosts(r.ctx, repository.PostQuery{Kind: repository.KindImage, ImageURL: u, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	ext, _ := imageURLExtension(u)
	name := u[strings.LastIndex(u, "/")+1:]
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	now := r.s.now().UTC().Truncate(time.Second)
	img := &repository.Post{Kind: repository.KindImage, Author: r.user.ID, Status: "inherit", Date: now, Modified: now,
		Image: &repository.ImageFields{URL: u, Extension: ext}}
	base := strings.TrimSuffix(name, "."+ext)
	if base == "" {
		base = "image"
	}
	img.Title.Set(r.s.cfg.DefaultLanguage, base)
	img.Slug.Set(r.s.cfg.DefaultLanguage, repository.Slugify(base))
	if img.Slug[r.s.cfg.DefaultLanguage] == "" {
		img.Slug.Set(r.s.cfg.DefaultLanguage, "image")
	}
	if err := r.s.store.CreatePost(r.ctx, img); err != nil {
		return 0, err
	}
	*made = append(*made, madeRecord{post: img.ID})
	return img.ID, nil
}

// apply writes the plan onto p (a new post, or the current record inside
// UpdatePost's compare-and-swap loop). It may run more than once.
func (plan *writePlan) apply(r *Request, p *repository.Post) error {
	b := plan.b
	lang := r.lang
	creating := p.ID == 0
	if v, ok := b.Get(plan.pt.nameField); ok {
		s, _ := input.AsString(v)
		p.Title.Set(lang, strings.TrimSpace(s))
	}
	for _, f := range []struct {
		name string
		dst  *repository.Text
	}{{"description", &p.Content}, {"excerpt", &p.Excerpt}} {
		if v, ok := b.Get(f.name); ok {
			s, _ := input.AsString(v)
			f.dst.Set(lang, s)
		}
	}
	// Slug: the one sent (normalised), else keep, else derive from the title.
	if v, ok := b.Get("slug"); ok && b.Sent("slug") {
		s, _ := input.AsString(v)
		if sl := repository.NormalizeSlug(s); sl != "" {
			p.Slug.Set(lang, sl)
		}
	}
	if p.Slug[lang] == "" && p.Title.Has(lang) {
		p.Slug.Set(lang, repository.Slugify(p.Title[lang]))
	}
	if len(p.Slug) == 0 || (p.Slug[lang] == "" && p.Slug[r.s.cfg.DefaultLanguage] == "" && creating) {
		p.Slug.Set(lang, string(p.Kind))
	}
	if plan.setAuthor {
		p.Author = plan.author
	}
	if plan.setImage {
		p.ImageID = plan.imageID
	}
	if v, ok := b.Get("password"); ok && p.Kind == repository.KindEvent {
		p.Password, _ = input.AsString(v)
	}
	if err := plan.applyStatusAndDate(r, p, creating); err != nil {
		return err
	}
	p.Modified = r.s.now().UTC().Truncate(time.Second)
	return plan.applyMeta(r, p)
}
