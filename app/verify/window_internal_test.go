package verify

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/config/limits"
)

// TestWindowInEveryZone: the events list's window is within the years the
// API accepts in UTC whatever the site's zone (UTC-12 to UTC+14), so that
// no service answers the comparison's lists with 400 (both sides alike,
// which would compare no list at all).
func TestWindowInEveryZone(t *testing.T) {
	t.Parallel()
	for off := -12; off <= 14; off++ {
		zone := time.FixedZone("", off*3600)
		for _, bound := range []string{windowStart, windowEnd} {
			at, err := time.ParseInLocation(time.DateTime, bound, zone)
			if err != nil {
				t.Fatal(err)
			}
			if y := at.UTC().Year(); y < limits.MinYear || y > limits.MaxYear {
				t.Errorf("%s at UTC%+d is in the year %d in UTC: outside %d to %d", bound, off, y, limits.MinYear, limits.MaxYear)
			}
		}
	}
}
