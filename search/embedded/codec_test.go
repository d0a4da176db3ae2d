package embedded

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
	"github.com/golang/snappy"
)

// fillAll sets every field reachable from v (structs, pointers, slices,
// maps) to a value that is not its zero value and differs from the
// others, counting with n.
func fillAll(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fillAll(v.Field(i), n)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillAll(k, n)
			fillAll(e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d-é", *n))
	case reflect.Int64, reflect.Int:
		v.SetInt(int64(*n) * -1_000_003)
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic(fmt.Sprintf("fillAll: no value for %s: teach it (and the binary form) this kind", v.Type()))
	}
}

// jsonForm is a stored document as format 1 wrote it.
func jsonForm(t *testing.T, s storedEvent) []byte {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBinaryFormRoundTrip: every field of a stored document (a new field
// of search.EventDocument included: fillAll sets it, so the test fails
// until the binary form writes it) reads back as it was written, nil and
// empty lists and maps apart, and as its JSON (format 1) reads back.
func TestBinaryFormRoundTrip(t *testing.T) {
	t.Parallel()
	var full storedEvent
	n := 0
	fillAll(reflect.ValueOf(&full).Elem(), &n)
	flags := []func(*search.EventDocument) *bool{
		func(d *search.EventDocument) *bool { return &d.AllDay },
		func(d *search.EventDocument) *bool { return &d.Featured },
		func(d *search.EventDocument) *bool { return &d.Ticketed },
		func(d *search.EventDocument) *bool { return &d.Sticky },
		func(d *search.EventDocument) *bool { return &d.HideFromListings },
		func(d *search.EventDocument) *bool { return &d.HasPassword },
		func(d *search.EventDocument) *bool { return &d.HasGeo },
	}
	oneFlag := func(i int) storedEvent {
		s := storedEvent{EventDocument: search.EventDocument{ID: 3}}
		*flags[i](&s.EventDocument) = true
		return s
	}
	cases := []struct {
		name string
		s    storedEvent
	}{
		{"every field set", full},
		{"zero", storedEvent{}},
		{"empty, not nil", storedEvent{EventDocument: search.EventDocument{
			Text: map[string]search.Text{}, CategoryIDs: []int64{}, CategorySlugs: []string{}, TagIDs: []int64{},
			TagSlugs: []string{}, VenueIDs: []int64{}, OrganizerIDs: []int64{}, Geo: &search.GeoPoint{}},
			TextSame: map[string]string{}}},
		{"extremes", storedEvent{EventDocument: search.EventDocument{ID: -1 << 63, Author: 1<<63 - 1, Start: -1,
			Geo: &search.GeoPoint{Lat: -90, Lng: 179.99999999999997}, Occurrence: "20270304T190000",
			Text: map[string]search.Text{"en": {Title: "a\x00b\u2028\"\\", Description: string(make([]byte, 300))}}}}},
		{"shares another's text", storedEvent{EventDocument: search.EventDocument{ID: 9, Occurrence: "x"}, TextFrom: "9-y"}},
		// JSON writes U+FFFD for each invalid byte; the binary form keeps
		// the bytes the index was given when the document was written.
		{"invalid UTF-8", storedEvent{EventDocument: search.EventDocument{ID: 8, TagSlugs: []string{"a\xffb"},
			Text: map[string]search.Text{"nl": {Title: "\xc3\xa9\xa9n"}}}}},
	}
	for i := range flags {
		cases = append(cases, struct {
			name string
			s    storedEvent
		}{fmt.Sprintf("flag %d alone", i), oneFlag(i)})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := encodeBinary(nil, &c.s)
			got, err := decodeBinary(raw)
			if err != nil {
				t.Fatalf("decodeBinary: %v", err)
			}
			if !reflect.DeepEqual(got, c.s) {
				t.Fatalf("read back\n%+v\nwant\n%+v", got, c.s)
			}
			if c.name == "invalid UTF-8" {
				return // JSON reads back other bytes
			}
			d, from, err := decodeStored(raw)
			wantD, wantFrom, jerr := decodeStored(jsonForm(t, c.s))
			if err != nil || jerr != nil {
				t.Fatalf("decodeStored: %v / as JSON: %v", err, jerr)
			}
			if !reflect.DeepEqual(d, wantD) || from != wantFrom {
				t.Fatalf("binary form reads back\n%+v %+v\nJSON form\n%+v %+v", d, from, wantD, wantFrom)
			}
		})
	}
}

