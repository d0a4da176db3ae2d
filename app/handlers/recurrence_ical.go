package handlers

import (
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/ical"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/wallclock"
)

// icalSeries returns the VEVENTs of a recurring event for the caller: the
// series itself (DTSTART of its first occurrence, RRULE, EXDATE, RDATE)
// and one VEVENT per changed occurrence, with the series' UID and a
// RECURRENCE-ID naming the occurrence's original start. Each is built from
// the object rendered for the caller (redacted where protected), as
// icalEvent does for single events. A changed occurrence the caller may
// not read (its own status) is an EXDATE instead.
func (pt *events) icalSeries(r *Request, p *repository.Record) ([]ical.Event, error) {
	loc, _ := pt.render.EventZone(p.Event)
	all, err := pt.render.Expansions.Expand(recurrence.SeriesOf(p.Event, loc), time.Time{}, time.Time{}, recurrenceLimits(pt.cfg, pt.now))
	if err != nil {
		return nil, calendar.RecurrenceProblem(err)
	}
	posts := []*repository.Record{p}
	var changed []recurrence.Occurrence
	for _, o := range all {
		if o.Override != nil {
			changed = append(changed, o)
			posts = append(posts, pt.render.OccurrenceRecord(p, o))
		}
	}
	l, err := r.loadLinked(posts)
	if err != nil {
		return nil, err
	}
	render := func(q *repository.Record) ical.Event {
		o := pt.render.Event(q, l, present.View{Lang: r.lang})
		if !r.reader.Unlocks(q) {
			present.RedactEvent(o)
		}
		return pt.render.ICalEvent(q, o)
	}
	master := render(p)
	rec := p.Event.Recurrence
	series := recurrence.SeriesOf(p.Event, loc)
	master.Rules = recurrence.ICalRules(series, p.Event.AllDay)
	if !p.Event.AllDay && !series.Local.IsZero() && wallclock.InGap(series.Local, loc) {
		master.StartWall = series.Local // the rules repeat the wall time written
	}
	for _, list := range []struct {
		src []string
		dst *[]time.Time
	}{{rec.Exclusions, &master.ExDates}, {rec.Additions, &master.RDates}} {
		for _, raw := range list.src {
			if t, err := recurrence.ParseLocal(raw, loc); err == nil {
				*list.dst = append(*list.dst, t)
			}
		}
	}
	if n := len(all); n > 0 {
		master.Until = all[n-1].End
	}
	out := []ical.Event{master}
	for i, o := range changed {
		q := posts[i+1]
		if !access.CanReadRecord(r.user, q) {
			out[0].ExDates = append(out[0].ExDates, o.Original)
			continue
		}
		ev := render(q)
		ev.RecurrenceID = o.Original
		out = append(out, ev)
	}
	return out, nil
}
