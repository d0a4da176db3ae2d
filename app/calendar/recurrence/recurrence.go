// Package recurrence turns a recurring event (a series) into its
// occurrences. It is pure domain logic: no HTTP, no store. The HTTP layer
// validates writes with Validate, the sync worker and the feeds expand
// series with Expand (the occurrence routes through a Cache).
//
// A series is an event whose Recurrence holds RFC 5545 rules (RRULE values),
// exclusions (EXDATE) and additions (RDATE). Its own start and end are the
// first occurrence and every occurrence lasts as long. Rules are expanded
// on wall-clock time (internal/rrule, a copy of
// github.com/teambition/rrule-go with counted iteration) and each date is
// then read in the event's time zone, so the local wall time is kept
// across daylight-saving changes (a weekly 19:00 event in Europe/Amsterdam
// is at 19:00 before and after the last Sunday of March; its UTC instant
// moves by an hour). A wall time that does not exist (in a spring-forward
// gap) is read with the offset before the gap, one that occurs twice is
// its first occurrence, in every zone alike (RFC 5545 3.3.5,
// repository/wallclock).
//
// Each occurrence has a key, its original local start written
// "20060102T150405": stable across edits of other occurrences (and of the
// series' title or venue), unique within a series.
//
// Bounds: a series is expanded up to a horizon ahead of now (Limits.Horizon,
// RECURRENCE_HORIZON, default 730 days) and to at most
// Limits.MaxOccurrences occurrences (default 1,000). Validate refuses a
// series with more upcoming occurrences than that up to the horizon; as the
// horizon rolls forward, Expand keeps the latest MaxOccurrences of an
// older, longer series (its earliest past occurrences drop out first).
// The work of an expansion is bounded apart from the dates it gives
// (budget.go): each rule is followed at most MaxSeriesYears after the
// series' start, fewer when its candidate days would exceed its share of
// SeriesBudget, and a rule that gives no date in that span, or never can,
// is refused by Validate; ICalRules states each rule's end in feeds.
package recurrence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence/internal/rrule"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/wallclock"
)

// Default bounds (see Limits).
const (
	// DefaultHorizon is how far ahead of now series are expanded.
	DefaultHorizon = 730 * 24 * time.Hour
	// DefaultMaxOccurrences bounds the occurrences of one series.
	DefaultMaxOccurrences = 1000
	// MaxRules bounds the rules of one series.
	MaxRules = 5
	// MaxRuleLength bounds the length of one rule, in bytes.
	MaxRuleLength = 300
	// MaxDates bounds the exclusions, and separately the additions, of
	// one series.
	MaxDates = 1000
	// MaxInterval bounds a rule's INTERVAL.
	MaxInterval = 1000
	// MaxRuleDates bounds the dates one rule gives from the series' start
	// to the horizon (past ones included): about 137 years of a daily
	// rule. Its work is bounded apart from that (RuleBudget).
	MaxRuleDates = 50000
)

// KeyLayout is the layout of an occurrence key: the original local start.
const KeyLayout = "20060102T150405"

// LocalLayout is the layout of exclusions, additions and override times:
// wall-clock time in the event's zone.
const LocalLayout = "2006-01-02 15:04:05"

// Limits bound an expansion.
type Limits struct {
	// Now is the current time (zero: time.Now()).
	Now time.Time
	// Horizon is how far after Now occurrences are expanded (0: DefaultHorizon).
	Horizon time.Duration
	// MaxOccurrences bounds the occurrences of a series (0: DefaultMaxOccurrences).
	MaxOccurrences int
	// Work, when not nil, counts the work of the expansions made with
	// these limits.
	Work *Work
}

func (l Limits) now() time.Time {
	if l.Now.IsZero() {
		return time.Now()
	}
	return l.Now
}

// HorizonEnd is the last instant an occurrence may start at.
func (l Limits) HorizonEnd() time.Time {
	h := l.Horizon
	if h <= 0 {
		h = DefaultHorizon
	}
	return l.now().Add(h)
}

func (l Limits) max() int {
	if l.MaxOccurrences <= 0 {
		return DefaultMaxOccurrences
	}
	return l.MaxOccurrences
}

