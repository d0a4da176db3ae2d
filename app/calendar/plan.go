package calendar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/repository"
)

// linkRef is one item of a venue or organizer value: an existing ID or
// inline data to create (or reuse) a record from, with its checked plan.
type linkRef struct {
	id   int64
	data *writePlan // for inline data: prepared and checked by prepare
}

// writePlan is a checked write (the package comment gives the order).
type writePlan struct {
	kind repository.Kind
	in   *RecordInput
	// ev, ve and or are the command, by kind (one is set).
	ev  *EventInput
	ve  *VenueInput
	or  *OrganizerInput
	cur *repository.Record // nil on create

	venues, organizers       []linkRef
	setVenues, setOrganizers bool
	setCategories, setTags   bool
	catRefs, tagRefs         []termRef
	imageURL                 string
	imageID                  int64
	setImage                 bool
	author                   int64
	setAuthor                bool
	// resolved by commit (check fills them with placeholders)
	venueIDs, organizerIDs, categoryIDs, tagIDs []int64
	// made is the undo log of commit: what this command created or
	// changed beside the main record.
	made []madeRecord
	// dates keeps the instants of the command's dates so far, by field
	// and zone: check and apply (and UpdatePost's retries) take each
	// date's instant once per zone.
	dates map[string]time.Time
}

// eventPlan, venuePlan and organizerPlan start the plan of a command.
func eventPlan(in *EventInput, cur *repository.Record) *writePlan {
	return &writePlan{kind: repository.KindEvent, in: &in.RecordInput, ev: in, cur: cur}
}

func venuePlan(in *VenueInput, cur *repository.Record) *writePlan {
	return &writePlan{kind: repository.KindVenue, in: &in.RecordInput, ve: in, cur: cur}
}

func organizerPlan(in *OrganizerInput, cur *repository.Record) *writePlan {
	return &writePlan{kind: repository.KindOrganizer, in: &in.RecordInput, or: in, cur: cur}
}

// prepare checks what the caller's decoding cannot (links to other
// records, authors, image rights, term names) without writing anything.
func (o *op) prepare(plan *writePlan) (*writePlan, error) {
	in, cur := plan.in, plan.cur
	var errs apierr.Params
	if in.Author.Set {
		id := in.Author.Value
		u, err := o.s.store.GetUser(o.ctx, id)
		switch {
		case errors.Is(err, repository.ErrNotFound):
			errs.InvalidValue("author", fmt.Sprintf("There is no user with ID %d.", id), in.Author.Raw)
		case err != nil:
			return nil, err
		case u.ID != o.userID() && !access.CanEditOthers(o.user):
			return nil, apierr.New(403, "rest_cannot_edit_others", "Sorry, you are not allowed to write items as this user.")
		default:
			plan.author, plan.setAuthor = id, true
		}
	}
	if in.Image.Set {
		plan.setImage = true
		img := in.Image.Value
		switch {
		case img.ID == 0 && img.URL == "":
		case img.ID != 0:
			id := img.ID
			p, err := o.s.store.GetRecord(o.ctx, id)
			if errors.Is(err, repository.ErrNotFound) || (err == nil && p.Kind != repository.KindImage) {
				errs.InvalidValue("image", fmt.Sprintf("There is no image with ID %d: send the ID of a registered image or an image URL.", id), in.Image.Raw)
			} else if err != nil {
				return nil, err
			}
			plan.imageID = id
		default:
			if !access.CanUploadFiles(o.user) {
				errs.Invalid("image", "Sorry, you are not allowed to register images from URLs: send the ID of a registered image instead.")
			}
			plan.imageURL = img.URL
		}
	}
	if ev := plan.ev; ev != nil {
		for _, l := range []struct {
			name string
			kind repository.Kind
			in   Links
			dst  *[]linkRef
			set  *bool
		}{{"venue", repository.KindVenue, ev.Venues, &plan.venues, &plan.setVenues}, {"organizer", repository.KindOrganizer, ev.Organizers, &plan.organizers, &plan.setOrganizers}} {
			if !l.in.Set {
				continue
			}
			*l.set = true
			var current []int64
			if cur != nil && cur.Event != nil {
				current = append(append(current, cur.Event.Venues...), cur.Event.Organizers...)
			}
			refs, msg, err := o.resolveLinks(l.in, l.kind, current)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				errs.InvalidValue(l.name, msg, l.in.Raw)
			}
			*l.dst = refs
		}
		plan.setCategories, plan.setTags = ev.Categories.Set, ev.Tags.Set
		if (ev.Source.Set || ev.ClearOverrides) && o.user != nil && o.user != Operator {
			return nil, apierr.New(403, "rest_forbidden", "Sorry, only the service itself links events to calendar sources.")
		}
		CheckEventStatus(&errs, ev.EventStatus, ev.EventStatusReason)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	var err error
	if plan.setCategories {
		if plan.catRefs, err = o.lookupTerms(repository.LabelCategory, plan.ev.Categories.Value); err != nil {
			return nil, err
		}
	}
	if plan.setTags {
		if plan.tagRefs, err = o.lookupTerms(repository.LabelTag, plan.ev.Tags.Value); err != nil {
			return nil, err
		}
	}
	for _, refs := range [][]linkRef{plan.venues, plan.organizers} {
		for i := range refs {
			if refs[i].data == nil {
				continue
			}
			sub, err := o.prepare(refs[i].data)
			if err != nil {
				return nil, err
			}
			if err := o.check(sub, nil); err != nil {
				return nil, err
			}
		}
	}
	return plan, nil
}

