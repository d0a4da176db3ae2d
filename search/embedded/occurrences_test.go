package embedded

import (
	"cmp"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// seriesDocs returns the documents of a weekly series of n occurrences
// (event id) with every field set, three of them with an override (a venue
// and point, a title, a status: the 11th, 21st and 31st, when n > 30),
// and a single event.
func seriesDocs(id int64, n int) []search.EventDocument {
	text := search.Text{Title: "Jazz night", Description: "An evening of jazz and poetry.", Excerpt: "Jazz"}
	d := search.EventDocument{ID: id, Text: map[string]search.Text{"en": text, "fr": text, "nl": {Title: "Jazzavond"}},
		Status: "publish", Author: 3, PublishDate: 1700000000, Start: 1800000000, End: 1800007200,
		StartLocal: 1800003600, EndLocal: 1800010800, Featured: true, Ticketed: true, EventStatus: "scheduled",
		CategoryIDs: []int64{4, 5}, CategorySlugs: []string{"music", "jazz"}, TagIDs: []int64{6}, TagSlugs: []string{"live"},
		VenueIDs: []int64{7}, OrganizerIDs: []int64{8, 9}, Geo: &search.GeoPoint{Lat: 48.85, Lng: 2.35}, HasGeo: true, ParentID: 2}
	docs := searchtest.Occurrences(d, n, 7*86400)
	if n > 30 {
		docs[10].VenueIDs, docs[10].Geo = []int64{17}, &search.GeoPoint{Lat: 52.37, Lng: 4.9}
		docs[20].Text = map[string]search.Text{"en": {Title: "Jazz night: the finale"}, "fr": text, "nl": {Title: "Jazzavond"}}
		docs[30].Status = "private"
	}
	single := d
	single.ID, single.Occurrence = id+1, ""
	return append(docs, single)
}

// storedSizes returns the stored (compressed) size of every document of
// the engine's live generation, by key.
func storedSizes(t *testing.T, e *Engine) map[string]int {
	t.Helper()
	sizes := map[string]int{}
	err := e.cur.events.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
			sizes[string(k)] = len(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return sizes
}

// TestOccurrencesStoredAsDates: the occurrences of a series that differ
// from its first in their dates only are stored as their key and dates
// (at most 160 compressed bytes each, where the whole document without
// its text took about 300), those with an override as before, and the
// engine reopened from the file holds the documents written, every field
// of every occurrence included.
func TestOccurrencesStoredAsDates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docs := seriesDocs(100, 105)
	e := mustOpen(t, dir)
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	sizes := storedSizes(t, e)
	if len(sizes) != len(docs) {
		t.Fatalf("stored %d documents, want %d", len(sizes), len(docs))
	}
	overridden := map[int]bool{0: true, 10: true, 20: true, 30: true}
	plain, most := 0, 0
	for i, d := range docs[:105] {
		if overridden[i] {
			continue
		}
		n := sizes[d.Key()]
		plain += n
		most = max(most, n)
	}
	perOccurrence := float64(plain) / float64(105-len(overridden))
	t.Logf("an occurrence that differs in its dates: %.0f bytes stored (at most %d); the first occurrence %d, the one with another venue %d",
		perOccurrence, most, sizes[docs[0].Key()], sizes[docs[10].Key()])
	if most > 160 {
		t.Errorf("an occurrence that differs in its dates only is stored in up to %d bytes, want at most 160", most)
	}
	s := closeAndOpenStore(t, e, dir)
	var got []search.EventDocument
	if _, err := s.load(func(d []search.EventDocument) { got = d }); err != nil {
		t.Fatal(err)
	}
	want := slicesSortedByKey(docs)
	if len(got) != len(want) {
		t.Fatalf("loaded %d documents, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("document %s read back as\n%+v\nwant\n%+v", want[i].Key(), got[i], want[i])
		}
	}
}

// slicesSortedByKey returns docs in the order load hands them over: by ID,
// then occurrence key.
func slicesSortedByKey(docs []search.EventDocument) []search.EventDocument {
	out := slices.Clone(docs)
	slices.SortFunc(out, func(a, b search.EventDocument) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Occurrence, b.Occurrence))
	})
	return out
}

// TestSameButDatesComparesEveryField: an occurrence stored as its dates
// takes every other field from the document it names, so sameButDates must
// tell a difference in any of them, in the fields search.EventDocument
// gains later too (each is set here by reflection).
func TestSameButDatesComparesEveryField(t *testing.T) {
	t.Parallel()
	base := seriesDocs(1, 2)[0]
	dates := map[string]bool{"Occurrence": true, "Start": true, "End": true, "StartLocal": true, "EndLocal": true}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			other := base
			v := reflect.ValueOf(&other).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString(v.String() + "x")
			case reflect.Int64:
				v.SetInt(v.Int() + 1)
			case reflect.Bool:
				v.SetBool(!v.Bool())
			case reflect.Slice:
				v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
			case reflect.Map:
				m := reflect.MakeMap(v.Type())
				m.SetMapIndex(reflect.ValueOf("de"), reflect.ValueOf(search.Text{Title: "Jazzabend"}))
				v.Set(m)
			case reflect.Pointer:
				p := reflect.New(v.Type().Elem())
				v.Set(p)
			default:
				t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
			}
			if got := sameButDates(&base, &other); got != dates[f.Name] {
				t.Errorf("sameButDates with another %s = %v, want %v", f.Name, got, dates[f.Name])
			}
		})
	}
	if !sameButDates(&base, &base) {
		t.Error("sameButDates of a document and itself = false")
	}
}

