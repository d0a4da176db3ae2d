package ics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	goical "github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	_ "time/tzdata" // zones resolve in a static binary too
)

// zone is a resolved TZID.
type zone struct {
	// parse reads the feed's local times; out is the location events
	// are given in; name is feed.Event.Zone.
	parse, out *time.Location
	name       string
	err        error
}

// zones resolves the TZIDs of one feed, each once.
type zones struct {
	blocks map[string]*goical.Component // VTIMEZONE by TZID
	cache  map[string]zone
	cal    *zone // X-WR-TIMEZONE, when it resolves
	loaded map[string]*time.Location
	loads  int // time.LoadLocation calls (tests: bounded work)
	custom int // VTIMEZONE blocks matched against IANA zones
}

// maxCustomZones bounds the VTIMEZONE blocks of one feed that are
// expanded and matched against IANA zones (the expansion of a yearly
// rule that never occurs runs to the year 9999 in the rule library);
// further ones take their standard offset.
const maxCustomZones = 16

func newZones() *zones {
	return &zones{blocks: map[string]*goical.Component{}, cache: map[string]zone{}, loaded: map[string]*time.Location{}}
}

// resolve turns a TZID into a zone. In order:
//   - an IANA name ("Europe/Amsterdam");
//   - a name with a vendor prefix, as Mozilla and libical write them
//     ("/mozilla.org/20050126_1/Europe/Berlin"): the longest IANA name
//     it ends with;
//   - a Windows name, as Outlook and Exchange write them ("W. Europe
//     Standard Time"): its IANA zone by CLDR's windowsZones table;
//   - any other name with a VTIMEZONE block in the feed: the block's
//     STANDARD and DAYLIGHT observances give the instants of its
//     changes of offset in 2020-2030; the first IANA zone that changes
//     at the same instants from and to the same offsets is taken
//     (the block's X-LIC-LOCATION first, then the calendar's
//     X-WR-TIMEZONE, then CLDR's zones, by name). When none agrees (or
//     the feed has more than maxCustomZones such blocks), the zone is
//     the block's standard offset, fixed: "Etc/GMT-1" for UTC+01:00 (the
//     sign of Etc names is inverted), or for an offset that is not whole
//     hours "UTC", the times converted to UTC at that offset;
//   - else an error: the event is a Problem.
func (z *zones) resolve(tzid string) zone {
	tzid = strings.TrimSpace(tzid)
	if r, ok := z.cache[tzid]; ok {
		return r
	}
	r := z.lookup(tzid)
	z.cache[tzid] = r
	return r
}

func (z *zones) lookup(tzid string) zone {
	name := strings.Trim(tzid, `"`)
	if loc := z.load(name); loc != nil {
		return zone{parse: loc, out: loc, name: name}
	}
	if strings.HasPrefix(name, "/") {
		for i := 1; i < len(name); i++ {
			if name[i-1] != '/' {
				continue
			}
			if loc := z.load(name[i:]); loc != nil && strings.Contains(name[i:], "/") {
				return zone{parse: loc, out: loc, name: name[i:]}
			}
		}
	}
	if iana := windowsName(name); iana != "" {
		if loc := z.load(iana); loc != nil {
			return zone{parse: loc, out: loc, name: iana}
		}
	}
	if c := z.blocks[tzid]; c != nil {
		return z.fromBlock(c)
	}
	return zone{err: fmt.Errorf("unknown time zone %q (not an IANA or Windows name, and the feed has no VTIMEZONE for it)", tzid)}
}

// windowsName returns the IANA zone of a Windows zone name ("" for
// none); the case of the name does not matter.
func windowsName(name string) string {
	if iana, ok := windowsZones[name]; ok {
		return iana
	}
	for w, iana := range windowsZones {
		if strings.EqualFold(w, name) {
			return iana
		}
	}
	return ""
}

// load loads an IANA zone; nil when name is none.
func (z *zones) load(name string) *time.Location {
	if name == "" || len(name) > 64 || name == "Local" {
		return nil
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("/_+-", c)) {
			return nil
		}
	}
	if loc, ok := z.loaded[name]; ok {
		return loc
	}
	z.loads++
	loc, err := time.LoadLocation(name)
	if err != nil {
		loc = nil
	}
	z.loaded[name] = loc
	return loc
}

// observance is one STANDARD or DAYLIGHT of a VTIMEZONE.
type observance struct {
	standard bool
	start    time.Time // DTSTART, local time read as UTC
	from, to int       // TZOFFSETFROM, TZOFFSETTO in seconds
	rule     string
	dates    []time.Time
}

// onset is one change of offset, at an instant.
type onset struct {
	at       time.Time
	from, to int
}

var (
	windowFrom = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	windowTo   = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	candidates = func() []string {
		seen := map[string]bool{}
		var out []string
		for _, iana := range windowsZones {
			if !seen[iana] {
				seen[iana] = true
				out = append(out, iana)
			}
		}
		sort.Strings(out)
		return out
	}()
)

// maxOnsetSteps bounds the expansion of one observance's RRULE.
const maxOnsetSteps = 2000

// fromBlock resolves a custom VTIMEZONE (see resolve).
func (z *zones) fromBlock(c *goical.Component) zone {
	var obs []observance
	for _, child := range c.Children {
		if child.Name != "STANDARD" && child.Name != "DAYLIGHT" {
			continue
		}
		o, ok := readObservance(child)
		if ok {
			obs = append(obs, o)
		}
	}
	if len(obs) == 0 {
		return zone{err: fmt.Errorf("the VTIMEZONE %q has no readable STANDARD or DAYLIGHT", c.Props.Get("TZID").Value)}
	}
	z.custom++
	if z.custom > maxCustomZones {
		return z.fixed(obs)
	}
	onsets := expand(obs)
	var hints []string
	if p := c.Props.Get("X-LIC-LOCATION"); p != nil {
		hints = append(hints, strings.TrimSpace(p.Value))
	}
	if z.cal != nil && z.cal.err == nil {
		hints = append(hints, z.cal.name)
	}
	for _, name := range append(hints, candidates...) {
		loc := z.load(name)
		if loc != nil && agrees(loc, obs, onsets) {
			return zone{parse: loc, out: loc, name: name}
		}
	}
	return z.fixed(obs)
}

