package handlers

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
)

// argType is the JSON-schema type of a declared parameter.
type argType string

// The parameter types.
const (
	tString  argType = "string"
	tInteger argType = "integer"
	tBoolean argType = "boolean"
	tNumber  argType = "number"
	tArray   argType = "array"
	tObject  argType = "object"
	tAny     argType = ""
)

// Arg declares one route parameter. The same declarations drive validation,
// the namespace index and the interface document, so they cannot drift.
type Arg struct {
	Name     string
	Type     argType
	Items    argType // element type of arrays
	Required bool
	Default  any
	Enum     []string
	Desc     string
	// Check validates a present value after the type check; it returns ""
	// when the value is valid, else the message for data.params.
	Check func(r *Request, v any) string
	// Format is the JSON-schema format (date-time, uri, email...), for docs.
	Format string
	// MaxLen bounds a string value (or each string of a list) in
	// characters; MaxItems bounds a list (or CSV) value. Both come from the
	// limits package and appear in the interface document.
	MaxLen   int
	MaxItems int
	// Text says how a written text value is filtered for the caller's role
	// (htmlpolicy; README "HTML policy"): plainText or richText.
	Text textKind
}

// validate runs the declared checks in WordPress's order (reference 2.4):
// required parameters first, then each present parameter's type and
// validator. Defaults are filled in for absent parameters.
func (r *Request) validate(args []Arg) error { return r.validateBag(r.bag, args) }

// validateBag validates any bag (inline venue or organizer data included).
func (r *Request) validateBag(b *input.Bag, args []Arg) error {
	var errs apierr.Params
	for _, a := range args {
		if a.Required && !b.Has(a.Name) {
			errs.Missing(a.Name)
		}
	}
	if err := errs.Err(); err != nil {
		return err
	}
	for _, a := range args {
		v, ok := b.Get(a.Name)
		if !ok {
			if a.Default != nil {
				b.Values[a.Name] = a.Default
			}
			continue
		}
		if msg := typeCheck(a, v); msg != "" {
			errs.InvalidValue(a.Name, msg, v)
			continue
		}
		if msg := sizeCheck(a, v); msg != "" {
			errs.Invalid(a.Name, msg)
			continue
		}
		if len(a.Enum) > 0 {
			s, _ := input.AsString(v)
			if !contains(a.Enum, s) {
				errs.InvalidValue(a.Name, "Must be one of "+strings.Join(a.Enum, ", ")+".", v)
				continue
			}
		}
		if a.Check != nil {
			if msg := a.Check(r, v); msg != "" {
				errs.InvalidValue(a.Name, msg, v)
			}
		}
	}
	if r.depErr != nil {
		// A validator could not ask the store: 503, not a 400.
		return r.depErr
	}
	if err := errs.Err(); err != nil {
		return err
	}
	r.filterText(b, args)
	return nil
}

// sizeCheck applies MaxLen and MaxItems; the message says what was
// received (a count, not the text).
func sizeCheck(a Arg, v any) string {
	if a.MaxItems > 0 {
		if n := len(input.AsList(v)); n > a.MaxItems {
			return fmt.Sprintf("%s must contain at most %d items; received %d.", a.Name, a.MaxItems, n)
		}
	}
	if a.MaxLen > 0 {
		vals := []any{v}
		if l, ok := v.([]any); ok {
			vals = l
		}
		for _, x := range vals {
			if s, ok := x.(string); ok && utf8.RuneCountInString(s) > a.MaxLen {
				return fmt.Sprintf("%s must be at most %d characters long; received %d.", a.Name, a.MaxLen, utf8.RuneCountInString(s))
			}
		}
	}
	return ""
}

// typeCheck checks v against the declared type, as rest_validate_value_from_schema does.
func typeCheck(a Arg, v any) string {
	switch a.Type {
	case tInteger:
		if _, ok := input.AsInt(v); !ok {
			return "Must be an integer (a whole number such as 2)."
		}
	case tBoolean:
		if _, ok := input.AsBool(v); !ok {
			return "Must be a boolean: true, false, 1 or 0."
		}
	case tNumber:
		if _, ok := input.AsFloat(v); !ok {
			return "Must be a number (such as 52.37)."
		}
	case tString:
		if _, ok := input.AsString(v); !ok {
			return "Must be a string, not a list or an object."
		}
	}
	return ""
}

// Reusable validators. Each returns "" for a valid value, else a message
// saying what is accepted ("Must be ..."); validateBag adds the parameter's
// name and the value received.

// nonEmptyString accepts a non-empty string.
func nonEmptyString(_ *Request, v any) string {
	const msg = "Must be a non-empty string."
	s, ok := v.(string)
	if !ok {
		if n, isNum := input.AsString(v); isNum && n != "" {
			return ""
		}
		return msg
	}
	if strings.TrimSpace(s) == "" {
		return msg
	}
	return ""
}

// emptyOrString accepts any scalar, the empty string included.
func emptyOrString(_ *Request, v any) string {
	if _, ok := input.AsString(v); !ok {
		return "Must be a string (empty to clear), not a list or an object."
	}
	return ""
}

// positiveInt accepts a whole number greater than zero.
func positiveInt(_ *Request, v any) string {
	n, ok := input.AsInt(v)
	if !ok || n <= 0 {
		return "Must be a whole number of 1 or more."
	}
	return ""
}

// nonNegativeInt accepts a whole number from zero up.
func nonNegativeInt(_ *Request, v any) string {
	n, ok := input.AsInt(v)
	if !ok || n < 0 {
		return "Must be a whole number of 0 or more."
	}
	return ""
}

// isTime accepts anything parseDate understands.
func isTime(r *Request, v any) string {
	s, ok := input.AsString(v)
	if !ok {
		return "Must be " + input.DateForms + ", not a list or an object."
	}
	if _, err := input.ParseDateInRange(s, r.s.cfg.Location, r.s.now(), r.lang); err != nil {
		return input.DateProblem(s, r.s.cfg.Location, r.s.now(), r.lang)
	}
	return ""
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// isDate reports whether v parses as a date for request r ("is time"
// validator): in r's language, site zone and clock.
func isDate(r *Request, v any) bool {
	s, ok := input.AsString(v)
	if !ok {
		return false
	}
	_, err := input.ParseDateInRange(s, r.s.cfg.Location, r.s.now(), r.lang)
	return err == nil
}
