package recurrence

import (
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence/internal/rrule"
	"github.com/calendar/eventcal/repository"
)

// Halves are a series split at one of its occurrences ("this and
// following"): Before ends the series just before the occurrence, After is
// a new series whose first occurrence is the occurrence's original start.
type Halves struct {
	// Before is the old series' new recurrence; nil when only its first
	// occurrence is left (it becomes a single event).
	Before          *repository.Recurrence
	BeforeOverrides []repository.OccurrenceOverride
	// After is the new series' recurrence, starting at Start and lasting
	// as long as the series' first occurrence; its overrides keep their
	// keys (original starts) as long as its start stays Start.
	After          *repository.Recurrence
	AfterOverrides []repository.OccurrenceOverride
	Start, End     time.Time
}

// Split divides a valid series at the occurrence key, which must be one of
// its occurrences other than the first. Rules keep their text except for
// COUNT and UNTIL: the old series' rules end before the occurrence (UNTIL
// one second before it in UTC, or the COUNT of occurrences left before
// it), the new series' rules keep the COUNT they had left. A rule that has
// no occurrence left on one side is dropped there.
//
// The new series' rules restart at the occurrence: a rule with an
// INTERVAL over 1 keeps its phase when the occurrence is one of its own
// (the usual case); for a second rule with INTERVAL > 1 that the
// occurrence is not an occurrence of, the phase restarts from it.
func Split(s Series, key string, lim Limits) (Halves, error) {
	p, err := parse(s)
	if err != nil {
		return Halves{}, err
	}
	if p == nil {
		return Halves{}, problem("recurrence", "the event is not a recurring event")
	}
	occ, ok, err := Find(s, key, lim)
	if err != nil {
		return Halves{}, err
	}
	if !ok {
		return Halves{}, problem("key", "the series has no occurrence %s", key)
	}
	zone := zoneOf(s)
	first := s.Start.In(zone).Truncate(time.Second)
	at := occ.Original
	if !at.After(first) {
		return Halves{}, problem("key", "%s is the series' first occurrence: change the whole series with PATCH /events/{id} instead", key)
	}
	h := Halves{Start: at, End: at.Add(p.duration),
		Before: &repository.Recurrence{Rules: []string{}, Exclusions: []string{}, Additions: []string{}},
		After:  &repository.Recurrence{Rules: []string{}, Exclusions: []string{}, Additions: []string{}}}
	for i, raw := range s.Recurrence.Rules {
		before, after := splitRule(raw, p.rules[i].instants(&rrule.Counter{Limit: p.rules[i].limit}, zone), at)
		if before != "" {
			h.Before.Rules = append(h.Before.Rules, before)
		}
		if after != "" {
			h.After.Rules = append(h.After.Rules, after)
		}
	}
	for _, list := range []struct {
		src           []string
		before, after *[]string
	}{{s.Recurrence.Exclusions, &h.Before.Exclusions, &h.After.Exclusions}, {s.Recurrence.Additions, &h.Before.Additions, &h.After.Additions}} {
		for _, raw := range list.src {
			t, err := ParseLocal(raw, zone)
			if err != nil {
				continue
			}
			if t.Before(at) {
				*list.before = append(*list.before, raw)
			} else {
				*list.after = append(*list.after, raw)
			}
		}
	}
	for _, o := range s.Overrides {
		t, err := ParseKey(o.Key, zone)
		if err != nil {
			continue
		}
		if t.Before(at) {
			h.BeforeOverrides = append(h.BeforeOverrides, o)
		} else {
			h.AfterOverrides = append(h.AfterOverrides, o)
		}
	}
	if len(h.Before.Rules) == 0 && len(h.Before.Additions) == 0 {
		h.Before, h.BeforeOverrides = nil, nil
	}
	return h, nil
}

// splitRule returns a rule's text for the series before at and for the
// series from at ("" where it has no occurrence left). next iterates the
// rule from the old series' start.
func splitRule(raw string, next func() (time.Time, bool), at time.Time) (before, after string) {
	var parts []string
	count := 0
	for _, part := range strings.Split(strings.TrimSpace(raw), ";") {
		k, v, _ := strings.Cut(part, "=")
		switch strings.ToUpper(k) {
		case "COUNT":
			count, _ = strconv.Atoi(v)
		case "UNTIL":
		default:
			parts = append(parts, part)
		}
	}
	// Count the rule's occurrences before at; reached says whether it has
	// any at or after at (COUNT and UNTIL end it).
	n, reached := 0, false
	for {
		t, ok := next()
		if !ok {
			break
		}
		if !t.Before(at) {
			reached = true
			break
		}
		n++
	}
	if !reached {
		return raw, "" // every occurrence is before at
	}
	base := strings.Join(parts, ";")
	switch {
	case n == 0:
		before = ""
	case count > 0:
		before = base + ";COUNT=" + strconv.Itoa(n)
	default:
		before = base + ";UNTIL=" + at.Add(-time.Second).UTC().Format("20060102T150405Z")
	}
	if count > 0 {
		after = base + ";COUNT=" + strconv.Itoa(count-n)
	} else {
		after = raw
	}
	return before, after
}
