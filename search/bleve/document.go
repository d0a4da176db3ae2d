package bleve

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/calendar/eventcal/search"
)

// This file is the edge between the contract's documents and what Bleve
// indexes: flat maps whose keys are the mapping's field names. Building the
// maps here (rather than letting Bleve reflect on the structs) keeps the
// conversions in one place: IDs as document IDs, booleans always present,
// and an event as its stored JSON.

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

// eventFields is the stored form of an event: the document as JSON, its
// text already plain (search.PlainText), which loadEvents reads back.
func eventFields(d search.EventDocument) (map[string]interface{}, error) {
	if len(d.Text) > 0 {
		text := make(map[string]search.Text, len(d.Text))
		for lang, t := range d.Text {
			text[lang] = search.Text{Title: search.PlainText(t.Title), Description: search.PlainText(t.Description), Excerpt: search.PlainText(t.Excerpt)}
		}
		d.Text = text
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	return map[string]interface{}{fieldDoc: string(b)}, nil
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
