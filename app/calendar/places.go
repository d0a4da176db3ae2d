package calendar

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/repository"
)

// Per-record rules for what a write links to:
//
//   - Duplicate detection (venue and organizer creates and inline venue or
//     organizer data in event writes) only considers records the actor may
//     read. A readable duplicate the actor may edit is reused and updated
//     with the sent fields (as the original plugin does); a readable
//     duplicate the actor may not edit is reused unchanged; with no
//     readable duplicate a new record is created.
//   - Linking a venue or organizer by ID needs the right to read it; an ID
//     the actor may not read is refused like a missing one (400, same
//     message, so the refusal tells nothing about hidden records), except
//     when the event already links it (resolveLinks).

// findDuplicate returns a non-trashed venue or organizer with the same
// name (case-insensitive) and, when a description is sent, the same
// description, among those the actor may read.
func (o *op) findDuplicate(plan *writePlan) (*repository.Record, error) {
	name := strings.TrimSpace(plan.in.Name.Value)
	if name == "" {
		return nil, nil
	}
	cands, err := o.s.store.FindRecords(o.ctx, repository.RecordQuery{Kind: plan.kind, Title: name, TitleLang: o.lang,
		ExcludeStatuses: []string{repository.StatusTrash}, Limit: 50})
	if err != nil {
		return nil, err
	}
	desc := plan.in.Description
	for _, c := range cands {
		if !access.CanReadRecord(o.user, c) {
			continue
		}
		if desc.Set && c.Content.Get(o.lang, o.s.cfg.DefaultLanguage) != desc.Value {
			continue
		}
		return c, nil
	}
	return nil, nil
}

// createPlace creates a venue or organizer from a checked plan, reusing
// a duplicate (same name, and description when sent) under the rules
// above. It runs under the name's lock, so parallel creates of one name by
// actors who see each other's records make one record. It returns the
// post and whether it is new.
func (o *op) createPlace(plan *writePlan) (*repository.Record, bool, error) {
	dup, err := o.findDuplicate(plan)
	if err != nil {
		return nil, false, err
	}
	var p *repository.Record
	made := false
	if dup == nil {
		// Only the look-up-then-create needs the name's lock: reusing or
		// updating a found duplicate is guarded by UpdatePost itself, so
		// parallel writers of one name hold the lock only briefly.
		name := strings.TrimSpace(plan.in.Name.Value)
		err = o.s.store.Exclusive(o.ctx, NameLockKey("post:"+string(plan.kind), o.lang, name), func(context.Context) error {
			var err error
			if dup, err = o.findDuplicate(plan); err != nil || dup != nil {
				return err
			}
			p, err = o.createNew(plan)
			made = err == nil
			return err
		})
		if err != nil || made {
			return p, made, err
		}
	}
	if !access.CanEditRecord(o.user, dup) {
		return dup, false, nil // reused as it is: the sent fields are not written
	}
	if err := o.commit(plan); err != nil {
		o.undo(plan)
		return nil, false, err
	}
	if !o.changesPlace(plan, dup) {
		// Nothing to write (the common case of parallel creates of one
		// venue): no update, no wait for the record's lock.
		return dup, false, nil
	}
	before := dup.Clone()
	p, err = o.s.store.UpdateRecord(o.ctx, dup.ID, func(p *repository.Record) error {
		return o.applyMeta(plan, p)
	})
	if err == nil {
		plan.made = append(plan.made, madeRecord{restore: before})
	}
	if errors.Is(err, repository.ErrNotFound) {
		// deleted meanwhile: make a new one (commit already ran: the
		// linked records it made are reused)
		p, err = o.createNew(plan)
		return p, err == nil, err
	}
	if err != nil {
		o.undo(plan)
	}
	return p, false, err
}

// changesPlace reports whether applying the plan's venue or organizer
// fields would change p.
func (o *op) changesPlace(plan *writePlan, p *repository.Record) bool {
	c := *p
	if p.Venue != nil {
		v := *p.Venue
		c.Venue = &v
	}
	if p.Organizer != nil {
		org := *p.Organizer
		c.Organizer = &org
	}
	if err := o.applyMeta(plan, &c); err != nil {
		return true
	}
	return c.ImageID != p.ImageID || !reflect.DeepEqual(c.Venue, p.Venue) || !reflect.DeepEqual(c.Organizer, p.Organizer)
}

// registerImage returns the image registered for a URL, registering it
// (with an ID from the post sequence) when new. The URL is never fetched.
func (o *op) registerImage(u string, made *[]madeRecord) (int64, error) {
	found, err := o.s.store.FindRecords(o.ctx, repository.RecordQuery{Kind: repository.KindImage, ImageURL: u, Limit: 1})
	if err != nil {
		return 0, err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	ext, _ := values.ImageURLExtension(u)
	name := u[strings.LastIndex(u, "/")+1:]
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	now := o.s.now().UTC().Truncate(time.Second)
	def := o.s.cfg.DefaultLanguage
	img := &repository.Record{Kind: repository.KindImage, Author: o.userID(), Status: "inherit", Date: now, Modified: now,
		Image: &repository.ImageFields{URL: u, Extension: ext}}
	base := strings.TrimSuffix(name, "."+ext)
	if base == "" {
		base = "image"
	}
	img.Title.Set(def, base)
	img.Slug.Set(def, repository.Slugify(base))
	if img.Slug[def] == "" {
		img.Slug.Set(def, "image")
	}
	if err := o.s.store.CreateRecord(o.ctx, img); err != nil {
		return 0, err
	}
	*made = append(*made, madeRecord{post: img.ID})
	return img.ID, nil
}
