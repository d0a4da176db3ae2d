package calendar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input/values"
	"github.com/calendar/eventcal/repository"
)

// The writes of one occurrence of a series (the caller found the series
// cur and its occurrence occ, and decided the actor may edit the series):
// a change kept as an override (UpdateOccurrence: a cancellation too, as
// the override's event status), a removal kept as an exclusion
// (RemoveOccurrence), and "this and following" (Split).

// errNotRecurring is the 409 of a series that stopped being one while it
// was written.
func errNotRecurring() error {
	return apierr.New(409, "rest-event-not-recurring", "The event stopped being a recurring event meanwhile; read it again.")
}

// errOccurrenceGone is the 404 of an occurrence that went while it was
// written.
func errOccurrenceGone(id int64, key string) error {
	return apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("Event %d has no occurrence %s any more.", id, key))
}

// editOccurrence runs edit (an occurrenceEdit) on the series cur inside
// UpdatePost's loop and tells Changed: the write shared by the occurrence
// commands.
func (s *Service) editOccurrence(ctx context.Context, cur *repository.Record, edit func(p *repository.Record) error) (*repository.Record, error) {
	p, err := s.store.UpdateRecord(ctx, cur.ID, edit)
	if errors.Is(err, repository.ErrNotFound) {
		return nil, apierr.NotFound("event", cur.ID)
	}
	if err != nil {
		return nil, err
	}
	s.countsChanged(cur, p)
	return p, nil
}

// occurrenceEdit wraps edit with the checks that the record is still a
// series with the occurrence key.
func (s *Service) occurrenceEdit(key string, loc *time.Location, edit func(p *repository.Record) error) func(p *repository.Record) error {
	return func(p *repository.Record) error {
		if p.Event == nil || p.Event.Recurrence == nil {
			return errNotRecurring()
		}
		if _, ok, err := s.expansions.Find(recurrence.SeriesOf(p.Event, loc), key, s.RecurrenceLimits()); err != nil || !ok {
			return errOccurrenceGone(p.ID, key)
		}
		return edit(p)
	}
}

// FindOccurrence returns the occurrence key of the series p (whose zone
// is loc), or 404 rest-occurrence-not-found saying why there is none.
func (s *Service) FindOccurrence(p *repository.Record, loc *time.Location, key string) (recurrence.Occurrence, error) {
	o, ok, err := s.expansions.Find(recurrence.SeriesOf(p.Event, loc), key, s.RecurrenceLimits())
	if err != nil {
		return o, RecurrenceProblem(err)
	}
	if !ok {
		if _, perr := recurrence.ParseKey(key, loc); perr != nil {
			return o, apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("%q is not an occurrence key: a key is the occurrence's original local start, YYYYMMDDTHHMMSS.", key))
		}
		return o, apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("Event %d has no occurrence %s (excluded, cancelled, beyond the horizon or not one of its dates).", p.ID, key))
	}
	return o, nil
}

// UpdateOccurrence writes the fields the command sets onto the occurrence
// key of the series cur, kept as an override that later edits of the
// series leave alone unless they remove the occurrence. It returns the
// series and the occurrence as written.
func (s *Service) UpdateOccurrence(ctx context.Context, by *repository.User, lang string, cur *repository.Record, key string, in *OccurrenceInput) (*repository.Record, recurrence.Occurrence, error) {
	o := s.with(ctx, by, lang)
	loc, _ := s.zone(cur.Event)
	occ, err := s.FindOccurrence(cur, loc, key)
	if err != nil {
		return nil, occ, err
	}
	change, err := o.occurrenceChange(cur, in)
	if err != nil {
		return nil, recurrence.Occurrence{}, err
	}
	lim := s.RecurrenceLimits()
	var after recurrence.Occurrence
	edit := s.occurrenceEdit(occ.Key, loc, func(p *repository.Record) error {
		textBefore := p.Event.OverrideTextBytes()
		ov := p.Event.Override(occ.Key)
		if ov == nil {
			if limit := s.cfg.MaxSeriesOccurrences; len(p.Event.Overrides) >= limit {
				return apierr.InvalidParam("key", fmt.Sprintf("A series keeps at most %d changed occurrences (MAX_SERIES_OCCURRENCES).", limit))
			}
			p.Event.Overrides = append(p.Event.Overrides, repository.OccurrenceOverride{Key: occ.Key})
			ov = &p.Event.Overrides[len(p.Event.Overrides)-1]
		}
		if err := o.applyOccurrence(change, in, ov, occ, p); err != nil {
			return err
		}
		if err := s.checkOverrideText(in.sentTextField(), textBefore, p.Event); err != nil {
			return err
		}
		p.Modified = s.now().UTC().Truncate(time.Second)
		a, _, err := s.expansions.Find(recurrence.SeriesOf(p.Event, loc), occ.Key, lim)
		after = a
		return err
	})
	// Decided first, then written: the change is tried on a copy of the
	// series (its size bound included) before anything (the index marks
	// included) is written.
	trial := cur.Clone()
	if err := edit(trial); err != nil {
		return nil, after, err
	}
	if err := repository.CheckRecordSize(trial); err != nil {
		return nil, after, err
	}
	if e := cur.Event; change.setVenues || change.setOrganizers {
		// The venues and organizers the occurrence leaves need reindexing.
		if err := s.store.MarkForIndexing(ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
			return nil, after, err
		}
	}
	p, err := s.editOccurrence(ctx, cur, edit)
	return p, after, err
}

