package input

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/apierr"
)

// Type is the JSON-schema type of a declared parameter.
type Type string

// The parameter types.
const (
	String  Type = "string"
	Integer Type = "integer"
	Boolean Type = "boolean"
	Number  Type = "number"
	Array   Type = "array"
	Object  Type = "object"
	Any     Type = ""
)

// TextKind says how a written text value is filtered for the caller's role
// (htmlpolicy; docs/editors.md, "HTML policy").
type TextKind int

const (
	// NotText values are not filtered (IDs, dates, URLs, slugs, passwords).
	NotText TextKind = iota
	// PlainText values keep no markup: tags are stripped.
	PlainText
	// RichText values keep what wp_kses_post allows an author.
	RichText
)

// Arg declares one route parameter. The same declarations drive validation,
// the namespace index and the interface document, so they cannot drift. C
// is what a Check is given besides the value (the handlers' request).
type Arg[C any] struct {
	Name     string
	Type     Type
	Items    Type // element type of arrays
	Required bool
	Default  any
	Enum     []string
	Desc     string
	// Check validates a present value after the type check; it returns ""
	// when the value is valid, else the message for data.params.
	Check func(c C, v any) string
	// Decode reads a present value into its typed form (a date read once,
	// in the zone the other parameters of b name) where Check would only
	// have parsed it to validate: the typed value is kept in the bag
	// (Bag.Decoded) for the handler, and msg, when not "", is the message
	// for data.params, as Check's. A parameter has Check or Decode.
	Decode func(c C, b *Bag, v any) (value any, msg string)
	// Format is the JSON-schema format (date-time, uri, email...), for docs.
	Format string
	// MaxLen bounds a string value (or each string of a list) in
	// characters; MaxItems bounds a list (or CSV) value. Both come from the
	// limits package and appear in the interface document.
	MaxLen   int
	MaxItems int
	// Text says how a written text value is filtered for the caller's role.
	Text TextKind
}

// Validate runs the declared checks in WordPress's order:
// required parameters first, then each present parameter's type, size,
// enumeration and Check or Decode (given c). Defaults are filled in for
// absent parameters, decoded values kept (Bag.Decoded). The error is a
// 400 naming every problem, or nil.
func Validate[C any](c C, b *Bag, args []Arg[C]) error {
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
		if msg := typeCheck(a.Type, v); msg != "" {
			errs.InvalidValue(a.Name, msg, v)
			continue
		}
		if msg := sizeCheck(a.Name, a.MaxLen, a.MaxItems, v); msg != "" {
			errs.Invalid(a.Name, msg)
			continue
		}
		if len(a.Enum) > 0 {
			s, _ := AsString(v)
			if !slices.Contains(a.Enum, s) {
				errs.InvalidValue(a.Name, "Must be one of "+strings.Join(a.Enum, ", ")+".", v)
				continue
			}
		}
		if a.Check != nil {
			if msg := a.Check(c, v); msg != "" {
				errs.InvalidValue(a.Name, msg, v)
			}
		}
		if a.Decode != nil {
			x, msg := a.Decode(c, b, v)
			if msg != "" {
				errs.InvalidValue(a.Name, msg, v)
				continue
			}
			if b.decoded == nil {
				b.decoded = map[string]any{}
			}
			b.decoded[a.Name] = x
		}
	}
	return errs.Err()
}

// sizeCheck applies MaxLen and MaxItems; the message says what was
// received (a count, not the text).
func sizeCheck(name string, maxLen, maxItems int, v any) string {
	if maxItems > 0 {
		if n := len(AsList(v)); n > maxItems {
			return fmt.Sprintf("%s must contain at most %d items; received %d.", name, maxItems, n)
		}
	}
	if maxLen > 0 {
		vals := []any{v}
		if l, ok := v.([]any); ok {
			vals = l
		}
		for _, x := range vals {
			if s, ok := x.(string); ok && utf8.RuneCountInString(s) > maxLen {
				return fmt.Sprintf("%s must be at most %d characters long; received %d.", name, maxLen, utf8.RuneCountInString(s))
			}
		}
	}
	return ""
}

// typeCheck checks v against the declared type, as rest_validate_value_from_schema does.
func typeCheck(t Type, v any) string {
	switch t {
	case Integer:
		if _, ok := AsInt(v); !ok {
			return "Must be an integer (a whole number such as 2)."
		}
	case Boolean:
		if _, ok := AsBool(v); !ok {
			return "Must be a boolean: true, false, 1 or 0."
		}
	case Number:
		if _, ok := AsFloat(v); !ok {
			return "Must be a number (such as 52.37)."
		}
	case String:
		if _, ok := AsString(v); !ok {
			return "Must be a string, not a list or an object."
		}
	}
	return ""
}
