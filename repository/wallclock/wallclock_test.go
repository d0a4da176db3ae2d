package wallclock_test

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/repository/wallclock"
)

// TestResolve: a skipped local time is read with the offset before the
// gap (it lands as far after the gap), a repeated one is its first
// occurrence, in zones east and west of Greenwich and in the southern
// hemisphere alike; time.Date disagrees in New York (01:30 EST).
func TestResolve(t *testing.T) {
	for _, c := range []struct {
		zone, wall, want, wantZone string
		gap                        bool
	}{
		{"America/New_York", "2026-03-08 02:30:00", "2026-03-08 03:30:00", "EDT", true},
		{"America/New_York", "2026-03-08 02:00:00", "2026-03-08 03:00:00", "EDT", true},
		{"America/New_York", "2026-03-08 01:59:59", "2026-03-08 01:59:59", "EST", false},
		{"America/New_York", "2026-11-01 01:30:00", "2026-11-01 01:30:00", "EDT", false},
		{"Europe/Amsterdam", "2026-03-29 02:30:00", "2026-03-29 03:30:00", "CEST", true},
		{"Europe/Amsterdam", "2026-10-25 02:30:00", "2026-10-25 02:30:00", "CEST", false},
		{"Australia/Sydney", "2026-10-04 02:30:00", "2026-10-04 03:30:00", "AEDT", true},
		{"Australia/Sydney", "2026-04-05 02:30:00", "2026-04-05 02:30:00", "AEDT", false},
		{"America/Santiago", "2026-09-06 00:30:00", "2026-09-06 01:30:00", "-03", true},
		{"Australia/Lord_Howe", "2026-10-04 02:15:00", "2026-10-04 02:45:00", "+11", true},
		{"Asia/Tokyo", "2026-03-08 02:30:00", "2026-03-08 02:30:00", "JST", false},
	} {
		zone, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := time.Parse("2006-01-02 15:04:05", c.wall)
		got := wallclock.Resolve(w, zone)
		name, _ := got.Zone()
		if got.Format("2006-01-02 15:04:05") != c.want || name != c.wantZone {
			t.Errorf("%s %s: got %s %s, want %s %s", c.zone, c.wall, got.Format("2006-01-02 15:04:05"), name, c.want, c.wantZone)
		}
		if wallclock.InGap(w, zone) != c.gap {
			t.Errorf("%s %s: InGap %v, want %v", c.zone, c.wall, !c.gap, c.gap)
		}
	}
}
