package handlers

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
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// The occurrence routes of a recurring event (issue 24):
//
//	GET    /events/{id}/occurrences               the series' occurrences (list date and paging parameters)
//	GET    /events/{id}/occurrences/{key}         one occurrence, shaped like an event
//	PATCH  /events/{id}/occurrences/{key}         change one occurrence (an override)
//	DELETE /events/{id}/occurrences/{key}         cancel one occurrence (an exclusion)
//	POST   /events/{id}/occurrences/{key}/split   "this and following": end the series before the
//	                                              occurrence, start a new series from it with the changes
//
// Permissions follow the series: whoever may read (edit) the event may
// read (change) its occurrences.

// occurrenceRoutes declares the occurrence routes of events.
func (pt *posts) occurrenceRoutes() []*Route {
	return []*Route{
		{Methods: readable, Path: "/events/:id/occurrences", args: pt.occurrenceListArgs(), Handle: pt.listOccurrences, summary: "List the occurrences of a recurring event."},
		{Methods: readable, Path: "/events/:id/occurrences/:key", args: pt.readArgs(), Handle: pt.getOccurrence, summary: "Read one occurrence of a recurring event, shaped like an event."},
		{Methods: editable, Path: "/events/:id/occurrences/:key", args: pt.occurrenceWriteArgs(), Write: true, Handle: pt.updateOccurrence, summary: "Change one occurrence of a recurring event only (an override)."},
		{Methods: deletable, Path: "/events/:id/occurrences/:key", Write: true, Handle: pt.deleteOccurrence, summary: "Cancel one occurrence of a recurring event (an exclusion)."},
		{Methods: creatable, Path: "/events/:id/occurrences/:key/split", args: pt.writeArgs(false), Write: true, Handle: pt.splitSeries, summary: "This and following: end the series before the occurrence and start a new series from it with the changes."},
	}
}

// occurrenceFields are the event parameters an occurrence override takes.
var occurrenceFields = []string{"title", "description", "excerpt", "start_date", "end_date", "status",
	"venue", "organizer", "cost", "website", "featured"}

// occurrenceListArgs declares GET /events/{id}/occurrences.
func (pt *posts) occurrenceListArgs() []Arg {
	keep := map[string]bool{"page": true, "per_page": true, "start_date": true, "end_date": true,
		"strict_dates": true, "password": true, "context": true}
	var out []Arg
	for _, a := range pt.eventListArgs() {
		if keep[a.Name] {
			if a.Name == "start_date" {
				a.Desc = "Occurrences that start on or after this date (default: today 00:00 in the site zone)."
			}
			if a.Name == "end_date" {
				a.Desc = "Occurrences that end on or before this date (default: two years after today, 23:59:59)."
			}
			out = append(out, a)
		}
	}
	return out
}

// occurrenceWriteArgs declares PATCH /events/{id}/occurrences/{key}: the
// event parameters an override takes, read as on an event update.
func (pt *posts) occurrenceWriteArgs() []Arg {
	var out []Arg
	for _, a := range pt.writeArgs(false) {
		if contains(occurrenceFields, a.Name) {
			if a.Name == "venue" || a.Name == "organizer" {
				a.Desc = strings.Replace(a.Desc, ", {id} objects or inline venue data", " or {id} objects", 1)
				a.Desc = strings.Replace(a.Desc, ", {id} objects or inline organizer data", " or {id} objects", 1)
			}
			out = append(out, a)
		}
	}
	return out
}

// loadSeries loads the recurring event of an occurrence route.
func (pt *posts) loadSeries(r *Request) (*repository.Post, *time.Location, error) {
	p, err := pt.load(r, byID)
	if err != nil {
		return nil, nil, err
	}
	if p.Event == nil || p.Event.Recurrence == nil {
		return nil, nil, apierr.New(400, "rest-event-not-recurring", fmt.Sprintf("Event %d is not a recurring event: it has no occurrences (set its recurrence first).", p.ID))
	}
	loc, _ := pt.render.EventZone(p.Event)
	return p, loc, nil
}