// TestBinaryFormRefusesTorn: a document cut anywhere, or with bytes after
// its end, is an error (never a panic or a partial document).
func TestBinaryFormRefusesTorn(t *testing.T) {
	t.Parallel()
	var full storedEvent
	n := 0
	fillAll(reflect.ValueOf(&full).Elem(), &n)
	raw := encodeBinary(nil, &full)
	for cut := range len(raw) {
		if _, err := decodeBinary(raw[:cut]); err == nil {
			t.Fatalf("a document cut at %d of %d bytes decoded", cut, len(raw))
		}
		if _, _, err := decodeStored(raw[:cut]); err == nil {
			t.Fatalf("decodeStored: a document cut at %d of %d bytes decoded", cut, len(raw))
		}
	}
	if _, err := decodeBinary(append(raw[:len(raw):len(raw)], 0)); err == nil {
		t.Fatal("a document with a byte after its end decoded")
	}
	// A count far beyond the document's end.
	huge := []byte{binaryMark, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}
	if _, err := decodeBinary(huge); err == nil {
		t.Fatal("a document with a count beyond its end decoded")
	}
}

// TestFormat1StoreOpens: a store written by format 1 (every document
// JSON) opens without being recreated, loads the same documents as the
// binary form would, is marked format 2 at once (so that a build that
// reads only JSON recreates it instead of failing), and takes writes in
// the binary form next to its JSON documents; the engine reports it
// Outdated (the service then rebuilds it) until a rebuild has written
// every document in the binary form.
func TestFormat1StoreOpens(t *testing.T) {
	t.Parallel()
	f := searchtest.Generate(11, 40, 4, 3)
	var docs []search.EventDocument
	for i, d := range f.Events {
		// JSON keeps no invalid UTF-8 (the fixtures' text has some), the
		// binary form does (TestBinaryFormRoundTrip): texts as JSON would
		// read them back, so that both forms hold the same.
		var valid map[string]search.Text
		if err := json.Unmarshal(must(json.Marshal(d.Text)), &valid); err != nil {
			t.Fatal(err)
		}
		d.Text = valid
		if i%5 == 0 {
			docs = append(docs, searchtest.Occurrences(d, 3, 86400)...)
			continue
		}
		docs = append(docs, d)
	}

	// The same documents through the engine: the binary form.
	binDir := t.TempDir()
	be := mustOpen(t, binDir)
	if err := be.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	be = mustOpen(t, binDir)
	if out, err := be.Outdated(t.Context()); out || err != nil {
		t.Errorf("Outdated on a store in the binary form = %v, %v; want false", out, err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	want := loadAll(t, filepath.Join(binDir, "events.db"))

	// A format 1 store: the engine's generation with its documents
	// rewritten as JSON and its meta set back to format 1.
	dir := t.TempDir()
	e := mustOpen(t, dir)
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "events.db")
	db, err := bolt.Open(path, 0o640, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(eventsBucket)
		rewrite := map[string][]byte{}
		err := b.ForEach(func(k, v []byte) error {
			raw, err := snappy.Decode(nil, v)
			if err != nil {
				return err
			}
			s, err := decodeBinary(raw)
			if err != nil {
				return err
			}
			rewrite[string(k)] = snappy.Encode(nil, jsonForm(t, s))
			return nil
		})
		if err != nil {
			return err
		}
		for k, v := range rewrite {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return tx.Bucket(metaBucket).Put(formatKey, []byte(eventsFormatJSON))
	})
	if err != nil || db.Close() != nil {
		t.Fatalf("rewrite as format 1: %v", err)
	}

	e = mustOpen(t, dir)
	if got := counts(t, e); got[0] != len(docs) {
		t.Fatalf("the format 1 store opened with %d documents, want %d", got[0], len(docs))
	}
	if out, err := e.Outdated(t.Context()); !out || err != nil {
		t.Errorf("Outdated on the format 1 store = %v, %v; want true (a rebuild writes the binary form)", out, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := formatOf(t, path); got != eventsFormat {
		t.Fatalf("after open the store records %q, want %q", got, eventsFormat)
	}
	if got := loadAll(t, path); !reflect.DeepEqual(got, want) {
		t.Fatal("the format 1 store loads other documents than the binary form")
	}

	// A write next to the JSON documents, then a reopen.
	e = mustOpen(t, dir)
	changed := docs[3] // a single event (docs[0:3] are a series)
	changed.Text = map[string]search.Text{"en": {Title: "rewritten"}}
	if err := e.IndexEvents(t.Context(), []search.EventDocument{changed}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	got := loadAll(t, path)
	if len(got) != len(want) {
		t.Fatalf("after a write: %d documents, want %d", len(got), len(want))
	}
	for _, d := range got {
		if d.ID == changed.ID && d.Text["en"].Title != "rewritten" {
			t.Fatalf("the rewritten document reads back %+v", d.Text)
		}
	}

	// Still outdated after a restart (a rebuild that did not finish), no
	// longer once a rebuild has rewritten every document, nor after the
	// next open.
	e = mustOpen(t, dir)
	defer func() { _ = e.Close() }()
	if out, err := e.Outdated(t.Context()); !out || err != nil {
		t.Errorf("Outdated on the reopened mixed store = %v, %v; want true", out, err)
	}
	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.IndexEvents(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if out, err := e.Outdated(t.Context()); out || err != nil {
		t.Errorf("Outdated after the rebuild = %v, %v; want false", out, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := loadAll(t, filepath.Join(dir, "events.db.1")); !reflect.DeepEqual(got, want) {
		t.Error("the rebuilt store loads other documents than the binary form")
	}
	e = mustOpen(t, dir)
	if out, err := e.Outdated(t.Context()); out || err != nil {
		t.Errorf("Outdated after reopening the rebuilt store = %v, %v; want false", out, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// loadAll opens the event store at path and returns what load hands the
// index.
func loadAll(t *testing.T, path string) []search.EventDocument {
	t.Helper()
	s, ok, err := openEventStore(path)
	if err != nil || !ok {
		t.Fatalf("openEventStore: %v, %v", ok, err)
	}
	defer s.close()
	var docs []search.EventDocument
	if _, err := s.load(func(d []search.EventDocument) { docs = d }); err != nil {
		t.Fatal(err)
	}
	return docs
}

// formatOf returns the format the store at path records.
func formatOf(t *testing.T, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o640, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var f string
	_ = db.View(func(tx *bolt.Tx) error {
		f = string(tx.Bucket(metaBucket).Get(formatKey))
		return nil
	})
	return f
}

// BenchmarkDecodeStored compares reading a stored document back in its
// two forms (the fixtures' documents, snappy left out): go test
// ./search/embedded -run '^$' -bench DecodeStored.
func BenchmarkDecodeStored(b *testing.B) {
	f := searchtest.Generate(5, 500, 10, 5)
	forms := map[string][][]byte{}
	for _, d := range f.Events {
		s := storedEvent{EventDocument: d}
		raw, err := json.Marshal(s)
		if err != nil {
			b.Fatal(err)
		}
		forms["json"] = append(forms["json"], raw)
		forms["binary"] = append(forms["binary"], encodeEvent(d, ""))
	}
	for _, name := range []string{"json", "binary"} {
		b.Run(name, func(b *testing.B) {
			docs := forms[name]
			for i := 0; b.Loop(); i++ {
				if _, _, err := decodeStored(docs[i%len(docs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
