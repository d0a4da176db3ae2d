package recurrence_test

import (
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
)

// TestOldSeriesBounded: a rule is iterated through at most MaxRuleDates
// dates from the series' start, so a daily series starting centuries ago
// is refused (not iterated for a tenth of a second per write); one
// starting decades ago is fine and lists its upcoming occurrences.
func TestOldSeriesBounded(t *testing.T) {
	rules := []string{"FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU"}
	for _, c := range []struct {
		start time.Time
		ok    bool
	}{{time.Date(1000, 1, 1, 10, 0, 0, 0, time.UTC), false}, {time.Date(1800, 1, 1, 10, 0, 0, 0, time.UTC), false}, {time.Date(1950, 1, 1, 10, 0, 0, 0, time.UTC), true}} {
		s := recurrence.Series{Start: c.start, End: c.start.Add(time.Hour), Zone: time.UTC, Recurrence: &repository.Recurrence{Rules: rules}}
		err := recurrence.Validate(s, recurrence.Limits{Now: now})
		if c.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "more than 50000 dates")) {
			t.Errorf("daily series from %d: %v", c.start.Year(), err)
		}
		if c.ok {
			got, _ := recurrence.Expand(s, now, time.Time{}, recurrence.Limits{Now: now})
			if len(got) < 730 {
				t.Errorf("daily series from %d: %d upcoming occurrences", c.start.Year(), len(got))
			}
		}
	}
}
