package app

import (
	"bytes"
	"encoding/json"
)

// obj is a JSON object that keeps its keys in insertion order, so responses
// list fields in the order the reference documents (section 9).
type obj struct {
	keys []string
	vals map[string]any
}

// newObj returns an empty ordered object.
func newObj() *obj { return &obj{vals: map[string]any{}} }

// set adds or replaces a key, keeping its first position.
func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

// get returns a value.
func (o *obj) get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// del removes a key.
func (o *obj) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// MarshalJSON writes the keys in order.
func (o *obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := enc.Encode(o.vals[k]); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode appends a newline
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
