package recurrence_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/wallclock"
)

// impossibleRules never give a date. The first ones are found by analysis
// (a message naming the part at fault), the last ones by their budget: no
// date in the years the rule is followed.
var impossibleRules = []struct{ rule, want string }{
	{"FREQ=DAILY;BYSETPOS=2", "BYSETPOS=2 can never select a date: FREQ=DAILY gives one candidate date per day"},
	{"FREQ=DAILY;BYSETPOS=-3,5", "BYSETPOS=-3,5 can never select a date: FREQ=DAILY gives one candidate date per day"},
	{"FREQ=WEEKLY;BYSETPOS=2", "BYSETPOS=2 can never select a date: FREQ=WEEKLY with no BYDAY gives one candidate date per week"},
	{"FREQ=WEEKLY;BYDAY=MO,TU;BYSETPOS=3", "BYSETPOS=3 can never select a date: FREQ=WEEKLY with these BY* parts gives at most 2 candidate dates per week"},
	{"FREQ=MONTHLY;BYSETPOS=2", "BYSETPOS=2 can never select a date: FREQ=MONTHLY with no BYDAY, BYMONTHDAY or BYYEARDAY gives one candidate date per month"},
	{"FREQ=MONTHLY;BYMONTHDAY=1,15;BYSETPOS=-3", "BYSETPOS=-3 can never select a date: FREQ=MONTHLY with these BY* parts gives at most 2 candidate dates per month"},
	{"FREQ=MONTHLY;BYDAY=MO;BYSETPOS=6", "BYSETPOS=6 can never select a date: FREQ=MONTHLY with these BY* parts gives at most 5 candidate dates per month"},
	{"FREQ=YEARLY;BYYEARDAY=1,100;BYSETPOS=3", "BYSETPOS=3 can never select a date: FREQ=YEARLY with these BY* parts gives at most 2 candidate dates per year"},
	{"FREQ=YEARLY;BYSETPOS=367", "not a valid RRULE"},
	{"FREQ=MONTHLY;BYDAY=6MO", "BYDAY=6MO can never occur: a month has at most 5 of each weekday"},
	{"FREQ=YEARLY;BYMONTH=3;BYDAY=-6FR", "BYDAY=-6FR can never occur"},
	{"FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=2", "no day matches"},
	{"FREQ=YEARLY;BYYEARDAY=366;BYMONTH=2", "no day matches"},
	{"FREQ=YEARLY;BYWEEKNO=53;BYMONTH=6", "no day matches"},
	{"FREQ=YEARLY;BYWEEKNO=1;BYMONTH=7,8", "no day matches"},
	// Beyond analysis: the budget decides.
	{"FREQ=MONTHLY;BYDAY=5FR;BYMONTHDAY=1", "the rule gives no date in the 200 years after the series' start"},
	{"FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2,3;BYSETPOS=2", "the rule gives no date in the 107 years after the series' start"},
	{"FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6;WKST=SU", "the rule gives no date in the 200 years after the series' start"},
	{"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO;BYMONTHDAY=1", "the rule gives no date in the 200 years after the series' start"},
	{"FREQ=MONTHLY;BYDAY=5FR;BYMONTHDAY=1;UNTIL=20300101", "the rule gives no date between the series' start (2027-01-04 19:00:00) and its UNTIL (2030-01-01 23:59:59)"},
}

// TestImpossibleRulesRefused: a rule that can never occur is refused with
// a message naming the part at fault, within its work budget.
func TestImpossibleRulesRefused(t *testing.T) {
	for _, c := range impossibleRules {
		t.Run(c.rule, func(t *testing.T) {
			var work recurrence.Work
			s := series(t, "Europe/Amsterdam", "2027-01-04 19:00:00", time.Hour, []string{c.rule}, nil, nil)
			err := recurrence.Validate(s, recurrence.Limits{Now: now, Work: &work})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error with %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "recurrence.rules[0]: ") {
				t.Errorf("the error %q does not name the rule", err)
			}
			if n := work.Iterations(); n > recurrence.RuleBudget {
				t.Errorf("%d iterations, more than the rule budget %d", n, recurrence.RuleBudget)
			}
		})
	}
}

