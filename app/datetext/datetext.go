// Package datetext reads dates as people write them in API parameters: the
// absolute forms (Unix timestamps, YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC
// 3339: docs/decisions.md, "Reads") on a fast path, and relative and
// written phrases in the request's language or in English, the way PHP's
// strtotime reads them in the original plugin.
//
// Written and relative phrases in every language are read by
// github.com/markusmobius/go-dateparser ("+6 months", "next year",
// "1 December 2026", "morgen", "demain", "mañana", "jutro"). This package
// adds the few strtotime forms the library lacks ("first day of next month",
// "next wednesday 4pm", a bare "16:00"), keeps strtotime's meaning where the
// two differ ("tomorrow" is 00:00 tomorrow, "6 months" is in six months), and
// refuses what the library would read too loosely: a string without a real
// word ("y", "a 6", "8.2", "45 s") is not a date.
//
// Read reads a text once into a Value that keeps what it means (an
// instant, a wall-clock time, a phrase), so that a request's date is
// parsed once even when its zone is settled later (an event's zone is
// known only with its record); WatchReads lets tests count the reads.
package datetext

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	dps "github.com/markusmobius/go-dateparser"
	"github.com/markusmobius/go-dateparser/date"

	"github.com/calendar/eventcal/repository/wallclock"
)

// ErrNotADate is returned for a string that is not a date.
var ErrNotADate = errors.New("not a date")

// maxLen bounds the text given to the phrase parser (a date phrase is short;
// the library's work grows with the text).
const maxLen = 64

// Parse reads text as an instant. Absolute forms (Unix timestamps,
// YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339) never reach the phrase parser;
// a date or time without an offset is wall-clock time in loc; phrases are
// read in lang (a language code such as "nl"; "" for English only) or in
// English, relative to now. The result is in loc, to the second. It is
// Read, then Value.In(loc).
func Parse(text, lang string, now time.Time, loc *time.Location) (time.Time, error) {
	v, err := Read(text, lang, now, loc)
	if err != nil {
		return time.Time{}, err
	}
	return v.In(loc)
}

// Value is a date text read once (Read), kept in the form that says what
// it means: an instant (a Unix timestamp, RFC 3339 with an offset), a
// wall-clock date and time without a zone (YYYY-MM-DD[ HH:MM[:SS]]), whose
// instant depends on the zone it is read in, or a phrase ("tomorrow 9am",
// "+2 weeks"), read at a time in a zone. In gives the instant in the zone
// the caller settles on (an event's zone, known only once its record is),
// without reading the text again; only a phrase asked for in another zone
// than it was read in is read again there (what "tomorrow" means depends
// on the zone's day). The zero Value is no date.
type Value struct {
	kind valueKind
	// text is the text read (spaces around it trimmed); lang its language.
	text, lang string
	// t is the instant (kindInstant, kindPhrase: in the zone read) or the
	// wall-clock fields in a UTC time (kindWall).
	t time.Time
	// now and loc are when and where a phrase was read.
	now time.Time
	loc *time.Location
}

// valueKind says what a Value holds.
type valueKind uint8

const (
	kindNone valueKind = iota
	kindInstant
	kindWall
	kindPhrase
)

// Read reads text once into a Value: the absolute forms (Unix timestamps,
// YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], RFC 3339) on the fast path, a phrase
// in lang or English at now in loc (see Parse). It is the only place a
// date text is parsed; every read is counted for WatchReads.
func Read(text, lang string, now time.Time, loc *time.Location) (Value, error) {
	if loc == nil {
		loc = time.UTC
	}
	s := strings.TrimSpace(text)
	noteRead(s)
	if s == "" {
		return Value{}, ErrNotADate
	}
	if v, ok, err := readAbsolute(s); ok || err != nil {
		return v, err
	}
	if len(s) > maxLen {
		return Value{}, ErrNotADate
	}
	now = now.Truncate(time.Second)
	t, err := cached(s, lang, now.In(loc))
	if err != nil {
		return Value{}, err
	}
	return Value{kind: kindPhrase, text: s, lang: lang, t: t.In(loc).Truncate(time.Second), now: now, loc: loc}, nil
}

