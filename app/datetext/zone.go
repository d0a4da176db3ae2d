package datetext

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Layout is the date layout of every date string in responses
// ("2006-01-02 15:04:05", WordPress's Y-m-d H:i:s).
const Layout = "2006-01-02 15:04:05"

// utcOffsetZone matches event time zones written as UTC±N[:MM] or UTC±N.5.
var utcOffsetZone = regexp.MustCompile(`^UTC([+-])(\d{1,2})(?:[:.](\d{1,2}))?$`)

// LoadZone resolves an event time zone: an IANA name, "UTC", or UTC±N.
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
				// UTC+5.5 means 5 h 30 min, as WordPress writes it.
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