// TestFiveImpossibleRules: a series of five rules that never occur, which
// only expanding finds out, is refused within the series budget; and each
// expansion of an accepted series of five costly rules stays within it,
// however far the horizon has rolled (iterations counted, not timed).
func TestFiveImpossibleRules(t *testing.T) {
	rules := []string{
		"FREQ=MONTHLY;BYDAY=5FR;BYMONTHDAY=1",
		"FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2,3;BYSETPOS=2",
		"FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6;WKST=SU",
		"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO;BYMONTHDAY=1",
		"FREQ=MONTHLY;BYMONTHDAY=2;BYDAY=5TU",
	}
	var work recurrence.Work
	s := series(t, "America/New_York", "2027-01-04 19:00:00", time.Hour, rules, nil, nil)
	err := recurrence.Validate(s, recurrence.Limits{Now: now, Work: &work})
	if err == nil || !strings.Contains(err.Error(), "recurrence.rules[0]: the rule gives no date") {
		t.Fatalf("Validate = %v", err)
	}
	if n := work.Iterations(); n == 0 || n > recurrence.SeriesBudget {
		t.Errorf("%d iterations, want 1 to %d", n, recurrence.SeriesBudget)
	}

	// Accepted, rare and costly: the fifth Monday of February (every 28
	// years), a last weekday of the month, BYSETPOS over a year.
	costly := []string{
		"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO",
		"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
		"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1",
		"FREQ=YEARLY;BYYEARDAY=366",
		"FREQ=DAILY;BYMONTHDAY=13;BYDAY=FR",
	}
	s = series(t, "America/New_York", "2027-01-04 19:00:00", time.Hour, costly, nil, nil)
	for _, at := range []time.Time{now, now.AddDate(150, 0, 0)} {
		var w recurrence.Work
		lim := recurrence.Limits{Now: at, Work: &w}
		if err := recurrence.Validate(s, lim); err != nil {
			t.Fatalf("Validate at %d: %v", at.Year(), err)
		}
		got, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
		if err != nil || len(got) < 2 {
			t.Fatalf("Expand at %d: %d occurrences, %v", at.Year(), len(got), err)
		}
		if n := w.Iterations(); n > 2*recurrence.SeriesBudget {
			t.Errorf("Validate and Expand at %d: %d iterations, more than twice the series budget %d", at.Year(), n, recurrence.SeriesBudget)
		}
	}
}

// TestExpansionEndAgreesWithFeed: a rule without an end is followed
// MaxSeriesYears after the series' start (fewer when costly), and the
// feed's rule says so with an UNTIL: the last date expanded is the last
// the feed's rule gives. (Before, expansion stopped 292 years after the
// start, a limit of rrule-go the feed did not state.)
func TestExpansionEndAgreesWithFeed(t *testing.T) {
	ams := zone(t, "Europe/Amsterdam")
	for _, c := range []struct {
		rule, wantRule, wantLast string
	}{
		{"FREQ=YEARLY", "FREQ=YEARLY;UNTIL=22270104T180000Z", "2227-01-04 19:00:00"},
		{"freq=yearly;until=24000101", "FREQ=YEARLY;UNTIL=22270104T180000Z", "2227-01-04 19:00:00"},
		{"FREQ=YEARLY;UNTIL=20300101", "FREQ=YEARLY;UNTIL=20300101T225959Z", "2029-01-04 19:00:00"},
		{"FREQ=YEARLY;COUNT=5", "FREQ=YEARLY;COUNT=5", "2031-01-04 19:00:00"},
		{"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1", "FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1;UNTIL=21340104T180000Z", "2134-01-01 19:00:00"},
	} {
		s := series(t, "Europe/Amsterdam", "2027-01-04 19:00:00", time.Hour, []string{c.rule}, nil, nil)
		if err := recurrence.Validate(s, recurrence.Limits{Now: now}); err != nil {
			t.Fatalf("%s: %v", c.rule, err)
		}
		if got := recurrence.ICalRules(s, false); len(got) != 1 || got[0] != c.wantRule {
			t.Errorf("%s: feed rule %q, want %q", c.rule, got, c.wantRule)
		}
		// Far beyond the end: the horizon no longer bounds the expansion.
		got, err := recurrence.Expand(s, time.Time{}, time.Time{}, recurrence.Limits{Now: now.AddDate(400, 0, 0)})
		if err != nil || len(got) == 0 {
			t.Fatalf("%s: %d occurrences, %v", c.rule, len(got), err)
		}
		if last := got[len(got)-1].Start.In(ams).Format(recurrence.LocalLayout); last != c.wantLast {
			t.Errorf("%s: last occurrence %s, want %s", c.rule, last, c.wantLast)
		}
	}
}

