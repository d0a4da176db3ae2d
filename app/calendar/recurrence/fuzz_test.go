package recurrence_test

import (
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// FuzzRecurrenceRules: for any rule (up to five, separated by "|"), start
// and zone, validating and expanding the series never panics and does at
// most the series' work budget per pass (iterations counted, not timed):
// Validate and each Expand at most SeriesBudget each.
func FuzzRecurrenceRules(f *testing.F) {
	for _, c := range impossibleRules {
		f.Add(c.rule, int64(1799089200), "Europe/Amsterdam") // 2027-01-04 19:00 CET
	}
	for _, r := range []string{
		"FREQ=DAILY;BYSETPOS=2|FREQ=DAILY;BYSETPOS=3|FREQ=DAILY;BYSETPOS=4|FREQ=DAILY;BYSETPOS=5|FREQ=DAILY;BYSETPOS=6",
		"FREQ=MONTHLY;BYDAY=5FR;BYMONTHDAY=1|FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2,3;BYSETPOS=2|FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6;WKST=SU|FREQ=YEARLY;BYMONTH=2;BYDAY=5MO;BYMONTHDAY=1|FREQ=MONTHLY;BYMONTHDAY=2;BYDAY=5TU",
		"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO",
		"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1",
		"FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270630T235959Z",
		"FREQ=DAILY;INTERVAL=1000",
		"FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO",
		"FREQ=YEARLY;BYYEARDAY=366",
		"FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=20",
		"FREQ=WEEKLY;COUNT=60",
	} {
		f.Add(r, int64(1772955000), "America/New_York") // 2026-03-08 02:30 as if EST: the gap
		f.Add(r, int64(-2208988800), "UTC")             // 1900
	}
	f.Fuzz(func(t *testing.T, rules string, start int64, zoneName string) {
		loc, err := time.LoadLocation(zoneName)
		if err != nil || zoneName == "" || strings.ContainsAny(zoneName, "\x00") {
			loc = time.UTC
		}
		st := time.Unix(start%(300*365*86400), 0).AddDate(2000-1970, 0, 0).In(loc)
		list := strings.Split(rules, "|")
		if len(list) > recurrence.MaxRules {
			list = list[:recurrence.MaxRules]
		}
		s := recurrence.Series{Start: st, End: st.Add(time.Hour), Zone: loc,
			Recurrence: &repository.Recurrence{Rules: list}}
		for _, at := range []time.Time{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), st.AddDate(250, 0, 0)} {
			var w recurrence.Work
			lim := recurrence.Limits{Now: at, Work: &w}
			verr := recurrence.Validate(s, lim)
			if n := w.Iterations(); n > recurrence.SeriesBudget {
				t.Fatalf("Validate %q from %s: %d iterations, budget %d", rules, st, n, recurrence.SeriesBudget)
			}
			if verr != nil {
				return
			}
			before := w.Iterations()
			if _, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim); err != nil {
				t.Fatalf("Expand of a valid series: %v", err)
			}
			if n := w.Iterations() - before; n > recurrence.SeriesBudget {
				t.Fatalf("Expand %q from %s at %d: %d iterations, budget %d", rules, st, at.Year(), n, recurrence.SeriesBudget)
			}
			_ = recurrence.ICalRules(s, false)
		}
	})
}
