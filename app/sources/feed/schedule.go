package feed

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MinEvery is the shortest "@every" interval of a source's schedule.
const MinEvery = time.Minute

// ScheduleHelp says which schedules a source takes (the 400 of a bad
// one ends with it).
const ScheduleHelp = `"" (manual only), "@hourly", "@daily", "@weekly", "@every <duration>" of at least 1m (such as "@every 6h"), or a five-field cron expression (minute hour day-of-month month day-of-week, such as "30 4 * * *")`

// Schedule is a source's schedule, read.
type Schedule struct {
	// Every is the interval of an "@every" schedule (0 otherwise).
	Every time.Duration
	// Cron is the five-field cron expression of the other schedules
	// ("@hourly" is "0 * * * *", "@daily" "0 0 * * *", "@weekly"
	// "0 0 * * 0"); "" for "@every" and for a manual source.
	Cron string
}

// Manual reports whether the source runs only when asked.
func (s Schedule) Manual() bool { return s.Every == 0 && s.Cron == "" }

// ParseSchedule reads a source's schedule. The error says what is wrong
// and what is accepted (ScheduleHelp).
func ParseSchedule(raw string) (Schedule, error) {
	s := strings.TrimSpace(raw)
	switch s {
	case "":
		return Schedule{}, nil
	case "@hourly":
		return Schedule{Cron: "0 * * * *"}, nil
	case "@daily":
		return Schedule{Cron: "0 0 * * *"}, nil
	case "@weekly":
		return Schedule{Cron: "0 0 * * 0"}, nil
	}
	if rest, ok := strings.CutPrefix(s, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		if err != nil {
			return Schedule{}, fmt.Errorf("%q is not a duration; a schedule is %s", strings.TrimSpace(rest), ScheduleHelp)
		}
		if d < MinEvery {
			return Schedule{}, fmt.Errorf("@every %s is more often than once a minute; a schedule is %s", d, ScheduleHelp)
		}
		return Schedule{Every: d}, nil
	}
	if strings.HasPrefix(s, "@") || strings.HasPrefix(s, "TZ=") || strings.HasPrefix(s, "CRON_TZ=") || len(strings.Fields(s)) != 5 {
		return Schedule{}, fmt.Errorf("%q is not a schedule; a schedule is %s", s, ScheduleHelp)
	}
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return Schedule{}, fmt.Errorf("%q is not a cron expression (%v); a schedule is %s", s, err, ScheduleHelp)
	}
	// An expression that never fires (February 30th) is refused too.
	if sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Schedule{}, fmt.Errorf("%q never fires; a schedule is %s", s, ScheduleHelp)
	}
	return Schedule{Cron: strings.Join(strings.Fields(s), " ")}, nil
}
