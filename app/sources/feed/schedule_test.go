package feed

import (
	"strings"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want Schedule
	}{
		{"", Schedule{}},
		{"@hourly", Schedule{Cron: "0 * * * *"}},
		{"@daily", Schedule{Cron: "0 0 * * *"}},
		{"@weekly", Schedule{Cron: "0 0 * * 0"}},
		{"@every 1m", Schedule{Every: time.Minute}},
		{"@every 6h", Schedule{Every: 6 * time.Hour}},
		{"30 4 * * *", Schedule{Cron: "30 4 * * *"}},
		{" */15  *   * * 1-5 ", Schedule{Cron: "*/15 * * * 1-5"}},
	}
	for _, c := range good {
		got, err := ParseSchedule(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSchedule(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, says string }{
		{"@every 30s", "more often than once a minute"},
		{"@every soon", "not a duration"},
		{"@monthly", "not a schedule"},
		{"@yearly", "not a schedule"},
		{"hourly", "not a schedule"},
		{"0 0 * *", "not a schedule"},
		{"0 0 0 * * *", "not a schedule"},
		{"61 * * * *", "not a cron expression"},
		{"0 0 30 2 *", "never fires"},
		{"CRON_TZ=UTC 0 0 * * *", "not a schedule"},
	}
	for _, c := range bad {
		_, err := ParseSchedule(c.in)
		if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "@every <duration>") {
			t.Errorf("ParseSchedule(%q) = %v; want an error saying %q and what is accepted", c.in, err, c.says)
		}
	}
}
