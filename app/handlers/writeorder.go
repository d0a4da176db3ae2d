package handlers

import (
	"context"
	"math"

	"github.com/calendar/eventcal/repository"
)

// madeRecord is one entry of a write's undo log: a post or term the
// request created beside its main record, or a duplicate venue or
// organizer it updated (as it was before).
type madeRecord struct {
	post    int64
	term    int64
	tax     repository.Taxonomy
	restore *repository.Post
}

// check runs apply on a scratch copy of base (a new record of the plan's
// kind when base is nil), with placeholder IDs standing for the linked
// records commit will create, and returns what apply refuses, or the
// store's size bound (repository.CheckRecordSize) does. It writes
// nothing: every rule apply enforces has passed before commit creates a
// linked record. The placeholders are the largest IDs there are, so a
// size bound checked here holds for the real IDs too.
func (plan *writePlan) check(r *Request, base *repository.Post) error {
	var p *repository.Post
	if base == nil {
		p = plan.pt.newPost(r)
	} else {
		p = clonePost(base)
	}
	next := int64(math.MaxInt64)
	placeholder := func() int64 { next--; return next + 1 }
	links := func(refs []linkRef) []int64 {
		ids := []int64{}
		for _, ref := range refs {
			if ref.plan != nil || ref.data != nil {
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
	if err := plan.apply(r, p); err != nil {
		return err
	}
	// The store refuses a record over its size bound only when the main
	// record is written, after commit: measured here, a record too large
	// is refused before its linked records, IDs and index marks are made.
	return repository.CheckRecordSize(p)
}

// undo removes what commit created for this request and puts back the
// duplicates it updated, newest first. It runs only when the main record's
// write failed after commit (a store error, or a concurrent change that
// made apply refuse the record the store handed over); a refused request
// never gets that far. It is best effort: a record another request linked
// meanwhile is kept, and every failure is logged.
func (plan *writePlan) undo(r *Request) {
	if len(plan.made) == 0 {
		return
	}
	ctx := context.WithoutCancel(r.ctx)
	st := r.s.store
	for i := len(plan.made) - 1; i >= 0; i-- {
		m := plan.made[i]
		var err error
		what, id := "post", m.post
		switch {
		case m.restore != nil:
			what, id = "updated duplicate", m.restore.ID
			_, err = st.UpdatePost(ctx, m.restore.ID, func(p *repository.Post) error {
				p.Venue, p.Organizer, p.ImageID = m.restore.Venue, m.restore.Organizer, m.restore.ImageID
				return nil
			})
		case m.term != 0:
			what, id = "term", m.term
			q := repository.PostQuery{Kind: repository.KindEvent, Limit: 1}
			if m.tax == repository.TaxCategory {
				q.CategoryIDs = []int64{m.term}
			} else {
				q.TagIDs = []int64{m.term}
			}
			var users []*repository.Post
			if users, err = st.FindPosts(ctx, q); err == nil && len(users) > 0 {
				r.s.log.Warn("write failed: a term it created is kept, another event links it", "term", m.term)
				continue
			}
			if err == nil {
				err = st.DeleteTerm(ctx, m.term)
			}
		default:
			q := repository.PostQuery{Kind: repository.KindEvent, Limit: 1, VenueIDs: []int64{m.post}}
			var users []*repository.Post
			users, err = st.FindPosts(ctx, q)
			if err == nil && len(users) == 0 {
				q.VenueIDs, q.OrganizerIDs = nil, []int64{m.post}
				users, err = st.FindPosts(ctx, q)
			}
			if err == nil && len(users) > 0 {
				r.s.log.Warn("write failed: a record it created is kept, another event links it", "post", m.post)
				continue
			}
			if err == nil {
				err = st.DeletePost(ctx, m.post)
			}
		}
		if err != nil {
			r.s.log.Error("write failed and a record it made could not be undone", "kind", what, "id", id, "error", err)
		}
	}
	plan.made = nil
}

// clonePost returns a copy of p that apply may change without changing p.
func clonePost(p *repository.Post) *repository.Post {
	c := *p
	c.Title, c.Content, c.Excerpt, c.Slug = p.Title.Clone(), p.Content.Clone(), p.Excerpt.Clone(), p.Slug.Clone()
	if p.Event != nil {
		e := *p.Event
		e.Cost = append([]string(nil), e.Cost...)
		e.Categories, e.Tags = append([]int64(nil), e.Categories...), append([]int64(nil), e.Tags...)
		e.Venues, e.Organizers = append([]int64(nil), e.Venues...), append([]int64(nil), e.Organizers...)
		e.Recurrence = e.Recurrence.Clone()
		e.Overrides = append([]repository.OccurrenceOverride(nil), e.Overrides...)
		c.Event = &e
	}
	if p.Venue != nil {
		v := *p.Venue
		c.Venue = &v
	}
	if p.Organizer != nil {
		o := *p.Organizer
		c.Organizer = &o
	}
	if p.Image != nil {
		i := *p.Image
		c.Image = &i
	}
	return &c
}