// TestSameButDatesAsDeepEqual: sameButDates compares the fields field by
// field as reflect.DeepEqual of the documents without their dates did
// (its first form): a nil list or text differs from an empty one, the same
// geo point pointer is equal even holding NaN, other points by value.
func TestSameButDatesAsDeepEqual(t *testing.T) {
	t.Parallel()
	base := seriesDocs(1, 2)[0]
	nan := &search.GeoPoint{Lat: math.NaN(), Lng: 2}
	cases := []struct {
		name   string
		change func(a, b *search.EventDocument)
	}{
		{"the same", func(a, b *search.EventDocument) {}},
		{"other dates", func(a, b *search.EventDocument) { b.Start, b.End, b.Occurrence = b.Start+60, b.End+60, "x" }},
		{"nil and empty categories", func(a, b *search.EventDocument) { a.CategoryIDs, b.CategoryIDs = nil, []int64{} }},
		{"both nil categories", func(a, b *search.EventDocument) { a.CategoryIDs, b.CategoryIDs = nil, nil }},
		{"equal categories apart", func(a, b *search.EventDocument) { b.CategoryIDs = slices.Clone(a.CategoryIDs) }},
		{"nil and empty slugs", func(a, b *search.EventDocument) { a.TagSlugs, b.TagSlugs = []string{}, nil }},
		{"nil and empty text", func(a, b *search.EventDocument) { a.Text, b.Text = nil, map[string]search.Text{} }},
		{"equal text apart", func(a, b *search.EventDocument) { b.Text = maps.Clone(a.Text) }},
		{"text of one language less", func(a, b *search.EventDocument) { b.Text = maps.Clone(a.Text); delete(b.Text, "fr") }},
		{"no points", func(a, b *search.EventDocument) { a.Geo, b.Geo = nil, nil }},
		{"a point and none", func(a, b *search.EventDocument) { b.Geo = nil }},
		{"equal points apart", func(a, b *search.EventDocument) { g := *a.Geo; b.Geo = &g }},
		{"other points", func(a, b *search.EventDocument) { b.Geo = &search.GeoPoint{Lat: 1, Lng: 2} }},
		{"one NaN point", func(a, b *search.EventDocument) { a.Geo, b.Geo = nan, nan }},
		{"two NaN points", func(a, b *search.EventDocument) { g := *nan; a.Geo, b.Geo = nan, &g }},
		{"the same categories, one more", func(a, b *search.EventDocument) { b.CategoryIDs = append(slices.Clone(a.CategoryIDs), 0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := base, base
			c.change(&a, &b)
			x, y := a, b
			x.Occurrence, x.Start, x.End, x.StartLocal, x.EndLocal = "", 0, 0, 0, 0
			y.Occurrence, y.Start, y.End, y.StartLocal, y.EndLocal = "", 0, 0, 0, 0
			want := reflect.DeepEqual(x, y)
			if got := sameButDates(&a, &b); got != want {
				t.Errorf("sameButDates = %v, reflect.DeepEqual = %v", got, want)
			}
			if got := sameButDates(&b, &a); got != want {
				t.Errorf("sameButDates the other way = %v, reflect.DeepEqual = %v", got, want)
			}
		})
	}
}

// BenchmarkSameButDates measures sameButDates on two occurrences of one
// series that differ in their dates only (what a reindex of series
// compares once per occurrence).
func BenchmarkSameButDates(b *testing.B) {
	docs := seriesDocs(1, 2)
	for b.Loop() {
		if !sameButDates(&docs[0], &docs[1]) {
			b.Fatal("the occurrences differ")
		}
	}
}

// TestEventStoreFormat1Upgraded: a store of format 1 (before occurrences
// were stored as their dates) is kept at open, its documents loaded, and
// records the current format, so that a version reading format 1 only
// recreates it instead of misreading the occurrences written since.
func TestEventStoreFormat1Upgraded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := mustOpen(t, dir)
	docs := seriesDocs(100, 5)
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	err := e.cur.events.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(metaBucket).Put(formatKey, []byte("eventcal events 1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e = mustOpen(t, dir)
	defer e.Close()
	n, err := e.CountEvents(t.Context())
	if err != nil || n != len(docs) {
		t.Fatalf("CountEvents after reopening = %d, %v; want %d (the documents kept)", n, err, len(docs))
	}
	var format string
	err = e.cur.events.db.View(func(tx *bolt.Tx) error {
		format = string(tx.Bucket(metaBucket).Get(formatKey))
		return nil
	})
	if err != nil || format != eventsFormat || !strings.HasPrefix(format, "eventcal events ") || format == "eventcal events 1" {
		t.Errorf("format after reopening = %q, %v; want %q", format, err, eventsFormat)
	}
}
