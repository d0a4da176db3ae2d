package memindex

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/calendar/eventcal/search"
)

// heapInUse returns the bytes of live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemory builds the load benchmark's index at 200,000 events, at
// 100,000 events with 5,000 weekly series, and at the sizes
// MEMINDEX_MEMORY_EVENTS lists (comma-separated), and reports the live
// heap the index holds (MiB) and its bytes per document:
// go test ./search/memindex -run '^$' -bench Memory -benchtime 1x.
func BenchmarkMemory(b *testing.B) {
	type size struct{ n, series int }
	sizes := []size{{200000, 0}, {100000, 5000}}
	for _, s := range strings.Split(os.Getenv("MEMINDEX_MEMORY_EVENTS"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			sizes = append(sizes, size{n, 0})
		}
	}
	for _, s := range sizes {
		b.Run(strconv.Itoa(s.n)+"/series "+strconv.Itoa(s.series), func(b *testing.B) {
			for b.Loop() {
				before := heapInUse()
				x, _ := benchIndexSeries(s.n, s.series)
				after := heapInUse()
				b.ReportMetric(float64(after-before)/(1<<20), "MiB")
				b.ReportMetric(float64(after-before)/float64(x.Count()), "B/doc")
				if p := os.Getenv("MEMINDEX_HEAP_PROFILE"); p != "" {
					f, err := os.Create(p + "." + strconv.Itoa(s.n) + "." + strconv.Itoa(s.series))
					if err != nil {
						b.Fatal(err)
					}
					pprof.WriteHeapProfile(f)
					f.Close()
				}
				runtime.KeepAlive(x)
			}
		})
	}
}

// TestRowSize pins what every document costs in its row, row body and
// entry (on a 64-bit platform, as the service runs): 24, 112 and 32
// bytes (the row held two pointers and took 32); an occurrence that differs from its series' others in its dates
// only shares their body. The row held the body, the entry again, the
// statuses as strings and a slice per list filter (264 bytes).
func TestRowSize(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"row", unsafe.Sizeof(row{}), 24},
		{"row body", unsafe.Sizeof(rowBody{}), 112},
		{"entry", unsafe.Sizeof(entry{}), 32},
	} {
		if c.got > c.want {
			t.Errorf("%s: %d bytes, want at most %d", c.name, c.got, c.want)
		}
	}
}

// TestOccurrencesShareTheirBody: the occurrences of a series that differ
// in their dates only share one row body (and so one copy of its lists,
// words and statuses), also when an occurrence with an override comes
// between them; an occurrence with another title, or another publish
// date or status, has its own, and every occurrence keeps its own key.
func TestOccurrencesShareTheirBody(t *testing.T) {
	occ := func(k int, f func(d *search.EventDocument)) search.EventDocument {
		d := search.EventDocument{ID: 7, Occurrence: fmt.Sprintf("k%03d", k), Status: "publish", PublishDate: 5,
			Start: int64(k) * 604800, End: int64(k)*604800 + 3600, CategoryIDs: []int64{1, 2}, VenueIDs: []int64{3},
			Text: map[string]search.Text{"en": {Title: "jazz night"}, "fr": {Title: "jazz night"}}}
		if f != nil {
			f(&d)
		}
		return d
	}
	same := func(k int) search.EventDocument { return occ(k, nil) }
	for _, tt := range []struct {
		name       string
		docs       []search.EventDocument
		wantBodies int
	}{
		{"dates only", []search.EventDocument{same(0), same(1), same(2), same(3)}, 1},
		{"one with another title", []search.EventDocument{same(0), same(1),
			occ(2, func(d *search.EventDocument) { d.Text = map[string]search.Text{"en": {Title: "rock night"}} }), same(3), same(4)}, 2},
		{"one with another status", []search.EventDocument{same(0), same(1),
			occ(2, func(d *search.EventDocument) { d.Status = "draft" }), same(3)}, 2},
		{"one with another publish date", []search.EventDocument{same(0),
			occ(1, func(d *search.EventDocument) { d.PublishDate = 6 }), same(2)}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := New()
			x.Apply(tt.docs)
			bodies := map[uint32]bool{}
			for i, d := range tt.docs {
				slot, ok := x.slotOf(docKey{d.ID, d.Occurrence})
				if !ok {
					t.Fatalf("document %d not indexed", i)
				}
				r, b := &x.rows[slot], x.bodyOf(slot)
				if r.id != d.ID || x.occNames.occString(r.occ) != d.Occurrence || b.pub != d.PublishDate || x.names[b.status] != d.Status {
					t.Errorf("document %d: row %d %q pub %d status %q", i, r.id, x.occNames.occString(r.occ), b.pub, x.names[b.status])
				}
				bodies[r.body] = true
			}
			if len(bodies) != tt.wantBodies {
				t.Errorf("%d row bodies, want %d", len(bodies), tt.wantBodies)
			}
			if n := x.bodies.live(); n != tt.wantBodies {
				t.Errorf("%d row bodies held, want %d", n, tt.wantBodies)
			}
		})
	}
}

