package handlers

import (
	"fmt"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// The occurrence routes of a recurring event (issue 24):
//
//	GET    /events/{id}/occurrences               the series' occurrences (list date and paging parameters)
//	GET    /events/{id}/occurrences/{key}         one occurrence, shaped like an event
//	PATCH  /events/{id}/occurrences/{key}         change one occurrence (an override); event_status=canceled
//	                                              cancels it and keeps it listed
//	DELETE /events/{id}/occurrences/{key}         remove one occurrence's date (an exclusion)
//	POST   /events/{id}/occurrences/{key}/split   "this and following": end the series before the
//	                                              occurrence, start a new series from it with the changes
//
// Permissions follow the series: whoever may read (edit) the event may
// read (change) its occurrences.

// occurrences serves the occurrence routes of the series of events (ev).
type occurrences struct {
	*items
	ev *events
}

// occurrenceRoutes declares the occurrence routes of events.
func (pt *occurrences) occurrenceRoutes() []*Route {
	return []*Route{
		{Methods: readable, Path: "/events/:id/occurrences", args: pt.occurrenceListArgs(), Handle: pt.listOccurrences, summary: "List the occurrences of a recurring event."},
		{Methods: readable, Path: "/events/:id/occurrences/:key", args: pt.readArgs(), Handle: pt.getOccurrence, summary: "Read one occurrence of a recurring event, shaped like an event."},
		{Methods: editable, Path: "/events/:id/occurrences/:key", args: pt.occurrenceWriteArgs(), Write: true, Handle: pt.updateOccurrence, summary: "Change one occurrence of a recurring event only (an override)."},
		{Methods: deletable, Path: "/events/:id/occurrences/:key", Write: true, Handle: pt.deleteOccurrence, summary: "Remove one occurrence of a recurring event (an exclusion); to cancel it and keep it listed, PATCH its event_status."},
		{Methods: creatable, Path: "/events/:id/occurrences/:key/split", args: pt.writeArgs(false), Write: true, Handle: pt.splitSeries, summary: "This and following: end the series before the occurrence and start a new series from it with the changes."},
	}
}

// occurrenceFields are the event parameters an occurrence override takes.
var occurrenceFields = []string{"title", "description", "excerpt", "start_date", "end_date", "status",
	"venue", "organizer", "cost", "website", "featured", "event_status", "event_status_reason"}

// occurrenceListArgs declares GET /events/{id}/occurrences.
func (pt *occurrences) occurrenceListArgs() []Arg {
	keep := map[string]bool{"page": true, "per_page": true, "start_date": true, "end_date": true,
		"strict_dates": true, "password": true, "context": true}
	var out []Arg
	for _, a := range pt.ev.eventListArgs() {
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
func (pt *occurrences) occurrenceWriteArgs() []Arg {
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
func (pt *occurrences) loadSeries(r *Request) (*repository.Record, *time.Location, error) {
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
func (pt *occurrences) findOccurrence(r *Request, p *repository.Record, loc *time.Location) (recurrence.Occurrence, error) {
	return pt.cal.FindOccurrence(p, loc, r.c.Params("key"))
}

// sendOccurrence renders one occurrence of p like an event.
func (pt *occurrences) sendOccurrence(r *Request, status int, p *repository.Record, o recurrence.Occurrence, single bool) error {
	h := eventHit{post: pt.render.OccurrenceRecord(p, o), series: p, occ: &o}
	l, err := r.loadLinked([]*repository.Record{h.post})
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, status, pt.ev.renderHit(h, l, present.View{Lang: r.lang, Single: single}))
}

// readableOccurrence applies the series' read rules to an occurrence
// (whose override may give it another status).
func (pt *occurrences) readableOccurrence(r *Request, p *repository.Record, o recurrence.Occurrence) error {
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	if q := pt.render.OccurrenceRecord(p, o); !access.CanReadRecord(r.user, q) {
		return apierr.New(403, "event-not-accessible", "The requested event is not accessible")
	}
	return nil
}

// getOccurrence serves GET /events/{id}/occurrences/{key}.
func (pt *occurrences) getOccurrence(r *Request) error {
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
func (pt *occurrences) listOccurrences(r *Request) error {
	p, loc, err := pt.loadSeries(r)
	if err != nil {
		return err
	}
	if err := pt.checkReadable(r, p); err != nil {
		return err
	}
	q, err := newLister(r).eventQuery() // the list's date window, read the same way
	if err != nil {
		return err
	}
	all, err := pt.render.Expansions.Expand(recurrence.SeriesOf(p.Event, loc), time.Time{}, time.Time{}, recurrenceLimits(pt.cfg, pt.now))
	if err != nil {
		return calendar.RecurrenceProblem(err)
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
		h := eventHit{post: pt.render.OccurrenceRecord(p, o), series: p, occ: &o}
		if !access.CanReadRecord(r.user, h.post) {
			continue
		}
		hits = append(hits, h)
	}
	page, perPage := listPage(r.bag)
	total := len(hits)
	from := min((page-1)*perPage, total)
	to := min(from+perPage, total)
	if from == to && page > 1 {
		return apierr.New(404, "event-archive-page-not-found", "The requested event archive page does not exist")
	}
	items, err := newLister(r).renderHits(hits[from:to], func(h eventHit, l *present.Linked) *present.Event {
		o := pt.ev.renderHit(h, l, present.View{Lang: r.lang})
		if !r.reader.Unlocks(h.post) {
			present.RedactEvent(o)
		}
		return o
	})
	if err != nil {
		return err
	}
	return present.SendList(r.c, present.NewList("events", items, newLister(r).paging(fmt.Sprintf("events/%d/occurrences", p.ID), page, perPage, total)))
}

// editableSeries loads the series of an occurrence write and checks that
// the caller may edit it.
func (pt *occurrences) editableSeries(r *Request) (*repository.Record, *time.Location, error) {
	p, loc, err := pt.loadSeries(r)
	if err != nil {
		return nil, nil, err
	}
	if !access.CanEditRecord(r.user, p) {
		return nil, nil, access.Forbidden(r.user)
	}
	return p, loc, nil
}

// updateOccurrence serves PATCH (POST, PUT) /events/{id}/occurrences/{key}:
// the fields sent change that occurrence only, kept as an override that
// later edits of the series leave alone unless they remove the occurrence
// (calendar.Service.UpdateOccurrence).
func (pt *occurrences) updateOccurrence(r *Request) error {
	cur, _, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	in, err := decodeOccurrence(r, r.bag)
	if err != nil {
		return err
	}
	p, after, err := pt.cal.UpdateOccurrence(r.ctx, r.user, r.lang, cur, r.c.Params("key"), in)
	if err != nil {
		return err
	}
	return pt.sendOccurrence(r, 200, p, after, false)
}

// deleteOccurrence serves DELETE /events/{id}/occurrences/{key}: the
// occurrence's date is removed, written as an exclusion of the series
// (calendar.Service.RemoveOccurrence); a PATCH with event_status=canceled
// cancels it and keeps it listed instead. The answer is the occurrence as
// it was.
func (pt *occurrences) deleteOccurrence(r *Request) error {
	cur, _, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	occ, err := pt.cal.RemoveOccurrence(r.ctx, cur, r.c.Params("key"))
	if err != nil {
		return err
	}
	return pt.sendOccurrence(r, 200, cur, occ, false)
}

// splitSeries serves POST /events/{id}/occurrences/{key}/split ("this and
// following", calendar.Service.Split): the series ends before the
// occurrence and a new series (its parent the old one) starts from it,
// with the event fields sent applied to it. The answer is the new series
// (201) with a parent field: the ID of the series it was split from.
func (pt *occurrences) splitSeries(r *Request) error {
	cur, _, err := pt.editableSeries(r)
	if err != nil {
		return err
	}
	in, err := decodeEvent(r, r.bag)
	if err != nil {
		return err
	}
	created, err := pt.cal.Split(r.ctx, r.user, r.lang, cur, r.c.Params("key"), in)
	if err != nil {
		return err
	}
	l, err := r.loadLinked([]*repository.Record{created})
	if err != nil {
		return err
	}
	// The new series names the one it was split from (its parent).
	o := pt.render.Event(created, l, present.View{Lang: r.lang}).WithParent(created.Event.Parent)
	return present.SendJSON(r.c, 201, o)
}
