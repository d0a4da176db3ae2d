package app

import (
	"errors"
	"time"

	"github.com/calendar/eventcal/config/limits"
)

// errDateOutOfRange is returned for a date outside the years the stores hold.
var errDateOutOfRange = errors.New("date out of range")

// parseDateInRange is parseDate limited to the years both stores hold
// (limits.MinYear to limits.MaxYear, in the given zone and in UTC): every
// date a request sends, in a write or a list filter, is read through it, so
// "99999999999999" (year 3170843) is 400 rest_invalid_param everywhere.
func parseDateInRange(raw string, loc *time.Location, now time.Time, lang string) (time.Time, error) {
	t, err := parseDate(raw, loc, now, lang)
	if err != nil {
		return t, err
	}
	for _, y := range []int{t.Year(), t.UTC().Year()} {
		if y < limits.MinYear || y > limits.MaxYear {
			return time.Time{}, errDateOutOfRange
		}
	}
	return t, nil
}
