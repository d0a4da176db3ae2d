package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/config/limits"
)

// Bag is the flat parameter bag of one request, as the WordPress REST server
// builds it: JSON body > form body > query string > path
// parameters. Values are string, []any, map[string]any, json.Number, bool or
// nil (JSON null). Every string is copied out of Fiber's request buffers.
type Bag struct {
	Values map[string]any
	// fromBody records which keys came from the body (JSON or form).
	fromBody map[string]bool
	// pathOnly records keys whose value is the route's path parameter,
	// not overridden by the query or the body.
	pathOnly map[string]bool
	// unreadable reports a body the service cannot read, in the media
	// type unreadableType ("" when the request named none): the handler
	// answers 415 rather than ignore what the client sent.
	unreadable     bool
	unreadableType string
	// jsonAsForm reports a JSON text sent as a URL-encoded form (curl's -d
	// without a Content-Type): the handler answers 415 (JSONSentAsForm)
	// rather than miss every parameter the client sent.
	jsonAsForm bool
	// decoded holds the typed values of the parameters declared with a
	// Decode (Validate), by name.
	decoded map[string]any
}

// bodyTypes are the Content-Types a request body may have (any type
// whose name contains "json" is read as JSON).
var bodyTypes = []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"}

// UnsupportedType is the 415 of a body in a Content-Type the service
// cannot read; ct is "" when the request named none.
func UnsupportedType(ct string) *apierr.Error {
	shown := strconv.Quote(ct)
	if ct == "" {
		shown = "(none)"
	}
	return apierr.New(415, "rest_unsupported_media_type",
		"The request body's Content-Type "+shown+" is not supported: send the body as "+strings.Join(bodyTypes[:len(bodyTypes)-1], ", ")+" or "+bodyTypes[len(bodyTypes)-1]+
			" (a body that starts with { is read as JSON without a Content-Type), or send no body and the parameters in the query string.").
		With("content_type", ct).With("accepted", bodyTypes)
}

// NewBag parses the request into a bag; read reads the body (within the
// service's limits) for the methods that have one.
func NewBag(c *fiber.Ctx, read func(*fiber.Ctx) ([]byte, error)) (*Bag, error) {
	b := &Bag{Values: map[string]any{}, fromBody: map[string]bool{}, pathOnly: map[string]bool{}}
	for _, name := range c.Route().Params {
		b.Values[name] = strings.Clone(c.Params(name))
		b.pathOnly[name] = true
	}
	mergeForm(b.Values, string(c.Request().URI().QueryString()), nil, b.pathOnly)
	method := c.Method()
	if method == fiber.MethodGet || method == fiber.MethodHead {
		return b, nil
	}
	if enc := encodingOf(c); enc != "" && c.Request().Header.ContentLength() != 0 {
		// A compressed body is refused unread: the service reads bodies
		// as sent, never inflates one, and would otherwise report the
		// compressed bytes as broken JSON or take them for form fields.
		c.Set(fiber.HeaderAcceptEncoding, "identity")
		return nil, apierr.New(415, "rest_unsupported_content_encoding",
			"The request body's Content-Encoding "+strconv.Quote(enc)+" is not supported: send the body uncompressed (no Content-Encoding, or identity).").
			With("content_encoding", enc)
	}
	body, err := read(c)
	if err != nil {
		return nil, err
	}
	ct := strings.ToLower(string(c.Request().Header.ContentType()))
	switch {
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		if looksLikeJSON(body) {
			b.jsonAsForm = true
			break
		}
		mergeForm(b.Values, string(body), b.fromBody, b.pathOnly)
	case strings.HasPrefix(ct, "multipart/form-data"):
		form, err := readMultipartForm(c, body)
		if err != nil {
			return nil, apierr.New(400, "rest_invalid_body", "Malformed multipart body: multipart/form-data needs its boundary parameter and well-formed parts.")
		}
		vals := url.Values{}
		for k, vs := range form.Value {
			for _, v := range vs {
				vals.Add(k, strings.Clone(v))
			}
		}
		mergeForm(b.Values, vals.Encode(), b.fromBody, b.pathOnly)
	case strings.Contains(ct, "json") || (ct == "" && len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '{'):
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) == 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || dec.More() {
			return nil, apierr.InvalidJSON(jsonProblem(err, trimmed))
		}
		for k, v := range obj {
			b.Values[k] = v
			b.fromBody[k] = true
			delete(b.pathOnly, k)
		}
	default:
		if len(bytes.TrimSpace(body)) > 0 {
			mediaType, _, _ := strings.Cut(ct, ";")
			b.unreadable, b.unreadableType = true, strings.TrimSpace(mediaType)
		}
	}
	return b, nil
}