// In returns the instant v means in loc, in loc: an instant as it is, a
// wall-clock time read in loc (wallclock.Resolve: a time in a
// daylight-saving gap is read with the offset before the gap), a phrase
// as read, or, asked for in another zone than the one it was read in,
// read again in loc at the same time. The zero Value is ErrNotADate.
func (v Value) In(loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	switch v.kind {
	case kindInstant:
		return v.t.In(loc), nil
	case kindWall:
		return wallclock.Resolve(v.t, loc), nil
	case kindPhrase:
		if loc == v.loc || loc.String() == v.loc.String() {
			return v.t.In(loc), nil
		}
		noteRead(v.text)
		t, err := cached(v.text, v.lang, v.now.In(loc))
		if err != nil {
			return time.Time{}, err
		}
		return t.In(loc).Truncate(time.Second), nil
	}
	return time.Time{}, ErrNotADate
}

// Wall returns the wall-clock date and time of a Value read from a form
// without zone or offset (in a UTC time, as the package function Wall);
// ok is false for every other form.
func (v Value) Wall() (time.Time, bool) { return v.t, v.kind == kindWall }

// IsPhrase reports whether v was read from a phrase ("tomorrow 9am",
// "+2 weeks"): the only form whose instant depends on when it is read.
func (v Value) IsPhrase() bool { return v.kind == kindPhrase }

// Text returns the text v was read from (spaces around it trimmed), for
// the messages of a refused date.
func (v Value) Text() string { return v.text }

// IsZero reports whether v is the zero Value (no date read).
func (v Value) IsZero() bool { return v.kind == kindNone }

var (
	absLayouts = []string{
		"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04",
		"2006-01-02", "2006/01/02", "2006/01/02 15:04:05", "2006/01/02 15:04",
	}
	offsetLayouts = []string{time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 Z07:00", "2006-01-02T15:04Z07:00"}
)

// Wall reads s as a wall-clock date and time without zone or offset
// ("2006-01-02 15:04:05" and the other absolute forms), returning its
// fields in a UTC time; ok is false for any other form. A wall time is
// read in a zone with wallclock.Resolve (RFC 5545: a time in a
// daylight-saving gap is read with the offset before the gap).
func Wall(s string) (time.Time, bool) {
	for _, l := range absLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// readAbsolute reads the fast-path forms. ok reports that s had one of
// their shapes (err then says whether it was valid).
func readAbsolute(s string) (Value, bool, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "@"), "-")
	if digits != "" && strings.Trim(digits, "0123456789") == "" {
		if len(digits) < 5 {
			// "12" or "2027" is not a timestamp anyone means; strtotime
			// would read "2027" as 20:27 today.
			return Value{}, true, ErrNotADate
		}
		n, err := strconv.ParseInt(strings.TrimPrefix(s, "@"), 10, 64)
		if err != nil {
			return Value{}, true, ErrNotADate
		}
		return Value{kind: kindInstant, text: s, t: time.Unix(n, 0)}, true, nil
	}
	if len(s) < 10 || s[0] < '0' || s[0] > '9' {
		return Value{}, false, nil
	}
	if w, ok := Wall(s); ok {
		return Value{kind: kindWall, text: s, t: w}, true, nil
	}
	for _, l := range offsetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return Value{kind: kindInstant, text: s, t: t}, true, nil
		}
	}
	return Value{}, false, nil
}

var (
	// clockRe matches a time of day: "16:00", "4pm", "4:30 pm", "16:00:05".
	clockRe = regexp.MustCompile(`^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$`)
	// dayOfRe matches strtotime's "first day of ..." and "last day of ...".
	dayOfRe = regexp.MustCompile(`^(first|last) day of (.+)$`)
	// weekdayRe matches "[next|last|this] <weekday> [time]".
	weekdayRe = regexp.MustCompile(`^(?:(next|last|this)\s+)?([a-z]+)(?:\s+(?:at\s+)?(.+))?$`)
)

