package memindex

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestRunsPostEveryRow: however an index is filled (a load, a bulk build
// in batches or in one write, event by event), every live row is in the
// title or body postings of each of its words and in the bitmaps of
// their short prefixes, and no bitmap holds a slot that no row puts there.
// A load and a bulk build add a series' occurrences in runs (sharedRun):
// a run that lost or gained a slot would fail here even where the
// queries decide the occurrences' group on its first member.
func TestRunsPostEveryRow(t *testing.T) {
	t.Parallel() // sets none of the package's knobs: runs beside the other parallel tests
	all, _ := agreeDocs(3000)
	for _, c := range []struct {
		name  string
		build func() *Index
	}{
		{"load", func() *Index { x := New(); x.Apply(all); return x }},
		{"bulk, batches", func() *Index {
			x := NewBulk()
			for _, b := range eventBatches(all, 400) {
				x.Apply(b)
			}
			x.Finish()
			return x
		}},
		{"bulk, one write", func() *Index { x := NewBulk(); x.Apply(all); x.Finish(); return x }},
		{"event by event", func() *Index {
			x := New()
			for _, b := range eventBatches(all, 1) {
				x.Apply(b)
			}
			return x
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := c.build()
			checkPostings(t, x, len(all))
		})
	}
}

// checkPostings fails t unless the word and prefix bitmaps of x hold
// exactly the slots of the live rows that hold those words, and x holds
// docs rows.
func checkPostings(t *testing.T, x *Index, docs int) {
	t.Helper()
	want := map[*roaring.Bitmap]*roaring.Bitmap{}
	put := func(b *roaring.Bitmap, slot uint32) {
		if b == nil {
			t.Fatalf("slot %d: a nil bitmap among its words'", slot)
		}
		if want[b] == nil {
			want[b] = roaring.New()
		}
		want[b].Add(slot)
	}
	live := 0
	for slot := range x.rows {
		if !x.rows[slot].isLive() {
			continue
		}
		r := x.bodyOf(uint32(slot))
		live++
		for i, w := range r.words {
			title := i < int(r.nTitle)
			b := w.body
			if title {
				b = w.title
			}
			put(b, uint32(slot))
			shortPrefixes(w.text, func(p string) {
				u := w.vocab.prefixes[p]
				if u == nil {
					t.Fatalf("slot %d: no prefix %q of %q", slot, p, w.text)
				}
				if title {
					put(u.title, uint32(slot))
				} else {
					put(u.body, uint32(slot))
				}
				put(u.all, uint32(slot))
			})
		}
	}
	if live != docs {
		t.Fatalf("%d live rows, want %d", live, docs)
	}
	for b, slots := range want {
		if !b.Equals(slots) {
			t.Fatalf("a bitmap holds %d slots (%v...), its rows' are %d", b.GetCardinality(), first(b), slots.GetCardinality())
		}
	}
	// The vocabularies hold no bitmap that no row reaches.
	for _, l := range x.langs {
		for _, v := range l.parts {
			for text, w := range v.byText {
				for _, b := range []*roaring.Bitmap{w.title, w.body} {
					if b != nil && want[b] == nil && !b.IsEmpty() {
						t.Fatalf("word %q: a bitmap of %d slots that no row holds", text, b.GetCardinality())
					}
				}
			}
		}
	}
}

// first returns up to 5 of b's slots.
func first(b *roaring.Bitmap) []uint32 {
	var out []uint32
	it := b.Iterator()
	for it.HasNext() && len(out) < 5 {
		out = append(out, it.Next())
	}
	return out
}