// findOccurrence returns the occurrence the route's key names, or 404.
func (pt *posts) findOccurrence(r *Request, p *repository.Post, loc *time.Location) (recurrence.Occurrence, error) {
	key := r.c.Params("key")
	o, ok, err := pt.render.Expansions.Find(recurrence.SeriesOf(p.Event, loc), key, recurrenceLimits(pt.cfg, pt.now))
	if err != nil {
		return o, recurrenceProblem(err)
	}
	if !ok {
		if _, perr := recurrence.ParseKey(key, loc); perr != nil {
			return o, apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("%q is not an occurrence key: a key is the occurrence's original local start, YYYYMMDDTHHMMSS.", key))
		}
		return o, apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("Event %d has no occurrence %s (excluded, cancelled, beyond the horizon or not one of its dates).", p.ID, key))
	}
	return o, nil
}

// sendOccurrence renders one occurrence of p like an event.
func (pt *posts) sendOccurrence(r *Request, status int, p *repository.Post, o recurrence.Occurrence, single bool) error {
	h := eventHit{post: pt.render.OccurrencePost(p, o), series: p, occ: &o}
	l, err := r.loadLinked([]*repository.Post{h.post})
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, status, pt.renderHit(h, l, present.View{Lang: r.lang, Single: single}))
}

// readableOccurrence applies the series' read rules to an occurrence
// (whose override may give it another status).
func (pt *posts) readableOccurrence(r *Request, p *repository.Post, o recurrence.Occurrence) error {
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	if q := pt.render.OccurrencePost(p, o); !access.CanReadPost(r.user, q) {
		return apierr.New(403, "event-not-accessible", "The requested event is not accessible")
	}
	return nil
}

// getOccurrence serves GET /events/{id}/occurrences/{key}.
func (pt *posts) getOccurrence(r *Request) error {
	p, loc, err := pt.loadSeries(r)
	if err != nil {
		return err
	}
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	o, err := pt.findOccurrence(r, p, loc)
	if err != nil {
		return err
	}
	if err := pt.readableOccurrence(r, p, o); err != nil {
		return err
	}
	return pt.sendOccurrence(r, 200, p, o, true)
}

// listOccurrences serves GET /events/{id}/occurrences: the series'
// occurrences that start on or after start_date and end on or before
// end_date (the list's defaults and whole days unless strict_dates), by
// start, paged like /events. Occurrences whose override gives them a
// status the caller may not read are left out.
func (pt *posts) listOccurrences(r *Request) error {
	p, loc, err := pt.loadSeries(r)
	if err != nil {
		return err
	}
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	q, err := r.eventQuery() // the list's date window, read the same way
	if err != nil {
		return err
	}
	all, err := pt.render.Expansions.Expand(recurrence.SeriesOf(p.Event, loc), time.Time{}, time.Time{}, recurrenceLimits(pt.cfg, pt.now))
	if err != nil {
		return recurrenceProblem(err)
	}
	var hits []eventHit
	for i := range all {
		o := all[i]
		st, en := o.Start.Unix(), o.End.Unix()
		if q.StartGTE.Set && st < q.StartGTE.Value {
			continue
		}
		if q.EndLTE.Set && en > q.EndLTE.Value {
			continue
		}
		h := eventHit{post: pt.render.OccurrencePost(p, o), series: p, occ: &o}
		if !access.CanReadPost(r.user, h.post) {
			continue
		}
		hits = append(hits, h)
	}
	page, perPage := r.listPage()
	total := len(hits)
	from := min((page-1)*perPage, total)
	to := min(from+perPage, total)
	if from == to && page > 1 {
		return apierr.New(404, "event-archive-page-not-found", "The requested event archive page does not exist")
	}
	items, err := r.renderHits(hits[from:to], func(h eventHit, l *present.Linked) *present.Obj {
		o := pt.renderHit(h, l, present.View{Lang: r.lang})
		if !r.unlocks(h.post) {
			present.RedactEvent(o)
		}
		return o
	})
	if err != nil {
		return err
	}
	return r.sendListAt(fmt.Sprintf("events/%d/occurrences", p.ID), "events", items, total, page, perPage)
}