// TestOccurrenceCost pins what an occurrence that differs from its
// series' others in its dates only costs the index in a calendar whose
// weeks are shared by many series (the load benchmark's shape): at most
// 250 bytes of heap (its row, entry, place in its group and in byID, its
// week's dates, local number and postings in the facet buckets, and its
// postings by word and value; measured 188, of which about 50 the facet
// buckets). Adding 200 series of 100 weekly occurrences to 20 such series
// over the same weeks measures what each added occurrence costs. An
// occurrence with its own row, lists and map entry by key cost 476
// (measured). Not parallel: it reads the heap's size.
func TestOccurrenceCost(t *testing.T) {
	const weeks = 100
	series := func(n int) []search.EventDocument {
		var docs []search.EventDocument
		for s := range n {
			id := int64(s + 1)
			text := search.Text{Title: fmt.Sprintf("jazz night %d", s), Description: "An evening of jazz and poetry."}
			for k := range weeks {
				start := int64(k)*604800 + int64(s)*60
				docs = append(docs, search.EventDocument{ID: id, Occurrence: fmt.Sprintf("2030-%06d", k), Status: "publish", PublishDate: 5,
					Start: start, End: start + 3600, CategoryIDs: []int64{id % 7}, TagIDs: []int64{id % 11, 20 + id%13},
					VenueIDs: []int64{id % 17}, OrganizerIDs: []int64{id % 19}, HasGeo: true, Geo: &search.GeoPoint{Lat: 48 + float64(id%17)/10, Lng: 2},
					Text: map[string]search.Text{"en": text, "fr": text}})
			}
		}
		return docs
	}
	size := func(n int) uint64 {
		docs := series(n)
		before := heapInUse()
		x := New()
		x.Apply(docs)
		after := heapInUse()
		runtime.KeepAlive(x)
		runtime.KeepAlive(docs)
		return after - before
	}
	const few, many = 20, 220
	small, large := size(few), size(many)
	per := float64(int64(large)-int64(small)) / ((many - few) * weeks)
	t.Logf("%.0f bytes an occurrence", per)
	if per > 250 {
		t.Errorf("an occurrence costs %.0f bytes of heap, want at most 250", per)
	}
}

// TestRowHoldsNoPointer pins that what the index keeps per document holds
// no pointer (no pointer, slice, map, string, interface, channel or
// function, at any depth), so that the garbage collector never scans the
// arrays that hold them (Index.rows, Index.ents, the groups' members and
// heads, the slots of the IDs of one document): at 6.4 million
// documents, the pointers a row held (its body and group) were two more
// for every cycle to follow per document.
func TestRowHoldsNoPointer(t *testing.T) {
	one := reflect.TypeOf(idSlots{}.one)
	for _, typ := range []reflect.Type{reflect.TypeOf(row{}), reflect.TypeOf(entry{}), reflect.TypeOf(member{}),
		reflect.TypeOf(groupHead{}), one.Key(), one.Elem()} {
		if path, ok := pointerIn(typ); ok {
			t.Errorf("%s holds a pointer: %s", typ, path)
		}
	}
}

// pointerIn returns where type typ holds a pointer, if it does.
func pointerIn(typ reflect.Type) (string, bool) {
	switch typ.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func:
		return typ.String(), true
	case reflect.Array:
		if typ.Len() == 0 {
			return "", false
		}
		if path, ok := pointerIn(typ.Elem()); ok {
			return "[...]" + path, true
		}
	case reflect.Struct:
		for i := range typ.NumField() {
			f := typ.Field(i)
			if path, ok := pointerIn(f.Type); ok {
				return f.Name + " " + path, true
			}
		}
	}
	return "", false
}