// Series is what the expansion needs of a recurring event.
type Series struct {
	// Start and End are the first occurrence (End may equal Start).
	Start, End time.Time
	// Local is the series' start as written, a wall-clock time in Zone
	// (read from its year to its second, whatever its location); zero:
	// Start's wall time in Zone. It differs from Start's only when it
	// falls in a daylight-saving gap: the rules repeat the wall time
	// written (02:30 every week), the first occurrence is its instant
	// (03:30 after a spring-forward at 02:00, wallclock.Resolve).
	Local time.Time
	// Zone is the event's time zone (the site zone when it has none).
	Zone       *time.Location
	Recurrence *repository.Recurrence
	Overrides  []repository.OccurrenceOverride
}

// SeriesOf returns the series of an event whose zone is zone. The start is
// StartLocal read in zone (StartUTC when StartLocal is empty).
func SeriesOf(e *repository.EventFields, zone *time.Location) Series {
	s := Series{Zone: zone, Recurrence: e.Recurrence, Overrides: e.Overrides}
	s.Start = localOr(e.StartLocal, e.StartUTC, zone)
	if w, err := parseWall(e.StartLocal); err == nil {
		s.Local = w
	}
	s.End = localOr(e.EndLocal, e.EndUTC, zone)
	if s.End.Before(s.Start) {
		s.End = s.Start
	}
	return s
}

// wall returns the series' start as a floating wall time (UTC fields),
// to the second.
func (s Series) wall() time.Time {
	if !s.Local.IsZero() {
		return wallclock.Floating(s.Local, nil).Truncate(time.Second)
	}
	return wallclock.Floating(s.Start, zoneOf(s)).Truncate(time.Second)
}

func localOr(local string, utc time.Time, zone *time.Location) time.Time {
	if t, err := ParseLocal(local, zone); err == nil {
		return t
	}
	if utc.IsZero() {
		return time.Time{}
	}
	return utc.In(zone)
}

// Occurrence is one occurrence of a series.
type Occurrence struct {
	// Key is the original local start, KeyLayout.
	Key string
	// Original is the start the rules gave (before any override).
	Original time.Time
	// Start and End are the occurrence's times (an override may move them).
	Start, End time.Time
	// Override is the occurrence's override, nil when it has none.
	Override *repository.OccurrenceOverride
}

// Error is a refused recurrence: Field names the part
// ("recurrence.rules[1]"), Message says what is wrong in the client's words.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

