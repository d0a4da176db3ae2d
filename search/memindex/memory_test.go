package memindex

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
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
// entry (on a 64-bit platform, as the service runs): 40, 112 and 32
// bytes; an occurrence that differs from its series' others in its dates
// only shares their body. The row held the body, the entry again, the
// statuses as strings and a slice per list filter (264 bytes).
func TestRowSize(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"row", unsafe.Sizeof(row{}), 32},
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
			bodies := map[*rowBody]bool{}
			for i, d := range tt.docs {
				slot, ok := x.slotOf(docKey{d.ID, d.Occurrence})
				if !ok {
					t.Fatalf("document %d not indexed", i)
				}
				r := &x.rows[slot]
				if r.id != d.ID || x.occNames.occString(r.occ) != d.Occurrence || r.pub != d.PublishDate || x.names[r.status] != d.Status {
					t.Errorf("document %d: row %d %q pub %d status %q", i, r.id, x.occNames.occString(r.occ), r.pub, x.names[r.status])
				}
				bodies[r.rowBody] = true
			}
			if len(bodies) != tt.wantBodies {
				t.Errorf("%d row bodies, want %d", len(bodies), tt.wantBodies)
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
