package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The comparison of two bodies: JSON by its first differing path, any
// other text by its first differing line.

// node is one JSON value with the order of its object keys kept, so that
// two bodies that differ only in key order are told apart from equal ones.
type node struct {
	// kind is '{', '[' or 's' (a scalar).
	kind byte
	// keys are an object's keys in document order; vals its values, or an
	// array's items.
	keys []string
	vals []*node
	// text is a scalar's JSON text ("12", "\"a\"", "true", "null").
	text string
}

// maxDepth bounds the nesting parseJSON follows (the service's bodies are
// a few levels deep; a hostile one is refused, not followed).
const maxDepth = 200

// errDepth is a JSON body nested deeper than maxDepth.
var errDepth = errors.New("JSON nested too deeply")

// parseJSON reads one JSON document with its key order. Trailing data
// after the document is an error.
//
// A valid document is read by a scanner of its own (scanner), giving
// the nodes decodeJSON gives at a fraction of the cost; anything else
// goes through decodeJSON, whose errors the differences quote.
func parseJSON(b []byte) (*node, error) {
	if json.Valid(b) {
		s := scanner{b: b}
		return s.value(0)
	}
	return decodeJSON(b)
}

// decodeJSON is parseJSON through encoding/json's tokens.
func decodeJSON(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON document")
	}
	return n, nil
}

// readNode reads the next value of dec.
func readNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := &node{kind: '['}
			for dec.More() {
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		q, _ := json.Marshal(t)
		return &node{kind: 's', text: string(q)}, nil
	case json.Number:
		return &node{kind: 's', text: t.String()}, nil
	case bool:
		return &node{kind: 's', text: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: 's', text: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// scanner reads a document json.Valid accepted into nodes, as readNode
// does: the same kinds, keys and values, a string's text as
// encoding/json writes the decoded string, a number's text as written,
// and errDepth past maxDepth.
type scanner struct {
	b []byte
	i int
}

// space skips white space.
func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads the value at s.i, depth levels down.
func (s *scanner) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	s.space()
	switch s.b[s.i] {
	case '{':
		s.i++
		n := &node{kind: '{'}
		for {
			s.space()
			switch s.b[s.i] {
			case '}':
				s.i++
				return n, nil
			case ',':
				s.i++
				s.space()
			}
			k := s.stringValue()
			s.space()
			s.i++ // ':'
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		}
	case '[':
		s.i++
		n := &node{kind: '['}
		for {
			s.space()
			switch s.b[s.i] {
			case ']':
				s.i++
				return n, nil
			case ',':
				s.i++
			}
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
	case '"':
		start := s.i
		if text, ok := marshaledText(s.stringLiteral()); ok {
			return &node{kind: 's', text: text}, nil
		}
		var v string
		if err := json.Unmarshal(s.b[start:s.i], &v); err != nil {
			return nil, err
		}
		q, _ := json.Marshal(v)
		return &node{kind: 's', text: string(q)}, nil
	}
	// A number, true, false or null: its text up to the next delimiter.
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return &node{kind: 's', text: string(s.b[start:s.i])}, nil
		}
		s.i++
	}
	return &node{kind: 's', text: string(s.b[start:s.i])}, nil
}

