// Package apierr is the error envelope of the API: every error a handler
// returns is an *Error, written by the root app's error handler as
// {"code","message","data":{"status",...}}, as WordPress writes errors. It sits
// below every other layer of app.
package apierr

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is every error the API answers with. It renders as the envelope
// {"code","message","data":{"status",...}} of the WordPress REST server.
// Handlers return it; only the root app's error handler writes it.
type Error struct {
	Status  int
	Code    string
	Message string
	// Data holds extra members of "data" besides "status" (params, details...).
	Data map[string]any
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// New builds an Error. Its message is bounded whatever a caller sent
// (BoundMessage), so that no answer grows with a request.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: boundMessage(message, maxErrorRunes)}
}

// Bounds of error messages: a word (a run without white space, such as a
// quoted value the caller sent) longer than maxWordRunes is cut to
// maxShownRunes and "…"; a parameter's message to maxParamRunes, a whole
// message to maxErrorRunes.
const (
	maxWordRunes  = 100
	maxParamRunes = 1000
	maxErrorRunes = 8000
)

// BoundMessage is msg as an error shows it: every word longer than 100
// runes cut to its first 80 and "…" (keeping its closing quote and
// punctuation), and the whole cut to 1,000 runes. Messages that quote
// what a caller sent (a slug, a key, a value) stay short however long
// it was.
func BoundMessage(msg string) string { return boundMessage(msg, maxParamRunes) }

func boundMessage(msg string, limit int) string {
	if utf8.RuneCountInString(msg) <= maxWordRunes {
		return msg
	}
	var b strings.Builder
	rest := msg
	for rest != "" {
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i < 0 {
			i = len(rest)
		}
		word := rest[:i]
		if utf8.RuneCountInString(word) > maxWordRunes {
			end := strings.TrimRightFunc(word, func(r rune) bool { return strings.ContainsRune("\"'.,;:)]}", r) })
			tail := word[len(end):]
			if utf8.RuneCountInString(tail) > 3 {
				tail = ""
			}
			word = string([]rune(word)[:maxShownRunes]) + "…" + tail
		}
		b.WriteString(word)
		rest = rest[i:]
		j := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsSpace(r) })
		if j < 0 {
			j = len(rest)
		}
		b.WriteString(rest[:j])
		rest = rest[j:]
	}
	out := b.String()
	if utf8.RuneCountInString(out) > limit {
		out = string([]rune(out)[:limit]) + "…"
	}
	return out
}

// With returns e with one more member in data.
func (e *Error) With(key string, v any) *Error {
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data[key] = v
	return e
}

// NoRoute is the 404 of a path or method the API does not serve.
func NoRoute() *Error {
	return New(404, "rest_no_route", "No route was found matching the URL and request method.")
}

// Forbidden is rest_forbidden with the given status (401 or 403).
func Forbidden(status int) *Error {
	return New(status, "rest_forbidden", "Sorry, you are not allowed to do that.")
}

// InvalidJSON is the 400 of a body that is not the JSON it claims to be.
func InvalidJSON(why string) *Error {
	return New(400, "rest_invalid_json", "Invalid JSON body passed: "+why)
}

// Params collects validation failures of one request, then turns them
// into the WordPress shapes: rest_missing_callback_param (data.params a list)
// or rest_invalid_param (data.params a map name -> message, data.details a
// map name -> {code, message, data}). Every message names the parameter,
// what was received and what is accepted, and the error's message repeats
// them after WordPress's "Invalid parameter(s): a, b".
type Params struct {
	missing []string
	invalid map[string]string
	details map[string]any
}

// Missing records a required parameter that was not sent.
func (p *Params) Missing(name string) { p.missing = append(p.missing, name) }

// Invalid records an invalid parameter with a message that says all
// there is to say (a message starting "Must ..." is completed with the
// parameter's name).
func (p *Params) Invalid(name, msg string) {
	p.record(name, "rest_invalid_param", paramMessage(name, msg), nil)
}

