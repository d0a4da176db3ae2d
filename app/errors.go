package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/repository"
)

// APIError is every error the API answers with. It renders as the envelope
// {"code","message","data":{"status",...}} of the WordPress REST server
// (reference section 2.6). Handlers return it; only errorHandler writes it.
type APIError struct {
	Status  int
	Code    string
	Message string
	// Data holds extra members of "data" besides "status" (params, details...).
	Data map[string]any
}

// Error implements error.
func (e *APIError) Error() string { return e.Code + ": " + e.Message }

// newError builds an APIError.
func newError(status int, code, message string) *APIError {
	return &APIError{Status: status, Code: code, Message: message}
}

// with returns e with one more member in data.
func (e *APIError) with(key string, v any) *APIError {
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	e.Data[key] = v
	return e
}

// Frequently used errors.
var (
	errNoRoute = func() *APIError {
		return newError(404, "rest_no_route", "No route was found matching the URL and request method.")
	}
	errForbidden = func(status int) *APIError {
		return newError(status, "rest_forbidden", "Sorry, you are not allowed to do that.")
	}
	errInvalidJSON = func(why string) *APIError {
		return newError(400, "rest_invalid_json", "Invalid JSON body passed: "+why)
	}
)

// paramErrors collects validation failures of one request, then turns them
// into the WordPress shapes: rest_missing_callback_param (data.params a list)
// or rest_invalid_param (data.params a map name -> message, data.details a
// map name -> {code, message, data}). Every message names the parameter,
// what was received and what is accepted, and the error's message repeats
// them after WordPress's "Invalid parameter(s): a, b".
type paramErrors struct {
	missing []string
	invalid map[string]string
	details map[string]any
}

// missingParam records a required parameter that was not sent.
func (p *paramErrors) missingParam(name string) { p.missing = append(p.missing, name) }

// invalidParam records an invalid parameter with a message that says all
// there is to say (a message starting "Must ..." is completed with the
// parameter's name).
func (p *paramErrors) invalidParam(name, msg string) {
	p.record(name, "rest_invalid_param", paramMessage(name, msg), nil)
}

// invalidValue records an invalid parameter whose value v was received: the
// message and the details say what it was.
func (p *paramErrors) invalidValue(name, msg string, v any) {
	if _, isObject := v.(map[string]any); isObject {
		// An object is not echoed: its own errors name its fields.
		p.invalidParam(name, msg)
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

// invalidParamCode records an invalid parameter with a detail code, as a
// validator returning a WP_Error does.
func (p *paramErrors) invalidParamCode(name, code, msg string) {
	p.record(name, code, msg, nil)
}

// record keeps the first failure of a parameter.
func (p *paramErrors) record(name, code, msg string, data map[string]any) {
	if p.invalid == nil {
		p.invalid, p.details = map[string]string{}, map[string]any{}
	}
	if _, dup := p.invalid[name]; dup {
		return
	}
	if data == nil {
		data = map[string]any{"param": name}
	}
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

// err returns the APIError for the collected failures, or nil.
func (p *paramErrors) err() error {
	if len(p.missing) > 0 {
		return newError(400, "rest_missing_callback_param",
			"Missing parameter(s): "+strings.Join(p.missing, ", ")).with("params", p.missing)
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
		return newError(400, "rest_invalid_param",
			"Invalid parameter(s): "+strings.Join(names, ", ")+". "+strings.Join(msgs, " ")).
			with("params", p.invalid).with("details", p.details)
	}
	return nil
}

// invalidParam returns a rest_invalid_param error for one parameter.
func invalidParam(name, msg string) error {
	var p paramErrors
	p.invalidParam(name, msg)
	return p.err()
}

// invalidValue returns a rest_invalid_param error for one parameter and
// the value received.
func invalidValue(name, msg string, v any) error {
	var p paramErrors
	p.invalidValue(name, msg, v)
	return p.err()
}

// errUnavailable is answered when a dependency (store, search engine) fails.
func errUnavailable(what string) *APIError {
	name := map[string]string{"store": "data store", "search": "search engine"}[what]
	return newError(503, what+"_unavailable", "The "+name+" is not available; try again later.")
}

// errorHandler writes every error body. Store failures become 503 so that
// clients retry; Fiber's own errors keep their status.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	if requestID(c) == "" && s.metrics != nil {
		// An HTTP-layer error (413, 431, 408, a malformed request) that
		// fasthttp reports before the middleware chain: observe it like
		// every request, which calls back here to write the envelope.
		s.observe(c, s.metrics, func() error { return err })
		return nil
	}
	var apiErr *APIError
	var fe *fiber.Error
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &fe):
		switch fe.Code {
		case 404, 405:
			apiErr = errNoRoute()
		case 413:
			apiErr = errBodyTooLarge()
		case 408:
			apiErr = newError(408, "rest_request_timeout", "The request was not received in time.")
		case 431:
			apiErr = newError(431, "rest_request_headers_too_large", "The request headers are too large.")
		case 400:
			// fasthttp's parse errors quote the raw request: not echoed.
			apiErr = newError(400, "rest_bad_request", "The request could not be read.")
		default:
			apiErr = newError(fe.Code, "rest_error", fe.Message)
		}
	case errors.Is(err, repository.ErrNotFound):
		apiErr = newError(404, "rest_not_found", "Not found.")
	default:
		s.log.Error("request failed", "method", c.Method(), "path", c.Path(), "request_id", requestID(c), "err", err)
		apiErr = errUnavailable("store")
	}
	data := map[string]any{"status": apiErr.Status}
	for k, v := range apiErr.Data {
		data[k] = v
	}
	if apiErr.Status >= 500 {
		s.log.Warn("error response", slog.Int("status", apiErr.Status), slog.String("code", apiErr.Code), slog.String("path", c.Path()), slog.String("request_id", requestID(c)))
	}
	return sendJSON(c, apiErr.Status, newObj().set("code", apiErr.Code).set("message", apiErr.Message).set("data", data))
}

// notFound returns the 404 of a missing resource, e.g. rest-event-not-found.
func notFound(res string, id any) *APIError {
	title := strings.ToUpper(res[:1]) + res[1:]
	return newError(404, "rest-"+res+"-not-found", fmt.Sprintf("%s with ID %v does not exist.", title, id))
}
