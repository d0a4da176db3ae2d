package embedded

import (
	"cmp"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
	"github.com/golang/snappy"
)

// sequentialLoad is how the event store was read back before it was
// decoded in parallel: every document in key order, TextFrom and
// DatesFrom resolved over all of them, then sorted by ID and occurrence. TestLoadOrder
// compares the parallel load with it.
func sequentialLoad(t *testing.T, s *eventStore) []search.EventDocument {
	t.Helper()
	var docs []search.EventDocument
	keyAt := map[string]int{}
	type sharedText struct {
		at  int
		ref storedRef
	}
	var shared []sharedText
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
			raw, err := snappy.Decode(nil, v)
			if err != nil {
				return err
			}
			d, ref, err := decodeStored(raw)
			if err != nil {
				return err
			}
			if ref.from != "" {
				shared = append(shared, sharedText{len(docs), ref})
			} else if d.Occurrence != "" {
				keyAt[string(k)] = len(docs)
			}
			docs = append(docs, d)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shared {
		if j, ok := keyAt[s.ref.from]; ok {
			s.ref.resolve(&docs[s.at], &docs[j])
		}
	}
	slices.SortFunc(docs, func(a, b search.EventDocument) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Occurrence, b.Occurrence))
	})
	return docs
}

// TestLoadOrder: the parallel load hands the index, in one call, the
// documents a sequential read gives (same documents, same order: by ID
// as numbers although bbolt orders the keys as text, occurrences of a
// series together, shared text resolved), whatever the chunk size, also
// when chunks end next to series whose occurrences share one stored text.
func TestLoadOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := searchtest.Generate(7, 60, 4, 3)
	var docs []search.EventDocument
	for i, d := range f.Events {
		// IDs whose text order differs from their numeric order (9, 10,
		// 100...) and every fourth event a series of 1 to 5 occurrences,
		// one of them with a text of its own.
		d.ID = []int64{9, 10, 100, 11, 2, 1000, 99, 101}[i%8] + int64(i/8)*10000
		if i%4 == 0 {
			occ := searchtest.Occurrences(d, 1+i%5, 86400)
			if len(occ) > 2 {
				occ[1].Text = map[string]search.Text{"en": {Title: fmt.Sprintf("own title %d", i)}}
			}
			docs = append(docs, occ...)
			continue
		}
		docs = append(docs, d)
	}
	e := mustOpen(t, dir)
	if err := e.IndexEvents(t.Context(), docs); err != nil {
		t.Fatalf("IndexEvents: %v", err)
	}
	s := closeAndOpenStore(t, e, dir)
	want := sequentialLoad(t, s)
	if len(want) != len(docs) {
		t.Fatalf("stored %d documents, want %d", len(want), len(docs))
	}
	t.Run("load", func(t *testing.T) {
		calls := 0
		var got []search.EventDocument
		n, err := s.load(func(d []search.EventDocument) {
			calls++
			got = d
		})
		if err != nil || n != len(want) || calls != 1 {
			t.Fatalf("load = %d, %v in %d calls; want %d in 1", n, err, calls, len(want))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("load's documents differ from a sequential read's")
		}
	})
	for _, size := range []int{1, 2, 3, 7, 1000} {
		t.Run(fmt.Sprintf("chunks of %d", size), func(t *testing.T) {
			err := s.db.View(func(tx *bolt.Tx) error {
				var entries []loadEntry
				err := tx.Bucket(eventsBucket).ForEach(func(k, v []byte) error {
					e, err := newLoadEntry(k, v)
					entries = append(entries, e)
					return err
				})
				if err != nil {
					return err
				}
				slices.SortFunc(entries, compareEntries)
				got := make([]search.EventDocument, len(entries))
				if err := decodeChunks(entries, got, size, new(atomic.Int64)); err != nil {
					return err
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("decodeChunks(%d)'s documents differ from a sequential read's", size)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestChunkByEvent: chunks of about the size asked, never splitting an
// event's entries.
func TestChunkByEvent(t *testing.T) {
	t.Parallel()
	ids := func(ids ...int64) []loadEntry {
		out := make([]loadEntry, len(ids))
		for i, id := range ids {
			out[i].id = id
		}
		return out
	}
	tests := []struct {
		name    string
		entries []loadEntry
		size    int
		want    []int
	}{
		{"empty", nil, 4, []int{0}},
		{"singles", ids(1, 2, 3, 4, 5), 2, []int{0, 2, 4, 5}},
		{"a series across a boundary", ids(1, 2, 2, 2, 3, 4), 2, []int{0, 4, 6}},
		{"a series longer than a chunk", ids(5, 5, 5, 5, 5), 2, []int{0, 5}},
		{"size 0 as 1", ids(1, 2), 0, []int{0, 1, 2}},
		{"one chunk", ids(1, 1, 2), 10, []int{0, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chunkByEvent(tt.entries, tt.size); !slices.Equal(got, tt.want) {
				t.Errorf("chunkByEvent = %v, want %v", got, tt.want)
			}
		})
	}
}

// closeAndOpenStore closes e and opens the event store it wrote in dir,
// closed when the test ends.
func closeAndOpenStore(t *testing.T, e *Engine, dir string) *eventStore {
	t.Helper()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	s, ok, err := openEventStore(filepath.Join(dir, "events.db"))
	if err != nil || !ok {
		t.Fatalf("openEventStore: %v, %v", ok, err)
	}
	t.Cleanup(func() { _ = s.close() })
	return s
}

// TestOrderEntries: entries in bbolt's key order (bytes) come out of
// orderEntries by event ID and occurrence, whatever the lengths of their
// IDs, and keys out of that order (IDs with leading zeros, or entries not
// in the key order) are sorted all the same.
func TestOrderEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys []string
	}{
		{"empty", nil},
		{"one length", []string{"1-a", "1-b", "2", "3-a", "7-2026"}},
		{"lengths", []string{"1-a", "1-b", "10-a", "100", "100-x", "101-a", "11", "2-b", "20-a", "9-a", "9-b"}},
		{"lengths, one document each", []string{"1", "10", "100", "1000", "11", "2", "9", "99"}},
		{"the largest IDs", []string{"1", "9223372036854775807-a", "9223372036854775807-b", "99"}},
		{"leading zeros", []string{"007-a", "01-a", "010-a", "8-a"}},
		{"not in the key order", []string{"9-a", "10-a", "1-b", "1-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var entries []loadEntry
			for _, k := range tt.keys {
				e, err := newLoadEntry([]byte(k), nil)
				if err != nil {
					t.Fatal(err)
				}
				entries = append(entries, e)
			}
			want := slices.Clone(entries)
			slices.SortFunc(want, func(a, b loadEntry) int {
				ia, oa, _ := strings.Cut(string(a.key), "-")
				ib, ob, _ := strings.Cut(string(b.key), "-")
				na, _ := strconv.ParseInt(ia, 10, 64)
				nb, _ := strconv.ParseInt(ib, 10, 64)
				return cmp.Or(cmp.Compare(na, nb), cmp.Compare(oa, ob))
			})
			got := orderEntries(entries)
			keys := func(es []loadEntry) (out []string) {
				for _, e := range es {
					out = append(out, string(e.key))
				}
				return out
			}
			if !slices.Equal(keys(got), keys(want)) {
				t.Errorf("orderEntries = %q, want %q", keys(got), keys(want))
			}
		})
	}
}

// BenchmarkDecodeChunk measures decodeChunk, the decoders' part of a
// start-up, on the stored forms of the fixtures' events with series (most
// documents are occurrences stored as their dates, DatesFrom), in chunks
// of loadChunk entries on one goroutine, with its allocations:
// go test ./search/embedded -run '^$' -bench DecodeChunk -benchmem -cpu 1.
func BenchmarkDecodeChunk(b *testing.B) {
	f := searchtest.WithSeries(searchtest.Generate(9, 3000, 50, 20))
	last := map[string]int{}
	for i, d := range f.Events {
		last[d.Key()] = i
	}
	put := encodeDocs(f.Events, last)
	slices.SortFunc(put, func(a, b storedDoc) int { return strings.Compare(a.key, b.key) })
	entries := make([]loadEntry, len(put))
	for i, p := range put {
		e, err := newLoadEntry([]byte(p.key), p.raw)
		if err != nil {
			b.Fatal(err)
		}
		entries[i] = e
	}
	entries = orderEntries(entries)
	bounds := chunkByEvent(entries, loadChunk)
	docs := make([]search.EventDocument, len(entries))
	var jsonDocs atomic.Int64
	var buf []byte
	var in interner
	for b.Loop() {
		for c := 1; c < len(bounds); c++ {
			var err error
			if buf, err = decodeChunk(entries[bounds[c-1]:bounds[c]], docs[bounds[c-1]:bounds[c]], buf, &in, &jsonDocs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/doc")
}
