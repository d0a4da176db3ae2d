package ics

import (
	"bytes"
	"fmt"
	"strings"
)

// Bounds of the pre-pass that every body goes through before the
// iCalendar library sees any of it.
const (
	// MaxLineBytes bounds one logical (unfolded) content line. A longer
	// line makes its event a Problem; elsewhere it is ignored.
	MaxLineBytes = 1 << 20
	// MaxDepth bounds the nesting of components (VCALENDAR > VEVENT >
	// VALARM is 3). Deeper nesting makes its event a Problem.
	MaxDepth = 8
	// MaxProperties bounds the content lines of one top-level component
	// (its nested components included). More make it a Problem.
	MaxProperties = 10000
	// MaxParamBytes bounds one property parameter (name, "=" and value).
	// A longer parameter is dropped from its line before decoding: the
	// library's decoding of parameter values costs one allocation per
	// byte, and no parameter a calendar needs (TZID, CN, VALUE) comes
	// near this.
	MaxParamBytes = 256
	// maxCalendarProps bounds the properties kept from the calendar
	// itself (X-WR-CALNAME and such).
	maxCalendarProps = 1000
)

// block is one top-level component of the feed (a VEVENT, a VTIMEZONE,
// ...) as the pre-pass cut it out: its unfolded lines wrapped in a
// VCALENDAR of their own, for the library to decode on its own, so that
// one broken event does not take the feed with it.
type block struct {
	name    string // upper case: VEVENT, VTIMEZONE, ...
	line    int    // line of its BEGIN in the body
	text    []byte // "BEGIN:VCALENDAR\r\n" ... "END:VCALENDAR\r\n"
	uid     string // its UID line, as the pre-pass saw it
	problem string // what the pre-pass found wrong ("" when nothing)
	props   int
}

// scanResult is what the pre-pass hands the decoder.
type scanResult struct {
	calendar []byte  // the calendar's own properties, wrapped
	blocks   []block // top-level components in feed order
	events   int     // VEVENT blocks
	lines    int     // logical lines seen (for tests: bounded work)
}

var (
	bom        = []byte("\xef\xbb\xbf")
	wrapBegin  = []byte("BEGIN:VCALENDAR\r\n")
	wrapEnd    = []byte("END:VCALENDAR\r\n")
	lineEnding = []byte("\r\n")
)

// Looks reports whether body looks like iCalendar: after an optional
// UTF-8 byte order mark and white space, BEGIN:VCALENDAR (in any case).
func Looks(body []byte) bool {
	b := bytes.TrimPrefix(body, bom)
	b = bytes.TrimLeft(b, " \t\r\n")
	const begin = "BEGIN:VCALENDAR"
	return len(b) >= len(begin) && strings.EqualFold(string(b[:len(begin)]), begin)
}

// notCalendar says what a body that is not iCalendar seems to be.
func notCalendar(body []byte) error {
	b := bytes.TrimSpace(bytes.TrimPrefix(body, bom))
	switch {
	case len(b) == 0:
		return fmt.Errorf("not a calendar: the body is empty")
	case b[0] == '<':
		return fmt.Errorf("not a calendar: the body is HTML or XML, not iCalendar")
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("not a calendar: the body is JSON, not iCalendar")
	}
	return fmt.Errorf("not a calendar: the body does not start with BEGIN:VCALENDAR")
}

// lineReader yields the logical lines of a body: CRLF or LF line
// endings, continuation lines (a leading space or tab) joined.
type lineReader struct {
	body []byte
	pos  int
	no   int // physical line number of the last line read
	buf  []byte
}