// englishWeekdays maps English weekday names and abbreviations.
var englishWeekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "sun": time.Sunday, "monday": time.Monday, "mon": time.Monday,
	"tuesday": time.Tuesday, "tue": time.Tuesday, "tues": time.Tuesday,
	"wednesday": time.Wednesday, "wed": time.Wednesday, "thursday": time.Thursday, "thu": time.Thursday,
	"thur": time.Thursday, "thurs": time.Thursday, "friday": time.Friday, "fri": time.Friday,
	"saturday": time.Saturday, "sat": time.Saturday,
}

// parsePhrase reads a phrase at now (in the site zone). What the library
// reads must use every number and every connecting word of the phrase: it
// skips what it does not need, so "tomorrow:40", "9 tomorrow" or "before
// tomorrow" would otherwise all be tomorrow.
func parsePhrase(text, lang string, now time.Time) (time.Time, error) {
	s := strings.ToLower(strings.Join(strings.Fields(text), " "))
	t, viaLibrary, err := readPhrase(s, lang, now)
	if err != nil || !viaLibrary {
		return t, err
	}
	vk := verdictKey{text: s, lang: lang, zone: now.Location().String()}
	whole, known := verdicts.get(vk)
	if !known {
		whole = usesEveryPart(s, lang, now, t)
		vk.text, vk.lang = strings.Clone(vk.text), strings.Clone(vk.lang)
		verdicts.put(vk, whole)
	}
	if !whole {
		return time.Time{}, ErrNotADate
	}
	return t, nil
}

// readPhrase reads a normalized phrase; viaLibrary reports that the library
// read it (rather than this package's own forms).
func readPhrase(s, lang string, now time.Time) (t time.Time, viaLibrary bool, err error) {
	t, err = ownForms(s, lang, now)
	if err == nil || err != errNotOwn {
		return t, false, err
	}
	t, err = libraryForms(s, lang, now)
	return t, err == nil, err
}

// errNotOwn says that a phrase is none of this package's own forms.
var errNotOwn = errors.New("not one of our forms")

// ownForms reads strtotime's day words, a bare time, "first/last day of"
// and English weekdays.
func ownForms(s, lang string, now time.Time) (time.Time, error) {
	today := midnight(now)
	// strtotime's day words: the day at 00:00 ("noon": 12:00).
	switch s {
	case "now":
		return now, nil
	case "today", "midnight":
		return today, nil
	case "noon":
		return today.Add(12 * time.Hour), nil
	case "tomorrow":
		return today.AddDate(0, 0, 1), nil
	case "yesterday":
		return today.AddDate(0, 0, -1), nil
	}
	if h, m, sec, ok := clock(s); ok {
		return time.Date(now.Year(), now.Month(), now.Day(), h, m, sec, 0, now.Location()), nil
	}
	if mt := dayOfRe.FindStringSubmatch(s); mt != nil {
		base, err := parseMonth(mt[2], lang, now)
		if err != nil {
			return time.Time{}, err
		}
		first := time.Date(base.Year(), base.Month(), 1, base.Hour(), base.Minute(), base.Second(), 0, base.Location())
		if mt[1] == "first" {
			return first, nil
		}
		return first.AddDate(0, 1, -1), nil
	}
	if t, ok := englishWeekday(s, now); ok {
		return t, nil
	}
	return time.Time{}, errNotOwn
}

