package present

import (
	"bytes"
	"fmt"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// Recurring events (issue 24): the recurrence field of every event, and
// occurrences shaped like events. The expansion is app/calendar/recurrence.

// Recurrence is an event's recurrence field: its rules, exclusions and
// additions as written (null for a single event: a nil *Recurrence).
type Recurrence struct {
	Rules, Exclusions, Additions []string
}

func (r *Recurrence) writeJSON(buf *bytes.Buffer) error {
	if r == nil {
		buf.WriteString("null")
		return nil
	}
	w := openObj(buf)
	w.strs("rules", r.Rules)
	w.strs("exclusions", r.Exclusions)
	w.strs("additions", r.Additions)
	return w.close()
}

// MarshalJSON writes the recurrence (null when nil).
func (r *Recurrence) MarshalJSON() ([]byte, error) { return marshal(r) }

// NewRecurrence is the recurrence field of an event (nil for a single
// event).
func NewRecurrence(rec *repository.Recurrence) *Recurrence {
	if rec == nil {
		return nil
	}
	return &Recurrence{Rules: rec.Rules, Exclusions: rec.Exclusions, Additions: rec.Additions}
}

// OccurrenceRecord returns a copy of the series p shaped as one of its
// occurrences: the occurrence's dates and the fields its override
// changes. Its status is never more visible than the series'
// (repository.OccurrenceStatus), and it keeps the series' password, so
// every read rule applied to it applies the series' too. p (possibly a
// shared cached record) is not changed.
func (rn *Renderer) OccurrenceRecord(p *repository.Record, o recurrence.Occurrence) *repository.Record {
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
		if ov.EventStatus != nil {
			e.EventStatus = *ov.EventStatus
		}
		if ov.EventStatusReason != nil {
			e.EventStatusReason = *ov.EventStatusReason
		}
	}
	q.Event = &e
	return &q
}

// OccurrenceRef is the occurrence field of an occurrence shaped like an
// event: its key, its original start (local, in the event's zone) and its
// own address.
type OccurrenceRef struct {
	Key, Start, RestURL string
}

func (r *OccurrenceRef) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("key", r.Key)
	w.str("start", r.Start)
	w.str("rest_url", r.RestURL)
	return w.close()
}

// MarshalJSON writes the occurrence field.
func (r *OccurrenceRef) MarshalJSON() ([]byte, error) { return marshal(r) }

// Occurrence is the occurrence field of o, an occurrence of series.
func (rn *Renderer) Occurrence(series *repository.Record, o recurrence.Occurrence, lang string) *OccurrenceRef {
	loc, _ := rn.EventZone(series.Event)
	return &OccurrenceRef{Key: o.Key, Start: localDate(o.Original, loc),
		RestURL: rn.APIBase(lang) + fmt.Sprintf("/events/%d/occurrences/%s", series.ID, o.Key)}
}

// OccurrenceEvent renders an occurrence like an event: post is the series
// shaped as the occurrence (OccurrencePost), with the occurrence field.
func (rn *Renderer) OccurrenceEvent(post, series *repository.Record, o recurrence.Occurrence, l *Linked, v View) *Event {
	ev := rn.Event(post, l, v)
	ev.Occurrence = rn.Occurrence(series, o, v.Lang)
	if ld := ev.JSONLD; ld != nil && !o.Start.Equal(o.Original) {
		// A moved occurrence: schema.org's rescheduled event, with the
		// start it had (unless its status says more).
		ld.PreviousStartDate = o.Original.UTC().Format(time.RFC3339)
		if ev.EventStatus == repository.EventScheduled && ld.EventStatus != "" {
			ld.EventStatus = schemaRescheduled
		}
	}
	return ev
}

// ChangedOccurrence is one changed occurrence of a series in a webhook
// message: its key, original start, and its start, end, title, status and
// event status after the change.
type ChangedOccurrence struct {
	Key, Start, StartDate, EndDate, Title, Status string
	// EventStatus is the occurrence's event status (its own or the
	// series').
	EventStatus string
}

func (c ChangedOccurrence) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("key", c.Key)
	w.str("start", c.Start)
	w.str("start_date", c.StartDate)
	w.str("end_date", c.EndDate)
	w.str("title", c.Title)
	w.str("status", c.Status)
	w.str("event_status", c.EventStatus)
	return w.close()
}

// MarshalJSON writes the changed occurrence.
func (c ChangedOccurrence) MarshalJSON() ([]byte, error) { return marshal(c) }

// ChangedOccurrences lists a series' changed occurrences for webhook
// messages (an event.updated message about a series carries them, so an
// occurrence change is reported with what changed): each occurrence's key,
// original start, and its start, end, title, status and event status after
// the change.
// Cancelled occurrences are the series' exclusions.
func (rn *Renderer) ChangedOccurrences(p *repository.Record, lim recurrence.Limits) []ChangedOccurrence {
	out := []ChangedOccurrence{}
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
		q := rn.OccurrenceRecord(p, o)
		out = append(out, ChangedOccurrence{Key: o.Key, Start: localDate(o.Original, loc),
			StartDate: q.Event.StartLocal, EndDate: q.Event.EndLocal,
			Title: q.Title.Get(def, def, rn.cfg.Languages...), Status: q.Status, EventStatus: q.Event.Status()})
	}
	return out
}