// editableSeries loads the series of an occurrence write and checks that
// the caller may edit it.
func (pt *posts) editableSeries(r *Request) (*repository.Post, *time.Location, error) {
	p, loc, err := pt.loadSeries(r)
	if err != nil {
		return nil, nil, err
	}
	if !access.CanEditPost(r.user, p) {
		return nil, nil, access.Forbidden(r.user)
	}
	return p, loc, nil
}

// updateOccurrence serves PATCH (POST, PUT) /events/{id}/occurrences/{key}:
// the fields sent change that occurrence only, kept as an override that
// later edits of the series leave alone unless they remove the occurrence.
func (pt *posts) updateOccurrence(r *Request) error {
	cur, loc, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	occ, err := pt.findOccurrence(r, cur, loc)
	if err != nil {
		return err
	}
	change, err := pt.occurrenceChange(r, cur, loc)
	if err != nil {
		return err
	}
	lim := recurrenceLimits(pt.cfg, pt.now)
	var after recurrence.Occurrence
	edit := func(p *repository.Post) error {
		if p.Event == nil || p.Event.Recurrence == nil {
			return apierr.New(409, "rest-event-not-recurring", "The event stopped being a recurring event meanwhile; read it again.")
		}
		series := recurrence.SeriesOf(p.Event, loc)
		if _, ok, err := pt.render.Expansions.Find(series, occ.Key, lim); err != nil || !ok {
			return apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("Event %d has no occurrence %s any more.", p.ID, occ.Key))
		}
		textBefore := p.Event.OverrideTextBytes()
		ov := p.Event.Override(occ.Key)
		if ov == nil {
			if limit := pt.cfg.MaxSeriesOccurrences; len(p.Event.Overrides) >= limit {
				return apierr.InvalidParam("key", fmt.Sprintf("A series keeps at most %d changed occurrences (MAX_SERIES_OCCURRENCES).", limit))
			}
			p.Event.Overrides = append(p.Event.Overrides, repository.OccurrenceOverride{Key: occ.Key})
			ov = &p.Event.Overrides[len(p.Event.Overrides)-1]
		}
		if err := change.apply(r, ov, occ, p); err != nil {
			return err
		}
		if err := pt.checkOverrideText(sentTextField(r), textBefore, p.Event); err != nil {
			return err
		}
		p.Modified = pt.now().UTC().Truncate(time.Second)
		o, _, err := pt.render.Expansions.Find(recurrence.SeriesOf(p.Event, loc), occ.Key, lim)
		after = o
		return err
	}
	// Decided first, then written: the change is tried on a copy of the
	// series (its size bound included) before anything (the index marks
	// included) is written.
	trial := clonePost(cur)
	if err := edit(trial); err != nil {
		return err
	}
	if err := repository.CheckRecordSize(trial); err != nil {
		return err
	}
	if e := cur.Event; change.setVenues || change.setOrganizers {
		// The venues and organizers the occurrence leaves need reindexing.
		if err := pt.store.MarkForIndexing(r.ctx, repository.MarkPost, append(append([]int64{}, e.Venues...), e.Organizers...)); err != nil {
			return err
		}
	}
	p, err := pt.store.UpdatePost(r.ctx, cur.ID, edit)
	if errors.Is(err, repository.ErrNotFound) {
		return apierr.NotFound("event", cur.ID)
	}
	if err != nil {
		return err
	}
	pt.countsChanged(cur, p)
	return pt.sendOccurrence(r, 200, p, after, false)
}

// sentTextField names the text field of an override write, for the
// message of MAX_SERIES_OVERRIDE_TEXT: the first of title, description
// and excerpt the request sends.
func sentTextField(r *Request) string {
	for _, f := range []string{"description", "title", "excerpt"} {
		if r.bag.Has(f) {
			return f
		}
	}
	return "the occurrence"
}

