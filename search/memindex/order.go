package memindex

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
)

// This file is the date order: entries in blocks of at most blockMax,
// each with a summary (statuses and flags counted) that lets a query count
// a block it holds whole without reading it.

// compare orders entries by start, then by event ID, then by occurrence
// key.
func (x *Index) compare(a, b entry) int {
	if c := cmp.Compare(a.start, b.start); c != 0 || a.slot == b.slot {
		return c
	}
	ra, rb := &x.rows[a.slot], &x.rows[b.slot]
	return cmp.Or(cmp.Compare(ra.id, rb.id), x.occNames.compareOcc(ra.occ, rb.occ))
}

// blocks is the date order: sorted runs of entries, each non-empty and of
// at most blockMax entries, in order, with a summary of each.
type blocks []*block

// block is one run of the date order and its summary: the range of its
// entries' ends, and how many entries it holds of each status and flags.
// A list counts a block that its date bounds hold whole from the summary,
// without reading the entries (Search's blockCount).
type block struct {
	e              []entry
	minEnd, maxEnd int64
	kinds          []kindCount
	// occurrences counts the entries of series (occurrences with an
	// override; the groups' members are not in the date order): a
	// collapsed list counts a block from its summary only without them.
	occurrences int32
}

// kindCount is the number of entries of a block with one status and flags.
type kindCount struct {
	status, flags uint8
	n             int32
}

// blockMax bounds a block: a write moves at most this many entries (8 KiB).
const blockMax = 256

// newBlock returns the block of entries with its summary.
func newBlock(es []entry) *block {
	b := &block{e: es}
	b.summarize()
	return b
}

// summarize computes the block's summary from its entries.
func (b *block) summarize() {
	b.minEnd, b.maxEnd, b.kinds, b.occurrences = math.MaxInt64, math.MinInt64, b.kinds[:0], 0
	for i := range b.e {
		b.count(&b.e[i], 1)
	}
}

// count adds (delta 1) or removes (-1) an entry in the summary; the end
// range only grows here (summarize narrows it).
func (b *block) count(e *entry, delta int32) {
	b.minEnd, b.maxEnd = min(b.minEnd, e.end), max(b.maxEnd, e.end)
	if e.series != 0 {
		b.occurrences += delta
	}
	for i := range b.kinds {
		if k := &b.kinds[i]; k.status == e.status && k.flags == e.flags {
			if k.n += delta; k.n == 0 {
				b.kinds = slices.Delete(b.kinds, i, i+1)
			}
			return
		}
	}
	if delta > 0 {
		b.kinds = append(b.kinds, kindCount{status: e.status, flags: e.flags, n: delta})
	}
}

// find returns the block and position where e is or belongs.
func (bs blocks) find(x *Index, e entry) (int, int) {
	b := sort.Search(len(bs), func(i int) bool { return x.compare(bs[i].e[len(bs[i].e)-1], e) >= 0 })
	if b == len(bs) {
		if b == 0 {
			return 0, 0
		}
		return b - 1, len(bs[b-1].e)
	}
	i := sort.Search(len(bs[b].e), func(i int) bool { return x.compare(bs[b].e[i], e) >= 0 })
	return b, i
}

func (bs *blocks) insert(x *Index, e entry) {
	x.kindSlots(&e).Add(e.slot)
	if len(*bs) == 0 {
		*bs = blocks{newBlock([]entry{e})}
		return
	}
	b, i := bs.find(x, e)
	blk := (*bs)[b]
	blk.e = slices.Insert(blk.e, i, e)
	if len(blk.e) <= blockMax {
		blk.count(&e, 1)
		return
	}
	half := len(blk.e) / 2
	left, right := newBlock(slices.Clone(blk.e[:half])), newBlock(slices.Clone(blk.e[half:]))
	(*bs)[b] = left
	*bs = slices.Insert(*bs, b+1, right)
}

func (bs *blocks) remove(x *Index, e entry) {
	b, i := bs.find(x, e)
	if b >= len(*bs) || i >= len((*bs)[b].e) || (*bs)[b].e[i].slot != e.slot {
		return // not in the order (cannot happen: every live row is)
	}
	x.kindSlots(&e).Remove(e.slot)
	blk := (*bs)[b]
	blk.e = slices.Delete(blk.e, i, i+1)
	if len(blk.e) == 0 {
		*bs = slices.Delete(*bs, b, b+1)
		return
	}
	if e.end == blk.minEnd || e.end == blk.maxEnd {
		blk.summarize() // the end range may narrow
		return
	}
	blk.count(&e, -1)
}

// countIn counts the entries that are in set (nil: every one) and whose
// point is inside (nil: every one), with one loop per case and no branch
// on the entries (the dates order them, so a set or circle takes them in a
// pattern no branch predictor can learn).
func countIn(es []entry, set []uint64, inside []uint8) int {
	n := 0
	switch {
	case inside == nil:
		for _, e := range es {
			n += int(set[e.slot>>6] >> (e.slot & 63) & 1)
		}
	case set == nil:
		for _, e := range es {
			n += int(inside[e.point+1])
		}
	default:
		for _, e := range es {
			n += int(set[e.slot>>6]>>(e.slot&63)&1) & int(inside[e.point+1])
		}
	}
	return n
}

// lowerBound returns the block and position of the first entry starting
// at or after start.
func (bs blocks) lowerBound(start int64) (int, int) {
	b := sort.Search(len(bs), func(i int) bool { return bs[i].e[len(bs[i].e)-1].start >= start })
	if b == len(bs) {
		return b, 0
	}
	return b, sort.Search(len(bs[b].e), func(i int) bool { return bs[b].e[i].start >= start })
}

// kindSlots returns the bitmap of the slots of the date order's entries
// with e's status and flags (Index.kinds), creating it.
func (x *Index) kindSlots(e *entry) *roaring.Bitmap {
	k := kindKey{e.status, e.flags}
	if x.kinds == nil {
		x.kinds = map[kindKey]*roaring.Bitmap{}
	}
	b := x.kinds[k]
	if b == nil {
		b = roaring.New()
		x.kinds[k] = b
	}
	return b
}

// kindKey is a status code and flags of an entry.
type kindKey struct{ status, flags uint8 }

// setOrder makes the date order of all, sorted: blocks of half blockMax
// (room to grow), and the kinds' slots.
func (x *Index) setOrder(all []entry) {
	x.order, x.kinds = blocks{}, nil
	for i := range all {
		x.kindSlots(&all[i]).Add(all[i].slot)
	}
	for len(all) > 0 {
		n := min(len(all), blockMax/2)
		x.order = append(x.order, newBlock(slices.Clone(all[:n])))
		all = all[n:]
	}
}
