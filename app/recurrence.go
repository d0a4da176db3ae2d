package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/recurrence"
	"github.com/calendar/eventcal/search"
)

// Recurring events (issue 24): the recurrence parameter of event writes,
// the recurrence and occurrence fields of rendered events, and the list
// hits that are occurrences. The expansion itself is repository/recurrence.

// maxRecurrenceDate bounds one exclusion or addition, in characters.
const maxRecurrenceDate = 32

// recurrenceArg declares the recurrence parameter of event writes.
func recurrenceArg() arg {
	return arg{Name: "recurrence", Type: tObject, Check: checkRecurrenceArg,
		Desc: `Makes the event a series: {"rules": RRULE values without "RRULE:" (FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270630T235959Z; DAILY at the finest), "exclusions" and "additions": occurrence starts YYYY-MM-DD HH:MM:SS in the event's time zone}; the event's start and end are the first occurrence. null makes it a single event again.`}
}

// recurrenceLimits are the expansion bounds for now.
func (s *Server) recurrenceLimits() recurrence.Limits {
	now := time.Now
	if s.now != nil { // the webhooks' renderer may have no clock
		now = s.now
	}
	return recurrence.Limits{Now: now(), Horizon: s.cfg.RecurrenceHorizon}
}

// checkRecurrenceArg checks the shape of a recurrence value: null (or an
// empty string, from a form), or an object of the three lists of strings.
// The rules and dates themselves are checked once the event's start and
// zone are known (applyRecurrence).
func checkRecurrenceArg(_ *request, v any) string {
	_, msg := parseRecurrenceValue(v)
	return msg
}

// parseRecurrenceValue reads a recurrence value: nil for a single event,
// else the recurrence as written; msg says what is wrong with it.
func parseRecurrenceValue(v any) (*repository.Recurrence, string) {
	const shape = `Must be null or an object {"rules": [...], "exclusions": [...], "additions": [...]} of lists of strings.`
	switch x := v.(type) {
	case nil:
		return nil, ""
	case string:
		s := strings.TrimSpace(x)
		if s == "" || s == "null" {
			return nil, ""
		}
		// A form or query value may carry the object as JSON text.
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			return nil, shape
		}
		return parseRecurrenceValue(m)
	case map[string]any:
		rec := &repository.Recurrence{Rules: []string{}, Exclusions: []string{}, Additions: []string{}}
		for k, val := range x {
			var dst *[]string
			var max, maxLen int
			switch k {
			case "rules":
				dst, max, maxLen = &rec.Rules, recurrence.MaxRules, recurrence.MaxRuleLength
			case "exclusions":
				dst, max, maxLen = &rec.Exclusions, recurrence.MaxDates, maxRecurrenceDate
			case "additions":
				dst, max, maxLen = &rec.Additions, recurrence.MaxDates, maxRecurrenceDate
			default:
				return nil, fmt.Sprintf("Unknown key %q: a recurrence has rules, exclusions and additions.", k)
			}
			items, ok := val.([]any)
			switch {
			case val == nil:
				items = nil
			case !ok:
				if s, isStr := val.(string); isStr {
					items = []any{s}
				} else {
					return nil, fmt.Sprintf("recurrence.%s must be a list of strings.", k)
				}
			}
			if len(items) > max {
				return nil, fmt.Sprintf("recurrence.%s must contain at most %d items; received %d.", k, max, len(items))
			}
			for i, it := range items {
				s, ok := it.(string)
				if !ok {
					return nil, fmt.Sprintf("recurrence.%s[%d] must be a string.", k, i)
				}
				if len(s) > maxLen {
					return nil, fmt.Sprintf("recurrence.%s[%d] must be at most %d characters long; received %d.", k, i, maxLen, len(s))
				}
				*dst = append(*dst, strings.Clone(strings.TrimSpace(s)))
			}
		}
		return rec, ""
	}
	return nil, shape
}

