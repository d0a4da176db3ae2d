package handlers

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/repository"
)

// The write routes of events, venues and organizers decode their
// (validated) parameter bag once, here, into the calendar's typed
// commands; the calendar service reads nothing else. Dates were read
// once by the route's declared parameters (readDate, into
// datetext.Value): they are taken from the bag as read, never parsed
// again. The request is used only to validate inline venue and organizer
// data (validateBag).

// optString reads a text parameter (input.AsString).
func optString(b *input.Bag, name string) calendar.Opt[string] {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Opt[string]{}
	}
	s, _ := input.AsString(v)
	return calendar.Opt[string]{Set: true, Value: s, Raw: v}
}

// optDate reads a date parameter Validate decoded (readDate).
func optDate(b *input.Bag, name string) calendar.Opt[datetext.Value] {
	d, ok := b.Decoded(name)
	if !ok {
		return calendar.Opt[datetext.Value]{}
	}
	v, _ := b.Get(name)
	x, _ := d.(datetext.Value)
	return calendar.Opt[datetext.Value]{Set: true, Value: x, Raw: v}
}

// optBool reads a boolean parameter (input.AsBool).
func optBool(b *input.Bag, name string) calendar.Opt[bool] {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Opt[bool]{}
	}
	x, _ := input.AsBool(v)
	return calendar.Opt[bool]{Set: true, Value: x, Raw: v}
}

// optTruthy reads a flag the way the original reads venue flags
// (input.Truthy).
func optTruthy(b *input.Bag, name string) calendar.Opt[bool] {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Opt[bool]{}
	}
	return calendar.Opt[bool]{Set: true, Value: input.Truthy(v), Raw: v}
}

// optFloat reads a coordinate: a number, or nil for anything else (clears).
func optFloat(b *input.Bag, name string) calendar.Opt[*float64] {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Opt[*float64]{}
	}
	out := calendar.Opt[*float64]{Set: true, Raw: v}
	if f, ok := input.AsFloat(v); ok {
		out.Value = &f
	}
	return out
}

// optCost reads a cost: one string, or a list.
func optCost(b *input.Bag) calendar.Opt[[]string] {
	v, ok := b.Get("cost")
	if !ok {
		return calendar.Opt[[]string]{}
	}
	return calendar.Opt[[]string]{Set: true, Value: costValues(v), Raw: v}
}

// decodePost reads the fields every kind takes; nameField holds the
// title ("title", "venue", "organizer").
func decodePost(b *input.Bag, nameField string) calendar.RecordInput {
	in := calendar.RecordInput{
		Name: optString(b, nameField), Description: optString(b, "description"), Excerpt: optString(b, "excerpt"),
		Status: optString(b, "status"), Date: optDate(b, "date"), DateUTC: optDate(b, "date_utc"),
	}
	if b.Sent("slug") {
		in.Slug = optString(b, "slug")
	}
	if v, ok := b.Get("author"); ok {
		id, _ := input.AsInt(v)
		in.Author = calendar.Opt[int64]{Set: true, Value: id, Raw: v}
	}
	if v, ok := b.Get("image"); ok {
		in.Image = calendar.Opt[calendar.ImageRef]{Set: true, Raw: v}
		switch {
		case input.IsEmptyValue(v):
		case isIntLike(v):
			in.Image.Value.ID, _ = input.AsInt(v)
		default:
			in.Image.Value.URL, _ = v.(string)
		}
	}
	return in
}

// decodeEvent reads an event write (the bag passed the route's checks).
func decodeEvent(r *Request, b *input.Bag) (*calendar.EventInput, error) {
	in := &calendar.EventInput{RecordInput: decodePost(b, "title"),
		Timezone: optString(b, "timezone"), StartDate: optDate(b, "start_date"), EndDate: optDate(b, "end_date"),
		AllDay: optBool(b, "all_day"), ShowMap: optBool(b, "show_map"), ShowMapLink: optBool(b, "show_map_link"),
		HideFromListings: optBool(b, "hide_from_listings"), Sticky: optBool(b, "sticky"),
		Featured: optBool(b, "featured"), Ticketed: optBool(b, "ticketed"),
		Cost: optCost(b), Website: optString(b, "website"), Password: optString(b, "password"),
		Categories: optTerms(b, "categories"), Tags: optTerms(b, "tags"),
		EventStatus: optString(b, "event_status"), EventStatusReason: optString(b, "event_status_reason"),
		CurrencySymbol: optString(b, "currency_symbol"), CurrencyCode: optString(b, "currency_code"),
		CurrencyPosition: optString(b, "currency_position"),
	}
	// The checks passed: the code is three letters, kept upper-cased.
	in.CurrencyCode.Value, _ = currency.CheckCode(strings.TrimSpace(in.CurrencyCode.Value))
	var err error
	if in.Venues, err = decodeLinks(r, b, "venue", repository.KindVenue); err != nil {
		return nil, err
	}
	if in.Organizers, err = decodeLinks(r, b, "organizer", repository.KindOrganizer); err != nil {
		return nil, err
	}
	if d, ok := b.Decoded("recurrence"); ok {
		// Read once by the route's declared parameter (decodeRecurrenceArg).
		rec, _ := d.(*repository.Recurrence)
		v, _ := b.Get("recurrence")
		in.Recurrence = calendar.Opt[*repository.Recurrence]{Set: true, Value: rec, Raw: v}
	}
	return in, nil
}