// sentTextField names the text field of an override write, for the
// message of MAX_SERIES_OVERRIDE_TEXT: the first of description, title
// and excerpt the command sets.
func (in *OccurrenceInput) sentTextField() string {
	for _, f := range []struct {
		name string
		set  bool
	}{{"description", in.Description.Set}, {"title", in.Title.Set}, {"excerpt", in.Excerpt.Set}} {
		if f.set {
			return f.name
		}
	}
	return "the occurrence"
}

// occurrenceChange is a checked override write.
type occurrenceChange struct {
	venues, organizers       []int64
	setVenues, setOrganizers bool
}

// occurrenceChange checks what the caller's decoding cannot: venues and
// organizers must be existing ones the actor may link (IDs; an occurrence
// does not create venues or organizers).
func (o *op) occurrenceChange(cur *repository.Record, in *OccurrenceInput) (*occurrenceChange, error) {
	c := &occurrenceChange{}
	var errs apierr.Params
	if CheckEventStatus(&errs, in.EventStatus, in.EventStatusReason); errs.Err() != nil {
		return nil, errs.Err()
	}
	current := append(append([]int64{}, cur.Event.Venues...), cur.Event.Organizers...)
	for _, ov := range cur.Event.Overrides {
		if ov.Venues != nil {
			current = append(current, *ov.Venues...)
		}
		if ov.Organizers != nil {
			current = append(current, *ov.Organizers...)
		}
	}
	for _, l := range []struct {
		name string
		kind repository.Kind
		in   Links
		dst  *[]int64
		set  *bool
	}{{"venue", repository.KindVenue, in.Venues, &c.venues, &c.setVenues}, {"organizer", repository.KindOrganizer, in.Organizers, &c.organizers, &c.setOrganizers}} {
		if !l.in.Set {
			continue
		}
		refs, msg, err := o.resolveLinks(l.in, l.kind, current)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			return nil, apierr.InvalidValue(l.name, msg, l.in.Raw)
		}
		ids := []int64{}
		for _, ref := range refs {
			if ref.data != nil {
				return nil, apierr.InvalidParam(l.name, fmt.Sprintf("An occurrence links existing %ss only: send their IDs (create the %s first).", l.kind, l.kind))
			}
			if !contains(ids, ref.id) {
				ids = append(ids, ref.id)
			}
		}
		*l.dst, *l.set = ids, true
	}
	return c, nil
}

