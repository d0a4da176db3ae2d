package repository_test

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

func TestLoadZone(t *testing.T) {
	at := time.Date(2027, 7, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		ok     bool
		offset int // seconds east of UTC on 1 July 2027
	}{
		{"Europe/Amsterdam", true, 7200}, {"America/New_York", true, -4 * 3600}, {"Australia/Sydney", true, 10 * 3600},
		{"UTC", true, 0}, {"UTC+2", true, 7200}, {"UTC-5:30", true, -(5*3600 + 1800)}, {"UTC+5.5", true, 5*3600 + 1800},
		{"UTC+15", false, 0}, {"Local", false, 0}, {"", false, 0}, {"Mars/Olympus", false, 0}, {"Europe/ Amsterdam", false, 0},
	}
	for _, c := range cases {
		loc, ok := repository.LoadZone(c.name)
		if ok != c.ok {
			t.Errorf("LoadZone(%q) ok = %v", c.name, ok)
			continue
		}
		if ok {
			if _, off := at.In(loc).Zone(); off != c.offset {
				t.Errorf("LoadZone(%q): offset %d, want %d", c.name, off, c.offset)
			}
		}
	}
	site := time.FixedZone("site", 3600)
	if z := (&repository.EventFields{}).Zone(site); z != site {
		t.Errorf("no zone: %v", z)
	}
	if z := (&repository.EventFields{Timezone: "Nowhere/Land"}).Zone(site); z != site {
		t.Errorf("bad zone: %v", z)
	}
	if z := (&repository.EventFields{Timezone: "America/New_York"}).Zone(site); z.String() != "America/New_York" {
		t.Errorf("New York: %v", z)
	}
}