// next returns the next logical line, the number of its first physical
// line, and whether it was longer than MaxLineBytes (then line holds its
// first MaxLineBytes bytes). The line is valid until the next call.
func (r *lineReader) next() (line []byte, no int, tooLong, ok bool) {
	if r.pos >= len(r.body) {
		return nil, 0, false, false
	}
	first := r.physical()
	no = r.no
	if len(first) > MaxLineBytes {
		first, tooLong = first[:MaxLineBytes], true
	}
	line = first
	folded := false
	for r.pos < len(r.body) && (r.body[r.pos] == ' ' || r.body[r.pos] == '\t') {
		cont := r.physical()[1:]
		if !folded {
			r.buf = append(r.buf[:0], line...)
			folded = true
		}
		if room := MaxLineBytes - len(r.buf); len(cont) > room {
			cont, tooLong = cont[:max(room, 0)], true
		}
		r.buf = append(r.buf, cont...)
	}
	if folded {
		line = r.buf
	}
	return line, no, tooLong, true
}

// physical returns the next physical line without its line ending.
func (r *lineReader) physical() []byte {
	rest := r.body[r.pos:]
	r.no++
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		r.pos = len(r.body)
		return bytes.TrimSuffix(rest, []byte("\r"))
	}
	r.pos += i + 1
	return bytes.TrimSuffix(rest[:i], []byte("\r"))
}

// lineName returns a content line's name (before the first ";" or ":")
// and whether the line is a property at all: it has a colon and its name
// is an iana-token or x-name (letters, digits, "-").
func lineName(line []byte) (string, bool) {
	i := bytes.IndexAny(line, ";:")
	if i <= 0 || bytes.IndexByte(line[i:], ':') < 0 {
		return "", false
	}
	for _, c := range line[:i] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "", false
		}
	}
	return strings.ToUpper(string(line[:i])), true
}

// lineValue returns what follows the first colon outside quotes.
func lineValue(line []byte) []byte {
	quoted := false
	for i, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case c == ':' && !quoted:
			return line[i+1:]
		}
	}
	return nil
}

// dropLongParams returns line without its parameters longer than
// MaxParamBytes (line itself when it has none).
func dropLongParams(line []byte) []byte {
	var out []byte
	quoted := false
	start := -1 // index of the ';' opening the current parameter
	for i, c := range line {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted || (c != ';' && c != ':') {
			continue
		}
		if start >= 0 { // a parameter ends at i
			long := i-start > MaxParamBytes
			if long && out == nil {
				out = append([]byte(nil), line[:start]...)
			}
			if !long && out != nil {
				out = append(out, line[start:i]...)
			}
		}
		if c == ':' {
			if out == nil {
				return line
			}
			return append(out, line[i:]...)
		}
		start = i
	}
	return line // no value colon: the decoder says what is wrong
}

// scanner is the state of the pre-pass.
type scanner struct {
	maxEvents int
	res       scanResult
	depth     int      // 0 outside VCALENDAR, 1 inside, 2+ inside a component
	stack     []string // names of the open components below VCALENDAR (at most MaxDepth)
	cur       *block
	ended     bool // the last VCALENDAR was closed
	started   bool // a VCALENDAR was opened
	calProps  int
	lastLine  int
}

// scan runs the pre-pass over a whole body (its BOM already removed).
func scan(body []byte, maxEvents int) (*scanResult, error) {
	s := &scanner{maxEvents: maxEvents}
	s.res.calendar = append(s.res.calendar, wrapBegin...)
	r := &lineReader{body: body}
	// held is the last property line, kept back one line: a following
	// line that is no property (a producer's raw line break inside a
	// text value) continues it.
	var held []byte
	heldNo, heldLong, have := 0, false, false
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		return s.line(held, heldNo, heldLong)
	}
	for {
		line, no, tooLong, ok := r.next()
		if !ok {
			break
		}
		s.res.lines++
		if len(bytes.Trim(line, " \t")) == 0 {
			continue
		}
		if _, prop := lineName(line); !prop && !tooLong {
			if have && !isBeginEnd(held) {
				if len(held)+2+len(line) > MaxLineBytes {
					heldLong = true
				} else {
					held = append(append(held, `\n`...), line...)
				}
			}
			continue // a stray line with nothing to continue is dropped
		}
		if err := flush(); err != nil {
			return nil, err
		}
		held = append(held[:0], line...)
		heldNo, heldLong, have = no, tooLong, true
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if !s.started {
		return nil, fmt.Errorf("not a calendar: no BEGIN:VCALENDAR line")
	}
	if !s.ended {
		if s.cur != nil {
			return nil, fmt.Errorf("truncated: the feed ends inside the %s that begins on line %d (no END:VCALENDAR)", s.cur.name, s.cur.line)
		}
		return nil, fmt.Errorf("truncated: the feed ends after line %d without END:VCALENDAR", s.lastLine)
	}
	s.res.calendar = append(s.res.calendar, wrapEnd...)
	return &s.res, nil
}