// applyOccurrence writes the command's fields onto the override ov of
// occurrence occ of the series p (inside UpdatePost's loop: it may run
// more than once).
func (o *op) applyOccurrence(c *occurrenceChange, in *OccurrenceInput, ov *repository.OccurrenceOverride, occ recurrence.Occurrence, p *repository.Record) error {
	for _, f := range []struct {
		in  Opt[string]
		dst *repository.Text
	}{{in.Title, &ov.Title}, {in.Description, &ov.Content}, {in.Excerpt, &ov.Excerpt}} {
		if f.in.Set {
			t := f.dst.Clone()
			t.Set(o.lang, strings.TrimSpace(f.in.Value))
			if len(t) == 0 {
				t = nil
			}
			*f.dst = t
		}
	}
	loc, _ := o.s.zone(p.Event)
	start, end := occ.Start, occ.End
	for _, d := range []struct {
		name string
		in   Opt[datetext.Value]
		dst  *time.Time
	}{{"start_date", in.StartDate, &start}, {"end_date", in.EndDate, &end}} {
		if !d.in.Set {
			continue
		}
		// Read once by the caller; its instant in the series' zone.
		t, err := values.DateIn(d.in.Value, loc)
		if err != nil {
			return apierr.InvalidValue(d.name, values.DateProblem(d.in.Value.Text(), loc, o.s.now(), o.lang), d.in.Raw)
		}
		if d.name == "start_date" && !in.EndDate.Set {
			end = t.Add(occ.End.Sub(occ.Start)) // moving the start keeps the duration
		}
		*d.dst = t
	}
	if end.Before(start) {
		return apierr.InvalidParam("end_date", fmt.Sprintf("The end date must not be before the start date: end_date is %s, start_date %s (%s).", localDate(end, loc), localDate(start, loc), loc))
	}
	if in.StartDate.Set || in.EndDate.Set {
		sl, el := localDate(start, loc), localDate(end, loc)
		ov.StartLocal, ov.EndLocal = &sl, &el
	}
	if in.Status.Set {
		st := in.Status.Value
		if !access.CanPublish(o.user) && (st == repository.StatusPublish || st == repository.StatusFuture || st == repository.StatusPrivate) && st != p.Status {
			st = repository.StatusPending
		}
		if st == repository.StatusPublish && p.Status != repository.StatusPublish {
			// An occurrence is never more visible than its series
			// (repository.OccurrenceStatus): publishing one alone would
			// show nothing, and is refused rather than stored.
			return apierr.InvalidValue("status", fmt.Sprintf("An occurrence can be published only when its series is: event %d is %s. Publish the series (PATCH /events/%d with status=publish) first.", p.ID, p.Status, p.ID), in.Status.Raw)
		}
		ov.Status = &st
	}
	if c.setVenues {
		ids := c.venues
		ov.Venues = &ids
	}
	if c.setOrganizers {
		ids := c.organizers
		ov.Organizers = &ids
	}
	if in.Cost.Set {
		cost := in.Cost.Value
		if cost == nil {
			cost = []string{}
		}
		ov.Cost = &cost
	}
	if in.Website.Set {
		s := strings.TrimSpace(in.Website.Value)
		ov.Website = &s
	}
	if in.Featured.Set {
		f := in.Featured.Value
		ov.Featured = &f
	}
	if in.EventStatus.Set {
		st, _ := repository.StatusOf(strings.TrimSpace(in.EventStatus.Value))
		ov.EventStatus = &st
	}
	if in.EventStatusReason.Set {
		r := strings.TrimSpace(in.EventStatusReason.Value)
		ov.EventStatusReason = &r
	}
	return nil
}