// libraryForms reads a phrase with the library: relative first, then a
// written date with a day and a month, then a month and a year, then a
// weekday in the request's language.
func libraryForms(s, lang string, now time.Time) (time.Time, error) {
	ok, single := anchored(s)
	if !ok {
		return time.Time{}, ErrNotADate
	}
	for _, w := range wordRe.FindAllString(s, -1) {
		if len([]rune(w)) == 1 && !letters[w] {
			return time.Time{}, ErrNotADate
		}
	}
	p := parsers.Get().(*parserSet)
	defer parsers.Put(p)
	langs := languages(lang)
	if d, err := p.relative.Parse(config(langs, now, dps.Future, nil), s); err == nil {
		t := d.Time
		if d.Period == date.Day && !strings.ContainsFunc(s, unicode.IsDigit) && isDayWord(t, now) {
			// "morgen", "demain", "übermorgen": like strtotime's
			// "tomorrow", the day at 00:00.
			t = midnight(t)
		}
		return t, nil
	}
	if single {
		return time.Time{}, ErrNotADate
	}
	if !plausibleNumbers(s) {
		return time.Time{}, ErrNotADate
	}
	if d, err := p.absolute.Parse(config(langs, now, dps.Future, []string{"day", "month"}), s); err == nil {
		return d.Time, nil
	}
	if d, err := p.absolute.Parse(config(langs, now, dps.Future, []string{"month", "year"}), s); err == nil && fourDigitYear.MatchString(s) {
		// "December 2026" is its first day, as strtotime reads it.
		return time.Date(d.Time.Year(), d.Time.Month(), 1, 0, 0, 0, 0, d.Time.Location()), nil
	}
	if t, ok := localWeekday(p, s, langs, now); ok {
		return t, nil
	}
	return time.Time{}, ErrNotADate
}

// parseMonth reads the month phrase of "first/last day of ...": a relative
// phrase ("next month", "+2 months", "this month") or a month name with or
// without a year ("january", "march 2027"), in the current year like strtotime.
func parseMonth(s, lang string, now time.Time) (time.Time, error) {
	switch s {
	case "this month":
		return now, nil
	case "next month":
		return now.AddDate(0, 1, 1-now.Day()), nil
	case "last month", "previous month":
		return now.AddDate(0, -1, 1-now.Day()), nil
	}
	if ok, single := anchored(s); !ok || single {
		return time.Time{}, ErrNotADate
	}
	p := parsers.Get().(*parserSet)
	defer parsers.Put(p)
	langs := languages(lang)
	if d, err := p.relative.Parse(config(langs, now, dps.Future, nil), s); err == nil {
		return d.Time, nil
	}
	if d, err := p.absolute.Parse(config(langs, now, dps.CurrentPeriod, []string{"month"}), s); err == nil {
		return d.Time, nil
	}
	return time.Time{}, ErrNotADate
}

// englishWeekday reads strtotime's weekday forms with an optional time:
// "wednesday" and "this wednesday" (today when it is Wednesday), "next
// wednesday" (the first one after today), "last wednesday" (the last one
// before today); "next wednesday 4pm" at 16:00, otherwise at 00:00.
func englishWeekday(s string, now time.Time) (time.Time, bool) {
	mt := weekdayRe.FindStringSubmatch(s)
	if mt == nil {
		return time.Time{}, false
	}
	wd, ok := englishWeekdays[mt[2]]
	if !ok {
		return time.Time{}, false
	}
	h, m, sec := 0, 0, 0
	if mt[3] != "" {
		var ok bool
		if h, m, sec, ok = clockWord(mt[3]); !ok {
			return time.Time{}, false
		}
	}
	today := midnight(now)
	ahead := (int(wd) - int(now.Weekday()) + 7) % 7
	switch mt[1] {
	case "next":
		if ahead == 0 {
			ahead = 7
		}
	case "last":
		ahead -= 7
	}
	d := today.AddDate(0, 0, ahead)
	return time.Date(d.Year(), d.Month(), d.Day(), h, m, sec, 0, d.Location()), true
}