// userID is the actor's ID, 0 for the system.
func (o *op) userID() int64 {
	if o.user == nil {
		return 0
	}
	return o.user.ID
}

// resolveLinks checks a decoded venue or organizer value: its form
// (Links.Problem), then that its IDs are existing records of the kind the
// actor may link (an ID the actor may not read counts as missing unless
// current, the event's links, has it). Inline data becomes the plan of
// the record to create. msg says what is wrong.
func (o *op) resolveLinks(in Links, kind repository.Kind, current []int64) ([]linkRef, string, error) {
	if in.Problem != "" {
		return nil, in.Problem, nil
	}
	refs := []linkRef{}
	var ids []int64
	for _, l := range in.Items {
		switch {
		case l.Venue != nil:
			refs = append(refs, linkRef{data: venuePlan(l.Venue, nil)})
		case l.Organizer != nil:
			refs = append(refs, linkRef{data: organizerPlan(l.Organizer, nil)})
		default:
			refs = append(refs, linkRef{id: l.ID})
			ids = append(ids, l.ID)
		}
	}
	if len(ids) > 0 {
		found, err := o.s.store.GetRecords(o.ctx, ids)
		if err != nil {
			return nil, "", err
		}
		for _, id := range ids {
			if p := found[id]; p == nil || p.Kind != kind || !o.mayLink(p, current) {
				return nil, fmt.Sprintf("There is no %s with ID %d.", kind, id), nil
			}
		}
	}
	return refs, "", nil
}

// mayLink reports whether the actor may link the post p to an event that
// already links the IDs in current.
func (o *op) mayLink(p *repository.Record, current []int64) bool {
	return access.CanReadRecord(o.user, p) || contains(current, p.ID)
}