// RemoveOccurrence removes the occurrence key from the series cur,
// written as an exclusion of the series (its override, if any, goes): the
// date is no longer listed. To cancel an occurrence and keep it listed as
// cancelled, UpdateOccurrence sets its EventStatus to canceled instead. It
// returns the occurrence as it was.
func (s *Service) RemoveOccurrence(ctx context.Context, cur *repository.Record, key string) (recurrence.Occurrence, error) {
	loc, _ := s.zone(cur.Event)
	occ, err := s.FindOccurrence(cur, loc, key)
	if err != nil {
		return occ, err
	}
	_, err = s.editOccurrence(ctx, cur, s.occurrenceEdit(occ.Key, loc, func(p *repository.Record) error {
		rec := p.Event.Recurrence.Clone()
		if len(rec.Exclusions) >= recurrence.MaxDates {
			return apierr.InvalidParam("key", fmt.Sprintf("A series has at most %d exclusions: change its rules instead.", recurrence.MaxDates))
		}
		rec.Exclusions = append(rec.Exclusions, localDate(occ.Original, loc))
		p.Event.Recurrence = rec
		kept := []repository.OccurrenceOverride{}
		for _, ov := range p.Event.Overrides {
			if ov.Key != occ.Key {
				kept = append(kept, ov)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		p.Event.Overrides = kept
		p.Event.Documents = s.documentCount(p.Event)
		p.Modified = s.now().UTC().Truncate(time.Second)
		return nil
	}))
	return occ, err
}

// Split is "this and following": the series cur ends before the
// occurrence key and a new series (its parent cur) starts from it, with
// the command's fields applied to it (as an update would: title,
// start_date, recurrence...). The new series keeps cur's status unless
// the command sets one. It returns the new series.
//
// The store writes one record at a time, so the split is two writes made
// crash-safe by their order: the new series is created first, then the
// old one is cut. A crash between them loses nothing (the following
// occurrences are listed twice, by both series, until the cut); the same
// command sent again finds the new series (a child of the old one with
// the same start and rules) instead of creating another, and makes the
// cut.
func (s *Service) Split(ctx context.Context, by *repository.User, lang string, cur *repository.Record, key string, in *EventInput) (*repository.Record, error) {
	if cur.Status == repository.StatusTrash {
		return nil, apierr.New(410, "event-is-in-trash", "The event is trashed: restore it before splitting it")
	}
	if !access.CanCreateRecords(by) {
		return nil, access.Forbidden(by)
	}
	o := s.with(ctx, by, lang)
	loc, _ := s.zone(cur.Event)
	occ, err := s.FindOccurrence(cur, loc, key)
	if err != nil {
		return nil, err
	}
	lim := s.RecurrenceLimits()
	halves, err := recurrence.Split(recurrence.SeriesOf(cur.Event, loc), occ.Key, lim)
	if err != nil {
		return nil, RecurrenceProblem(err)
	}
	cmd := *in
	plan, err := o.prepare(eventPlan(&cmd, cur))
	if err != nil {
		return nil, err
	}
	if !cmd.Status.Set {
		cmd.Status = Some(cur.Status) // the new series keeps the status unless one is sent
	}
	now := s.now().UTC().Truncate(time.Second)
	n := cur.Clone()
	n.ID, n.Revision, n.Date, n.Modified = 0, 0, now, now
	e := n.Event
	e.Parent = cur.ID
	e.StartLocal, e.EndLocal = localDate(halves.Start, loc), localDate(halves.End, loc)
	e.StartUTC, e.EndUTC = halves.Start.UTC(), halves.End.UTC()
	e.Recurrence, e.Overrides = halves.After, halves.AfterOverrides
	e.Venues, e.Organizers = append([]int64{}, e.Venues...), append([]int64{}, e.Organizers...)
	e.Categories, e.Tags, e.Cost = append([]int64{}, e.Categories...), append([]int64{}, e.Tags...), append([]string(nil), e.Cost...)
	// Decided first (writePlan), then written: the new series is checked
	// before its linked records are made.
	if err := o.check(plan, n); err != nil {
		return nil, err
	}
	created, err := o.splitCommitted(plan, cur, n, occ, loc)
	if err != nil {
		if created == nil {
			o.undo(plan)
		}
		return nil, err
	}
	s.countsChanged(cur, created)
	return created, nil
}

// splitCommitted commits a checked split plan, creates the new series n
// and cuts the series cur. It returns the new series once it exists (also
// with an error from the cut: the split is then half done, and the same
// command sent again completes it).
func (o *op) splitCommitted(plan *writePlan, cur, n *repository.Record, occ recurrence.Occurrence, loc *time.Location) (*repository.Record, error) {
	if err := o.commit(plan); err != nil {
		return nil, err
	}
	if err := o.apply(plan, n); err != nil {
		return nil, err
	}
	s := o.s
	lim := s.RecurrenceLimits()
	now := s.now().UTC().Truncate(time.Second)
	// Splits of one series run one at a time (in every process), and each
	// goes ahead only if the series is still the revision it was planned
	// on: two splits sent at once (or a split racing an edit) cannot both
	// create a new series from the same occurrences.
	var created *repository.Record
	err := s.store.Exclusive(o.ctx, splitLockKey(cur.ID), func(ctx context.Context) error {
		fresh, err := s.store.GetRecord(ctx, cur.ID)
		if errors.Is(err, repository.ErrNotFound) {
			return apierr.NotFound("event", cur.ID)
		}
		if err != nil {
			return err
		}
		if fresh.Revision != cur.Revision {
			return apierr.New(409, "rest_conflict", fmt.Sprintf("Event %d changed while it was being split (another split or an edit); read it again.", cur.ID))
		}
		if created, err = o.splitChild(cur.ID, n); err != nil {
			return err
		}
		_, err = s.store.UpdateRecord(ctx, cur.ID, func(p *repository.Record) error {
			if p.Event == nil || p.Event.Recurrence == nil {
				return nil
			}
			h, err := recurrence.Split(recurrence.SeriesOf(p.Event, loc), occ.Key, lim)
			if err != nil {
				return RecurrenceProblem(err)
			}
			p.Event.Recurrence, p.Event.Overrides = h.Before, h.BeforeOverrides
			if h.Before == nil {
				p.Event.Overrides = nil
			}
			p.Event.Documents = s.documentCount(p.Event)
			p.Modified = now
			return nil
		})
		return err
	})
	return created, err
}

// splitLockKey names the Exclusive lock the splits of the series id take.
func splitLockKey(id int64) string { return "split:post:" + strconv.FormatInt(id, 10) }

// splitChild creates the new series of a split, or returns the one an
// earlier attempt of the same split created (a child of the old series
// with the same start and rules).
func (o *op) splitChild(parent int64, n *repository.Record) (*repository.Record, error) {
	children, err := o.s.store.FindRecords(o.ctx, repository.RecordQuery{Kind: repository.KindEvent, Parent: parent})
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		if c.Event == nil || c.Status == repository.StatusTrash || !c.Event.StartUTC.Equal(n.Event.StartUTC) ||
			(c.Event.Recurrence == nil) != (n.Event.Recurrence == nil) {
			continue
		}
		if c.Event.Recurrence == nil || slices.Equal(c.Event.Recurrence.Rules, n.Event.Recurrence.Rules) {
			return c, nil
		}
	}
	if err := o.s.store.CreateRecord(o.ctx, n); err != nil {
		return nil, err
	}
	return n, nil
}

// localDate writes t as wall time in loc ("2006-01-02 15:04:05").
func localDate(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(recurrence.LocalLayout)
}
