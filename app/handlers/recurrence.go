package handlers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// Recurring events (issue 24): the recurrence parameter of event writes
// and the list hits that are occurrences. The expansion is
// app/calendar/recurrence, the shapes present/occurrence.go, the occurrence
// routes occurrences.go.

// maxRecurrenceDate bounds one exclusion or addition, in characters.
const maxRecurrenceDate = 32

// recurrenceArg declares the recurrence parameter of event writes.
func recurrenceArg() Arg {
	return Arg{Name: "recurrence", Type: tObject, Decode: decodeRecurrenceArg,
		Desc: `Makes the event a series: {"rules": RRULE values without "RRULE:" (FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270630T235959Z; DAILY at the finest), "exclusions" and "additions": occurrence starts YYYY-MM-DD HH:MM:SS in the event's time zone}; the event's start and end are the first occurrence. null makes it a single event again.`}
}

// recurrenceLimits are the expansion bounds at now (RECURRENCE_HORIZON,
// MAX_SERIES_OCCURRENCES).
func recurrenceLimits(cfg *config.Config, now func() time.Time) recurrence.Limits {
	if now == nil {
		now = time.Now
	}
	return recurrence.Limits{Now: now(), Horizon: cfg.RecurrenceHorizon, MaxOccurrences: cfg.MaxSeriesOccurrences}
}

// decodeRecurrenceArg reads a recurrence value once (parseRecurrenceValue)
// into the *repository.Recurrence the event command carries (nil: a single
// event): null (or an empty string, from a form), or an object of the
// three lists of strings. The rules and dates themselves are checked once
// the event's start and zone are known (the calendar's applyRecurrence).
func decodeRecurrenceArg(_ *Request, _ *input.Bag, v any) (any, string) {
	rec, msg := parseRecurrenceValue(v)
	return rec, msg
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

// eventHit is one hit of an event list: the post to render (the series
// shaped as its occurrence, for an occurrence) and the occurrence.
type eventHit struct {
	post *repository.Record
	// series is the stored record (the series, for an occurrence).
	series *repository.Record
	occ    *recurrence.Occurrence
}

// hitOccurrence returns the occurrence key of the i-th hit of an event
// result ("" for a single event).
func hitOccurrence(res search.Result, i int) string { return res.Occurrence(i) }

// eventHits loads the posts of a result page in the engine's order,
// shaping each occurrence hit as its occurrence (recurrence.At: the key,
// from an index built by expanding the series, is not expanded again);
// hits whose record vanished since the index saw them are skipped, and so
// are occurrences whose status (never more visible than their series',
// repository.OccurrenceStatus) is not one the list shows: the index's
// status filter already leaves them out, unless its documents were
// written before occurrences followed their series.
func (lr lister) eventHits(res search.Result) ([]eventHit, error) {
	m, err := lr.render.Records(lr.ctx, res.IDs) // decoded once per write generation (linkcache.go)
	if err != nil {
		return nil, err
	}
	statuses := lr.reader.ListStatuses()
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
		loc, _ := lr.render.EventZone(p.Event)
		o, err := recurrence.At(recurrence.SeriesOf(p.Event, loc), key)
		if err != nil {
			continue // not a key: stale until reindexed
		}
		q := lr.render.OccurrenceRecord(p, o)
		if !slices.Contains(statuses, q.Status) {
			continue // not a status the list shows (an index written before occurrences followed their series)
		}
		out = append(out, eventHit{post: q, series: p, occ: &o})
	}
	return out, nil
}

// renderEventHits renders a page of event hits with what they link to.
func (lr lister) renderEventHits(res search.Result, render func(h eventHit, l *present.Linked) *present.Event) ([]any, error) {
	hits, err := lr.eventHits(res)
	if err != nil {
		return nil, err
	}
	return lr.renderHits(hits, render)
}

// renderHits renders event hits with what they (their occurrences) link to.
func (lr lister) renderHits(hits []eventHit, render func(h eventHit, l *present.Linked) *present.Event) ([]any, error) {
	posts := make([]*repository.Record, len(hits))
	for i, h := range hits {
		posts[i] = h.post
	}
	l, err := lr.linked(posts)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(hits))
	for _, h := range hits {
		items = append(items, render(h, l))
	}
	return items, nil
}

// renderHit renders one event hit: a single event or a series from the
// shared heads (ListedEvent), an occurrence afresh with its occurrence
// field.
func (pt *events) renderHit(h eventHit, l *present.Linked, v present.View) *present.Event {
	if h.occ == nil {
		return pt.render.ListedEvent(h.post, l, v)
	}
	return pt.render.OccurrenceEvent(h.post, h.series, *h.occ, l, v)
}

// collapseSeriesArg declares hide_subsequent_recurrences.
func collapseSeriesArg() Arg {
	return Arg{Name: "hide_subsequent_recurrences", Type: tBoolean,
		Desc: "true: each recurring event once, by its first occurrence in the window and order (totals count what is listed)."}
}

// applyCollapseSeries sets the query's CollapseSeries from
// hide_subsequent_recurrences.
func applyCollapseSeries(b *input.Bag, q *search.EventQuery) {
	if v, ok := b.Get("hide_subsequent_recurrences"); ok {
		q.CollapseSeries, _ = input.AsBool(v)
	}
}
