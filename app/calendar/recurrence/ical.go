package recurrence

import (
	"strings"
	"time"

	"github.com/calendar/eventcal/repository/wallclock"
)

// ICalRule returns a rule as an iCalendar RRULE value for a series in
// zone: upper case, with a local or date-only UNTIL rewritten in UTC (RFC
// 5545 3.3.10 requires UTC when DTSTART has a time zone), or as a date for
// an all-day series (whose DTSTART is a date).
func ICalRule(rule string, zone *time.Location, allDay bool) string {
	if zone == nil {
		zone = time.UTC
	}
	parts := strings.Split(strings.ToUpper(strings.TrimSpace(rule)), ";")
	for i, part := range parts {
		k, v, _ := strings.Cut(part, "=")
		if k != "UNTIL" {
			continue
		}
		var until time.Time
		var err error
		switch len(v) {
		case len("20060102"):
			until, err = time.ParseInLocation("20060102", v, zone)
			until = until.AddDate(0, 0, 1).Add(-time.Second)
		case len("20060102T150405"):
			until, err = time.ParseInLocation("20060102T150405", v, zone)
		default:
			until, err = time.Parse("20060102T150405Z", v)
		}
		if err != nil {
			continue
		}
		if allDay {
			parts[i] = "UNTIL=" + until.In(zone).Format("20060102")
		} else {
			parts[i] = "UNTIL=" + until.UTC().Format("20060102T150405Z")
		}
	}
	return strings.Join(parts, ";")
}

// ICalRules returns the series' rules as iCalendar RRULE values
// (ICalRule), each ending where its expansion ends: a rule without COUNT
// whose UNTIL is absent, or later than the years it is followed
// (MaxSeriesYears, fewer for a costly rule), gets that end as its UNTIL.
// A calendar application then gives the dates the service expands and no
// more. An invalid series' rules are written as ICalRule writes them.
func ICalRules(s Series, allDay bool) []string {
	if s.Recurrence == nil {
		return nil
	}
	zone := zoneOf(s)
	p, err := parse(s)
	out := make([]string, 0, len(s.Recurrence.Rules))
	for i, raw := range s.Recurrence.Rules {
		text := ICalRule(raw, zone, allDay)
		if err != nil || p == nil {
			out = append(out, text)
			continue
		}
		rl := p.rules[i]
		if rl.count == 0 && (rl.until.IsZero() || rl.end.Before(rl.until)) {
			var parts []string
			for _, part := range strings.Split(text, ";") {
				if !strings.HasPrefix(part, "UNTIL=") {
					parts = append(parts, part)
				}
			}
			if allDay {
				parts = append(parts, "UNTIL="+rl.end.Format("20060102"))
			} else {
				parts = append(parts, "UNTIL="+wallclock.Resolve(rl.end, zone).UTC().Format("20060102T150405Z"))
			}
			text = strings.Join(parts, ";")
		}
		out = append(out, text)
	}
	return out
}