// encodingOf is the request's Content-Encoding when it names a coding
// other than identity ("" otherwise), cut to 40 bytes.
func encodingOf(c *fiber.Ctx) string {
	enc := strings.TrimSpace(string(c.Request().Header.Peek(fiber.HeaderContentEncoding)))
	if enc == "" || strings.EqualFold(enc, "identity") {
		return ""
	}
	if len(enc) > 40 {
		enc = strings.ToValidUTF8(enc[:40], "") + "…"
	}
	return enc
}

// mergeForm parses a URL-encoded string with PHP's conventions: "a[]=x"
// builds a list, "a[k]=x" a map, and a repeated plain key keeps the last
// value.
func mergeForm(dst map[string]any, raw string, fromBody, pathOnly map[string]bool) {
	if raw == "" {
		return
	}
	lists := map[string][]any{}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		if fromBody != nil {
			base, _, _ := strings.Cut(key, "[")
			fromBody[base] = true
		}
		if pathOnly != nil {
			base, _, _ := strings.Cut(key, "[")
			delete(pathOnly, base)
		}
		if i := strings.IndexByte(key, '['); i > 0 && strings.HasSuffix(key, "]") {
			base, sub := key[:i], key[i+1:len(key)-1]
			if sub == "" {
				lists[base] = append(lists[base], val)
				dst[base] = lists[base]
				continue
			}
			sub = strings.TrimSuffix(strings.ReplaceAll(sub, "][", "."), "]")
			m, ok := dst[base].(map[string]any)
			if !ok {
				m = map[string]any{}
				dst[base] = m
			}
			m[sub] = val
			continue
		}
		dst[key] = val
	}
}

// BagOf is a bag of the members of a JSON object sent inside a body (an
// inline venue or organizer), validated like a body of its own.
func BagOf(members map[string]any) *Bag {
	b := &Bag{Values: make(map[string]any, len(members)), fromBody: map[string]bool{}}
	for k, v := range members {
		b.Values[k] = v
	}
	return b
}

// looksLikeJSON reports whether a body sent as a URL-encoded form is
// really a JSON text: it starts with { or [ (after white space) and either
// is valid JSON or holds no "=" or "&", so that as a form it would be one
// key without a value. A real form never starts with a brace or a bracket
// (a PHP-style key such as "a[]=1" starts with its name).
func looksLikeJSON(body []byte) bool {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return false
	}
	return json.Valid(trimmed) || !bytes.ContainsAny(trimmed, "=&")
}

// JSONAsForm reports a body that is a JSON text sent with the Content-Type
// of a URL-encoded form (what curl -d sends when no Content-Type is
// given): the handler answers 415 (JSONSentAsForm).
func (b *Bag) JSONAsForm() bool { return b.jsonAsForm }

// JSONSentAsForm is the 415 of a JSON body sent as a URL-encoded form: it
// names the header to send, with the same Accept-Post or Accept-Patch as
// UnsupportedBody.
func JSONSentAsForm(c *fiber.Ctx) error {
	setAcceptBody(c)
	e := UnsupportedType("application/x-www-form-urlencoded")
	e.Message = "The request body is JSON but its Content-Type is application/x-www-form-urlencoded (what curl -d sends by default), " +
		"so none of its parameters were read: send it with the header Content-Type: application/json " +
		"(curl -H 'Content-Type: application/json' -d '{...}', or curl --json '{...}')."
	return e
}

// Unreadable reports a body the service cannot read and its media type
// ("" when the request named none): the handler answers 415 (UnsupportedBody)
// rather than ignore what the client sent.
func (b *Bag) Unreadable() (mediaType string, ok bool) { return b.unreadableType, b.unreadable }

// Sent reports whether the client sent the parameter (the path parameter
// of the route alone does not count).
func (b *Bag) Sent(name string) bool { return b.Has(name) && !b.pathOnly[name] }

// Has reports whether the parameter was sent (or defaulted).
func (b *Bag) Has(name string) bool {
	_, ok := b.Values[name]
	return ok
}

// Get returns the raw value of a parameter.
func (b *Bag) Get(name string) (any, bool) {
	v, ok := b.Values[name]
	return v, ok
}

// Decoded returns the typed value Validate decoded for a parameter
// declared with a Decode; ok is false when the parameter was absent (or
// refused).
func (b *Bag) Decoded(name string) (any, bool) {
	v, ok := b.decoded[name]
	return v, ok
}

