package embedded

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/calendar/eventcal/search"
)

// This file is the edge between the contract's documents and what the
// engine keeps: for a place, the flat map Bleve indexes, whose keys are
// the mapping's field names; for an event, its stored form (see
// events.go). Building the maps here (rather than letting Bleve reflect on
// the structs) keeps the conversions in one place: IDs as document IDs,
// booleans always present.

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

// storedEvent is the stored form of an event document: each distinct text
// once, under the first of its languages by name, and TextSame naming,
// for each other language with the same text, that language. A document
// whose languages fall back to one text (an untranslated post: seven
// languages by default) is stored, encoded and read back with its text
// once, not seven times (200,000 characters of description made 1.4 MB of
// JSON). Documents stored before TextSame existed have none and read back
// as they are. It is written in the binary form (codec.go); documents
// written by format 1 of the store are its JSON, and read back as well.
//
// TextFrom, set on an occurrence whose text is that of an earlier
// occurrence of its series written in the same call (most occurrences of a
// series), names that document's key: its text is stored once per series,
// not once per occurrence, and eventStore.load gives both documents the same
// text map. A write replaces all the documents of an event together, so
// the document named is always stored with it.
//
// DatesFrom, set on an occurrence that differs from an earlier occurrence
// of its series written in the same call in its key and dates only (most
// occurrences of a series), names that document's key: the occurrence is
// stored as its ID, key and dates (encodeOccurrence: a few dozen bytes
// instead of hundreds), and eventStore.load gives it every other field of
// the document named. A document with DatesFrom has no TextFrom.
type storedEvent struct {
	search.EventDocument
	TextSame  map[string]string `json:"text_same,omitempty"`
	TextFrom  string            `json:"text_from,omitempty"`
	DatesFrom string            `json:"dates_from,omitempty"`
}

// storedRef is what a stored document takes from another of its event's
// (eventStore.load resolves it): nothing (from empty), the text (TextFrom)
// or everything but the key and dates (DatesFrom, dates set).
type storedRef struct {
	from  string
	dates bool
}

// resolve completes d, decoded with ref r, from src, the document r.from
// names.
func (r storedRef) resolve(d *search.EventDocument, src *search.EventDocument) {
	if !r.dates {
		d.Text = src.Text
		return
	}
	occ, start, end, startLocal, endLocal := d.Occurrence, d.Start, d.End, d.StartLocal, d.EndLocal
	*d = *src
	d.Occurrence, d.Start, d.End, d.StartLocal, d.EndLocal = occ, start, end, startLocal, endLocal
}

// sameButDates reports whether a and b differ in their occurrence keys and
// dates (Start, End, StartLocal, EndLocal) only: b may then be stored as
// its dates referring to a (encodeOccurrence). Every other field is
// compared as reflect.DeepEqual compares it (a nil slice or map differs
// from an empty one, a geo point by its value), field by field: a full
// reindex of many series calls it once per occurrence, where copying
// both documents and reflecting on them took about a tenth of its CPU.
// A field added to search.EventDocument must be added here:
// TestSameButDatesComparesEveryField fails until it is.
func sameButDates(a, b *search.EventDocument) bool {
	return a.ID == b.ID && a.Status == b.Status && a.Author == b.Author && a.PublishDate == b.PublishDate &&
		a.AllDay == b.AllDay && a.Featured == b.Featured && a.Ticketed == b.Ticketed && a.Sticky == b.Sticky &&
		a.HideFromListings == b.HideFromListings && a.HasPassword == b.HasPassword && a.EventStatus == b.EventStatus &&
		a.HasGeo == b.HasGeo && a.ParentID == b.ParentID && sameGeo(a.Geo, b.Geo) &&
		sameList(a.CategoryIDs, b.CategoryIDs) && sameList(a.CategorySlugs, b.CategorySlugs) &&
		sameList(a.TagIDs, b.TagIDs) && sameList(a.TagSlugs, b.TagSlugs) &&
		sameList(a.VenueIDs, b.VenueIDs) && sameList(a.OrganizerIDs, b.OrganizerIDs) &&
		(a.Text == nil) == (b.Text == nil) && maps.Equal(a.Text, b.Text)
}

// sameList reports whether a and b are equal as reflect.DeepEqual has it:
// both nil, or both not nil with equal elements.
func sameList[T comparable](a, b []T) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

// sameGeo reports whether a and b are equal as reflect.DeepEqual has it:
// the same pointer (nil included), or both set to equal points (a NaN
// coordinate equals nothing).
func sameGeo(a, b *search.GeoPoint) bool { return a == b || a != nil && b != nil && *a == *b }

// encodeOccurrence is the stored form of occurrence d of a series whose
// first document written in the same call is first (stored whole) under
// key firstKey: its ID, key and dates only when it differs from first in
// nothing else (DatesFrom), with first's text when only the text is the
// same (TextFrom), else whole.
func encodeOccurrence(d, first *search.EventDocument, firstKey string) []byte {
	if sameButDates(first, d) {
		stored := storedEvent{EventDocument: search.EventDocument{ID: d.ID, Occurrence: d.Occurrence,
			Start: d.Start, End: d.End, StartLocal: d.StartLocal, EndLocal: d.EndLocal}, DatesFrom: firstKey}
		return encodeBinary(nil, &stored)
	}
	from := ""
	if maps.Equal(first.Text, d.Text) {
		from = firstKey
	}
	return encodeEvent(*d, from)
}

