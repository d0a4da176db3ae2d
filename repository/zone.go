package repository

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// utcOffsetZone matches event time zones written as UTC±N[:MM] or UTC±N.5.
var utcOffsetZone = regexp.MustCompile(`^UTC([+-])(\d{1,2})(?:[:.](\d{1,2}))?$`)

// LoadZone resolves an event time zone: an IANA name, "UTC", or UTC±N
// (a fixed offset, as WordPress writes manual offsets: "UTC+5.5" is 5 h
// 30 min). It reports false for anything else.
func LoadZone(name string) (*time.Location, bool) {
	if name == "UTC" || name == "UTC+0" || name == "UTC-0" {
		return time.FixedZone(name, 0), true
	}
	if m := utcOffsetZone.FindStringSubmatch(name); m != nil {
		h, _ := strconv.Atoi(m[2])
		mins := 0
		if m[3] != "" {
			mins, _ = strconv.Atoi(m[3])
			if strings.Contains(name, ".") {
				frac, _ := strconv.ParseFloat("0."+m[3], 64)
				mins = int(frac * 60)
			}
		}
		if h > 14 || mins >= 60 {
			return nil, false
		}
		off := h*3600 + mins*60
		if m[1] == "-" {
			off = -off
		}
		return time.FixedZone(name, off), true
	}
	if name == "" || name == "Local" || strings.ContainsAny(name, " \\") {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}

// Zone returns the event's time zone, site when it has none (or one that
// no longer resolves).
func (e *EventFields) Zone(site *time.Location) *time.Location {
	if e.Timezone != "" {
		if loc, ok := LoadZone(e.Timezone); ok {
			return loc
		}
	}
	return site
}
