package meilisim

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeJSON decodes a request body as json.Unmarshal into an any does
// (objects as map[string]any, arrays as []any, numbers as float64), with
// the same result and the same error. Document additions are the bulk of
// what the simulator decodes (a full-size series is hundreds of megabytes
// of long descriptions), and json.Unmarshal goes over each string three
// times (validation, scanning, unquoting): fastJSON goes over it once,
// and any input it does not take as it is (an error, a depth json refuses)
// is decoded by json.Unmarshal.
func decodeJSON(raw []byte) (any, error) {
	d := fastJSON{b: raw}
	if v, ok := d.value(0); ok {
		d.space()
		if d.i == len(d.b) {
			return v, nil
		}
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// fastJSON decodes the JSON that json.Unmarshal would decode to the same
// value, and reports anything else as not ok (the caller then lets
// json.Unmarshal decide). A string with an escape or a byte that is not
// valid UTF-8 is unquoted by json.Unmarshal itself.
type fastJSON struct {
	b []byte
	i int
}

// maxFastDepth bounds the nesting fastJSON decodes (json's own bound is
// 10,000): deeper input goes to json.Unmarshal.
const maxFastDepth = 1000

// space skips white space.
func (d *fastJSON) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i (after white space).
func (d *fastJSON) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.b) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		return d.str()
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

// literal consumes word.
func (d *fastJSON) literal(word string) bool {
	if !bytes.HasPrefix(d.b[d.i:], []byte(word)) {
		return false
	}
	d.i += len(word)
	return true
}

// object decodes an object; d.i is at its '{'.
func (d *fastJSON) object(depth int) (any, bool) {
	d.i++
	m := make(map[string]any)
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v // a repeated key: the last wins, as in json
		switch done, ok := d.after('}'); {
		case !ok:
			return nil, false
		case done:
			return m, true
		}
	}
}

// array decodes an array; d.i is at its '['.
func (d *fastJSON) array(depth int) (any, bool) {
	d.i++
	a := make([]any, 0)
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		switch done, ok := d.after(']'); {
		case !ok:
			return nil, false
		case done:
			return a, true
		}
	}
}

// after reads what follows a member of an object or array, spaces then a
// comma (another member follows) or its closing byte (done); ok false for
// anything else.
func (d *fastJSON) after(closing byte) (done, ok bool) {
	d.space()
	if d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return false, true
	case closing:
		d.i++
		return true, true
	}
	return false, false
}

// str decodes a string; d.i is at its opening quote. One without an
// escape, control character or invalid UTF-8 is its bytes; another is
// unquoted by json.Unmarshal.
func (d *fastJSON) str() (any, bool) {
	start := d.i
	body := d.b[start+1:]
	end := bytes.IndexByte(body, '"')
	if end < 0 {
		return nil, false
	}
	seg := body[:end]
	if bytes.IndexByte(seg, '\\') < 0 {
		if hasControl(seg) {
			return nil, false // json refuses it
		}
		d.i = start + 1 + end + 1
		if utf8.Valid(seg) {
			return string(seg), true
		}
		return d.unquote(start)
	}
	// An escape: find the closing quote past the escaped characters.
	i := start + 1
	for i < len(d.b) && d.b[i] != '"' {
		if d.b[i] == '\\' {
			i++
		}
		i++
	}
	if i >= len(d.b) {
		return nil, false
	}
	d.i = i + 1
	return d.unquote(start)
}

// unquote decodes the string literal from start to d.i with json.
func (d *fastJSON) unquote(start int) (any, bool) {
	var s string
	if err := json.Unmarshal(d.b[start:d.i], &s); err != nil {
		return nil, false
	}
	return s, true
}

// hasControl reports whether b holds a byte below 0x20 (not allowed
// unescaped in a JSON string), eight bytes at a time.
func hasControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		// A byte below 0x20 sets its high bit in x - 0x20…; a byte of
		// 0x80 or more that does so too is ruled out by ^x.
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// number decodes a number of JSON's grammar as a float64 (as json does
// into an any); one out of float64's range is json's to refuse.
func (d *fastJSON) number() (any, bool) {
	start := d.i
	b := d.b
	i := d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	if err != nil {
		return nil, false
	}
	d.i = i
	return f, true
}
