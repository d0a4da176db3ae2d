package bleve

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/search"
)

// This file is the edge between the contract's documents and what Bleve
// indexes: flat maps whose keys are the mapping's field names. Building the
// maps here (rather than letting Bleve reflect on the structs) keeps the
// conversions in one place: IDs as document IDs, booleans always present,
// and the geo point as Bleve's [lon, lat].

// docID is the Bleve document ID of a contract ID.
func docID(id int64) string { return strconv.FormatInt(id, 10) }

func docIDs(ids []int64) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = docID(id)
	}
	return out
}

// sortKeyOf encodes (primary, id) as 32 hex digits whose byte order is the
// numeric order of the pair: each int64 has its sign bit flipped, so
// negative values sort first, and is written big-endian at a fixed width.
func sortKeyOf(primary, id int64) string {
	const signBit = 1 << 63
	return fmt.Sprintf("%016x%016x", uint64(primary)^signBit, uint64(id)^signBit)
}

// pointKey writes a point as "p" and "lat,lng" with the shortest decimals
// that parse back to the same float64s, so the exact distance check
// measures the very coordinates of the document.
//
// The leading "p" keeps the key from looking like a prefix-coded number:
// Bleve's custom filter reads doc values through decodeDocValueTerm
// (search/searcher/search_custom_fields.go in bleve v2.6.1), which takes
// any term whose first byte is 0x20–0x5F and whose length matches that
// byte's shift for a number, and drops it unless the shift is 0. Without
// it a short key such as "48.8,2.3", "89.5,90" or "-33.9,151" never
// reached the filter, and its event fell out of every Near list.
func pointKey(p search.GeoPoint) string {
	return "p" + strconv.FormatFloat(p.Lat, 'g', -1, 64) + "," + strconv.FormatFloat(p.Lng, 'g', -1, 64)
}

// parsePointKey reads what pointKey wrote (and keys written before the
// "p", so that an index built earlier keeps working until it is rebuilt).
func parsePointKey(s string) (search.GeoPoint, bool) {
	lat, lng, ok := strings.Cut(strings.TrimPrefix(s, "p"), ",")
	if !ok {
		return search.GeoPoint{}, false
	}
	la, err1 := strconv.ParseFloat(lat, 64)
	ln, err2 := strconv.ParseFloat(lng, 64)
	return search.GeoPoint{Lat: la, Lng: ln}, err1 == nil && err2 == nil
}

// eventFields is the indexed form of an event.
func eventFields(d search.EventDocument) map[string]interface{} {
	m := map[string]interface{}{
		fieldID:              d.ID,
		fieldStatus:          d.Status,
		"author":             d.Author,
		fieldPublishDate:     d.PublishDate,
		fieldStart:           d.Start,
		fieldSortStart:       sortKeyOf(d.Start, d.ID),
		fieldSortPublish:     sortKeyOf(d.PublishDate, d.ID),
		fieldEnd:             d.End,
		"start_local":        d.StartLocal,
		"end_local":          d.EndLocal,
		"all_day":            d.AllDay,
		"featured":           d.Featured,
		"ticketed":           d.Ticketed,
		"sticky":             d.Sticky,
		"hide_from_listings": d.HideFromListings,
		"has_password":       d.HasPassword,
		"category_ids":       d.CategoryIDs,
		"category_slugs":     d.CategorySlugs,
		"tag_ids":            d.TagIDs,
		"tag_slugs":          d.TagSlugs,
		"venue_ids":          d.VenueIDs,
		"organizer_ids":      d.OrganizerIDs,
		"parent_id":          d.ParentID,
		prefixText:           textFields(d.Text),
	}
	for facet, field := range facetFields {
		m[field] = search.FacetValues(d, facet)
	}
	// has_geo and the point agree: a document is near something only when
	// it says it has a point and has one.
	hasGeo := d.HasGeo && d.Geo != nil
	m[fieldHasGeo] = hasGeo
	if hasGeo {
		m[fieldGeo] = []float64{d.Geo.Lng, d.Geo.Lat}
		m[fieldPoint] = pointKey(*d.Geo)
	}
	return m
}

// placeFields is the indexed form of a venue or organizer.
func placeFields(d search.PlaceDocument) map[string]interface{} {
	fields := make(map[string]interface{}, len(d.Fields))
	for k, v := range d.Fields {
		fields[k] = search.PlainText(v)
	}
	last := make(map[string]interface{}, len(d.LastStart))
	for k, v := range d.LastStart {
		last[k] = v
	}
	return map[string]interface{}{
		fieldID:          d.ID,
		"kind":           string(d.Kind),
		fieldStatus:      d.Status,
		fieldPublishDate: d.PublishDate,
		fieldSortPublish: sortKeyOf(d.PublishDate, d.ID),
		fieldHasEvents:   d.HasEvents,
		prefixText:       textFields(d.Text),
		prefixFields:     fields,
		prefixLastStart:  last,
	}
}

// textFields is the indexed text: plain text (search.PlainText) by
// language.
func textFields(text map[string]search.Text) map[string]interface{} {
	out := make(map[string]interface{}, len(text))
	for lang, t := range text {
		out[lang] = map[string]interface{}{
			"title": search.PlainText(t.Title), "description": search.PlainText(t.Description), "excerpt": search.PlainText(t.Excerpt),
		}
	}
	return out
}

// textField is the indexed name of one text field in one language.
func textField(lang, name string) string { return prefixText + "." + lang + "." + name }