// applyRecurrence writes the recurrence sent (if any) onto an event whose
// dates are already applied, validates the series against its start and
// zone, and drops the overrides of occurrences the write removed. A
// single event keeps no overrides.
func (plan *writePlan) applyRecurrence(r *request, p *repository.Post) error {
	e := p.Event
	if v, ok := plan.b.get("recurrence"); ok {
		rec, msg := parseRecurrenceValue(v)
		if msg != "" {
			return invalidValue("recurrence", msg, v)
		}
		e.Recurrence = rec
	}
	if e.Recurrence == nil {
		e.Overrides = nil
		return nil
	}
	loc, _ := r.s.eventZone(e)
	series := recurrence.SeriesOf(e, loc)
	lim := r.s.recurrenceLimits()
	if err := recurrence.Validate(series, lim); err != nil {
		return recurrenceProblem(err)
	}
	if len(e.Overrides) > 0 {
		keys, err := recurrence.Keys(series, lim)
		if err != nil {
			return recurrenceProblem(err)
		}
		kept := e.Overrides[:0:0]
		for _, o := range e.Overrides {
			if keys[o.Key] {
				kept = append(kept, o)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		e.Overrides = kept
	}
	return nil
}

// recurrenceProblem turns a refused series into a 400 on the recurrence
// parameter whose message names the part at fault.
func recurrenceProblem(err error) error {
	var re *recurrence.Error
	if errors.As(err, &re) {
		return invalidParam("recurrence", re.Field+": "+re.Message+".")
	}
	return err
}

// renderRecurrence is the recurrence as written, null for a single event.
func renderRecurrence(rec *repository.Recurrence) any {
	if rec == nil {
		return nil
	}
	list := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return newObjN(3).add("rules", list(rec.Rules)).add("exclusions", list(rec.Exclusions)).add("additions", list(rec.Additions))
}

// occurrencePost returns a copy of the series p shaped as one of its
// occurrences: the occurrence's dates and the fields its override
// changes. p (possibly a shared cached record) is not changed.
func (s *Server) occurrencePost(p *repository.Post, o recurrence.Occurrence) *repository.Post {
	q := *p
	e := *p.Event
	loc, _ := s.eventZone(&e)
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
		if ov.Status != nil {
			q.Status = *ov.Status
		}
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

// occurrenceObj is the occurrence field of a listed occurrence: its key
// and its original start (local, in the event's zone).
func (s *Server) occurrenceObj(p *repository.Post, o recurrence.Occurrence, lang string) *obj {
	loc, _ := s.eventZone(p.Event)
	return newObjN(3).add("key", o.Key).add("start", localDate(o.Original, loc)).
		add("rest_url", s.apiBase(lang)+fmt.Sprintf("/events/%d/occurrences/%s", p.ID, o.Key))
}

// eventHit is one hit of an event list: the post to render (the series
// shaped as its occurrence, for an occurrence) and the occurrence.
type eventHit struct {
	post *repository.Post
	// series is the stored record (the series for an occurrence).
	series *repository.Post
	occ    *recurrence.Occurrence
}

// hitOccurrence returns the occurrence key of the i-th hit of an event
// result ("" for a single event).
func hitOccurrence(res search.Result, i int) string { return res.Occurrence(i) }

// eventHits loads the posts of a result page in the engine's order,
// shaping each occurrence hit as its occurrence; hits whose record
// vanished since the index saw it are skipped.
func (r *request) eventHits(res search.Result) ([]eventHit, error) {
	m, err := r.s.linkedPosts(r.ctx, res.IDs) // decoded once per write generation (linkcache.go)
	if err != nil {
		return nil, err
	}
	out := make([]eventHit, 0, len(res.IDs))
	for i, id := range res.IDs {
		p := m[id]
		if p == nil {
			continue
		}
		key := hitOccurrence(res, i)
		if key == "" || p.Event == nil || p.Event.Recurrence == nil {
			out = append(out, eventHit{post: p, series: p})
			continue
		}
		loc, _ := r.s.eventZone(p.Event)
		o, err := recurrence.At(recurrence.SeriesOf(p.Event, loc), key)
		if err != nil {
			continue // a key of another series shape: stale until reindexed
		}
		out = append(out, eventHit{post: r.s.occurrencePost(p, o), series: p, occ: &o})
	}
	return out, nil
}

// renderEventHits renders a page of event hits with what they link to.
func (r *request) renderEventHits(res search.Result, render func(h eventHit, l *linked) *obj) ([]any, error) {
	hits, err := r.eventHits(res)
	if err != nil {
		return nil, err
	}
	return r.renderHits(hits, render)
}

// renderHits renders event hits with what they link to.
func (r *request) renderHits(hits []eventHit, render func(h eventHit, l *linked) *obj) ([]any, error) {
	posts := make([]*repository.Post, len(hits))
	for i, h := range hits {
		posts[i] = h.post
	}
	l, err := r.loadLinked(posts)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(hits))
	for _, h := range hits {
		items = append(items, render(h, l))
	}
	return items, nil
}

// renderHit renders one event hit: a single event or series from the
// shared heads (renderListedEvent), an occurrence afresh with its
// occurrence field.
func (s *Server) renderHit(h eventHit, l *linked, v view) *obj {
	if h.occ == nil {
		return s.renderListedEvent(h.post, l, v)
	}
	o := s.renderEvent(h.post, l, v)
	o.add("occurrence", s.occurrenceObj(h.series, *h.occ, v.lang))
	return o
}

// collapseSeriesArg declares hide_subsequent_recurrences.
func collapseSeriesArg() arg {
	return arg{Name: "hide_subsequent_recurrences", Type: tBoolean,
		Desc: "true: each recurring event once, by its first occurrence in the window and order (totals count what is listed)."}
}

// applyCollapseSeries sets the query's CollapseSeries from
// hide_subsequent_recurrences.
func (r *request) applyCollapseSeries(q *search.EventQuery) {
	if v, ok := r.bag.get("hide_subsequent_recurrences"); ok {
		q.CollapseSeries, _ = asBool(v)
	}
}

// changedOccurrences lists a series' changed occurrences for webhook
// messages (an event.updated message about a series carries them, so an
// occurrence change is reported with what changed): each occurrence's key,
// original start, and its start, end, title and status after the change.
// Cancelled occurrences are the series' exclusions.
func (s *Server) changedOccurrences(p *repository.Post) []any {
	out := []any{}
	if p.Event == nil || p.Event.Recurrence == nil || len(p.Event.Overrides) == 0 {
		return out
	}
	loc, _ := s.eventZone(p.Event)
	all, err := recurrence.Expand(recurrence.SeriesOf(p.Event, loc), time.Time{}, time.Time{}, s.recurrenceLimits())
	if err != nil {
		return out
	}
	def := s.cfg.DefaultLanguage
	for _, o := range all {
		if o.Override == nil {
			continue
		}
		q := s.occurrencePost(p, o)
		out = append(out, newObjN(6).add("key", o.Key).add("start", localDate(o.Original, loc)).
			add("start_date", q.Event.StartLocal).add("end_date", q.Event.EndLocal).
			add("title", q.Title.Get(def, def, s.cfg.Languages...)).add("status", q.Status))
	}
	return out
}
