package calendar

import (
	"context"
	"errors"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// CreateEvent checks the command in full, then writes what the event
// links to and the event.
func (s *Service) CreateEvent(ctx context.Context, by *repository.User, lang string, in *EventInput) (*repository.Record, error) {
	o := s.with(ctx, by, lang)
	plan, err := o.prepare(eventPlan(in, nil))
	if err != nil {
		return nil, err
	}
	if err := o.check(plan, nil); err != nil {
		return nil, err
	}
	return o.createNew(plan)
}

// CreateVenue creates a venue, or reuses a duplicate (same name, and
// description when sent, among the venues the actor may read; updated
// with the sent fields when the actor may edit it). It returns the venue
// and whether it is new.
func (s *Service) CreateVenue(ctx context.Context, by *repository.User, lang string, in *VenueInput) (*repository.Record, bool, error) {
	return s.createPlace(ctx, by, lang, venuePlan(in, nil))
}

// CreateOrganizer is CreateVenue for organizers.
func (s *Service) CreateOrganizer(ctx context.Context, by *repository.User, lang string, in *OrganizerInput) (*repository.Record, bool, error) {
	return s.createPlace(ctx, by, lang, organizerPlan(in, nil))
}

// createPlace checks the plan of a venue or organizer in full, then
// creates it or reuses a duplicate.
func (s *Service) createPlace(ctx context.Context, by *repository.User, lang string, plan *writePlan) (*repository.Record, bool, error) {
	o := s.with(ctx, by, lang)
	plan, err := o.prepare(plan)
	if err != nil {
		return nil, false, err
	}
	if err := o.check(plan, nil); err != nil {
		return nil, false, err
	}
	return o.createPlace(plan)
}

// UpdateEvent writes the fields the command sets onto the event cur (the
// caller found it and decided the actor may edit it).
func (s *Service) UpdateEvent(ctx context.Context, by *repository.User, lang string, cur *repository.Record, in *EventInput) (*repository.Record, error) {
	return s.update(s.with(ctx, by, lang), eventPlan(in, cur))
}

// UpdateVenue is UpdateEvent for venues.
func (s *Service) UpdateVenue(ctx context.Context, by *repository.User, lang string, cur *repository.Record, in *VenueInput) (*repository.Record, error) {
	return s.update(s.with(ctx, by, lang), venuePlan(in, cur))
}

// UpdateOrganizer is UpdateEvent for organizers.
func (s *Service) UpdateOrganizer(ctx context.Context, by *repository.User, lang string, cur *repository.Record, in *OrganizerInput) (*repository.Record, error) {
	return s.update(s.with(ctx, by, lang), organizerPlan(in, cur))
}

// update checks a partial update in full, then writes what it links to
// and the record; when the record's write fails, what was made is undone.
func (s *Service) update(o *op, plan *writePlan) (*repository.Record, error) {
	cur := plan.cur
	plan, err := o.prepare(plan)
	if err != nil {
		return nil, err
	}
	if err := o.check(plan, cur); err != nil {
		return nil, err
	}
	p, err := o.updateCommitted(plan, cur)
	if err != nil {
		o.undo(plan)
	}
	if errors.Is(err, repository.ErrNotFound) {
		return nil, apierr.NotFound(string(plan.kind), cur.ID)
	}
	if err != nil {
		return nil, err
	}
	s.countsChanged(cur, p)
	return p, nil
}

// createNew commits a checked plan (what it links to) and stores a new
// post from it; when that fails, what the commit made is undone.
func (o *op) createNew(plan *writePlan) (*repository.Record, error) {
	p, err := o.createCommitted(plan)
	if err != nil {
		o.undo(plan)
		return nil, err
	}
	return p, nil
}

// createCommitted is createNew without the undo.
func (o *op) createCommitted(plan *writePlan) (*repository.Record, error) {
	if err := o.commit(plan); err != nil {
		return nil, err
	}
	p := o.newPost(plan.kind)
	if err := o.apply(plan, p); err != nil {
		return nil, err
	}
	if err := o.s.store.CreateRecord(o.ctx, p); err != nil {
		return nil, err
	}
	o.s.countsChanged(p)
	return p, nil
}

// updateCommitted commits a checked plan and writes it onto the post cur.
func (o *op) updateCommitted(plan *writePlan, cur *repository.Record) (*repository.Record, error) {
	if err := o.commit(plan); err != nil {
		return nil, err
	}
	if e := cur.Event; e != nil && (plan.setVenues || plan.setOrganizers) {
		// The venues and organizers an event leaves need reindexing
		// (has_events, only_with_upcoming); mark them before the write.
		// Those it keeps are indexed again with the event (the worker
		// indexes an event's current places), and a venue mark would
		// also re-index every event at the venue (its geo point is in
		// their documents): a calendar source rewriting its events at
		// one venue would set that off for every event.
		var left []int64
		if plan.setVenues {
			left = leftLinks(e.Venues, plan.venueIDs)
		}
		if plan.setOrganizers {
			left = append(left, leftLinks(e.Organizers, plan.organizerIDs)...)
		}
		if len(left) > 0 {
			if err := o.s.store.MarkForIndexing(o.ctx, repository.MarkPost, left); err != nil {
				return nil, err
			}
		}
	}
	return o.s.store.UpdateRecord(o.ctx, cur.ID, func(p *repository.Record) error {
		return o.apply(plan, p)
	})
}

// leftLinks returns the IDs of before that after no longer holds.
func leftLinks(before, after []int64) []int64 {
	var left []int64
	for _, id := range before {
		if !contains(after, id) {
			left = append(left, id)
		}
	}
	return left
}

// Delete trashes the record cur (410 when it is trashed already) or, with
// force, deletes it for good (editors and admins). Trashing or deleting a
// venue or organizer unlinks it from every event. It returns the record to
// answer with: the trashed record, or cur as it was.
func (s *Service) Delete(ctx context.Context, by *repository.User, cur *repository.Record, force bool) (*repository.Record, error) {
	res := string(cur.Kind)
	if force {
		if !access.CanEditOthers(by) {
			return nil, access.Forbidden(by)
		}
		if cur.Kind != repository.KindEvent {
			if _, err := s.store.UnlinkRecord(ctx, cur.ID); err != nil {
				return nil, err
			}
		} else if e := cur.Event; e != nil {
			if err := s.store.MarkForIndexing(ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
				return nil, err
			}
		}
		if err := s.store.DeleteRecord(ctx, cur.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
			return nil, err
		}
		s.countsChanged(cur)
		return cur, nil
	}
	if cur.Status == repository.StatusTrash {
		return nil, apierr.New(410, res+"-is-in-trash", "The "+res+" is already trashed")
	}
	now := s.now().UTC().Truncate(time.Second)
	p, err := s.store.UpdateRecord(ctx, cur.ID, func(p *repository.Record) error {
		if p.Status == repository.StatusTrash {
			return apierr.New(410, res+"-is-in-trash", "The "+res+" is already trashed")
		}
		p.Status = repository.StatusTrash
		p.Modified = now
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cur.Kind != repository.KindEvent {
		if _, err := s.store.UnlinkRecord(ctx, cur.ID); err != nil {
			return nil, err
		}
	}
	s.countsChanged(cur)
	return p, nil
}
