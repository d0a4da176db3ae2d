package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/calendar/eventcal/search"
)

// This file is the binary form of a stored event document (storedEvent),
// which events.db holds since format 2 (eventsFormat). Start-up reads
// every stored document back, and decoding them with encoding/json (by
// reflection, field names matched one by one) was its largest cost; this
// form is read field after field with no reflection and no names, in a
// fraction of the time.
//
// A document in this form starts with binaryMark; one stored as JSON (by
// format 1) starts with '{' and is still read (decodeStored), so a store
// of format 1 opens without being rebuilt.
//
// The layout, in this order: binaryMark; ID (varint); Occurrence (string);
// Status (string); Author, PublishDate, Start, End, StartLocal, EndLocal
// (varints); the flags (uvarint: the booleans and whether Geo is set, see
// the flag constants); EventStatus (string); CategoryIDs (int list);
// CategorySlugs (string list); TagIDs (int list); TagSlugs (string list);
// VenueIDs, OrganizerIDs (int lists); Geo's Lat and Lng (8 bytes each,
// IEEE 754 little-endian) when the flag says it is set; ParentID
// (varint); Text (count, then per language its code, title, description
// and excerpt); TextSame (count, then pairs of language codes); TextFrom
// (string); DatesFrom (string). A string is its length (uvarint) and its bytes. A list or map
// is its count plus one (uvarint), 0 standing for nil, so that nil and
// empty read back as they were written, as with JSON's null and [].

// binaryMark is the first byte of a document in the binary form.
const binaryMark = 0x01

// The flags of the binary form.
const (
	flagAllDay = 1 << iota
	flagFeatured
	flagTicketed
	flagSticky
	flagHideFromListings
	flagHasPassword
	flagHasGeo
	flagGeo // Geo is set (non-nil)
)

// encodeBinary appends the binary form of s to b.
func encodeBinary(b []byte, s *storedEvent) []byte {
	d := &s.EventDocument
	b = append(b, binaryMark)
	b = binary.AppendVarint(b, d.ID)
	b = appendString(b, d.Occurrence)
	b = appendString(b, d.Status)
	for _, v := range [...]int64{d.Author, d.PublishDate, d.Start, d.End, d.StartLocal, d.EndLocal} {
		b = binary.AppendVarint(b, v)
	}
	var flags uint64
	for _, f := range [...]struct {
		on   bool
		flag uint64
	}{
		{d.AllDay, flagAllDay}, {d.Featured, flagFeatured}, {d.Ticketed, flagTicketed}, {d.Sticky, flagSticky},
		{d.HideFromListings, flagHideFromListings}, {d.HasPassword, flagHasPassword}, {d.HasGeo, flagHasGeo}, {d.Geo != nil, flagGeo},
	} {
		if f.on {
			flags |= f.flag
		}
	}
	b = binary.AppendUvarint(b, flags)
	b = appendString(b, d.EventStatus)
	b = appendInts(b, d.CategoryIDs)
	b = appendStrings(b, d.CategorySlugs)
	b = appendInts(b, d.TagIDs)
	b = appendStrings(b, d.TagSlugs)
	b = appendInts(b, d.VenueIDs)
	b = appendInts(b, d.OrganizerIDs)
	if d.Geo != nil {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.Geo.Lat))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.Geo.Lng))
	}
	b = binary.AppendVarint(b, d.ParentID)
	b = appendCount(b, d.Text == nil, len(d.Text))
	for _, lang := range sortedKeys(d.Text) {
		t := d.Text[lang]
		b = appendString(b, lang)
		b = appendString(b, t.Title)
		b = appendString(b, t.Description)
		b = appendString(b, t.Excerpt)
	}
	b = appendCount(b, s.TextSame == nil, len(s.TextSame))
	for _, lang := range sortedKeys(s.TextSame) {
		b = appendString(b, lang)
		b = appendString(b, s.TextSame[lang])
	}
	b = appendString(b, s.TextFrom)
	return appendString(b, s.DatesFrom)
}

