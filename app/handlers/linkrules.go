package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// Per-object rules for what a write links to and what a response embeds
// (issue 7, findings 4-6; docs/editors.md, "Permissions"):
//
//   - Duplicate detection (POST /venues, /organizers and inline venue or
//     organizer data in event writes) only considers records the caller may
//     read. A readable duplicate the caller may edit is reused and updated
//     with the sent fields (as the original plugin does); a readable duplicate the caller
//     may not edit is reused unchanged; with no readable duplicate a new
//     record is created.
//   - Linking a venue or organizer by ID needs the right to read it; an ID
//     the caller may not read is refused like a missing one (400, same
//     message, so the refusal tells nothing about hidden records), except
//     when the event already links it.
//   - Responses leave out linked venues and organizers the caller may not
//     read (item reads, lists and json_ld alike).
//   - Naming a term that does not exist creates it only for callers who may
//     manage terms of that taxonomy (categories: author and up; tags: editor
//     and up); others get 403 rest_cannot_create and nothing is written.
//
// Look-up-then-create steps (term names, venue and organizer duplicates)
// run under repository.Store.Exclusive with a key derived from the name, so
// parallel requests naming one new term or venue create one record, on
// every replica.

// nameLockKey is the Exclusive key of a name in a scope ("term:category",
// "post:venue") and language: the name is case-folded and hashed, which
// keeps keys short whatever the name's length.
func nameLockKey(scope, lang, name string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(name))))
	return scope + ":" + lang + ":" + hex.EncodeToString(sum[:16])
}

// loadLinked is linkedFor for the caller of the request.
func (r *Request) loadLinked(posts []*repository.Post) (*present.Linked, error) {
	return r.s.render.LinkedFor(r.ctx, r.user, posts)
}

// mayLink reports whether the caller may link the post p to an event that
// already links the IDs in current.
func (r *Request) mayLink(p *repository.Post, current []int64) bool {
	return access.CanReadPost(r.user, p) || contains(current, p.ID)
}

// termRef is one resolved category or tag item: an existing term's ID, or
// the name of a term to create.
type termRef struct {
	id   int64
	name string
}

// lookupTerms resolves term items without writing: numeric
// items must be existing terms of tax (unknown ones are dropped), looked up
// in one batch; other items are looked up by slug, then name, in the
// request language and the default one (indexed look-ups). A name found
// nowhere becomes a termRef to create, which needs the right to manage
// terms of tax: 403 otherwise.
func (r *Request) lookupTerms(tax repository.Taxonomy, items []any) ([]termRef, error) {
	var ids []int64
	for _, it := range items {
		if n, ok := input.AsInt(it); ok {
			ids = append(ids, n)
		}
	}
	found, err := r.s.store.GetTerms(r.ctx, ids)
	if err != nil {
		return nil, err
	}
	refs := []termRef{}
	newNames := map[string]bool{}
	for _, it := range items {
		if n, ok := input.AsInt(it); ok {
			if t := found[n]; t != nil && t.Taxonomy == tax {
				refs = append(refs, termRef{id: n})
			}
			continue
		}
		name, _ := input.AsString(it)
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		t, err := r.findTerm(tax, name)
		if err != nil {
			return nil, err
		}
		if t != nil {
			refs = append(refs, termRef{id: t.ID})
			continue
		}
		if !access.CanManageTerms(r.user, tax) {
			// Refused at the first unknown name: a request naming
			// thousands of new terms costs one look-up, not thousands.
			return nil, errCannotCreateTerm(tax)
		}
		if key := strings.ToLower(name); !newNames[key] {
			newNames[key] = true
			refs = append(refs, termRef{name: name})
		}
	}
	return refs, nil
}

// errCannotCreateTerm is the 403 for naming a new term without the right
// to create terms of tax.
func errCannotCreateTerm(tax repository.Taxonomy) error {
	return apierr.New(403, "rest_cannot_create", "Sorry, you are not allowed to create terms in this taxonomy; use existing "+present.TermCollection(tax)+".")
}