func problem(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// untilLayouts are the forms of an RRULE's UNTIL (RFC 5545 3.3.10): a
// date, a UTC time, or a floating time (read in the event's zone).
var untilLayouts = []string{"20060102", "20060102T150405Z", "20060102T150405"}

// validUntil reports whether v is an UNTIL in one of untilLayouts naming
// a real date and time.
func validUntil(v string) bool {
	for _, layout := range untilLayouts {
		if len(v) == len(layout) {
			_, err := time.Parse(layout, v)
			return err == nil
		}
	}
	return false
}

// ParseLocal reads "2006-01-02 15:04:05" (or "2006-01-02 15:04") as wall
// time in zone, a time in a daylight-saving gap or overlap resolved as
// RFC 5545 says (wallclock.Resolve).
func ParseLocal(s string, zone *time.Location) (time.Time, error) {
	w, err := parseWall(s)
	if err != nil {
		return time.Time{}, err
	}
	return wallclock.Resolve(w, zone), nil
}

// parseWall reads "2006-01-02 15:04:05" (or "2006-01-02 15:04") as a
// floating wall time (UTC fields).
func parseWall(s string) (time.Time, error) {
	if t, err := time.Parse(LocalLayout, s); err == nil {
		return t, nil
	}
	return time.Parse("2006-01-02 15:04", s)
}

// Key returns the key of an occurrence originally starting at t.
func Key(t time.Time, zone *time.Location) string { return t.In(zone).Format(KeyLayout) }

// ParseKey returns the original start a key names, or an error when key is
// not of the KeyLayout form.
func ParseKey(key string, zone *time.Location) (time.Time, error) {
	if len(key) != len(KeyLayout) {
		return time.Time{}, errors.New("an occurrence key is the original local start written YYYYMMDDTHHMMSS")
	}
	t, err := time.Parse(KeyLayout, key)
	if err != nil {
		return time.Time{}, errors.New("an occurrence key is the original local start written YYYYMMDDTHHMMSS")
	}
	return wallclock.Resolve(t, zone), nil
}

// finerThanDaily are the frequencies refused.
var finerThanDaily = map[string]bool{"HOURLY": true, "MINUTELY": true, "SECONDLY": true}

// refusedParts are rule parts the service does not take, with the reason.
var refusedParts = map[string]string{
	"DTSTART":  "the series starts at the event's start_date; leave DTSTART out of the rule",
	"BYHOUR":   "occurrences start at the time of the event's start_date; BYHOUR is not supported",
	"BYMINUTE": "occurrences start at the time of the event's start_date; BYMINUTE is not supported",
	"BYSECOND": "occurrences start at the time of the event's start_date; BYSECOND is not supported",
	"BYEASTER": "BYEASTER is not part of RFC 5545",
}

// knownParts are the RRULE parts accepted.
var knownParts = map[string]bool{
	"FREQ": true, "INTERVAL": true, "COUNT": true, "UNTIL": true, "WKST": true,
	"BYDAY": true, "BYMONTHDAY": true, "BYYEARDAY": true, "BYWEEKNO": true,
	"BYMONTH": true, "BYSETPOS": true,
}

// rule is one parsed rule of a series.
type rule struct {
	field string
	r     *rrule.RRule
	// count is the rule's COUNT (0: none); until its own UNTIL as a
	// floating wall time (zero: none).
	count int
	until time.Time
	// years is how far after the series' start the rule is expanded
	// (spanYears), end that wall time (floating): the rule's UNTIL is the
	// earlier of its own and end.
	years int
	end   time.Time
	// limit bounds the rule's work (rrule.Counter).
	limit int
}

// instants iterates the rule's dates as instants in zone (wall times
// resolved by wallclock.Resolve), its work counted in c.
func (rl *rule) instants(c *rrule.Counter, zone *time.Location) func() (time.Time, bool) {
	next := rl.r.CountedIterator(c)
	return func() (time.Time, bool) {
		w, ok := next()
		if !ok {
			return time.Time{}, false
		}
		return wallclock.Resolve(w, zone), true
	}
}

// parseRule parses one rule of a series of n rules starting at the
// floating wall time wall in zone.
func parseRule(text string, wall time.Time, zone *time.Location, field string, n int) (*rule, error) {
	if strings.TrimSpace(text) == "" {
		return nil, problem(field, "a rule must not be empty; write an RRULE value such as FREQ=WEEKLY;BYDAY=TU")
	}
	if len(text) > MaxRuleLength {
		return nil, problem(field, "a rule is at most %d characters", MaxRuleLength)
	}
	up := strings.ToUpper(strings.TrimSpace(text))
	if strings.HasPrefix(up, "RRULE:") {
		return nil, problem(field, `write the RRULE value without the "RRULE:" prefix`)
	}
	if strings.ContainsAny(up, "\r\n") {
		return nil, problem(field, "a rule is one RRULE value, on one line")
	}
	seen := map[string]bool{}
	raw := map[string]string{}
	for _, part := range strings.Split(up, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" || v == "" {
			return nil, problem(field, "%q is not NAME=VALUE; rule parts are separated by semicolons", part)
		}
		if why, refused := refusedParts[k]; refused {
			return nil, problem(field, "%s", why)
		}
		if !knownParts[k] {
			return nil, problem(field, "unknown rule part %s", k)
		}
		if seen[k] {
			return nil, problem(field, "%s is given twice", k)
		}
		seen[k] = true
		raw[k] = v
		switch k {
		case "FREQ":
			if finerThanDaily[v] {
				return nil, problem(field, "FREQ=%s is finer than daily; the finest supported frequency is DAILY", v)
			}
		case "UNTIL":
			if !validUntil(v) {
				return nil, problem(field, "UNTIL must be a date like 20270630 or a time like 20270630T235959Z (UTC) or 20270630T235959 (the event's zone), not %q", v)
			}
		case "INTERVAL", "COUNT":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, problem(field, "%s must be a whole number of at least 1, not %q", k, v)
			}
			if k == "INTERVAL" && n > MaxInterval {
				return nil, problem(field, "INTERVAL is at most %d", MaxInterval)
			}
		}
	}
	if !seen["FREQ"] {
		return nil, problem(field, "FREQ is required (YEARLY, MONTHLY, WEEKLY or DAILY)")
	}
	if seen["COUNT"] && seen["UNTIL"] {
		return nil, problem(field, "COUNT and UNTIL must not both be given (RFC 5545)")
	}
	opt, err := rrule.StrToROptionInLocation(up, zone)
	if err != nil {
		return nil, problem(field, "not a valid RRULE: %v", err)
	}
	opt.Dtstart = wall
	if _, err := rrule.NewRRule(*opt); err != nil { // the bounds of every part
		return nil, problem(field, "not a valid RRULE: %v", err)
	}
	rl := &rule{field: field, count: opt.Count}
	if u := raw["UNTIL"]; u != "" {
		rl.until = wallclock.Floating(opt.Until, zone)
		// A date-only UNTIL includes that whole day, in the event's zone.
		if len(u) == len("20060102") {
			rl.until = rl.until.AddDate(0, 0, 1).Add(-time.Second)
		}
		if rl.until.Before(wall) {
			return nil, problem(field, "UNTIL %s is before the series' start %s", u, wall.Format(LocalLayout))
		}
	}
	if err := neverOccurs(opt, raw); err != "" {
		return nil, problem(field, "%s", err)
	}
	if !someDayMatches(opt) {
		return nil, problem(field, "the rule never occurs: no day matches its BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO and BYDAY together")
	}
	rl.limit = ruleLimit(n)
	rl.years = spanYears(opt, rl.limit)
	if rl.years < MinSeriesYears {
		return nil, problem(field, "the rule is too costly to expand: with its BYSETPOS values it could be followed for only %d years (at least %d are needed); give fewer BYSETPOS values", rl.years, MinSeriesYears)
	}
	rl.end = wall.AddDate(rl.years, 0, 0)
	opt.Until = rl.end
	if !rl.until.IsZero() && rl.until.Before(rl.end) {
		opt.Until = rl.until
	}
	r, err := rrule.NewRRule(*opt)
	if err != nil {
		return nil, problem(field, "not a valid RRULE: %v", err)
	}
	rl.r = r
	return rl, nil
}