// commit creates what the write links to (after check passed): inline
// venues and organizers (or their duplicates), unknown categories and
// tags, and new image URLs.
func (o *op) commit(plan *writePlan) error {
	var err error
	for _, l := range []struct {
		refs []linkRef
		set  bool
		dst  *[]int64
	}{
		{plan.venues, plan.setVenues, &plan.venueIDs},
		{plan.organizers, plan.setOrganizers, &plan.organizerIDs},
	} {
		if !l.set {
			continue
		}
		ids := []int64{}
		for _, ref := range l.refs {
			id := ref.id
			if ref.data != nil {
				p, isNew, err := o.createPlace(ref.data)
				plan.made = append(plan.made, ref.data.made...)
				ref.data.made = nil
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
		if plan.categoryIDs, err = o.createTerms(repository.LabelCategory, plan.catRefs, &plan.made); err != nil {
			return err
		}
	}
	if plan.setTags {
		if plan.tagIDs, err = o.createTerms(repository.LabelTag, plan.tagRefs, &plan.made); err != nil {
			return err
		}
	}
	if plan.imageURL != "" {
		if plan.imageID, err = o.registerImage(plan.imageURL, &plan.made); err != nil {
			return err
		}
	}
	return nil
}

// madeRecord is one entry of a write's undo log: a post or term the
// command created beside its main record, or a duplicate venue or
// organizer it updated (as it was before).
type madeRecord struct {
	post    int64
	term    int64
	tax     repository.LabelKind
	restore *repository.Record
}

// check runs apply on a scratch copy of base (a new record of the plan's
// kind when base is nil), with placeholder IDs standing for the linked
// records commit will create, and returns what apply refuses, or the
// store's size bound (repository.CheckRecordSize) does. It writes
// nothing: every rule apply enforces has passed before commit creates a
// linked record. The placeholders are the largest IDs there are, so a
// size bound checked here holds for the real IDs too.
func (o *op) check(plan *writePlan, base *repository.Record) error {
	var p *repository.Record
	if base == nil {
		p = o.newPost(plan.kind)
	} else {
		p = base.Clone()
	}
	next := int64(math.MaxInt64)
	placeholder := func() int64 { next--; return next + 1 }
	links := func(refs []linkRef) []int64 {
		ids := []int64{}
		for _, ref := range refs {
			if ref.data != nil {
				ids = append(ids, placeholder())
			} else if !contains(ids, ref.id) {
				ids = append(ids, ref.id)
			}
		}
		return ids
	}
	terms := func(refs []termRef) []int64 {
		ids := []int64{}
		for _, ref := range refs {
			if ref.name != "" {
				ids = append(ids, placeholder())
			} else if !contains(ids, ref.id) {
				ids = append(ids, ref.id)
			}
		}
		return ids
	}
	if plan.setVenues {
		plan.venueIDs = links(plan.venues)
	}
	if plan.setOrganizers {
		plan.organizerIDs = links(plan.organizers)
	}
	if plan.setCategories {
		plan.categoryIDs = terms(plan.catRefs)
	}
	if plan.setTags {
		plan.tagIDs = terms(plan.tagRefs)
	}
	if plan.imageURL != "" {
		plan.imageID = placeholder()
	}
	if err := o.apply(plan, p); err != nil {
		return err
	}
	// The store refuses a record over its size bound only when the main
	// record is written, after commit: measured here, a record too large
	// is refused before its linked records, IDs and index marks are made.
	return repository.CheckRecordSize(p)
}

// undo removes what commit created for this command and puts back the
// duplicates it updated, newest first. It runs only when the main
// record's write failed after commit (a store error, or a concurrent
// change that made apply refuse the record the store handed over); a
// refused command never gets that far. It is best effort: a record
// another write linked meanwhile is kept, and every failure is logged.
func (o *op) undo(plan *writePlan) {
	if len(plan.made) == 0 {
		return
	}
	ctx := context.WithoutCancel(o.ctx)
	st := o.s.store
	for i := len(plan.made) - 1; i >= 0; i-- {
		m := plan.made[i]
		var err error
		what, id := "post", m.post
		switch {
		case m.restore != nil:
			what, id = "updated duplicate", m.restore.ID
			_, err = st.UpdateRecord(ctx, m.restore.ID, func(p *repository.Record) error {
				p.Venue, p.Organizer, p.ImageID = m.restore.Venue, m.restore.Organizer, m.restore.ImageID
				return nil
			})
		case m.term != 0:
			what, id = "term", m.term
			q := repository.RecordQuery{Kind: repository.KindEvent, Limit: 1}
			if m.tax == repository.LabelCategory {
				q.CategoryIDs = []int64{m.term}
			} else {
				q.TagIDs = []int64{m.term}
			}
			var users []*repository.Record
			if users, err = st.FindRecords(ctx, q); err == nil && len(users) > 0 {
				o.s.log.Warn("write failed: a term it created is kept, another event links it", "term", m.term)
				continue
			}
			if err == nil {
				err = st.DeleteLabel(ctx, m.term)
			}
		default:
			q := repository.RecordQuery{Kind: repository.KindEvent, Limit: 1, VenueIDs: []int64{m.post}}
			var users []*repository.Record
			users, err = st.FindRecords(ctx, q)
			if err == nil && len(users) == 0 {
				q.VenueIDs, q.OrganizerIDs = nil, []int64{m.post}
				users, err = st.FindRecords(ctx, q)
			}
			if err == nil && len(users) > 0 {
				o.s.log.Warn("write failed: a record it created is kept, another event links it", "post", m.post)
				continue
			}
			if err == nil {
				err = st.DeleteRecord(ctx, m.post)
			}
		}
		if err != nil {
			o.s.log.Error("write failed and a record it made could not be undone", "kind", what, "id", id, "error", err)
		}
	}
	plan.made = nil
}

// dateIn returns the instant of the date d of field in loc: the value the
// caller read once (values.DateIn: no second parse; only a phrase asked
// for in another zone than the caller read it in is read again there),
// once per plan, field and zone. A date outside the stores' years in loc
// is the 400 naming the field and d.Raw, the value received.
func (o *op) dateIn(plan *writePlan, field string, d Opt[datetext.Value], loc *time.Location) (time.Time, error) {
	key := field + "\x00" + loc.String()
	if t, ok := plan.dates[key]; ok {
		return t, nil
	}
	t, err := values.DateIn(d.Value, loc)
	if err != nil {
		return t, apierr.InvalidValue(field, values.DateProblem(d.Value.Text(), loc, o.s.now(), o.lang), d.Raw)
	}
	if plan.dates == nil {
		plan.dates = map[string]time.Time{}
	}
	plan.dates[key] = t
	return t, nil
}