// occurrenceChange is a validated override write.
type occurrenceChange struct {
	venues, organizers       []int64
	setVenues, setOrganizers bool
}

// occurrenceChange checks what the declared validators cannot: venues and
// organizers must be existing ones the caller may link (IDs; an occurrence
// does not create venues or organizers).
func (pt *posts) occurrenceChange(r *Request, cur *repository.Post, loc *time.Location) (*occurrenceChange, error) {
	c := &occurrenceChange{}
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
		kind repository.PostKind
		dst  *[]int64
		set  *bool
	}{{"venue", repository.KindVenue, &c.venues, &c.setVenues}, {"organizer", repository.KindOrganizer, &c.organizers, &c.setOrganizers}} {
		v, ok := r.bag.Get(l.name)
		if !ok {
			continue
		}
		refs, msg, err := r.parseLinks(v, l.kind, current)
		if err != nil {
			return nil, err
		}
		if msg != "" {
			return nil, apierr.InvalidValue(l.name, msg, v)
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

// apply writes the request's fields onto the override ov of occurrence o
// of the series p (inside UpdatePost's loop: it may run more than once).
func (c *occurrenceChange) apply(r *Request, ov *repository.OccurrenceOverride, o recurrence.Occurrence, p *repository.Post) error {
	b := r.bag
	for _, f := range []struct {
		name string
		dst  *repository.Text
	}{{"title", &ov.Title}, {"description", &ov.Content}, {"excerpt", &ov.Excerpt}} {
		if v, ok := b.Get(f.name); ok {
			s, _ := input.AsString(v)
			t := f.dst.Clone()
			t.Set(r.lang, strings.TrimSpace(s))
			if len(t) == 0 {
				t = nil
			}
			*f.dst = t
		}
	}
	loc, _ := r.s.render.EventZone(p.Event)
	start, end := o.Start, o.End
	now := r.s.now()
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"start_date", &start}, {"end_date", &end}} {
		v, ok := b.Get(d.name)
		if !ok {
			continue
		}
		s, _ := input.AsString(v)
		t, err := input.ParseDateInRange(s, loc, now, r.lang)
		if err != nil {
			return apierr.InvalidValue(d.name, input.DateProblem(s, loc, now, r.lang), v)
		}
		if d.name == "start_date" && !b.Has("end_date") {
			end = t.Add(o.End.Sub(o.Start)) // moving the start keeps the duration
		}
		*d.dst = t
	}
	if end.Before(start) {
		return apierr.InvalidParam("end_date", fmt.Sprintf("The end date must not be before the start date: end_date is %s, start_date %s (%s).", localDate(end, loc), localDate(start, loc), loc))
	}
	if b.Has("start_date") || b.Has("end_date") {
		sl, el := localDate(start, loc), localDate(end, loc)
		ov.StartLocal, ov.EndLocal = &sl, &el
	}
	if v, ok := b.Get("status"); ok {
		st, _ := input.AsString(v)
		if !access.CanPublish(r.user) && (st == repository.StatusPublish || st == repository.StatusFuture || st == repository.StatusPrivate) && st != p.Status {
			st = repository.StatusPending
		}
		if st == repository.StatusPublish && p.Status != repository.StatusPublish {
			// An occurrence is never more visible than its series
			// (repository.OccurrenceStatus): publishing one alone would
			// show nothing, and is refused rather than stored.
			return apierr.InvalidValue("status", fmt.Sprintf("An occurrence can be published only when its series is: event %d is %s. Publish the series (PATCH /events/%d with status=publish) first.", p.ID, p.Status, p.ID), v)
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
	if v, ok := b.Get("cost"); ok {
		cost := costValues(v)
		if cost == nil {
			cost = []string{}
		}
		ov.Cost = &cost
	}
	if v, ok := b.Get("website"); ok {
		s, _ := input.AsString(v)
		s = strings.TrimSpace(s)
		ov.Website = &s
	}
	if v, ok := b.Get("featured"); ok {
		f, _ := input.AsBool(v)
		ov.Featured = &f
	}
	return nil
}

// deleteOccurrence serves DELETE /events/{id}/occurrences/{key}: the
// occurrence is cancelled, written as an exclusion of the series (its
// override, if any, goes). The answer is the occurrence as it was.
func (pt *posts) deleteOccurrence(r *Request) error {
	cur, loc, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	occ, err := pt.findOccurrence(r, cur, loc)
	if err != nil {
		return err
	}
	lim := recurrenceLimits(pt.cfg, pt.now)
	p, err := pt.store.UpdatePost(r.ctx, cur.ID, func(p *repository.Post) error {
		if p.Event == nil || p.Event.Recurrence == nil {
			return apierr.New(409, "rest-event-not-recurring", "The event stopped being a recurring event meanwhile; read it again.")
		}
		if _, ok, err := pt.render.Expansions.Find(recurrence.SeriesOf(p.Event, loc), occ.Key, lim); err != nil || !ok {
			return apierr.New(404, "rest-occurrence-not-found", fmt.Sprintf("Event %d has no occurrence %s any more.", p.ID, occ.Key))
		}
		rec := p.Event.Recurrence.Clone()
		if len(rec.Exclusions) >= recurrence.MaxDates {
			return apierr.InvalidParam("key", fmt.Sprintf("A series has at most %d exclusions: change its rules instead.", recurrence.MaxDates))
		}
		rec.Exclusions = append(rec.Exclusions, localDate(occ.Original, loc))
		p.Event.Recurrence = rec
		kept := []repository.OccurrenceOverride{}
		for _, o := range p.Event.Overrides {
			if o.Key != occ.Key {
				kept = append(kept, o)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		p.Event.Overrides = kept
		p.Event.Documents = pt.documentCount(p.Event)
		p.Modified = pt.now().UTC().Truncate(time.Second)
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return apierr.NotFound("event", cur.ID)
	}
	if err != nil {
		return err
	}
	pt.countsChanged(cur, p)
	return pt.sendOccurrence(r, 200, cur, occ, false)
}

// splitSeries serves POST /events/{id}/occurrences/{key}/split ("this and
// following"): the series ends before the occurrence and a new series
// (its parent the old one) starts from it, with the event fields sent
// applied to it (as an update would: title, start_date, recurrence...).
// The answer is the new series (201) with a parent field: the ID of the
// series it was split from.
//
// The store writes one record at a time, so the split is two writes made
// crash-safe by their order: the new series is created first, then the
// old one is cut. A crash between them loses nothing (the following
// occurrences are listed twice, by both series, until the cut); the same
// request sent again finds the new series (a child of the old one with the
// same start and rules) instead of creating another, and makes the cut.
func (pt *posts) splitSeries(r *Request) error {
	cur, loc, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	if cur.Status == repository.StatusTrash {
		return apierr.New(410, "event-is-in-trash", "The event is trashed: restore it before splitting it")
	}
	if !access.CanCreatePosts(r.user) {
		return access.Forbidden(r.user)
	}
	occ, err := pt.findOccurrence(r, cur, loc)
	if err != nil {
		return err
	}
	lim := recurrenceLimits(pt.cfg, pt.now)
	halves, err := recurrence.Split(recurrence.SeriesOf(cur.Event, loc), occ.Key, lim)
	if err != nil {
		return recurrenceProblem(err)
	}
	plan, err := pt.prepareWrite(r, r.bag, cur)
	if err != nil {
		return err
	}
	if !r.bag.Has("status") {
		r.bag.Values["status"] = cur.Status // the new series keeps the status unless one is sent
	}
	now := pt.now().UTC().Truncate(time.Second)
	n := *cur
	n.ID, n.Revision, n.Date, n.Modified = 0, 0, now, now
	n.Title, n.Content, n.Excerpt, n.Slug = cur.Title.Clone(), cur.Content.Clone(), cur.Excerpt.Clone(), cur.Slug.Clone()
	e := *cur.Event
	e.Parent = cur.ID
	e.StartLocal, e.EndLocal = localDate(halves.Start, loc), localDate(halves.End, loc)
	e.StartUTC, e.EndUTC = halves.Start.UTC(), halves.End.UTC()
	e.Recurrence, e.Overrides = halves.After, halves.AfterOverrides
	e.Venues, e.Organizers = append([]int64{}, e.Venues...), append([]int64{}, e.Organizers...)
	e.Categories, e.Tags, e.Cost = append([]int64{}, e.Categories...), append([]int64{}, e.Tags...), append([]string(nil), e.Cost...)
	n.Event = &e
	// Decided first (writePlan), then written: the new series is checked
	// before its linked records are made.
	if err := plan.check(r, &n); err != nil {
		return err
	}
	created, err := pt.splitCommitted(r, plan, cur, &n, occ, loc)
	if err != nil {
		if created == nil {
			plan.undo(r)
		}
		return err
	}
	pt.countsChanged(cur, created)
	l, err := r.loadLinked([]*repository.Post{created})
	if err != nil {
		return err
	}
	// The new series names the one it was split from (its parent).
	o := pt.render.Event(created, l, present.View{Lang: r.lang}).Add("parent", created.Event.Parent)
	return present.SendJSON(r.c, 201, o)
}

// splitCommitted commits a checked split plan, creates the new series n
// and cuts the series cur. It returns the new series once it exists (also
// with an error from the cut: the split is then half done, and the same
// request sent again completes it).
func (pt *posts) splitCommitted(r *Request, plan *writePlan, cur, n *repository.Post, occ recurrence.Occurrence, loc *time.Location) (*repository.Post, error) {
	if err := plan.commit(r); err != nil {
		return nil, err
	}
	if err := plan.apply(r, n); err != nil {
		return nil, err
	}
	lim := recurrenceLimits(pt.cfg, pt.now)
	now := pt.now().UTC().Truncate(time.Second)
	// Splits of one series run one at a time (in every process), and each
	// goes ahead only if the series is still the revision it was planned
	// on: two splits sent at once (or a split racing an edit) cannot both
	// create a new series from the same occurrences.
	var created *repository.Post
	err := pt.store.Exclusive(r.ctx, splitLockKey(cur.ID), func(ctx context.Context) error {
		fresh, err := pt.store.GetPost(ctx, cur.ID)
		if errors.Is(err, repository.ErrNotFound) {
			return apierr.NotFound("event", cur.ID)
		}
		if err != nil {
			return err
		}
		if fresh.Revision != cur.Revision {
			return apierr.New(409, "rest_conflict", fmt.Sprintf("Event %d changed while it was being split (another split or an edit); read it again.", cur.ID))
		}
		if created, err = pt.splitChild(r, cur.ID, n); err != nil {
			return err
		}
		_, err = pt.store.UpdatePost(ctx, cur.ID, func(p *repository.Post) error {
			if p.Event == nil || p.Event.Recurrence == nil {
				return nil
			}
			h, err := recurrence.Split(recurrence.SeriesOf(p.Event, loc), occ.Key, lim)
			if err != nil {
				return recurrenceProblem(err)
			}
			p.Event.Recurrence, p.Event.Overrides = h.Before, h.BeforeOverrides
			if h.Before == nil {
				p.Event.Overrides = nil
			}
			p.Event.Documents = pt.documentCount(p.Event)
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
func (pt *posts) splitChild(r *Request, parent int64, n *repository.Post) (*repository.Post, error) {
	children, err := pt.store.FindPosts(r.ctx, repository.PostQuery{Kind: repository.KindEvent, Parent: parent})
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
	if err := pt.store.CreatePost(r.ctx, n); err != nil {
		return nil, err
	}
	return n, nil
}
