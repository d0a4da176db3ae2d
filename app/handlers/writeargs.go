package handlers

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// writeArgs declares the parameters of a create (required fields
// enforced) or an update (everything optional) of one kind.
func writeArgs(kind repository.Kind, create bool) []Arg {
	text := func(name, desc string) Arg {
		return Arg{Name: name, Type: tString, Check: emptyOrString, Desc: desc, MaxLen: limits.MaxShortText, Text: plainText}
	}
	contact := func(a Arg, check func(*Request, any) string) Arg {
		a.Check = check
		return a
	}
	// An event's dates are read in the zone the write names, else the
	// site's (eventZone); a venue's or an organizer's in the site's.
	zone := siteZone
	if kind == repository.KindEvent {
		zone = eventZone
	}
	common := []Arg{
		{Name: "author", Type: tInteger, Desc: "ID of an existing user; editors and admins may name another user."},
		{Name: "date", Type: tString, Decode: readDate(zone), Format: "date-time", Desc: "Publication date, in the item's (or the site's) time zone."},
		{Name: "date_utc", Type: tString, Decode: readDate(utcZone), Format: "date-time", Desc: "Publication date in UTC."},
		{Name: "description", Type: tString, Check: emptyOrString, Desc: "Description (HTML allowed); an empty value clears it.", MaxLen: limits.MaxDescription, Text: richText},
		{Name: "excerpt", Type: tString, Check: emptyOrString, Desc: "Excerpt; an empty value clears it.", MaxLen: limits.MaxExcerpt, Text: richText},
		{Name: "slug", Type: tString, Check: emptyOrString, Desc: "Slug in the request language; generated from the name when absent.", MaxLen: limits.MaxSlug},
		{Name: "status", Type: tString, Enum: []string{"publish", "future", "draft", "pending", "private"}, Desc: "Post status; contributors' publish and future become pending."},
		{Name: "image", Type: tAny, Check: checkImageArg, Desc: "Featured image: the ID of a registered image or an http(s) URL; empty removes it.", MaxLen: limits.MaxURL},
	}
	var own []Arg
	switch kind {
	case repository.KindEvent:
		own = []Arg{
			{Name: "title", Type: tString, Required: create, Check: nonEmptyString, Desc: "Event title.", MaxLen: limits.MaxTitle, Text: plainText},
			{Name: "start_date", Type: tString, Required: create, Decode: readDate(zone), Format: "date-time", Desc: "Start, as wall-clock time in the event time zone, a Unix timestamp or a relative phrase."},
			{Name: "end_date", Type: tString, Required: create, Decode: readDate(zone), Format: "date-time", Desc: "End, read like start_date; not before the start."},
			{Name: "timezone", Type: tString, Check: checkZone, Desc: "Event time zone: an IANA name or UTC±N; empty means the site zone.", MaxLen: limits.MaxShortText},
			{Name: "all_day", Type: tBoolean, Desc: "All-day event: start at 00:00:00, end at 23:59:59."},
			{Name: "cost", Type: tAny, Check: checkCost, Desc: "Cost as text, or a list of prices.", MaxLen: limits.MaxShortText, MaxItems: limits.MaxCostItems, Text: plainText},
			{Name: "currency_symbol", Type: tString, Check: checkCurrencySymbol, Desc: "Currency symbol shown with the cost ($, €); empty: the site's (CURRENCY_SYMBOL).", MaxLen: currency.MaxSymbol, Text: plainText},
			{Name: "currency_code", Type: tString, Check: checkCurrencyCode, Desc: "ISO 4217 currency code (USD, EUR); empty: the site's (CURRENCY_CODE)."},
			{Name: "currency_position", Type: tString, Enum: []string{"", currency.Prefix, currency.Suffix}, Desc: "Where the currency symbol stands: prefix ($10) or suffix (10€); empty: the site's (CURRENCY_POSITION)."},
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Event web page (http or https).", MaxLen: limits.MaxURL},
			{Name: "show_map", Type: tBoolean, Desc: "Show a map."},
			{Name: "show_map_link", Type: tBoolean, Desc: "Show a map link."},
			{Name: "hide_from_listings", Type: tBoolean, Desc: "Hide from event lists (still readable by ID)."},
			{Name: "sticky", Type: tBoolean, Desc: "Sticky in calendar views."},
			{Name: "featured", Type: tBoolean, Desc: "Featured event."},
			{Name: "ticketed", Type: tBoolean, Desc: "The event sells tickets."},
			{Name: "categories", Type: tArray, Items: tAny, Desc: "Category IDs, slugs or names (unknown names are created); empty clears.", MaxLen: limits.MaxTermName, MaxItems: limits.MaxTermsPerField, Text: plainText},
			{Name: "tags", Type: tArray, Items: tAny, Desc: "Tag IDs, slugs or names (unknown names are created); empty clears.", MaxLen: limits.MaxTermName, MaxItems: limits.MaxTermsPerField, Text: plainText},
			{Name: "venue", Type: tAny, Desc: "Venue: an ID, a list or CSV of IDs, {id} objects or inline venue data; empty unlinks.", MaxItems: limits.MaxLinksPerEvent},
			{Name: "organizer", Type: tAny, Desc: "Organizers: IDs, a CSV of IDs, {id} objects or inline organizer data; empty unlinks.", MaxItems: limits.MaxLinksPerEvent},
			{Name: "password", Type: tString, Check: emptyOrString, Desc: "Password protecting the event; empty removes it.", MaxLen: limits.MaxPassword},
			recurrenceArg(),
			{Name: "event_status", Type: tString, Check: emptyOrString, Desc: "Whether the event takes place as planned: scheduled (the default), canceled, postponed or moved_online."},
			{Name: "event_status_reason", Type: tString, Check: emptyOrString, Desc: "Why the event is canceled, postponed or moved online (plain text); empty clears it.", MaxLen: limits.MaxShortText, Text: plainText},
		}
	case repository.KindVenue:
		own = []Arg{
			{Name: "venue", Type: tString, Required: create, Check: nonEmptyString, Desc: "Venue name.", MaxLen: limits.MaxTitle, Text: plainText},
			text("address", "Street address."), text("city", "City."), text("country", "Country."),
			text("province", "Province."), text("state", "State."), text("stateprovince", "State or province; derived from state or province when absent."),
			text("zip", "Postal code."), contact(text("phone", "Phone number: any text without line breaks or control characters."), checkPhone),
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Venue web page (http or https).", MaxLen: limits.MaxURL},
			{Name: "show_map", Type: tAny, Desc: "Events at the venue show a map (default true)."},
			{Name: "show_map_link", Type: tAny, Desc: "Events at the venue show a map link (default true)."},
			{Name: "geo_lat", Type: tAny, Check: checkLatLng(90), Desc: "Latitude, -90 to 90; empty clears."},
			{Name: "geo_lng", Type: tAny, Check: checkLatLng(180), Desc: "Longitude, -180 to 180; empty clears."},
		}
	case repository.KindOrganizer:
		own = []Arg{
			{Name: "organizer", Type: tString, Required: create, Check: nonEmptyString, Desc: "Organizer name.", MaxLen: limits.MaxTitle, Text: plainText},
			contact(text("phone", "Phone number: any text without line breaks or control characters."), checkPhone),
			contact(text("email", "E-mail address: one plain address such as name@example.org."), checkEmail),
			{Name: "website", Type: tString, Check: checkWebsite, Format: "uri", Desc: "Organizer web page (http or https).", MaxLen: limits.MaxURL},
		}
	}
	return append(own, common...)
}

