package schedule

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// TestSourceSpread: the times of sources sharing a schedule are spread by
// their IDs, within the bounds of the rule: an "@every d" source at an
// offset below d, a cron source at a delay below min(5 min, a tenth of
// its period). Counted, not timed.
func TestSourceSpread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		schedule string
		// bound is the exclusive bound of the offsets; perMinute the most
		// sources of 100 that may share a minute of it, perSecond a second.
		bound                time.Duration
		perMinute, perSecond int
	}{
		{"100 hourly sources over five minutes", "0 * * * *", 5 * time.Minute, 30, 4},
		{"100 daily sources over five minutes", "0 0 * * *", 5 * time.Minute, 30, 4},
		{"100 sources every quarter of an hour over 90 seconds", "*/15 * * * *", 90 * time.Second, 100, 6},
		{"100 sources every minute over 6 seconds", "* * * * *", 6 * time.Second, 100, 100},
		{"100 sources @every 1h over the hour", "@every 1h", time.Hour, 6, 3},
		{"100 sources @every 6h over six hours", "@every 6h", 6 * time.Hour, 3, 2},
		{"100 sources @every 1m over the minute", "@every 1m", time.Minute, 100, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			offset := func(id int64) time.Duration {
				if every, ok := parseEvery(tt.schedule); ok {
					return everyOffset(id, every)
				}
				spec, err := cron.ParseStandard(tt.schedule)
				if err != nil {
					t.Fatal(err)
				}
				return cronDelay(id, cronPeriod(spec))
			}
			minutes, seconds := map[time.Duration]int{}, map[time.Duration]int{}
			for id := int64(1); id <= 100; id++ {
				off := offset(id)
				if off < 0 || off >= tt.bound || off%time.Second != 0 {
					t.Fatalf("source %d: offset %v, want whole seconds in [0, %v)", id, off, tt.bound)
				}
				if again := offset(id); again != off {
					t.Fatalf("source %d: offset %v then %v; want the same every time", id, off, again)
				}
				minutes[off.Truncate(time.Minute)]++
				seconds[off]++
			}
			if most := maxCount(minutes); most > tt.perMinute {
				t.Errorf("%d sources share a minute, want at most %d (%v)", most, tt.perMinute, minutes)
			}
			if most := maxCount(seconds); most > tt.perSecond {
				t.Errorf("%d sources share a second, want at most %d", most, tt.perSecond)
			}
			// Every minute of a window of a few minutes is used.
			if tt.bound >= 5*time.Minute && tt.bound <= 10*time.Minute && len(minutes) < int(tt.bound/time.Minute) {
				t.Errorf("the offsets use %d of the %d minutes", len(minutes), tt.bound/time.Minute)
			}
		})
	}
}

// parseEvery reads "@every d".
func parseEvery(s string) (time.Duration, bool) {
	if len(s) < 8 || s[:7] != "@every " {
		return 0, false
	}
	d, err := time.ParseDuration(s[7:])
	return d, err == nil
}

func maxCount(m map[time.Duration]int) int {
	most := 0
	for _, n := range m {
		most = max(most, n)
	}
	return most
}

// TestEveryNext: an "@every d" source runs on a grid fixed by its ID, the
// same whenever the schedule is (re)built: the next run after any moment
// is the next point of that grid.
func TestEveryNext(t *testing.T) {
	t.Parallel()
	const id = 42
	every := 10 * time.Minute
	off := everyOffset(id, every)
	start := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	first := everyNext(id, every, start)
	if !first.After(start) || first.Sub(start) > every {
		t.Fatalf("first run %v, want within %v after %v", first, every, start)
	}
	if got := time.Duration(first.UnixNano()) % every; got != off {
		t.Errorf("first run %v is %v into its interval, want the offset %v", first, got, off)
	}
	for _, tt := range []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"just before the run", first.Add(-time.Nanosecond), first},
		{"at the run: the next one", first, first.Add(every)},
		{"a day later", first.Add(24*time.Hour + time.Second), first.Add(24*time.Hour + every)},
		{"in another zone, the same instant", start.In(time.FixedZone("X", 5*3600+1800)), first},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC), time.Unix(0, int64(off)).UTC()},
	} {
		if got := everyNext(id, every, tt.now); !got.Equal(tt.want) {
			t.Errorf("%s: everyNext(%v) = %v, want %v", tt.name, tt.now, got, tt.want)
		}
	}
}

// TestDelayedCron: a cron source fires at the times of its expression in
// the schedule's time zone, each delayed by its fixed delay.
func TestDelayedCron(t *testing.T) {
	t.Parallel()
	brussels, err := time.LoadLocation("Europe/Brussels")
	if err != nil {
		t.Fatal(err)
	}
	const id = 7
	c := &delayedCron{id: id}
	if err := c.IsValid("30 4 * * *", brussels, time.Now()); err != nil {
		t.Fatal(err)
	}
	d := cronDelay(id, 24*time.Hour)
	if c.delay != d || d <= 0 || d >= MaxCronDelay {
		t.Fatalf("delay %v, want cronDelay's %v below %v", c.delay, d, MaxCronDelay)
	}
	// 04:30 in Brussels is 02:30 UTC in summer, 03:30 UTC in winter (the
	// change is on 25 October 2026).
	at := func(y int, m time.Month, day, h, min int) time.Time {
		return time.Date(y, m, day, h, min, 0, 0, time.UTC)
	}
	for _, tt := range []struct {
		name       string
		last, want time.Time
	}{
		{"before the day's time", at(2026, 6, 1, 1, 0), at(2026, 6, 1, 2, 30).Add(d)},
		{"inside the delay: that day's run", at(2026, 6, 1, 2, 30), at(2026, 6, 1, 2, 30).Add(d)},
		{"from a run: the next day", at(2026, 6, 1, 2, 30).Add(d), at(2026, 6, 2, 2, 30).Add(d)},
		{"across the change to winter time", at(2026, 10, 24, 2, 30).Add(d), at(2026, 10, 25, 3, 30).Add(d)},
	} {
		if got := c.Next(tt.last.In(brussels)); !got.Equal(tt.want) {
			t.Errorf("%s: Next(%v) = %v, want %v", tt.name, tt.last, got.UTC(), tt.want)
		}
	}
	if err := (&delayedCron{id: id}).IsValid("every night", time.UTC, time.Now()); err == nil {
		t.Error("IsValid accepted a bad expression")
	}
}

// TestCronPeriod: the shortest gap between two firings.
func TestCronPeriod(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expr string
		want time.Duration
	}{
		{"0 * * * *", time.Hour},
		{"0 0 * * *", 24 * time.Hour},
		{"0 0 * * 0", 7 * 24 * time.Hour},
		{"*/15 9-17 * * 1-5", 15 * time.Minute},
		{"0 9 * * 1-5", 24 * time.Hour},
		{"0 0 1 * *", 28 * 24 * time.Hour},
	} {
		spec, err := cron.ParseStandard(tt.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := cronPeriod(spec); got != tt.want {
			t.Errorf("cronPeriod(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}