// fixed is the zone of a block's standard offset, when no IANA zone
// agrees with the block.
func (z *zones) fixed(obs []observance) zone {
	std := latest(obs, true)
	off := std.to
	if off%3600 == 0 && off >= -12*3600 && off <= 14*3600 {
		name := "Etc/GMT"
		if h := -off / 3600; h > 0 {
			name += "+" + strconv.Itoa(h)
		} else if h < 0 {
			name += strconv.Itoa(h)
		}
		if loc := z.load(name); loc != nil {
			return zone{parse: loc, out: loc, name: name}
		}
	}
	return zone{parse: time.FixedZone("", off), out: time.UTC, name: "UTC"}
}

// agrees reports whether loc changes offset at every onset from and to
// the same offsets, or (no onsets in the window) keeps the block's one
// offset all year.
func agrees(loc *time.Location, obs []observance, onsets []onset) bool {
	if len(onsets) == 0 {
		latest := latest(obs, false)
		for y := windowFrom.Year(); y < windowTo.Year(); y++ {
			for _, m := range []time.Month{time.January, time.July} {
				if _, off := time.Date(y, m, 15, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off != latest.to {
					return false
				}
			}
		}
		return true
	}
	for _, o := range onsets {
		_, before := o.at.Add(-time.Second).In(loc).Zone()
		_, after := o.at.In(loc).Zone()
		if before != o.from || after != o.to {
			return false
		}
	}
	return true
}

func readObservance(c *goical.Component) (observance, bool) {
	o := observance{standard: c.Name == "STANDARD"}
	ds := c.Props.Get("DTSTART")
	from, to := c.Props.Get("TZOFFSETFROM"), c.Props.Get("TZOFFSETTO")
	if ds == nil || to == nil {
		return o, false
	}
	t, err := time.Parse("20060102T150405", strings.TrimSpace(ds.Value))
	if err != nil {
		return o, false
	}
	o.start = t
	if o.to, err = parseOffset(to.Value); err != nil {
		return o, false
	}
	o.from = o.to
	if from != nil {
		if o.from, err = parseOffset(from.Value); err != nil {
			return o, false
		}
	}
	if r := c.Props.Get("RRULE"); r != nil {
		o.rule = strings.TrimSpace(r.Value)
	}
	for _, p := range c.Props.Values("RDATE") {
		for _, v := range strings.Split(p.Value, ",") {
			if t, err := time.Parse("20060102T150405", strings.TrimSpace(v)); err == nil {
				o.dates = append(o.dates, t)
			}
		}
	}
	return o, true
}

// parseOffset reads a UTC offset: +HHMM or +HHMMSS.
func parseOffset(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) != 5 && len(s) != 7 || s[0] != '+' && s[0] != '-' {
		return 0, fmt.Errorf("bad UTC offset %q", s)
	}
	n := 0
	for i, unit := range []int{3600, 60, 1} {
		if 1+2*i >= len(s) {
			break
		}
		v, err := strconv.Atoi(s[1+2*i : 3+2*i])
		if err != nil || v < 0 || i == 0 && v > 23 || i > 0 && v > 59 {
			return 0, fmt.Errorf("bad UTC offset %q", s)
		}
		n += v * unit
	}
	if s[0] == '-' {
		n = -n
	}
	return n, nil
}

// expand lists the onsets of the observances within the window.
// Observance RRULEs must be yearly (as every producer writes them); a
// DTSTART long before the window moves to the window's year when the
// rule has no COUNT, so that the expansion stays short.
func expand(obs []observance) []onset {
	var out []onset
	add := func(wall time.Time, o observance) {
		at := wall.Add(-time.Duration(o.from) * time.Second)
		if !at.Before(windowFrom) && at.Before(windowTo) && o.from != o.to {
			out = append(out, onset{at: at, from: o.from, to: o.to})
		}
	}
	for _, o := range obs {
		add(o.start, o)
		for _, d := range o.dates {
			add(d, o)
		}
		if o.rule == "" {
			continue
		}
		opt, err := rrule.StrToROption(o.rule)
		if err != nil || opt.Freq != rrule.YEARLY {
			continue
		}
		start := o.start
		if opt.Count == 0 && start.Year() < windowFrom.Year()-1 {
			start = time.Date(windowFrom.Year()-1, start.Month(), start.Day(), start.Hour(), start.Minute(), start.Second(), 0, time.UTC)
		}
		opt.Dtstart = start
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			continue
		}
		next := r.Iterator()
		for i := 0; i < maxOnsetSteps; i++ {
			t, ok := next()
			if !ok || !t.Before(windowTo.AddDate(0, 0, 2)) {
				break
			}
			if !t.Equal(o.start) {
				add(t, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// latest returns the observance that began last; with standard, the
// STANDARD one that began last when there is one.
func latest(obs []observance, standard bool) observance {
	best := -1
	for i, o := range obs {
		switch {
		case best < 0,
			standard && o.standard && !obs[best].standard,
			(!standard || o.standard == obs[best].standard) && o.start.After(obs[best].start):
			best = i
		}
	}
	return obs[best]
}