// InvalidValue records an invalid parameter whose value v was received: the
// message and the details say what it was.
func (p *Params) InvalidValue(name, msg string, v any) {
	if _, isObject := v.(map[string]any); isObject {
		// An object is not echoed: its own errors name its fields.
		p.Invalid(name, msg)
		return
	}
	shown := receivedValue(v)
	var text strings.Builder
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(shown)
	msg = paramMessage(name, msg)
	// A message that already quotes the string received does not repeat it.
	if quoted := strings.TrimSpace(text.String()); !strings.HasPrefix(quoted, `"`) || !strings.Contains(msg, quoted) {
		msg = strings.TrimSuffix(msg, ".") + "; received " + quoted + "."
	}
	p.record(name, "rest_invalid_param", msg, map[string]any{"param": name, "received": shown})
}

// InvalidCode records an invalid parameter with a detail code, as a
// validator returning a WP_Error does.
func (p *Params) InvalidCode(name, code, msg string) {
	p.record(name, code, msg, nil)
}

// record keeps the first failure of a parameter.
func (p *Params) record(name, code, msg string, data map[string]any) {
	if p.invalid == nil {
		p.invalid, p.details = map[string]string{}, map[string]any{}
	}
	if _, dup := p.invalid[name]; dup {
		return
	}
	if data == nil {
		data = map[string]any{"param": name}
	}
	msg = BoundMessage(msg)
	p.invalid[name] = msg
	p.details[name] = map[string]any{"code": code, "message": msg, "data": data}
}

// paramMessage completes a validator's "Must be ..." with the name.
func paramMessage(name, msg string) string {
	if rest, ok := strings.CutPrefix(msg, "Must "); ok {
		return name + " must " + rest
	}
	return msg
}

// maxShownRunes and maxShownItems bound the received value an error echoes.
const (
	maxShownRunes = 80
	maxShownItems = 10
)

// receivedValue is v as an error shows it: strings cut to maxShownRunes,
// lists to maxShownItems, objects as "{…}".
func receivedValue(v any) any {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) > maxShownRunes {
			return string([]rune(x)[:maxShownRunes]) + "…"
		}
		return x
	case []any:
		out := make([]any, 0, min(len(x), maxShownItems+1))
		for i, e := range x {
			if i == maxShownItems {
				out = append(out, "…")
				break
			}
			out = append(out, receivedValue(e))
		}
		return out
	case map[string]any:
		return "{…}"
	}
	return v
}

// Err returns the Error for the collected failures, or nil.
func (p *Params) Err() error {
	if len(p.missing) > 0 {
		return New(400, "rest_missing_callback_param",
			"Missing parameter(s): "+strings.Join(p.missing, ", ")).With("params", p.missing)
	}
	if len(p.invalid) > 0 {
		names := make([]string, 0, len(p.invalid))
		for n := range p.invalid {
			names = append(names, n)
		}
		sort.Strings(names)
		msgs := make([]string, len(names))
		for i, n := range names {
			msgs[i] = p.invalid[n]
		}
		return New(400, "rest_invalid_param",
			"Invalid parameter(s): "+strings.Join(names, ", ")+". "+strings.Join(msgs, " ")).
			With("params", p.invalid).With("details", p.details)
	}
	return nil
}

// InvalidParam returns a rest_invalid_param error for one parameter.
func InvalidParam(name, msg string) error {
	var p Params
	p.Invalid(name, msg)
	return p.Err()
}

// InvalidValue returns a rest_invalid_param error for one parameter and
// the value received.
func InvalidValue(name, msg string, v any) error {
	var p Params
	p.InvalidValue(name, msg, v)
	return p.Err()
}

// Unavailable is answered when a dependency (store, search engine) fails.
func Unavailable(what string) *Error {
	name := map[string]string{"store": "data store", "search": "search engine"}[what]
	return New(503, what+"_unavailable", "The "+name+" is not available; try again later.")
}

// NotFound returns the 404 of a missing resource, e.g. rest-event-not-found.
func NotFound(res string, id any) *Error {
	title := strings.ToUpper(res[:1]) + res[1:]
	return New(404, "rest-"+res+"-not-found", fmt.Sprintf("%s with ID %v does not exist.", title, id))
}
