package recurrence

import (
	"strings"
	"time"
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
