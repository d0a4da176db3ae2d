package handlers

import (
	"strings"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/input/values"
)

// Arg declares one route parameter (input.Arg): its checks are given the
// request.
type Arg = input.Arg[*Request]

// The parameter types and text kinds, as the declarations name them.
const (
	tString   = input.String
	tInteger  = input.Integer
	tBoolean  = input.Boolean
	tNumber   = input.Number
	tArray    = input.Array
	tObject   = input.Object
	tAny      = input.Any
	notText   = input.NotText
	plainText = input.PlainText
	richText  = input.RichText
)

// validate runs the declared checks in WordPress's order:
// required parameters first, then each present parameter's type and
// validator. Defaults are filled in for absent parameters.
func (r *Request) validate(args []Arg) error { return r.validateBag(r.bag, args) }

// validateBag validates any bag (inline venue or organizer data included):
// the declared checks (input.Validate), then a store failure a check met
// (503, not a 400), then the HTML policy on the text values.
func (r *Request) validateBag(b *input.Bag, args []Arg) error {
	err := input.Validate(r, b, args)
	if r.depErr != nil {
		// A validator could not ask the store: 503, not a 400.
		return r.depErr
	}
	if err != nil {
		return err
	}
	r.filterText(b, args)
	return nil
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

// readDate is the Decode of a date parameter: the text read once
// (values.ReadDate) in the zone zone names for the bag, into the
// datetext.Value the handler hands on (the service settles the zone of an
// update and takes the instant from the value without reading the text
// again). A value that is not a date is refused with what the API accepts.
func readDate(zone func(r *Request, b *input.Bag) *time.Location) func(r *Request, b *input.Bag, v any) (any, string) {
	return func(r *Request, b *input.Bag, v any) (any, string) {
		s, ok := input.AsString(v)
		if !ok {
			return nil, "Must be " + values.DateForms + ", not a list or an object."
		}
		loc, now := zone(r, b), r.s.now()
		d, err := values.ReadDate(s, loc, now, r.lang)
		if err != nil {
			return nil, values.DateProblem(s, loc, now, r.lang)
		}
		return d, ""
	}
}

// siteZone reads a date in the site's zone (list filters, venues and
// organizers).
func siteZone(r *Request, _ *input.Bag) *time.Location { return r.s.cfg.Location }

// utcZone reads a date in UTC (date_utc).
func utcZone(*Request, *input.Bag) *time.Location { return time.UTC }

// eventZone reads an event's date in the zone the write names (timezone,
// when it is a zone), else the site's: the zone of a new event. An update
// that names none keeps the event's zone, which the service knows; a
// phrase is read again there when it differs (datetext.Value.In).
func eventZone(r *Request, b *input.Bag) *time.Location {
	if name := strings.TrimSpace(b.Str("timezone")); name != "" {
		if loc, ok := datetext.LoadZone(name); ok {
			return loc
		}
	}
	return r.s.cfg.Location
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
