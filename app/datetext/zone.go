package datetext

import (
	"time"

	"github.com/calendar/eventcal/repository"
)

// Layout is the date layout of every date string in responses
// ("2006-01-02 15:04:05", WordPress's Y-m-d H:i:s).
const Layout = "2006-01-02 15:04:05"

// LoadZone resolves an event time zone: an IANA name, "UTC", or UTC±N
// (repository.LoadZone: the rule the store's records, the sync worker's
// occurrence expansion and the API share).
func LoadZone(name string) (*time.Location, bool) { return repository.LoadZone(name) }