// encodeEvent is the stored form of an event: the document (storedEvent)
// in the binary form (codec.go), its text already plain
// (search.PlainText), which eventStore.load reads back; textFrom, when
// set, is the key of a document stored with the same text (see
// storedEvent).
func encodeEvent(d search.EventDocument, textFrom string) []byte {
	stored := storedEvent{EventDocument: d}
	if textFrom != "" {
		stored.Text, stored.TextFrom = nil, textFrom
	} else if len(d.Text) > 0 {
		text := make(map[string]search.Text, len(d.Text))
		firstOf := map[search.Text]string{}
		plain := map[string]string{}
		once := func(s string) string {
			p, ok := plain[s]
			if !ok {
				p = search.PlainText(s)
				plain[s] = p
			}
			return p
		}
		for _, lang := range slices.Sorted(maps.Keys(d.Text)) {
			t := d.Text[lang]
			if first, ok := firstOf[t]; ok {
				if stored.TextSame == nil {
					stored.TextSame = map[string]string{}
				}
				stored.TextSame[lang] = first
				continue
			}
			firstOf[t] = lang
			text[lang] = search.Text{Title: once(t.Title), Description: once(t.Description), Excerpt: once(t.Excerpt)}
		}
		stored.Text = text
	}
	return encodeBinary(nil, &stored)
}

// decodeEvent reads a stored event document back (see storedEvent); a
// document whose text is another's has none here (eventStore.load resolves
// TextFrom: see decodeStored).
func decodeEvent(raw []byte) (search.EventDocument, error) {
	d, _, err := decodeStored(raw)
	return d, err
}

// decodeStored is decodeEvent, also returning what the document takes
// from another of its event's (see storedRef; the caller resolves it).
func decodeStored(raw []byte) (search.EventDocument, storedRef, error) {
	return decodeStoredWith(raw, nil, "")
}

// decodeStoredWith is decodeStored, reading the binary form's repeated
// short strings through in when not nil (see interner) and its
// occurrence as occ when the same (see decodeBinaryInto).
func decodeStoredWith(raw []byte, in *interner, occ string) (search.EventDocument, storedRef, error) {
	var stored storedEvent
	if len(raw) > 0 && raw[0] == binaryMark {
		if err := decodeBinaryInto(raw, &stored, in, occ); err != nil {
			return search.EventDocument{}, storedRef{}, err
		}
	} else {
		var err error
		if stored, err = decodeJSON(raw); err != nil { // format 1
			return search.EventDocument{}, storedRef{}, err
		}
	}
	d, err := stored.expand()
	if stored.DatesFrom != "" {
		return d, storedRef{from: stored.DatesFrom, dates: true}, err
	}
	return d, storedRef{from: stored.TextFrom}, err
}

// decodeJSON reads a document in the JSON form (format 1). Apart from
// decodeStoredWith, so that the pointer json.Unmarshal takes does not move
// the binary form's storedEvent to the heap (a tenth of a load's
// allocations).
func decodeJSON(raw []byte) (storedEvent, error) {
	var stored storedEvent
	err := json.Unmarshal(raw, &stored)
	return stored, err
}

// expand resolves TextSame.
func (stored storedEvent) expand() (search.EventDocument, error) {
	d := stored.EventDocument
	for lang, first := range stored.TextSame {
		if d.Text == nil {
			d.Text = map[string]search.Text{}
		}
		d.Text[lang] = d.Text[first]
	}
	return d, nil
}

// publicStatus is the one status anonymous callers see.
const publicStatus = "publish"

// placeFields is the indexed form of a venue or organizer. The text and
// fields of a place that is not published go under other names
// (prefixHiddenText, prefixHiddenFields), so that the typo expansion of an
// anonymous search (which reads a field's whole term dictionary for a
// two-typo word) never reads the words of drafts, pending or private
// places: a flood of draft venues cannot slow it.
func placeFields(d search.PlaceDocument) map[string]interface{} {
	fields := make(map[string]interface{}, len(d.Fields))
	for k, v := range d.Fields {
		fields[k] = search.PlainText(v)
	}
	last := make(map[string]interface{}, len(d.LastStart))
	for k, v := range d.LastStart {
		last[k] = v
	}
	text, other := prefixText, prefixFields
	if d.Status != publicStatus {
		text, other = prefixHiddenText, prefixHiddenFields
	}
	return map[string]interface{}{
		fieldID:          d.ID,
		"kind":           string(d.Kind),
		fieldStatus:      d.Status,
		fieldPublishDate: d.PublishDate,
		fieldSortPublish: sortKeyOf(d.PublishDate, d.ID),
		fieldHasEvents:   d.HasEvents,
		text:             textFields(d.Text),
		other:            fields,
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

// textField is the indexed name of one text field in one language, under
// prefix (prefixText or prefixHiddenText).
func textField(prefix, lang, name string) string { return prefix + "." + lang + "." + name }