// localWeekday reads a weekday name in the request's language with an
// optional time ("mercredi", "woensdag 16:00"): the library reads it as the
// next such day (today's weekday: a week ahead), which tells it apart from
// words it reads as today. Like strtotime, today's weekday is today.
func localWeekday(p *parserSet, s string, langs []string, now time.Time) (time.Time, bool) {
	if strings.ContainsFunc(strings.Fields(s)[0], func(r rune) bool { return !unicode.IsLetter(r) }) {
		return time.Time{}, false
	}
	d, err := p.absolute.Parse(config(langs, now, dps.Future, nil), s)
	if err != nil || d.Period > date.Day {
		return time.Time{}, false
	}
	days := int(midnight(d.Time).Sub(midnight(now)).Hours()/24 + 0.5)
	if days == 0 && d.Period < date.Day {
		// "woensdag 16:00" on a Wednesday before 16:00.
		return d.Time, true
	}
	if days < 1 || days > 7 {
		return time.Time{}, false
	}
	if days == 7 {
		return d.Time.AddDate(0, 0, -7), true
	}
	return d.Time, true
}

// clock reads a bare time of day ("16:00", "4pm", "4:30 pm"); a lone number
// is not a time.
func clock(s string) (h, m, sec int, ok bool) {
	mt := clockRe.FindStringSubmatch(s)
	if mt == nil || (mt[2] == "" && mt[4] == "") {
		return 0, 0, 0, false
	}
	h, _ = strconv.Atoi(mt[1])
	if mt[2] != "" {
		m, _ = strconv.Atoi(mt[2])
	}
	if mt[3] != "" {
		sec, _ = strconv.Atoi(mt[3])
	}
	switch strings.ReplaceAll(mt[4], ".", "") {
	case "am":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h != 12 {
			h += 12
		}
	}
	if h > 23 || m > 59 || sec > 59 {
		return 0, 0, 0, false
	}
	return h, m, sec, true
}

// clockWord reads a time of day, "noon" or "midnight".
func clockWord(s string) (h, m, sec int, ok bool) {
	switch s {
	case "noon":
		return 12, 0, 0, true
	case "midnight":
		return 0, 0, 0, true
	}
	return clock(s)
}

// isDayWord reports whether t is now moved by at most two whole days with the
// same clock time: what the library makes of "tomorrow", "demain",
// "übermorgen" or "gisteren".
func isDayWord(t, now time.Time) bool {
	if t.Hour() != now.Hour() || t.Minute() != now.Minute() || t.Second() != now.Second() {
		return false
	}
	days := midnight(t).Sub(midnight(now)).Hours() / 24
	return days >= -2.1 && days <= 2.1
}

// midnight returns 00:00:00 of t's day in t's location.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// parserSet holds one relative-only and one absolute-only parser: knowing
// which one read a phrase lets Parse apply strtotime's meaning, and keeping
// them apart stops the library from reading "8 after" as August. A
// dps.Parser serializes its calls, so each goroutine takes a set from a pool.
type parserSet struct {
	relative, absolute *dps.Parser
}

var parsers = sync.Pool{New: func() any {
	return &parserSet{
		relative: &dps.Parser{ParserTypes: []dps.ParserType{dps.RelativeTime}},
		absolute: &dps.Parser{ParserTypes: []dps.ParserType{dps.AbsoluteTime}},
	}
}}

// languages returns the library languages for a request language: that
// language, then English (the language of strtotime).
func languages(lang string) []string {
	lang = strings.ToLower(lang)
	if lang == "" || lang == "en" || !dps.IsKnownLocale(lang) {
		return []string{"en"}
	}
	return []string{lang, "en"}
}

// config builds one library configuration.
func config(langs []string, now time.Time, source dps.PreferredDateSource, required []string) *dps.Configuration {
	return &dps.Configuration{
		Languages:           langs,
		CurrentTime:         now,
		DefaultTimezone:     now.Location(),
		PreferredDateSource: source,
		RequiredParts:       required,
		ReturnTimeAsPeriod:  true,
	}
}