// TestBodiesReleased: the bodies store holds exactly the bodies that live
// rows use, and every grouped row names a group that holds it (a group
// moves in Index.groups when another leaves), through writes that replace occurrences (sharing their body
// or not), turn a series into a single event, regroup it and remove
// events: none leaks (held without a row) and none is released while a
// row uses it (its number reused by another body would give that row
// another's words and lists, which the agreement tests would catch only
// by chance).
func TestBodiesReleased(t *testing.T) {
	series := func(id int64, n int, title string, f func(k int, d *search.EventDocument)) []search.EventDocument {
		var docs []search.EventDocument
		for k := range n {
			d := search.EventDocument{ID: id, Occurrence: fmt.Sprintf("k%03d", k), Status: "publish", PublishDate: 5,
				Start: int64(k) * 604800, End: int64(k)*604800 + 3600, CategoryIDs: []int64{1, 2},
				Text: map[string]search.Text{"en": {Title: title}}}
			if f != nil {
				f(k, &d)
			}
			docs = append(docs, d)
		}
		return docs
	}
	single := func(id int64, title string) search.EventDocument {
		return search.EventDocument{ID: id, Status: "publish", Start: id, End: id + 1, Text: map[string]search.Text{"en": {Title: title}}}
	}
	for _, tt := range []struct {
		name   string
		writes [][]search.EventDocument
		remove []int64
	}{
		{"series rewritten", [][]search.EventDocument{series(7, 6, "jazz night", nil), series(7, 6, "rock night", nil)}, nil},
		{"series shortened", [][]search.EventDocument{series(7, 6, "jazz night", nil), series(7, 3, "jazz night", nil)}, nil},
		{"one occurrence overridden", [][]search.EventDocument{series(7, 6, "jazz night", nil),
			series(7, 6, "jazz night", func(k int, d *search.EventDocument) {
				if k == 2 {
					d.Status = "draft"
				}
			})}, nil},
		{"series to single", [][]search.EventDocument{series(7, 6, "jazz night", nil), {single(7, "jazz night")}}, nil},
		{"two series, one removed", [][]search.EventDocument{append(series(7, 5, "jazz", nil), series(8, 4, "folk", nil)...)}, []int64{7}},
		{"singles replaced and removed", [][]search.EventDocument{{single(1, "a"), single(2, "b"), single(3, "c")},
			{single(2, "bb")}}, []int64{1, 3}},
		{"everything removed", [][]search.EventDocument{append(series(7, 5, "jazz", nil), single(1, "a"))}, []int64{7, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := New()
			for _, w := range tt.writes {
				x.Apply(w)
			}
			if len(tt.remove) > 0 {
				x.Remove(tt.remove)
			}
			used := map[uint32]bool{}
			for slot := range x.rows {
				if r := &x.rows[slot]; r.isLive() {
					used[r.body] = true
					if x.bodies.refs[r.body] == 0 {
						t.Errorf("slot %d: body %d released", slot, r.body)
					}
					if r.grp != 0 && (int(r.grp) > len(x.groups) || !slices.ContainsFunc(x.groupOf(uint32(slot)).occ, func(m member) bool { return m.slot == uint32(slot) })) {
						t.Errorf("slot %d: group %d does not hold it", slot, r.grp)
					}
				}
			}
			for _, g := range x.groups {
				if g.body != 0 {
					used[g.body] = true
				}
			}
			if n := x.bodies.live(); n != len(used) {
				t.Errorf("%d bodies held, %d used", n, len(used))
			}
		})
	}
}

// TestIDSlots: an ID's slots move between the map of one slot and that of
// more as they grow and shrink, and an ID of none is in neither.
func TestIDSlots(t *testing.T) {
	m := newIDSlots()
	var buf [1]uint32
	for _, tt := range []struct {
		name      string
		slots     []uint32
		one, many int
	}{
		{"first", []uint32{4}, 1, 0},
		{"second", []uint32{4, 9}, 0, 1},
		{"third", []uint32{2, 4, 9}, 0, 1},
		{"back to one", []uint32{9}, 1, 0},
		{"none", nil, 0, 0},
	} {
		m.set(7, slices.Clone(tt.slots))
		if got := m.get(7, &buf); !slices.Equal(got, tt.slots) {
			t.Errorf("%s: get %v, want %v", tt.name, got, tt.slots)
		}
		if m.has(7) != (len(tt.slots) > 0) {
			t.Errorf("%s: has %v", tt.name, m.has(7))
		}
		if len(m.one) != tt.one || len(m.many) != tt.many {
			t.Errorf("%s: %d IDs of one slot, %d of more; want %d, %d", tt.name, len(m.one), len(m.many), tt.one, tt.many)
		}
		if got := slices.Sorted(m.slots()); !slices.Equal(got, tt.slots) {
			t.Errorf("%s: slots %v, want %v", tt.name, got, tt.slots)
		}
	}
}