// TestDatesInRFC5545Range: exclusions, additions and starts outside the
// years 0001 to 9999 (in the zone or in UTC) are refused.
func TestDatesInRFC5545Range(t *testing.T) {
	tokyo := zone(t, "Asia/Tokyo")
	start := time.Date(2027, 1, 4, 19, 0, 0, 0, tokyo)
	for _, c := range []struct {
		name      string
		start     time.Time
		add, excl []string
		want      string
	}{
		{"addition in year 0000", start, []string{"0000-01-01 00:00:00"}, nil, "recurrence.additions[0]: \"0000-01-01 00:00:00\" is outside the years 0001 to 9999"},
		{"addition 0001-01-01 before UTC's year 1", start, []string{"2028-01-01 10:00:00", "0001-01-01 05:00:00"}, nil, "recurrence.additions[1]"},
		{"exclusion in year 0000", start, nil, []string{"0000-12-31 15:00:00"}, "recurrence.exclusions[0]"},
		{"start in year 0000", time.Date(0, 12, 31, 15, 0, 0, 0, tokyo), nil, nil, "the series' start and end must be within the years 0001 to 9999"},
	} {
		s := recurrence.Series{Start: c.start, End: c.start.Add(time.Hour), Zone: tokyo,
			Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=3"}, Additions: c.add, Exclusions: c.excl}}
		err := recurrence.Validate(s, recurrence.Limits{Now: now})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestDSTGapSeries: a weekly series written to start at 02:30 on a
// spring-forward day starts at 03:30 after the gap that day (RFC 5545
// 3.3.5) and at 02:30 on every other week, in every zone; an addition in
// a gap is read the same way.
func TestDSTGapSeries(t *testing.T) {
	for _, c := range []struct {
		zone, start, gapStart, next, addition, additionAt string
	}{
		{"America/New_York", "2026-03-08 02:30:00", "2026-03-08 03:30:00 EDT", "2026-03-15 02:30:00 EDT", "2027-03-14 02:15:00", "2027-03-14 03:15:00 EDT"},
		{"Europe/Amsterdam", "2026-03-29 02:30:00", "2026-03-29 03:30:00 CEST", "2026-04-05 02:30:00 CEST", "2027-03-28 02:15:00", "2027-03-28 03:15:00 CEST"},
		{"Australia/Sydney", "2026-10-04 02:30:00", "2026-10-04 03:30:00 AEDT", "2026-10-11 02:30:00 AEDT", "2027-10-03 02:15:00", "2027-10-03 03:15:00 AEDT"},
		{"America/Santiago", "2026-09-06 00:30:00", "2026-09-06 01:30:00 -03", "2026-09-13 00:30:00 -03", "2027-09-05 00:15:00", "2027-09-05 01:15:00 -03"},
	} {
		loc := zone(t, c.zone)
		e := &repository.EventFields{StartLocal: c.start, EndLocal: strings.Replace(c.start, ":30:00", ":45:00", 1),
			Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=60"}, Additions: []string{c.addition}}}
		s := recurrence.SeriesOf(e, loc)
		lim := recurrence.Limits{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		if err := recurrence.Validate(s, lim); err != nil {
			t.Fatalf("%s: %v", c.zone, err)
		}
		got, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
		if err != nil || len(got) < 3 {
			t.Fatalf("%s: %d occurrences, %v", c.zone, len(got), err)
		}
		const layout = "2006-01-02 15:04:05 MST"
		if g := got[0].Start.Format(layout); g != c.gapStart {
			t.Errorf("%s: first occurrence %s, want %s", c.zone, g, c.gapStart)
		}
		if d := got[0].End.Sub(got[0].Start); d != 15*time.Minute {
			t.Errorf("%s: first occurrence lasts %v", c.zone, d)
		}
		if g := got[1].Start.Format(layout); g != c.next {
			t.Errorf("%s: second occurrence %s, want %s", c.zone, g, c.next)
		}
		found := false
		for _, o := range got[1:] {
			nominal, _ := time.Parse(recurrence.LocalLayout, o.Start.Format("2006-01-02 ")+c.start[11:])
			switch {
			case o.Start.Format(layout) == c.additionAt:
				found = true
			case wallclock.InGap(nominal, loc):
				// A year later's gap: read as the first week's.
				if o.Start.Sub(wallclock.Resolve(nominal, loc)) != 0 || o.Start.Format("15:04") == c.start[11:16] {
					t.Errorf("%s: occurrence %s in a gap", c.zone, o.Start.Format(layout))
				}
			case o.Start.Format("15:04") != c.start[11:16]:
				t.Errorf("%s: occurrence %s is not at %s", c.zone, o.Start.Format(layout), c.start[11:16])
			}
		}
		if !found {
			t.Errorf("%s: the addition %s is not at %s", c.zone, c.addition, c.additionAt)
		}
	}
}

// TestCacheExpandsOnce: reads of a kept series do not expand it again,
// concurrent first reads expand it once, an override edit keeps the
// expansion, a rule edit makes a new one; the kept expansion equals
// Expand's.
func TestCacheExpandsOnce(t *testing.T) {
	c := recurrence.NewCache(0, 0)
	s := series(t, "America/New_York", "2027-01-04 19:00:00", time.Hour, []string{"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1", "FREQ=YEARLY;BYMONTH=2;BYDAY=5MO"}, nil, nil)
	lim := recurrence.Limits{Now: now}
	want, _ := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
	done := make(chan []recurrence.Occurrence)
	for range 16 {
		go func() {
			got, _ := c.Expand(s, time.Time{}, time.Time{}, lim)
			done <- got
		}()
	}
	for range 16 {
		if got := <-done; len(got) != len(want) || got[len(got)-1].Key != want[len(want)-1].Key {
			t.Fatalf("cached %d occurrences, Expand %d", len(got), len(want))
		}
	}
	if n := c.Expansions(); n != 1 {
		t.Errorf("16 concurrent reads: %d expansions, want 1", n)
	}
	for i := range 10 {
		if _, ok, _ := c.Find(s, want[1].Key, recurrence.Limits{Now: now.Add(-time.Duration(i+1) * time.Minute)}); !ok {
			t.Fatalf("Find %s: not found", want[1].Key)
		}
	}
	moved := "2027-12-31 09:00:00"
	s.Overrides = []repository.OccurrenceOverride{{Key: want[1].Key, StartLocal: &moved}}
	got, _ := c.Expand(s, time.Time{}, time.Time{}, lim)
	if n := c.Expansions(); n != 1 {
		t.Errorf("reads and an override: %d expansions, want 1", n)
	}
	if i := slices.IndexFunc(got, func(o recurrence.Occurrence) bool { return o.Key == want[1].Key }); i < 0 || got[i].Override == nil || got[i].Start.Format(recurrence.LocalLayout) != moved {
		t.Errorf("the override is not applied")
	}
	s.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=3"}}
	if got, _ := c.Expand(s, time.Time{}, time.Time{}, lim); len(got) != 3 || c.Expansions() != 2 {
		t.Errorf("after a rule edit: %d occurrences, %d expansions", len(got), c.Expansions())
	}
}
