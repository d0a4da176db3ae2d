package present

import (
	"fmt"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// Recurring events (issue 24): the recurrence field of every event, and
// occurrences shaped like events. The expansion is app/calendar/recurrence.

// Recurrence is an event's recurrence field: as written, null for a
// single event.
func Recurrence(rec *repository.Recurrence) any {
	if rec == nil {
		return nil
	}
	list := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return NewObjN(3).Add("rules", list(rec.Rules)).Add("exclusions", list(rec.Exclusions)).Add("additions", list(rec.Additions))
}

// OccurrencePost returns a copy of the series p shaped as one of its
// occurrences: the occurrence's dates and the fields its override
// changes. Its status is never more visible than the series'
// (repository.OccurrenceStatus), and it keeps the series' password, so
// every read rule applied to it applies the series' too. p (possibly a
// shared cached record) is not changed.
func (rn *Renderer) OccurrencePost(p *repository.Post, o recurrence.Occurrence) *repository.Post {
	q := *p
	e := *p.Event
	loc, _ := rn.EventZone(&e)
	e.StartLocal, e.EndLocal = localDate(o.Start, loc), localDate(o.End, loc)
	e.StartUTC, e.EndUTC = o.Start.UTC(), o.End.UTC()
	if ov := o.Override; ov != nil {
		merge := func(dst *repository.Text, src repository.Text) {
			if len(src) == 0 {
				return
			}
			c := dst.Clone()
			for lang, v := range src {
				c.Set(lang, v)
			}
			*dst = c
		}
		merge(&q.Title, ov.Title)
		merge(&q.Content, ov.Content)
		merge(&q.Excerpt, ov.Excerpt)
		// The series' status and password decide while it is not
		// published (repository.OccurrenceStatus).
		q.Status = repository.OccurrenceStatus(p.Status, ov)
		if ov.Venues != nil {
			e.Venues = *ov.Venues
		}
		if ov.Organizers != nil {
			e.Organizers = *ov.Organizers
		}
		if ov.Cost != nil {
			e.Cost = *ov.Cost
		}
		if ov.Website != nil {
			e.Website = ov.Website
		}
		if ov.Featured != nil {
			e.Featured = *ov.Featured
		}
	}
	q.Event = &e
	return &q
}

// Occurrence is the occurrence field of an occurrence shaped like an
// event: its key, its original start (local, in the event's zone) and its
// own address.
func (rn *Renderer) Occurrence(series *repository.Post, o recurrence.Occurrence, lang string) *Obj {
	loc, _ := rn.EventZone(series.Event)
	return NewObjN(3).Add("key", o.Key).Add("start", localDate(o.Original, loc)).
		Add("rest_url", rn.APIBase(lang)+fmt.Sprintf("/events/%d/occurrences/%s", series.ID, o.Key))
}

// OccurrenceEvent renders an occurrence like an event: post is the series
// shaped as the occurrence (OccurrencePost), with the occurrence field.
func (rn *Renderer) OccurrenceEvent(post, series *repository.Post, o recurrence.Occurrence, l *Linked, v View) *Obj {
	ev := rn.Event(post, l, v)
	ev.Add("occurrence", rn.Occurrence(series, o, v.Lang))
	return ev
}

// ChangedOccurrences lists a series' changed occurrences for webhook
// messages (an event.updated message about a series carries them, so an
// occurrence change is reported with what changed): each occurrence's key,
// original start, and its start, end, title and status after the change.
// Cancelled occurrences are the series' exclusions.
func (rn *Renderer) ChangedOccurrences(p *repository.Post, lim recurrence.Limits) []any {
	out := []any{}
	if p.Event == nil || p.Event.Recurrence == nil || len(p.Event.Overrides) == 0 {
		return out
	}
	loc, _ := rn.EventZone(p.Event)
	all, err := rn.Expansions.Expand(recurrence.SeriesOf(p.Event, loc), time.Time{}, time.Time{}, lim)
	if err != nil {
		return out
	}
	def := rn.cfg.DefaultLanguage
	for _, o := range all {
		if o.Override == nil {
			continue
		}
		q := rn.OccurrencePost(p, o)
		out = append(out, NewObjN(6).Add("key", o.Key).Add("start", localDate(o.Original, loc)).
			Add("start_date", q.Event.StartLocal).Add("end_date", q.Event.EndLocal).
			Add("title", q.Title.Get(def, def, rn.cfg.Languages...)).Add("status", q.Status))
	}
	return out
}
