package recurrence_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// TestSplit splits series at an occurrence: the two halves together have
// exactly the original occurrences (same keys, same instants), the old
// half ends before the occurrence and the new one starts at it.
func TestSplit(t *testing.T) {
	lim := recurrence.Limits{Now: now}
	cases := []struct {
		name, zone, start string
		rules, excl, add  []string
		at                string // key
		wantBefore        string // the old half's rules
		wantAfter         string // the new half's rules
	}{
		{"weekly open-ended across DST", "Europe/Amsterdam", "2027-03-04 19:00:00", []string{"FREQ=WEEKLY"}, nil, nil,
			"20270401T190000", "[FREQ=WEEKLY;UNTIL=20270401T165959Z]", "[FREQ=WEEKLY]"},
		{"COUNT shared out", "America/New_York", "2027-03-04 19:00:00", []string{"FREQ=WEEKLY;COUNT=6"}, nil, nil,
			"20270318T190000", "[FREQ=WEEKLY;COUNT=2]", "[FREQ=WEEKLY;COUNT=4]"},
		{"UNTIL kept after", "Australia/Sydney", "2027-03-01 10:00:00", []string{"FREQ=DAILY;UNTIL=20270320T000000Z"}, []string{"2027-03-02 10:00:00", "2027-03-12 10:00:00"}, []string{"2027-03-05 15:00:00", "2027-03-25 10:00:00"},
			"20270310T100000", "[FREQ=DAILY;UNTIL=20270309T225959Z]", "[FREQ=DAILY;UNTIL=20270320T000000Z]"},
		{"second rule over before the split", "UTC", "2027-01-04 12:00:00", []string{"FREQ=WEEKLY;BYDAY=MO", "FREQ=DAILY;COUNT=3"}, nil, nil,
			"20270118T120000", "[FREQ=WEEKLY;BYDAY=MO;UNTIL=20270118T115959Z FREQ=DAILY;COUNT=3]", "[FREQ=WEEKLY;BYDAY=MO]"},
		{"last Friday monthly", "UTC", "2027-01-29 20:00:00", []string{"FREQ=MONTHLY;BYDAY=-1FR;COUNT=5"}, nil, nil,
			"20270326T200000", "[FREQ=MONTHLY;BYDAY=-1FR;COUNT=2]", "[FREQ=MONTHLY;BYDAY=-1FR;COUNT=3]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := series(t, c.zone, c.start, time.Hour, c.rules, c.excl, c.add)
			moved := "2027-06-30 09:00:00"
			s.Overrides = []repository.OccurrenceOverride{{Key: c.at, StartLocal: &moved}}
			whole, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
			if err != nil {
				t.Fatal(err)
			}
			h, err := recurrence.Split(s, c.at, lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(h.Before.Rules); got != c.wantBefore {
				t.Errorf("before rules %s, want %s", got, c.wantBefore)
			}
			if got := fmt.Sprint(h.After.Rules); got != c.wantAfter {
				t.Errorf("after rules %s, want %s", got, c.wantAfter)
			}
			if h.Start.Format(recurrence.KeyLayout) != c.at || h.End.Sub(h.Start) != time.Hour {
				t.Errorf("new series %s .. %s", h.Start, h.End)
			}
			if len(h.BeforeOverrides) != 0 || len(h.AfterOverrides) != 1 {
				t.Errorf("overrides before %v after %v", h.BeforeOverrides, h.AfterOverrides)
			}
			old := recurrence.Series{Start: s.Start, End: s.End, Zone: s.Zone, Recurrence: h.Before, Overrides: h.BeforeOverrides}
			nw := recurrence.Series{Start: h.Start, End: h.End, Zone: s.Zone, Recurrence: h.After, Overrides: h.AfterOverrides}
			for _, half := range []recurrence.Series{old, nw} {
				if err := recurrence.Validate(half, lim); err != nil {
					t.Fatalf("half invalid: %v", err)
				}
			}
			a, _ := recurrence.Expand(old, time.Time{}, time.Time{}, lim)
			b, _ := recurrence.Expand(nw, time.Time{}, time.Time{}, lim)
			for _, o := range a {
				if !o.Original.Before(h.Start) {
					t.Fatalf("old half has %s at or after the split", o.Key)
				}
			}
			if got, want := describe(append(a, b...)), describe(whole); got != want {
				t.Fatalf("halves differ from the whole\n got %s\nwant %s", got, want)
			}
		})
	}
}

func describe(os []recurrence.Occurrence) string {
	var b strings.Builder
	for _, o := range os {
		fmt.Fprintf(&b, "%s=%s ", o.Key, o.Start.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// TestSplitRefuses: not at the first occurrence, nor at a key that is none.
func TestSplitRefuses(t *testing.T) {
	lim := recurrence.Limits{Now: now}
	s := series(t, "UTC", "2027-01-04 12:00:00", time.Hour, []string{"FREQ=WEEKLY;COUNT=3"}, nil, nil)
	for _, key := range []string{"20270104T120000", "20270105T120000", "20270201T120000", "nonsense"} {
		if _, err := recurrence.Split(s, key, lim); err == nil {
			t.Errorf("Split at %s: no error", key)
		}
	}
	// Split at the second occurrence of a series whose start is off its
	// rule: the old half is the start alone, a single event.
	s = series(t, "UTC", "2027-01-06 12:00:00", time.Hour, []string{"FREQ=WEEKLY;BYDAY=FR;COUNT=3"}, nil, nil)
	h, err := recurrence.Split(s, "20270108T120000", lim)
	if err != nil || h.Before != nil || fmt.Sprint(h.After.Rules) != "[FREQ=WEEKLY;BYDAY=FR;COUNT=3]" {
		t.Fatalf("Split = %+v, %v", h, err)
	}
}

// TestICalRule writes UNTIL in UTC (or as a date for all-day series).
func TestICalRule(t *testing.T) {
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	cases := []struct {
		rule   string
		allDay bool
		want   string
	}{
		{"freq=weekly;until=20270630", false, "FREQ=WEEKLY;UNTIL=20270630T215959Z"},
		{"FREQ=WEEKLY;UNTIL=20270630T190000", false, "FREQ=WEEKLY;UNTIL=20270630T170000Z"},
		{"FREQ=WEEKLY;UNTIL=20270630T170000Z", false, "FREQ=WEEKLY;UNTIL=20270630T170000Z"},
		{"FREQ=WEEKLY;UNTIL=20270630T230000Z", true, "FREQ=WEEKLY;UNTIL=20270701"},
		{"FREQ=MONTHLY;BYDAY=-1FR;COUNT=3", false, "FREQ=MONTHLY;BYDAY=-1FR;COUNT=3"},
	}
	for _, c := range cases {
		if got := recurrence.ICalRule(c.rule, ams, c.allDay); got != c.want {
			t.Errorf("ICalRule(%q, allDay %v) = %q, want %q", c.rule, c.allDay, got, c.want)
		}
	}
}
