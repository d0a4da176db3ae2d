package present

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The responses are typed values (Event, Venue, Organizer, EmbeddedTerm,
// Term, List and the smaller shapes they hold): each writes its fields in
// the order the original plugin sends them, with its own omission rules,
// through an objWriter. Obj (obj.go) remains for the shapes whose keys are
// data (facets, the route index, the OpenAPI document, error data).

// jsonValue is a typed response value: it writes its own JSON, without
// HTML escaping, through WriteJSON's string and number rules.
type jsonValue interface {
	writeJSON(buf *bytes.Buffer) error
}

// marshal encodes a typed value (the MarshalJSON of every typed shape, for
// callers that go through encoding/json).
func marshal(v jsonValue) ([]byte, error) {
	var buf bytes.Buffer
	if err := v.writeJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// objWriter writes one JSON object: open, the fields in order, close.
// Keys are literals that need no escaping.
type objWriter struct {
	buf *bytes.Buffer
	n   int
	err error
}

// openObj starts an object.
func openObj(buf *bytes.Buffer) objWriter {
	buf.WriteByte('{')
	return objWriter{buf: buf}
}

// close ends the object and returns the first error of its values.
func (w *objWriter) close() error {
	w.buf.WriteByte('}')
	return w.err
}

// key writes the separator and a key.
func (w *objWriter) key(k string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.buf.WriteByte('"')
	w.buf.WriteString(k)
	w.buf.WriteString(`":`)
}

// dataKey writes the separator and a key that is data (a path, a
// parameter name), escaped.
func (w *objWriter) dataKey(k string) {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	writeString(w.buf, k)
	w.buf.WriteByte(':')
}

// str writes a string field.
func (w *objWriter) str(k, v string) {
	w.key(k)
	writeString(w.buf, v)
}

// strSet writes a string field unless it is empty.
func (w *objWriter) strSet(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

// strKept writes a string field unless it is empty or "0" (the values the
// original plugin drops from venues and organizers).
func (w *objWriter) strKept(k, v string) {
	if v != "" && v != "0" {
		w.str(k, v)
	}
}

// int writes an integer field.
func (w *objWriter) int(k string, v int64) {
	w.key(k)
	var scratch [24]byte
	w.buf.Write(strconv.AppendInt(scratch[:0], v, 10))
}

// bool writes a boolean field.
func (w *objWriter) bool(k string, v bool) {
	w.key(k)
	if v {
		w.buf.WriteString("true")
	} else {
		w.buf.WriteString("false")
	}
}

// float writes a number field as encoding/json does.
func (w *objWriter) float(k string, v float64) {
	w.key(k)
	if err := WriteJSON(w.buf, v); err != nil && w.err == nil {
		w.err = err
	}
}

// strs writes a list of strings ([] for nil).
func (w *objWriter) strs(k string, v []string) {
	w.key(k)
	writeStrings(w.buf, v)
}

// raw writes a field whose value is already encoded.
func (w *objWriter) raw(k, v string) {
	w.key(k)
	w.buf.WriteString(v)
}

// val writes a field of any value WriteJSON takes.
func (w *objWriter) val(k string, v any) {
	w.key(k)
	if err := WriteJSON(w.buf, v); err != nil && w.err == nil {
		w.err = err
	}
}

// typed writes a field holding a typed value.
func (w *objWriter) typed(k string, v jsonValue) {
	w.key(k)
	if err := v.writeJSON(w.buf); err != nil && w.err == nil {
		w.err = err
	}
}

// writeStrings writes a list of strings ([] for nil).
func writeStrings(buf *bytes.Buffer, v []string) {
	buf.WriteByte('[')
	for i, s := range v {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, s)
	}
	buf.WriteByte(']')
}

// writeList writes a list of typed values.
func writeList[T jsonValue](buf *bytes.Buffer, items []T) error {
	buf.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := it.writeJSON(buf); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// listOf is a list of typed values as one value (a field of an objWriter).
type listOf[T jsonValue] []T

func (l listOf[T]) writeJSON(buf *bytes.Buffer) error { return writeList(buf, []T(l)) }

// frozen is the kept encoding of a typed value that is shared between
// responses (linkcache.go): written as is. A frozen value is never
// changed.
type frozen struct{ enc []byte }

// freezeEnc encodes v for its frozen field (nil when encoding fails: the
// value is then written field by field).
func freezeEnc(v jsonValue) []byte {
	var buf bytes.Buffer
	if v.writeJSON(&buf) != nil {
		return nil
	}
	return buf.Bytes()
}

// decodeOrdered decodes JSON into the values WriteJSON writes back the
// same (objects as *Obj with their keys in order, numbers as
// json.Number), for _fields, which picks fields of any response.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

// decodeValue decodes the next value of dec.
func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		if x == '{' {
			o := NewObj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			_, err := dec.Token()
			return o, err
		}
		l := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return tok, nil
}