// decodeVenue reads a venue write or inline venue data.
func decodeVenue(b *input.Bag) *calendar.VenueInput {
	return &calendar.VenueInput{RecordInput: decodePost(b, "venue"),
		Address: optString(b, "address"), City: optString(b, "city"), Country: optString(b, "country"),
		Province: optString(b, "province"), State: optString(b, "state"), Zip: optString(b, "zip"),
		Phone: optString(b, "phone"), Website: optString(b, "website"), StateProvince: optString(b, "stateprovince"),
		ShowMap: optTruthy(b, "show_map"), ShowMapLink: optTruthy(b, "show_map_link"),
		GeoLat: optFloat(b, "geo_lat"), GeoLng: optFloat(b, "geo_lng"),
	}
}

// decodeOrganizer reads an organizer write or inline organizer data.
func decodeOrganizer(b *input.Bag) *calendar.OrganizerInput {
	return &calendar.OrganizerInput{RecordInput: decodePost(b, "organizer"),
		Phone: optString(b, "phone"), Email: optString(b, "email"), Website: optString(b, "website")}
}

// decodeOccurrence reads a change of one occurrence.
func decodeOccurrence(r *Request, b *input.Bag) (*calendar.OccurrenceInput, error) {
	in := &calendar.OccurrenceInput{Title: optString(b, "title"), Description: optString(b, "description"),
		Excerpt: optString(b, "excerpt"), StartDate: optDate(b, "start_date"), EndDate: optDate(b, "end_date"),
		Status: optString(b, "status"), Cost: optCost(b), Website: optString(b, "website"), Featured: optBool(b, "featured"),
		EventStatus: optString(b, "event_status"), EventStatusReason: optString(b, "event_status_reason")}
	var err error
	if in.Venues, err = decodeLinks(r, b, "venue", repository.KindVenue); err != nil {
		return nil, err
	}
	if in.Organizers, err = decodeLinks(r, b, "organizer", repository.KindOrganizer); err != nil {
		return nil, err
	}
	return in, nil
}

// optTerms reads a categories or tags value ("" or [] → none): whole
// numbers are IDs, anything else a slug or a name.
func optTerms(b *input.Bag, name string) calendar.Opt[[]calendar.LabelItem] {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Opt[[]calendar.LabelItem]{}
	}
	items := []calendar.LabelItem{}
	for _, it := range termItems(v) {
		if n, ok := input.AsInt(it); ok {
			items = append(items, calendar.LabelItem{ID: n, IsID: true})
			continue
		}
		s, _ := input.AsString(it)
		items = append(items, calendar.LabelItem{Name: s})
	}
	return calendar.Opt[[]calendar.LabelItem]{Set: true, Value: items, Raw: v}
}

// decodeLinks reads a venue or organizer value (as the original plugin
// does, plus several venues and CSV organizer IDs): empty values unlink;
// scalars are IDs or CSV of IDs; objects are {id} or inline data; lists
// mix them. Inline data must pass the kind's create validation (and its
// text the HTML policy). What is wrong with the value's form is
// Links.Problem, which the calendar refuses with its own look-ups
// (existing IDs the caller may link).
func decodeLinks(r *Request, b *input.Bag, name string, kind repository.Kind) (calendar.Links, error) {
	v, ok := b.Get(name)
	if !ok {
		return calendar.Links{}, nil
	}
	out := calendar.Links{Set: true, Raw: v}
	if input.IsEmptyValue(v) {
		return out, nil
	}
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case map[string]any:
		items = []any{x}
	case string:
		items = input.AsList(x)
	default:
		items = []any{x}
	}
	for _, it := range items {
		if input.IsEmptyValue(it) {
			continue
		}
		switch x := it.(type) {
		case map[string]any:
			if idv, ok := x["id"]; ok && !input.IsEmptyValue(idv) {
				id, ok := input.AsInt(idv)
				if !ok || id <= 0 {
					return calendar.Links{Set: true, Raw: v, Problem: linkForms(kind, idv)}, nil
				}
				out.Items = append(out.Items, calendar.Link{ID: id})
				continue
			}
			sub := input.BagOf(x)
			if err := r.validateBag(sub, writeArgs(kind, true)); err != nil {
				var ae *apierr.Error
				if errors.As(err, &ae) {
					return calendar.Links{Set: true, Raw: v, Problem: "Invalid " + string(kind) + " data (an object without id creates a " + string(kind) + "): " + ae.Message}, nil
				}
				return out, err
			}
			if kind == repository.KindVenue {
				out.Items = append(out.Items, calendar.Link{Venue: decodeVenue(sub)})
			} else {
				out.Items = append(out.Items, calendar.Link{Organizer: decodeOrganizer(sub)})
			}
		default:
			id, ok := input.AsInt(it)
			if !ok || id <= 0 {
				return calendar.Links{Set: true, Raw: v, Problem: linkForms(kind, it)}, nil
			}
			out.Items = append(out.Items, calendar.Link{ID: id})
		}
	}
	return out, nil
}

// isIntLike reports whether v is a whole number or a numeric string.
func isIntLike(v any) bool {
	_, ok := input.AsInt(v)
	return ok
}

// termItems turns a categories/tags value into its items ("" or [] → none).
func termItems(v any) []any {
	if input.IsEmptyValue(v) {
		return []any{}
	}
	return input.AsList(v)
}

// costValues reads a cost as written: one string, or a list.
func costValues(v any) []string {
	switch x := v.(type) {
	case []any:
		out := []string{}
		for _, e := range x {
			if s, ok := input.AsString(e); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	case json.Number:
		return []string{x.String()}
	}
	s, _ := input.AsString(v)
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return []string{strings.TrimSpace(s)}
}