// checkImageArg accepts an empty value, a positive ID or an http(s) URL of
// an image (the file itself is never fetched).
func checkImageArg(_ *Request, v any) string {
	if input.IsEmptyValue(v) {
		return ""
	}
	if n, ok := input.AsInt(v); ok && n > 0 {
		return ""
	}
	const msg = "Must be the ID of a registered image, an http or https URL of an image file (.jpg, .png, ...), or empty to remove it."
	s, ok := v.(string)
	if !ok || !validURL(s) {
		return msg
	}
	if _, ok := imageURLExtension(s); !ok {
		return "The image must be an image file: " + strings.TrimPrefix(msg, "Must be ")
	}
	return ""
}

// checkZone accepts "", an IANA zone name or UTC±N.
func checkZone(_ *Request, v any) string {
	s, _ := input.AsString(v)
	if s == "" {
		return ""
	}
	if _, ok := datetext.LoadZone(s); !ok {
		return "Must be an IANA time zone name (Europe/Amsterdam), UTC, or an offset such as UTC+2 or UTC-5:30; empty means the site's zone."
	}
	return ""
}

// checkCost accepts a scalar or a list of scalars.
func checkCost(_ *Request, v any) string {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if _, ok := input.AsString(e); !ok {
				return "Must be text or a list of prices (numbers or text), not nested lists or objects."
			}
		}
		return ""
	}
	if _, ok := input.AsString(v); !ok {
		return "Must be text or a list of prices (numbers or text), not an object."
	}
	return ""
}

// checkCurrencySymbol accepts a currency symbol or "" (currency.CheckSymbol).
func checkCurrencySymbol(_ *Request, v any) string {
	s, ok := input.AsString(v)
	if !ok {
		return "Must be a string (empty for the site's symbol)."
	}
	if msg := currency.CheckSymbol(s); msg != "" {
		return "The currency symbol " + msg + "."
	}
	return ""
}

// checkCurrencyCode accepts a three-letter ISO 4217 code or "".
func checkCurrencyCode(_ *Request, v any) string {
	s, ok := input.AsString(v)
	if !ok {
		return "Must be a string (empty for the site's code)."
	}
	if _, msg := currency.CheckCode(strings.TrimSpace(s)); msg != "" {
		return "The currency code " + msg + "."
	}
	return ""
}

// checkLatLng accepts an empty value or a number within ±limit.
func checkLatLng(limit float64) func(*Request, any) string {
	return func(_ *Request, v any) string {
		if s, ok := v.(string); ok && s == "" {
			return ""
		}
		if v == nil {
			return ""
		}
		f, ok := input.AsFloat(v)
		if !ok || math.Abs(f) > limit {
			return fmt.Sprintf("Must be a number from %v to %v.", -limit, limit)
		}
		return ""
	}
}

// linkForms is the message for an item of a venue or organizer value that
// is not an ID: what the parameter accepts, and that a slug or a name is
// not an ID.
func linkForms(kind repository.Kind, item any) string {
	shown := "an object or a list"
	if sv, ok := input.AsString(item); ok {
		shown = strconv.Quote(sv)
	}
	return fmt.Sprintf(`Must be %[1]s IDs (whole numbers of 1 or more; a list, or comma-separated), {"id": ...} objects or %[1]s data objects, or empty to unlink; %[2]s is not an ID (an ID, not a slug or a name).`, kind, shown)
}