func isBeginEnd(line []byte) bool {
	name, _ := lineName(line)
	return name == "BEGIN" || name == "END"
}

// line takes one logical line.
func (s *scanner) line(line []byte, no int, tooLong bool) error {
	s.lastLine = no
	name, _ := lineName(line)
	value := ""
	if name == "BEGIN" || name == "END" {
		value = strings.ToUpper(strings.TrimSpace(string(lineValue(line))))
	}
	switch s.depth {
	case 0:
		if name == "BEGIN" && value == "VCALENDAR" {
			s.depth, s.started, s.ended = 1, true, false
		}
		// anything else outside a calendar (junk after END:VCALENDAR) is ignored
		return nil
	case 1:
		switch {
		case name == "END" && value == "VCALENDAR":
			s.depth, s.ended = 0, true
		case name == "END":
			// a stray END: ignored
		case name == "BEGIN":
			if value == "VEVENT" {
				s.res.events++
				if s.res.events > s.maxEvents {
					return fmt.Errorf("too many events: the feed has more than %d", s.maxEvents)
				}
			}
			s.cur = &block{name: value, line: no}
			s.cur.text = append(append([]byte(nil), wrapBegin...), line...)
			s.cur.text = append(s.cur.text, lineEnding...)
			s.stack = append(s.stack[:0], value)
			s.depth = 2
		case tooLong:
		default:
			if s.calProps < maxCalendarProps {
				s.calProps++
				s.res.calendar = append(append(s.res.calendar, dropLongParams(line)...), lineEnding...)
			}
		}
		return nil
	}
	b := s.cur
	switch name {
	case "BEGIN":
		s.depth++
		if s.depth > MaxDepth {
			if b.problem == "" {
				b.problem = fmt.Sprintf("line %d: components nested more than %d deep", no, MaxDepth)
			}
			return nil
		}
		s.stack = append(s.stack, value)
	case "END":
		if value == "VCALENDAR" {
			// the component was never closed: it is cut off, the
			// calendar ends here
			if b.problem == "" {
				b.problem = fmt.Sprintf("line %d: END:VCALENDAR before END:%s", no, b.name)
			}
			s.finish()
			s.depth, s.ended = 0, true
			return nil
		}
		if s.depth <= MaxDepth {
			if open := s.stack[len(s.stack)-1]; open != value && b.problem == "" {
				b.problem = fmt.Sprintf("line %d: END:%s where END:%s was expected", no, value, open)
			}
			s.stack = s.stack[:len(s.stack)-1]
		}
		s.depth--
	default:
		if name == "UID" && b.uid == "" && s.depth == 2 && !tooLong {
			b.uid = strings.TrimSpace(string(lineValue(line)))
		}
	}
	if tooLong {
		if b.problem == "" {
			b.problem = fmt.Sprintf("line %d: %s is longer than %d bytes", no, orProperty(name), MaxLineBytes)
		}
		return nil
	}
	b.props++
	if b.props > MaxProperties {
		if b.problem == "" {
			b.problem = fmt.Sprintf("more than %d properties", MaxProperties)
		}
	} else if b.problem == "" {
		b.text = append(append(b.text, dropLongParams(line)...), lineEnding...)
	}
	if s.depth == 1 {
		s.finish()
	}
	return nil
}

func orProperty(name string) string {
	if name == "" {
		return "a line"
	}
	return name
}

// finish closes the current top-level component.
func (s *scanner) finish() {
	b := s.cur
	s.cur = nil
	if b.problem != "" {
		b.text = nil
	} else {
		b.text = append(b.text, wrapEnd...)
	}
	s.res.blocks = append(s.res.blocks, *b)
}