// createTerms turns refs into term IDs, creating the named terms. Each
// creation looks the name up again under the name's lock: a parallel
// request may have created it since lookupTerms.
func (r *Request) createTerms(tax repository.Taxonomy, refs []termRef, made *[]madeRecord) ([]int64, error) {
	ids := []int64{}
	for _, ref := range refs {
		id := ref.id
		if ref.name != "" {
			err := r.s.store.Exclusive(r.ctx, nameLockKey("term:"+string(tax), r.lang, ref.name), func(context.Context) error {
				t, err := r.findTerm(tax, ref.name)
				if err != nil {
					return err
				}
				if t == nil {
					t = &repository.Term{Taxonomy: tax}
					t.Name.Set(r.lang, ref.name)
					t.Slug.Set(r.lang, repository.Slugify(ref.name))
					if err := r.s.store.CreateTerm(r.ctx, t); err != nil {
						return err
					}
					*made = append(*made, madeRecord{term: t.ID, tax: tax})
				}
				id = t.ID
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		if !contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// findTerm finds a term by slug or name in the request or default language.
func (r *Request) findTerm(tax repository.Taxonomy, s string) (*repository.Term, error) {
	langs := []string{r.lang}
	if r.lang != r.s.cfg.DefaultLanguage {
		langs = append(langs, r.s.cfg.DefaultLanguage)
	}
	for _, l := range langs {
		ts, err := r.s.store.FindTerms(r.ctx, repository.TermQuery{Taxonomy: tax, Slug: s, SlugLang: l})
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			return ts[0], nil
		}
		ts, err = r.s.store.FindTerms(r.ctx, repository.TermQuery{Taxonomy: tax, Name: s, NameLang: l})
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			return ts[0], nil
		}
	}
	return nil, nil
}

// createPlace creates a venue or organizer from a validated plan, reusing
// a duplicate (same name, and description when sent) under the rules
// above. It runs under the
// name's lock, so parallel creates of one name by callers who see each
// other's records make one record. It returns the post and whether it is
// new.
func (pt *posts) createPlace(r *Request, plan *writePlan) (*repository.Post, bool, error) {
	dup, err := pt.findDuplicate(r, plan.b)
	if err != nil {
		return nil, false, err
	}
	var p *repository.Post
	made := false
	if dup == nil {
		// Only the look-up-then-create needs the name's lock: reusing or
		// updating a found duplicate is guarded by UpdatePost itself, so
		// parallel writers of one name hold the lock only briefly.
		name := strings.TrimSpace(plan.b.Str(pt.nameField))
		err = pt.store.Exclusive(r.ctx, nameLockKey("post:"+string(pt.kind), r.lang, name), func(context.Context) error {
			var err error
			if dup, err = pt.findDuplicate(r, plan.b); err != nil || dup != nil {
				return err
			}
			p, err = pt.createNew(r, plan)
			made = err == nil
			return err
		})
		if err != nil || made {
			return p, made, err
		}
	}
	if !access.CanEditPost(r.user, dup) {
		return dup, false, nil // reused as it is: the sent fields are not written
	}
	if err := plan.commit(r); err != nil {
		plan.undo(r)
		return nil, false, err
	}
	if !changesPlace(r, plan, dup) {
		// Nothing to write (the common case of parallel creates of one
		// venue): no update, no wait for the record's lock.
		return dup, false, nil
	}
	before := dup.Clone()
	p, err = pt.store.UpdatePost(r.ctx, dup.ID, func(p *repository.Post) error {
		return plan.applyMeta(r, p)
	})
	if err == nil {
		plan.made = append(plan.made, madeRecord{restore: before})
	}
	if errors.Is(err, repository.ErrNotFound) {
		// deleted meanwhile: make a new one (commit already ran: the
		// linked records it made are reused)
		p, err = pt.createNew(r, plan)
		return p, err == nil, err
	}
	if err != nil {
		plan.undo(r)
	}
	return p, false, err
}

// changesPlace reports whether applying the plan's venue or organizer
// fields would change p.
func changesPlace(r *Request, plan *writePlan, p *repository.Post) bool {
	c := *p
	if p.Venue != nil {
		v := *p.Venue
		c.Venue = &v
	}
	if p.Organizer != nil {
		o := *p.Organizer
		c.Organizer = &o
	}
	if err := plan.applyMeta(r, &c); err != nil {
		return true
	}
	return c.ImageID != p.ImageID || !reflect.DeepEqual(c.Venue, p.Venue) || !reflect.DeepEqual(c.Organizer, p.Organizer)
}