// sortedKeys returns m's keys in order, so that equal documents encode to
// equal bytes.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendCount writes the count of a list or map: 0 for nil, else n+1.
func appendCount(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func appendInts(b []byte, v []int64) []byte {
	b = appendCount(b, v == nil, len(v))
	for _, x := range v {
		b = binary.AppendVarint(b, x)
	}
	return b
}

func appendStrings(b []byte, v []string) []byte {
	b = appendCount(b, v == nil, len(v))
	for _, s := range v {
		b = appendString(b, s)
	}
	return b
}

// errTruncated reports a binary document that ends early or holds a count
// or length beyond its end.
var errTruncated = errors.New("the stored document is truncated or malformed")

// reader reads the binary form; the first failure sticks in err and every
// later read returns zero values. Its short strings that many documents
// repeat (statuses, slugs, languages, the keys TextFrom and DatesFrom
// name) are read through in (shared), when set.
type reader struct {
	b   []byte
	err error
	in  *interner
}

// stringOr reads a string as string does, returning like instead when it
// has the same bytes (no allocation).
func (r *reader) stringOr(like string) string {
	if b := r.next(); string(b) != like {
		return string(b)
	}
	return like
}

// internMax is the number of strings an interner holds at most: it
// forgets them all when full (a load's decoder reads a chunk's events,
// whose repeated strings are few).
const internMax = 4096

// interner gives one string for equal bytes, so that the documents a
// decoder reads share their repeated strings instead of allocating each:
// at start-up (100,000 events and 25,000 weekly series, 2.7 million
// documents, most of them occurrences stored as their dates) a string per
// status, slug, language and DatesFrom key was most of the decoders'
// allocations, and the garbage collector's work with them. Not safe for
// concurrent use: each decoder has its own.
type interner struct{ m map[string]string }

// get returns b as a string, the one given before for the same bytes if
// any.
func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	if in.m == nil || len(in.m) >= internMax {
		in.m = make(map[string]string, 64)
	}
	s := string(b)
	in.m[s] = s
	return s
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errTruncated
	}
	r.b = nil
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.next()) }

// next reads the bytes of a string (its length, then the bytes), nil
// after a failure; the bytes are raw's, not a copy.
func (r *reader) next() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

// shared reads a string as string does, through the reader's interner
// when it has one: for the strings many documents repeat.
func (r *reader) shared() string {
	if r.in == nil {
		return r.string()
	}
	return r.in.get(r.next())
}

// count reads a count written by appendCount: ok false for nil. A count
// larger than the bytes left (each element takes at least one) fails.
func (r *reader) count() (n int, ok bool) {
	c := r.uvarint()
	if c == 0 {
		return 0, false
	}
	if c-1 > uint64(len(r.b)) {
		r.fail()
		return 0, false
	}
	return int(c - 1), true
}

func (r *reader) ints() []int64 {
	n, ok := r.count()
	if !ok {
		return nil
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = r.varint()
	}
	return v
}

func (r *reader) strings() []string {
	n, ok := r.count()
	if !ok {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = r.shared()
	}
	return v
}

func (r *reader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// decodeBinary reads a document in the binary form (raw starts with
// binaryMark).
func decodeBinary(raw []byte) (storedEvent, error) {
	var s storedEvent
	err := decodeBinaryInto(raw, &s, nil, "")
	return s, err
}

// decodeBinaryInto reads a document in the binary form (raw starts with
// binaryMark) into s, which it zeroes first; its repeated short strings
// through in when not nil (see interner), and its occurrence as occ when
// it is the same (the key's, which load cuts from one string per chunk
// rather than allocating one per document). Filling the caller's s keeps
// a decoder's storedEvent off the heap.
func decodeBinaryInto(raw []byte, s *storedEvent, in *interner, occ string) error {
	*s = storedEvent{}
	if len(raw) == 0 || raw[0] != binaryMark {
		return errTruncated
	}
	r := &reader{b: raw[1:], in: in}
	d := &s.EventDocument
	d.ID = r.varint()
	d.Occurrence = r.stringOr(occ)
	d.Status = r.shared()
	for _, v := range [...]*int64{&d.Author, &d.PublishDate, &d.Start, &d.End, &d.StartLocal, &d.EndLocal} {
		*v = r.varint()
	}
	flags := r.uvarint()
	d.AllDay = flags&flagAllDay != 0
	d.Featured = flags&flagFeatured != 0
	d.Ticketed = flags&flagTicketed != 0
	d.Sticky = flags&flagSticky != 0
	d.HideFromListings = flags&flagHideFromListings != 0
	d.HasPassword = flags&flagHasPassword != 0
	d.HasGeo = flags&flagHasGeo != 0
	d.EventStatus = r.shared()
	d.CategoryIDs = r.ints()
	d.CategorySlugs = r.strings()
	d.TagIDs = r.ints()
	d.TagSlugs = r.strings()
	d.VenueIDs = r.ints()
	d.OrganizerIDs = r.ints()
	if flags&flagGeo != 0 {
		d.Geo = &search.GeoPoint{Lat: r.float(), Lng: r.float()}
	}
	d.ParentID = r.varint()
	if n, ok := r.count(); ok {
		d.Text = make(map[string]search.Text, n)
		for range n {
			lang := r.shared()
			d.Text[lang] = search.Text{Title: r.string(), Description: r.string(), Excerpt: r.string()}
		}
	}
	if n, ok := r.count(); ok {
		s.TextSame = make(map[string]string, n)
		for range n {
			lang := r.shared()
			s.TextSame[lang] = r.shared()
		}
	}
	s.TextFrom = r.shared()
	s.DatesFrom = r.shared()
	if r.err != nil {
		*s = storedEvent{}
		return r.err
	}
	if len(r.b) != 0 {
		*s = storedEvent{}
		return fmt.Errorf("%w: %d bytes after its end", errTruncated, len(r.b))
	}
	return nil
}
