package present

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Obj is a JSON object that keeps its keys in insertion order, for the
// shapes whose keys are data (facets, the route index, the OpenAPI
// document, error data, _fields' picks); the records' shapes are typed
// values (typed.go). Keys and values sit in two parallel slices; objects
// that grow past indexFrom keys get a map from key to position as well.
type Obj struct {
	keys []string
	vals []any
	idx  map[string]int
}

// indexFrom is the number of keys from which set keeps a map of positions.
const indexFrom = 32

// NewObj returns an empty ordered object.
func NewObj() *Obj { return &Obj{} }

// NewObjN returns an empty ordered object with room for n keys.
func NewObjN(n int) *Obj { return &Obj{keys: make([]string, 0, n), vals: make([]any, 0, n)} }

// find returns the position of a key, or -1.
func (o *Obj) find(k string) int {
	if o.idx != nil {
		if i, ok := o.idx[k]; ok {
			return i
		}
		return -1
	}
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// Set adds or replaces a key, keeping its first position.
func (o *Obj) Set(k string, v any) *Obj {
	if i := o.find(k); i >= 0 {
		o.put(i, v)
		return o
	}
	o.Add(k, v)
	if o.idx == nil && len(o.keys) > indexFrom {
		o.idx = make(map[string]int, 2*len(o.keys))
		for i, x := range o.keys {
			o.idx[x] = i
		}
	}
	return o
}

// Add appends a key the object does not have yet (renderers, whose keys
// are distinct literals, skip set's look-up this way).
func (o *Obj) Add(k string, v any) *Obj {
	if o.idx != nil {
		o.idx[k] = len(o.keys)
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

// put replaces the value at position i.
func (o *Obj) put(i int, v any) { o.vals[i] = v }

// Get returns a value.
func (o *Obj) Get(k string) (any, bool) {
	if i := o.find(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// At returns a value, nil when the key is missing.
func (o *Obj) At(k string) any {
	v, _ := o.Get(k)
	return v
}

// Del removes a key.
func (o *Obj) Del(k string) {
	i := o.find(k)
	if i < 0 {
		return
	}
	o.keys = slices.Delete(o.keys, i, i+1)
	o.vals = slices.Delete(o.vals, i, i+1)
	if o.idx != nil {
		delete(o.idx, k)
		for j := i; j < len(o.keys); j++ {
			o.idx[o.keys[j]] = j
		}
	}
}

// Filter keeps the keys for which keep is true, in order.
func (o *Obj) Filter(keep func(k string, v any) bool) {
	n := 0
	for i, k := range o.keys {
		if keep(k, o.vals[i]) {
			o.keys[n], o.vals[n] = k, o.vals[i]
			n++
		}
	}
	clear(o.vals[n:])
	o.keys, o.vals = o.keys[:n], o.vals[:n]
	if o.idx != nil {
		o.idx = make(map[string]int, 2*n)
		for i, x := range o.keys {
			o.idx[x] = i
		}
	}
}

// MarshalJSON writes the keys in order.
func (o *Obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON encodes v into buf without HTML escaping. The types responses
// are built from (typed values, ordered objects, lists, strings, numbers,
// booleans) are written directly, so nested objects are not re-parsed and compacted the
// way encoding/json treats nested Marshalers (a profile showed that cost);
// anything else goes through encoding/json.
func WriteJSON(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case *Obj:
		if x == nil {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := WriteJSON(buf, x.vals[i]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case string:
		writeString(buf, x)
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case int:
		var scratch [24]byte
		buf.Write(strconv.AppendInt(scratch[:0], int64(x), 10))
	case int64:
		var scratch [24]byte
		buf.Write(strconv.AppendInt(scratch[:0], x, 10))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return writeJSONFallback(buf, v) // encoding/json's error
		}
		writeFloat(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := WriteJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case []string:
		writeStrings(buf, x)
	case map[string]any:
		// Sorted keys, as encoding/json writes maps; strings through
		// writeString, so "</" is escaped in error data too.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := WriteJSON(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = v
		}
		return WriteJSON(buf, m)
	case jsonValue:
		return x.writeJSON(buf)
	default:
		return writeJSONFallback(buf, v)
	}
	return nil
}

// writeJSONFallback encodes v with encoding/json, without HTML escaping.
func writeJSONFallback(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
	return nil
}

// writeFloat writes a finite float64 exactly as encoding/json does: the
// shortest decimal, in exponent form (with "e-7", not "e-07") below 1e-6
// and from 1e21.
func writeFloat(buf *bytes.Buffer, f float64) {
	var scratch [32]byte
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(scratch[:0], f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	buf.Write(b)
}

// plainByte marks the ASCII bytes a JSON string holds as they are: all
// but control characters, '"', '\\' and '/' (escaped after '<').
var plainByte = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '/'
	}
	return t
}()

// writeString writes a JSON string literal, escaping what JSON requires
// (and U+2028/U+2029, as encoding/json does) and the slash of "</", but
// not other HTML characters.
func writeString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if plainByte[s[i]] {
			i++
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (b != '/' || i == 0 || s[i-1] != '<') {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch b {
			case '/':
				// "</" is written "<\/", as WordPress's JSON does, so that no
				// string (json_ld above all) can close a <script> element
				// that embeds the JSON.
				buf.WriteString(`\/`)
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(b)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[b>>4])
				buf.WriteByte(hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// PickFields keeps the listed fields of o; "a.b" keeps b inside a. Lists
// of objects are filtered item by item, as WordPress does for collections.
func PickFields(o *Obj, fields []string) *Obj {
	want := map[string][]string{}
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		top, rest, _ := strings.Cut(f, ".")
		if rest != "" {
			want[top] = append(want[top], rest)
		} else {
			want[top] = append(want[top], "")
		}
	}
	out := NewObj()
	for i, k := range o.keys {
		subs, ok := want[k]
		if !ok {
			continue
		}
		out.Set(k, pickNested(o.vals[i], subs))
	}
	return out
}

// pickNested applies nested field paths to a value (whole value when one
// of them is empty).
func pickNested(v any, subs []string) any {
	if slices.Contains(subs, "") {
		return v
	}
	switch x := v.(type) {
	case *Obj:
		return PickFields(x, subs)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pickNested(e, subs)
		}
		return out
	}
	return v
}