// someDayMatches reports whether some day of a 28-year cycle (every
// weekday and leap-year combination) passes the rule's day filters
// (BYWEEKNO read as ISO 8601 weeks, when the week starts on Monday).
// Impossibility through ordinals and BYSETPOS is neverOccurs's; what
// neither finds is bounded by the rule's work budget (Validate refuses a
// rule that gives no date within it).
func someDayMatches(o *rrule.ROption) bool {
	weekno := o.Byweekno
	if o.Wkst != rrule.MO {
		weekno = nil // weeks not ISO weeks: left to the budget
	}
	if len(o.Bymonth)+len(o.Bymonthday)+len(o.Byyearday)+len(o.Byweekday)+len(weekno) == 0 {
		return true
	}
	days := map[time.Weekday]bool{}
	for _, w := range o.Byweekday {
		days[time.Weekday((w.Day()+1)%7)] = true
	}
	in := func(list []int, v, neg int) bool {
		for _, x := range list {
			if x == v || x == neg {
				return true
			}
		}
		return false
	}
	d := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	for end := d.AddDate(28, 0, 0); d.Before(end); d = d.AddDate(0, 0, 1) {
		y, m, md := d.Date()
		monthLen := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
		yearLen := time.Date(y, 12, 31, 0, 0, 0, 0, time.UTC).YearDay()
		wy, wn := d.ISOWeek()
		weeks := 52
		if _, w := time.Date(wy, 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek(); w == 53 {
			weeks = 53
		}
		if (len(o.Bymonth) == 0 || in(o.Bymonth, int(m), int(m))) &&
			(len(o.Bymonthday) == 0 || in(o.Bymonthday, md, md-monthLen-1)) &&
			(len(o.Byyearday) == 0 || in(o.Byyearday, d.YearDay(), d.YearDay()-yearLen-1)) &&
			(len(weekno) == 0 || in(weekno, wn, wn-weeks-1)) &&
			(len(days) == 0 || days[d.Weekday()]) {
			return true
		}
	}
	return false
}

// parsed is a series ready to expand.
type parsed struct {
	zone *time.Location
	// wall is the series' start as a floating wall time.
	wall       time.Time
	rules      []*rule
	additions  []time.Time
	exclusions map[string]bool
	duration   time.Duration
}

// parseDate reads an exclusion or addition: a wall time in zone whose
// instant is within the years 1 to 9999 in the zone and in UTC (the range
// of RFC 5545 dates).
func parseDate(raw string, zone *time.Location, field string) (time.Time, error) {
	t, err := ParseLocal(raw, zone)
	if err != nil {
		return time.Time{}, problem(field, "%q is not a start time YYYY-MM-DD HH:MM:SS in the event's time zone", raw)
	}
	if !inDateRange(t) {
		return time.Time{}, problem(field, "%q is outside the years 0001 to 9999 (in the event's time zone and in UTC)", raw)
	}
	return t, nil
}

// inDateRange reports whether t is within the years 1 to 9999 in its
// location and in UTC.
func inDateRange(t time.Time) bool {
	for _, y := range []int{t.Year(), t.UTC().Year()} {
		if y < 1 || y > 9999 {
			return false
		}
	}
	return true
}

// parse checks the series and prepares it; errors are *Error.
func parse(s Series) (*parsed, error) {
	rec := s.Recurrence
	if rec == nil {
		return nil, nil
	}
	if s.Zone == nil {
		s.Zone = time.UTC
	}
	if s.Start.IsZero() {
		return nil, problem("recurrence", "a recurring event needs a start_date (its first occurrence)")
	}
	if !inDateRange(s.Start) || !inDateRange(s.End) {
		return nil, problem("recurrence", "the series' start and end must be within the years 0001 to 9999")
	}
	if len(rec.Rules) == 0 && len(rec.Additions) == 0 {
		return nil, problem("recurrence", "give at least one rule (or addition); send recurrence: null for a single event")
	}
	if len(rec.Rules) > MaxRules {
		return nil, problem("recurrence.rules", "at most %d rules per event", MaxRules)
	}
	if len(rec.Exclusions) > MaxDates {
		return nil, problem("recurrence.exclusions", "at most %d exclusions per event", MaxDates)
	}
	if len(rec.Additions) > MaxDates {
		return nil, problem("recurrence.additions", "at most %d additions per event", MaxDates)
	}
	p := &parsed{zone: s.Zone, wall: s.wall(), exclusions: map[string]bool{}, duration: s.End.Sub(s.Start)}
	if p.duration < 0 {
		p.duration = 0
	}
	for i, raw := range rec.Rules {
		r, err := parseRule(raw, p.wall, s.Zone, fmt.Sprintf("recurrence.rules[%d]", i), len(rec.Rules))
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	for i, raw := range rec.Exclusions {
		t, err := parseDate(raw, s.Zone, fmt.Sprintf("recurrence.exclusions[%d]", i))
		if err != nil {
			return nil, err
		}
		p.exclusions[Key(t, s.Zone)] = true
	}
	for i, raw := range rec.Additions {
		t, err := parseDate(raw, s.Zone, fmt.Sprintf("recurrence.additions[%d]", i))
		if err != nil {
			return nil, err
		}
		p.additions = append(p.additions, t)
	}
	return p, nil
}

// ruleRun is what iterating one rule found.
type ruleRun struct {
	// dates counts the rule's dates iterated (up to the horizon, or
	// beyond it when the run was complete).
	dates int
	// overflow: more than MaxRuleDates dates up to the horizon.
	overflow bool
	// exhausted: the rule's work budget ran out.
	exhausted bool
}

// originals returns the original starts of the series up to end in start
// order (duplicates removed, exclusions applied), keeping the latest max
// when there are more, and what iterating each rule found. A complete run
// (Validate) goes on past end, without keeping the dates, until a rule
// has given one date and, for a rule with COUNT, all of them (or its
// budget or span ends). The work is added to work (may be nil).
func (p *parsed) originals(end time.Time, max int, work *Work, complete bool) ([]time.Time, []ruleRun) {
	zone := p.zone
	start := wallclock.Resolve(p.wall, zone)
	var all []time.Time
	add := func(t time.Time) {
		if !t.After(end) && !p.exclusions[Key(t, zone)] {
			all = append(all, t)
		}
	}
	add(start) // DTSTART is always the first occurrence (RFC 5545 3.8.5.3).
	for _, t := range p.additions {
		add(t)
	}
	// Each rule is pulled up to end; a ring of 4*max bounds the memory,
	// the final cut below keeps the latest max.
	runs := make([]ruleRun, len(p.rules))
	for i, rl := range p.rules {
		run := &runs[i]
		c := &rrule.Counter{Limit: rl.limit}
		next := rl.instants(c, zone)
		kept := 0
		for {
			t, ok := next()
			if !ok {
				break
			}
			run.dates++
			if t.After(end) {
				if complete && rl.count > 0 && run.dates < rl.count {
					continue // on to the COUNT's last date
				}
				break
			}
			if kept++; kept > MaxRuleDates {
				run.overflow = true
				break
			}
			if !p.exclusions[Key(t, zone)] {
				all = append(all, t)
			}
			if len(all) > 4*max+len(p.additions)+1 {
				slices.SortFunc(all, func(a, b time.Time) int { return a.Compare(b) })
				all = slices.CompactFunc(all, func(a, b time.Time) bool { return a.Equal(b) })
				if len(all) > max {
					all = append(all[:0], all[len(all)-max:]...)
				}
			}
		}
		run.exhausted = c.Exhausted
		work.add(c.Work)
	}
	slices.SortFunc(all, func(a, b time.Time) int { return a.Compare(b) })
	all = slices.CompactFunc(all, func(a, b time.Time) bool { return a.Equal(b) })
	if len(all) > max {
		all = all[len(all)-max:]
	}
	return all, runs
}

// Validate checks a series for a write: the rules, exclusions and additions
// parse, no rule is finer than daily, and the series has at most
// MaxOccurrences occurrences from now (or its start, when later) up to the
// horizon. Errors are *Error. A nil Recurrence is valid (a single event).
func Validate(s Series, lim Limits) error {
	p, err := parse(s)
	if err != nil || p == nil {
		return err
	}
	zone := zoneOf(s)
	max := lim.max()
	from := lim.now()
	if s.Start.After(from) {
		from = s.Start
	}
	// The latest max+1 occurrences: when the earliest of them is still
	// upcoming, more than max are.
	latest, runs := p.originals(lim.HorizonEnd(), max+1, lim.Work, true)
	for i, run := range runs {
		rl := p.rules[i]
		switch {
		case run.exhausted:
			return problem(rl.field, "the rule takes more than %d iterations (candidate dates examined) to expand from the series' start (%s): start the series later or simplify the rule",
				rl.limit, p.wall.Format("2006-01-02"))
		case run.overflow:
			return problem("recurrence", "a rule gives more than %d dates from the series' start (%s) to the horizon: start the series later",
				MaxRuleDates, p.wall.Format("2006-01-02"))
		case run.dates == 0 && !rl.until.IsZero() && rl.until.Before(rl.end):
			return problem(rl.field, "the rule gives no date between the series' start (%s) and its UNTIL (%s)",
				p.wall.Format(LocalLayout), rl.until.Format(LocalLayout))
		case run.dates == 0:
			return problem(rl.field, "the rule gives no date in the %d years after the series' start (%s), as far as it is expanded: no day matches it often enough",
				rl.years, p.wall.Format("2006-01-02"))
		case rl.count > 0 && run.dates < rl.count:
			return problem(rl.field, "COUNT=%d is not reached in the %d years after the series' start (%s), as far as the rule is expanded (it gives %d dates by then): give a smaller COUNT",
				rl.count, rl.years, p.wall.Format("2006-01-02"), run.dates)
		}
	}
	if len(latest) > max && !latest[0].Before(from) {
		return problem("recurrence", "the series has more than %d occurrences up to the horizon (%s); at most %d are allowed: add an UNTIL or COUNT, or a larger INTERVAL",
			max, lim.HorizonEnd().In(zone).Format("2006-01-02"), max)
	}
	for i, o := range s.Overrides {
		if _, err := ParseKey(o.Key, zone); err != nil {
			return problem(fmt.Sprintf("overrides[%d].key", i), "%v", err)
		}
	}
	return nil
}

func zoneOf(s Series) *time.Location {
	if s.Zone == nil {
		return time.UTC
	}
	return s.Zone
}

// Expand returns the occurrences of the series that overlap [from, to]
// (start <= to and end >= from, so the occurrence running at from is
// included), in start order (then key). Occurrences start from the series'
// first up to the horizon; overrides are applied (an occurrence may move,
// its key stays); a cancelled override removes its occurrence. A zero from
// or to does not bound that side. A series without Recurrence expands to
// nothing. An invalid series is an error (*Error).
func Expand(s Series, from, to time.Time, lim Limits) ([]Occurrence, error) {
	p, err := parse(s)
	if err != nil || p == nil {
		return nil, err
	}
	origs, _ := p.originals(lim.HorizonEnd(), lim.max(), lim.Work, false)
	return occurrences(s, origs, from, to), nil
}

// occurrences shapes a series' original starts as its occurrences that
// overlap [from, to], overrides applied, in start order (then key).
func occurrences(s Series, origs []time.Time, from, to time.Time) []Occurrence {
	zone := zoneOf(s)
	duration := s.End.Sub(s.Start)
	if duration < 0 {
		duration = 0
	}
	overrides := make(map[string]*repository.OccurrenceOverride, len(s.Overrides))
	for i := range s.Overrides {
		overrides[s.Overrides[i].Key] = &s.Overrides[i]
	}
	out := make([]Occurrence, 0, len(origs))
	for _, t := range origs {
		o := Occurrence{Key: Key(t, zone), Original: t.In(zone), Start: t.In(zone), End: t.In(zone).Add(duration)}
		if ov := overrides[o.Key]; ov != nil {
			if ov.Cancelled {
				continue
			}
			o.Override = ov
			apply(&o, ov, zone, duration)
		}
		if !from.IsZero() && o.End.Before(from) {
			continue
		}
		if !to.IsZero() && o.Start.After(to) {
			continue
		}
		out = append(out, o)
	}
	slices.SortStableFunc(out, func(a, b Occurrence) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

// apply moves an occurrence as its override says: a new start keeps the
// duration unless a new end is given too.
func apply(o *Occurrence, ov *repository.OccurrenceOverride, zone *time.Location, d time.Duration) {
	if ov.StartLocal != nil {
		if t, err := ParseLocal(*ov.StartLocal, zone); err == nil {
			o.Start, o.End = t, t.Add(d)
		}
	}
	if ov.EndLocal != nil {
		if t, err := ParseLocal(*ov.EndLocal, zone); err == nil && !t.Before(o.Start) {
			o.End = t
		}
	}
}

// Find returns the occurrence with this key (overrides applied), or false
// when the series has none (excluded, cancelled, beyond the horizon, or
// not an occurrence of its rules).
func Find(s Series, key string, lim Limits) (Occurrence, bool, error) {
	var uncached *Cache // a nil Cache expands afresh
	return uncached.Find(s, key, lim)
}

// Keys returns the keys of every occurrence of the series (overrides not
// applied; cancelled overrides do not remove keys), for pruning the
// overrides of occurrences a series edit removed.
func Keys(s Series, lim Limits) (map[string]bool, error) {
	p, err := parse(s)
	if err != nil || p == nil {
		return nil, err
	}
	zone := zoneOf(s)
	origs, _ := p.originals(lim.HorizonEnd(), lim.max(), lim.Work, false)
	keys := make(map[string]bool, len(origs))
	for _, t := range origs {
		keys[Key(t, zone)] = true
	}
	return keys, nil
}

// At returns the occurrence a key names without expanding the series (the
// key, from an index built with Expand, is trusted to be an occurrence):
// its original start, its start and end with the override applied, and
// the override. It is what list pages use; Find checks the key.
func At(s Series, key string) (Occurrence, error) {
	zone := zoneOf(s)
	t, err := ParseKey(key, zone)
	if err != nil {
		return Occurrence{}, err
	}
	d := s.End.Sub(s.Start)
	if d < 0 {
		d = 0
	}
	o := Occurrence{Key: key, Original: t, Start: t, End: t.Add(d)}
	for i := range s.Overrides {
		if s.Overrides[i].Key == key {
			o.Override = &s.Overrides[i]
			apply(&o, o.Override, zone, d)
			break
		}
	}
	return o, nil
}