// stringLiteral moves past the string literal at s.i and returns its
// content between the quotes, escapes as written.
func (s *scanner) stringLiteral() []byte {
	s.i++ // '"'
	start := s.i
	for s.b[s.i] != '"' {
		if s.b[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
	return s.b[start : s.i-1]
}

// stringValue reads the string literal at s.i and returns its value.
func (s *scanner) stringValue() string {
	start := s.i
	raw := s.stringLiteral()
	if plainString(raw) {
		return string(raw)
	}
	var v string
	_ = json.Unmarshal(s.b[start:s.i], &v) // valid: json.Valid accepted it
	return v
}

// plainString reports whether a string literal's content raw is its
// value: no escapes, valid UTF-8.
func plainString(raw []byte) bool {
	ascii := true
	for _, c := range raw {
		switch {
		case c == '\\' || c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(raw)
}

// marshaledText returns the text json.Marshal writes for the value of a
// string literal whose content is raw, when plainString tells that value
// without decoding: raw quoted, with <, >, &, U+2028 and U+2029 escaped
// as json.Marshal escapes them.
func marshaledText(raw []byte) (string, bool) {
	if !plainString(raw) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(raw) + 2)
	b.WriteByte('"')
	last := 0
	for i := 0; i < len(raw); i++ {
		var esc string
		switch c := raw[i]; {
		case c == '<':
			esc = `\u003c`
		case c == '>':
			esc = `\u003e`
		case c == '&':
			esc = `\u0026`
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			esc = `\u202` + string("89"[raw[i+2]-0xA8])
		default:
			continue
		}
		b.Write(raw[last:i])
		b.WriteString(esc)
		if raw[i] == 0xE2 {
			i += 2
		}
		last = i + 1
	}
	b.Write(raw[last:])
	b.WriteByte('"')
	return b.String(), true
}

// get returns the value of an object's key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// str returns a scalar string's value, or "".
func (n *node) str() string {
	if n == nil || n.kind != 's' || !strings.HasPrefix(n.text, `"`) {
		return ""
	}
	var s string
	_ = json.Unmarshal([]byte(n.text), &s)
	return s
}

// int returns a scalar number's value, or 0.
func (n *node) int() int64 {
	if n == nil || n.kind != 's' {
		return 0
	}
	v, _ := strconv.ParseInt(n.text, 10, 64)
	return v
}

// maxShown bounds how much of a value a difference quotes.
const maxShown = 80

// summary describes a value in a difference: a scalar as its JSON text
// (shortened), an object or array by its size.
func (n *node) summary() string {
	switch n.kind {
	case '{':
		return fmt.Sprintf("an object of %d keys", len(n.keys))
	case '[':
		return fmt.Sprintf("an array of %d items", len(n.vals))
	}
	return shorten(n.text)
}

// shorten cuts s to about maxShown bytes (on a rune boundary), marking the
// cut.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// plainKey matches the object keys a path writes after a dot.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// childPath is the path of an object's key below path: $.a.b, or
// $["odd key"].
func childPath(path, key string) string {
	if plainKey.MatchString(key) {
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

// diffNodes returns the first difference between a (from) and b
// (against) below path, in a's document order, or "" when they are equal
// (key order included).
func diffNodes(path string, a, b *node) string {
	if a.kind != b.kind || (a.kind == 's' && a.text != b.text) {
		return fmt.Sprintf("%s: %s at from, %s at against", path, a.summary(), b.summary())
	}
	switch a.kind {
	case '[':
		for i := 0; i < len(a.vals) && i < len(b.vals); i++ {
			if d := diffNodes(fmt.Sprintf("%s[%d]", path, i), a.vals[i], b.vals[i]); d != "" {
				return d
			}
		}
		switch {
		case len(a.vals) > len(b.vals):
			i := len(b.vals)
			return fmt.Sprintf("%s[%d]: %s at from, missing at against (%d items at from, %d at against)", path, i, a.vals[i].summary(), len(a.vals), len(b.vals))
		case len(b.vals) > len(a.vals):
			i := len(a.vals)
			return fmt.Sprintf("%s[%d]: missing at from, %s at against (%d items at from, %d at against)", path, i, b.vals[i].summary(), len(a.vals), len(b.vals))
		}
	case '{':
		for i, k := range a.keys {
			bv := b.get(k)
			if bv == nil {
				return fmt.Sprintf("%s: %s at from, missing at against", childPath(path, k), a.vals[i].summary())
			}
			if d := diffNodes(childPath(path, k), a.vals[i], bv); d != "" {
				return d
			}
		}
		for i, k := range b.keys {
			if a.get(k) == nil {
				return fmt.Sprintf("%s: missing at from, %s at against", childPath(path, k), b.vals[i].summary())
			}
		}
		if len(a.keys) != len(b.keys) {
			return fmt.Sprintf("%s: %d keys at from, %d at against (a key given twice)", path, len(a.keys), len(b.keys))
		}
		for i := range a.keys {
			if a.keys[i] != b.keys[i] {
				return fmt.Sprintf("%s: keys in another order (%q at from, %q at against)", path, a.keys[i], b.keys[i])
			}
		}
	}
	return ""
}

// diffBodies returns the first difference between two bodies of one
// Content-Type, or "" when they are byte for byte equal. JSON bodies are
// compared by value, naming the first differing path ($.events[3].title);
// other bodies (iCalendar) by their first differing line. JSON bodies
// equal as values but not as bytes (escaping, spacing) are reported too.
func diffBodies(isJSON bool, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	if isJSON {
		na, errA := parseJSON(a)
		nb, errB := parseJSON(b)
		switch {
		case errA == nil && errB == nil:
			if d := diffNodes("$", na, nb); d != "" {
				return d
			}
			return fmt.Sprintf("the same JSON values written differently (first differing byte at offset %d)", firstDiff(a, b))
		case errA != nil && errB != nil:
			// Neither is JSON: compare them as text.
		case errA != nil:
			return fmt.Sprintf("the body at from is not JSON (%v); the one at against is", errA)
		default:
			return fmt.Sprintf("the body at against is not JSON (%v); the one at from is", errB)
		}
	}
	return diffLines(a, b)
}

// firstDiff is the offset of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// diffLines names the first line where two texts differ (lines end with
// \n or \r\n; the iCalendar bodies end theirs with \r\n).
func diffLines(a, b []byte) string {
	la, lb := splitLines(a), splitLines(b)
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d: %s at from, %s at against", i+1, quoteLine(la[i]), quoteLine(lb[i]))
		}
	}
	switch {
	case len(la) > len(lb):
		return fmt.Sprintf("line %d: %s at from, missing at against (%d lines at from, %d at against)", len(lb)+1, quoteLine(la[len(lb)]), len(la), len(lb))
	case len(lb) > len(la):
		return fmt.Sprintf("line %d: missing at from, %s at against (%d lines at from, %d at against)", len(la)+1, quoteLine(lb[len(la)]), len(la), len(lb))
	}
	return fmt.Sprintf("the same lines with other line endings (first differing byte at offset %d)", firstDiff(a, b))
}

// splitLines cuts a text into lines without their endings.
func splitLines(b []byte) [][]byte {
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// quoteLine quotes a line for a difference, shortened.
func quoteLine(l []byte) string {
	return shorten(strconv.Quote(string(l)))
}