// Str returns the parameter as a string ("" when absent or not a scalar).
func (b *Bag) Str(name string) string {
	s, _ := AsString(b.Values[name])
	return s
}

// AsString converts a scalar to a string; lists and maps are not strings.
func AsString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "1", true
		}
		return "", true
	case nil:
		return "", true
	}
	return "", false
}

// AsBool applies WordPress's boolean coercion: booleans, the
// strings true/false/1/0 in any case and the numbers 0/1. Anything else,
// the empty string included, is not a boolean.
func AsBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case json.Number:
		switch x.String() {
		case "0":
			return false, true
		case "1":
			return true, true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "1":
			return true, true
		case "false", "0":
			return false, true
		}
	}
	return false, false
}

// Truthy applies TEC's looser truthiness: 1, true, yes, y,
// on, enable, enabled are true; everything else is false.
func Truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "1", "true", "yes", "y", "on", "enable", "enabled":
			return true
		}
	}
	return false
}

// AsInt converts a whole number (JSON number or numeric string) to int64.
func AsInt(v any) (int64, bool) {
	s, ok := numberText(v)
	if !ok || s == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, ok := AsFloat(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// AsFloat converts a JSON number or numeric string to float64.
func AsFloat(v any) (float64, bool) {
	s, ok := numberText(v)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// numberText is the text of a JSON number or of a string (trimmed); false
// for any other value.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return strings.TrimSpace(x), true
	}
	return "", false
}

// AsList turns a CSV string or an array into a list of values: CSV items
// are trimmed and empty ones dropped, as the original plugin splits them.
func AsList(v any) []any {
	switch x := v.(type) {
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				s = strings.TrimSpace(s)
				if s == "" {
					continue
				}
				out = append(out, s)
				continue
			}
			out = append(out, e)
		}
		return out
	case string:
		var out []any
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	case nil:
		return nil
	case map[string]any:
		return []any{x}
	default:
		return []any{x}
	}
}

// AsStrings is AsList with every item as a string ("" for an item that
// is not one); it is never nil.
func AsStrings(v any) []string {
	items := AsList(v)
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, _ := AsString(it)
		out = append(out, s)
	}
	return out
}

// AsIntList converts a list parameter of IDs; ok is false if an item is
// not a positive whole number.
func AsIntList(v any) ([]int64, bool) {
	items := AsList(v)
	out := make([]int64, 0, len(items))
	for _, it := range items {
		n, ok := AsInt(it)
		if !ok || n <= 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// IsEmptyValue reports whether v is an "empty" value in PHP's sense:
// "", "0", 0, false, null, [] or {}.
func IsEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || x == "0"
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case bool:
		return !x
	case []any:
		for _, e := range x {
			if !IsEmptyValue(e) {
				return false
			}
		}
		return true
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// UnsupportedBody answers a body the service cannot read: 415 with the
// accepted types, also in Accept-Patch (RFC 5789 section 2.2) or
// Accept-Post (its counterpart from the W3C Linked Data Platform).
func UnsupportedBody(c *fiber.Ctx, ct string) error {
	setAcceptBody(c)
	return UnsupportedType(ct)
}

// setAcceptBody sets Accept-Post or Accept-Patch (by the request's method)
// to the body types the service reads.
func setAcceptBody(c *fiber.Ctx) {
	switch c.Method() {
	case fiber.MethodPost:
		c.Set("Accept-Post", strings.Join(bodyTypes, ", "))
	case fiber.MethodPatch:
		c.Set("Accept-Patch", strings.Join(bodyTypes, ", "))
	}
}

// jsonProblem says why a JSON body was refused: where the syntax breaks,
// that it is not one object, or that something follows the object.
func jsonProblem(err error, body []byte) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "the body must hold one JSON object and nothing after it."
	case errors.As(err, &syn):
		return fmt.Sprintf("%s at byte %d.", syn.Error(), syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return "the body must be a JSON object ({\"name\": value, ...}), not " + jsonKind(body) + "."
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends before its JSON object does."
	}
	return err.Error() + "."
}

// jsonKind names the JSON value body starts with.
func jsonKind(body []byte) string {
	switch body[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// readMultipartForm parses a multipart/form-data body read by NewBag's read.
func readMultipartForm(c *fiber.Ctx, body []byte) (*multipart.Form, error) {
	boundary := string(c.Request().Header.MultipartFormBoundary())
	if boundary == "" {
		return nil, errors.New("no boundary")
	}
	return multipart.NewReader(bytes.NewReader(body), boundary).ReadForm(limits.MaxBodyBytes)
}
