package memindex

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
)

// This file holds the facet buckets: the documents of the date order
// grouped by week of their start, with per bucket the counts of each list
// value (per kind: status and flags), per category the counts of the
// values of its documents, and the bucket's own small bit sets, so that a
// query's facets cost a step per value and bucket of its date window, not
// a step per match (see facetIndex); and the lists with list filters read
// by them (facetIndex.each).

// facetWidth is the span of start dates of one bucket, in seconds (a
// week). A variable so that the tests can take small buckets.
var facetWidth int64 = 7 * 86400

// bucketListMin is the number of candidates per bucket of a list's window
// from which the list is read by the buckets (facetIndex.each). A
// variable so that the tests can read every list by them.
var bucketListMin = 16

// facetIndex holds every document (those of the date order, and the
// groups' members, marked flagGrouped) by bucket: the week of their
// start. A plan that decides groups (plan.grouped) leaves the members out
// by their flag and counts them per group; any other reads them here
// like any other document (plan.byBuckets).
//
// Each document has a local number in its bucket. Per bucket it keeps,
// for each kind (status and flags) a bit set of its documents and their
// number, and for each value of each list filter its documents (as local
// numbers, or as a bit set when they are many) and their number per kind,
// and per category the counts of each kind and value of the category's
// documents (cells). A query's facets then take each bucket of its date
// window once:
//
//   - a bucket that the dates hold whole, in a query without list filters,
//     adds its counts of each value for the kinds the query keeps (a step
//     per value and kind);
//   - a bucket that the dates hold whole, in a query whose only list filter
//     is one category (a category's page), adds the category's cells of
//     the kinds the query keeps (a step per cell: per value and kind);
//   - a span of 1<<spanShift buckets (facetIndex.spans) that the dates
//     hold whole, in a query without list filters or of one category as
//     above, adds its counts of each value or the category's cells of
//     the span at once: its weeks cost as much as one week (so a window
//     of two years reads about 13 spans and the weeks at its edges, not
//     105 weeks);
//   - otherwise the bucket's matches become a bit set of its local
//     numbers, from the postings of the filter values and the kinds' bit
//     sets (and, for a bucket that the dates cut, the dates of its
//     documents), and each value counts its documents in that set (a step
//     per posting, or per 64 local numbers for a dense value). A radius
//     is one more filter there: the postings of the bucket's points inside
//     the circle (or, when the list filters left fewer documents, each of
//     those decided by its point).
//
// The bucket also holds its documents per geo point, with their number
// per kind, so that a radius list counts a bucket a step per point
// (nearCounted).
//
// So the work grows with the values and buckets of the window (and the
// documents of the two or so buckets the dates cut), never with the
// matches (but for a radius's postings, a step per document inside the
// circle): the facets of every upcoming event cost as much as those of a
// week's worth. The total of a query that asks for no page comes from the
// same counts (countOnly). The counts are exact.
//
// Memory: per document of the date order its dates, slot and local
// number (24 bytes) and its postings (4 bytes a value, less as a bit
// set, and 4 bytes for its point); per bucket and value (or point) 80
// bytes; per bucket, category, kind and value a cell of 8 bytes (at
// 200,000 events of the load benchmark's shape, 23 MB in all, a tenth
// more heap, before the points); the spans' cells add about a sixth of
// the buckets' (at 100,000 events and 25,000 weekly series, 384,000
// cells to 2.1 million: 3 MB).
type facetIndex struct {
	// work counts the steps of every query's facets so far (facetSums.work),
	// and paths the buckets they took each way (see facetPath).
	work  atomic.Uint64
	paths [numPaths]atomic.Uint64
	// listWork counts the steps of the lists read by the buckets (each).
	listWork atomic.Uint64
	// ordered counts the documents those lists, and the collapsed lists'
	// walks (searcher.walkFrom), put in the date order (compared entry by
	// entry): at most their pages' and the ties of their last starts, not
	// a week's matches (each).
	ordered atomic.Uint64
	buckets map[int64]*fbucket
	// spans holds, per span of 1<<spanShift consecutive bucket numbers
	// (the bucket's number >> spanShift), the kinds, date bounds, values'
	// counts per kind and category cells of all the documents of its
	// buckets (no postings): a query without list filters or of one
	// category counts a span that its dates hold whole from the span's
	// counts or cells, as it would a bucket (a step per value and kind),
	// so the weeks inside a long window cost a span's per 1<<spanShift
	// weeks, and only the weeks at its edges are taken one by one.
	spans map[int64]*fbucket
	// nums holds the numbers of the buckets, in order.
	nums []int64
	// local holds each slot's local number in its bucket (slots of the
	// date order only).
	local []uint32
	// values numbers the values of each list filter densely, so that a
	// query adds counts in arrays.
	values [numLists]valueNumbers
	// points numbers the geo points (Index.points) the buckets hold.
	points valueNumbers
	// inverted counts the documents whose end is before their start:
	// while there are none, a bound on the end is one on the start too
	// (see Index.plan).
	inverted int
}

// valueNumbers gives the values of a list filter dense numbers, freed
// when no bucket holds the value.
type valueNumbers struct {
	num  map[int64]int32
	ids  []int64
	refs []int32
	free []int32
}

// fbucket is one week of the date order's documents.
type fbucket struct {
	num int64
	n   int
	// start and end hold each local number's dates and slot its slot;
	// live marks the local numbers in use, free those free below
	// len(start).
	start, end []int64
	slot       []uint32
	live       []uint64
	free       []uint32
	// minStart to maxEnd bound the dates of the live documents (exactly:
	// a removal of a document at a bound recomputes them).
	minStart, maxStart, minEnd, maxEnd int64
	kinds                              []fkind
	lists                              [numLists]fvalues
	// points holds the documents of each geo point (by its number in
	// facetIndex.points), so that a radius query counts a bucket a step
	// per point (see nearCounted).
	points fvalues
	// byCategory holds, per category, the counts of the values of the
	// bucket's documents of that category (see cells).
	byCategory map[int64]*cells
}

// cells counts, per kind, the values of the documents of one category in
// a bucket, so that the facets of a category's events take a step per
// value and bucket, as those of all events do: a cell per kind and value
// (and per kind, the documents), in the order of their keys (cellKey).
type cells struct {
	n  int32
	cs []cell
}

// cell is one count of cells, in 8 bytes: its key (cellKey: the kind,
// the list filter, numLists for the documents themselves, and the value
// number) above its count (the low cellBits bits; a bucket holds far
// fewer documents).
type cell uint64

// cellBits is the width of a cell's count.
const cellBits = 24

// cellKey returns the key of the cell of kind k (below 2048), list filter
// l (at most numLists) and value number vn (below 1<<25).
func cellKey(k, l int, vn int32) uint64 { return uint64(k)<<28 | uint64(l)<<25 | uint64(uint32(vn)) }

func (c cell) key() uint64 { return uint64(c) >> cellBits }
func (c cell) n() int      { return int(c & (1<<cellBits - 1)) }

// add adds delta (1 or -1) to the cell of key, adding or dropping it.
func (c *cells) add(key uint64, delta int) {
	i, found := slices.BinarySearchFunc(c.cs, key, func(e cell, k uint64) int {
		switch {
		case e.key() < k:
			return -1
		case e.key() > k:
			return 1
		}
		return 0
	})
	if !found {
		if delta > 0 {
			c.cs = slices.Insert(c.cs, i, cell(key<<cellBits|uint64(delta)))
		}
		return
	}
	if n := c.cs[i].n() + delta; n > 0 {
		c.cs[i] = cell(key<<cellBits | uint64(n))
	} else {
		c.cs = slices.Delete(c.cs, i, i+1)
	}
}

// from returns the index of the first cell at or after i whose key is at
// least key (len(c.cs) when there is none).
func (c *cells) from(i int, key uint64) int {
	j, _ := slices.BinarySearchFunc(c.cs[i:], key, func(e cell, k uint64) int {
		switch {
		case e.key() < k:
			return -1
		case e.key() > k:
			return 1
		}
		return 0
	})
	return i + j
}

// docs returns the number of documents of the kinds ok that the cells
// count (their own cells: list filter numLists), a binary search per kind
// kept.
func (c *cells) docs(ok []bool) int {
	n := 0
	for k, keep := range ok {
		if !keep {
			continue
		}
		key := cellKey(k, numLists, 0)
		if i := c.from(0, key); i < len(c.cs) && c.cs[i].key() == key {
			n += c.cs[i].n()
		}
	}
	return n
}

// manyKeys is the number of keys from which cells.addAll merges them
// with the cells in one pass instead of adding them one at a time.
const manyKeys = 32

// addAll adds delta (1 or -1) to the cells of keys (sorted, without
// repeats), as add does for each. Up to manyKeys keys it adds them one at
// a time; more (a document of many categories or tags) are merged with
// the cells in one pass into a new slice, since inserting or dropping
// cells one at a time moves the cells after each: cubic work in the keys
// over a document's categories.
func (c *cells) addAll(keys []uint64, delta int) {
	if len(keys) <= manyKeys {
		for _, key := range keys {
			c.add(key, delta)
		}
		return
	}
	merged := make([]cell, 0, len(c.cs)+max(delta, 0)*len(keys))
	i, j := 0, 0
	for i < len(c.cs) || j < len(keys) {
		switch {
		case j == len(keys) || i < len(c.cs) && c.cs[i].key() < keys[j]:
			merged = append(merged, c.cs[i])
			i++
		case i == len(c.cs) || keys[j] < c.cs[i].key():
			if delta > 0 {
				merged = append(merged, cell(keys[j]<<cellBits|uint64(delta)))
			}
			j++
		default: // the same key
			if n := c.cs[i].n() + delta; n > 0 {
				merged = append(merged, cell(keys[j]<<cellBits|uint64(n)))
			}
			i, j = i+1, j+1
		}
	}
	c.cs = merged
}

// categoryCells adds (delta 1) or removes (-1) the document of row r and
// kind k in the cells of each of its categories.
//
// Each category's cells take the same keys (the document's own cell and
// one per distinct value of each list), so the keys are made once, sorted
// and without repeats, and the categories are taken once each: the work
// is a step per category and key (and per pair of categories; see
// cells.addAll for many keys), where
// deduplicating every list again for every category took a step per
// category and pair of values: about 2·10⁹ for one document of 2,000
// categories, seconds of CPU each time it was indexed.
func (f *facetIndex) categoryCells(b *fbucket, r *rowBody, k, delta int) {
	cats := r.list(listCategories)
	if len(cats) == 0 {
		return
	}
	var buf [32]uint64
	keys := append(buf[:0], cellKey(k, numLists, 0))
	for l := range numLists {
		for _, v := range r.list(l) {
			keys = append(keys, cellKey(k, l, f.values[l].num[v]))
		}
	}
	// Distinct values have distinct numbers: a repeated key is a
	// repeated value.
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for j, c := range cats {
		if slices.Contains(cats[:j], c) {
			continue
		}
		if b.byCategory == nil {
			b.byCategory = map[int64]*cells{}
		}
		cc := b.byCategory[c]
		if cc == nil {
			cc = &cells{}
			b.byCategory[c] = cc
		}
		cc.n += int32(delta)
		cc.addAll(keys, delta)
		if cc.n == 0 {
			delete(b.byCategory, c)
		}
	}
}

// fkind is the documents of a bucket of one status and flags (a kind
// left with none stays, so that the kind numbers of the counts hold).
type fkind struct {
	status, flags uint8
	n             int32
	bits          []uint64
}

// fvalues is the values of one list filter in a bucket.
type fvalues struct {
	at map[int32]int32
	vs []fvalue
}

// fvalue is one value of a list filter in a bucket: its documents, as
// local numbers (docs) or, when they are many, as a bit set (bits), their
// number n, and their number per kind (byKind, by kind number).
type fvalue struct {
	v      int32
	n      int32
	byKind []int32
	docs   []uint32
	bits   []uint64
}

// spanShift gives the buckets of a span (facetIndex.spans): 1<<spanShift
// consecutive bucket numbers. A variable so that the tests can take
// other spans.
var spanShift uint = 3

func newFacetIndex() *facetIndex {
	f := &facetIndex{buckets: map[int64]*fbucket{}, spans: map[int64]*fbucket{}}
	for l := range f.values {
		f.values[l].num = map[int64]int32{}
	}
	f.points.num = map[int64]int32{}
	return f
}

// bucketOf returns the number of the bucket of a start.
func bucketOf(start int64) int64 {
	b := start / facetWidth
	if start%facetWidth < 0 {
		b--
	}
	return b
}

// add puts the document at slot (its entry e, in the date order) in its
// bucket. The caller holds mu.
func (f *facetIndex) add(x *Index, slot uint32, e *entry) {
	num := bucketOf(e.start)
	b := f.buckets[num]
	if b == nil {
		b = &fbucket{num: num, minStart: math.MaxInt64, maxStart: math.MinInt64, minEnd: math.MaxInt64, maxEnd: math.MinInt64}
		f.buckets[num] = b
		i, _ := slices.BinarySearch(f.nums, num)
		f.nums = slices.Insert(f.nums, i, num)
	}
	var i uint32
	if k := len(b.free); k > 0 {
		i, b.free = b.free[k-1], b.free[:k-1]
		b.start[i], b.end[i], b.slot[i] = e.start, e.end, slot
	} else {
		i = uint32(len(b.start))
		b.start, b.end, b.slot = append(b.start, e.start), append(b.end, e.end), append(b.slot, slot)
	}
	setBit(&b.live, i)
	b.n++
	if e.end < e.start {
		f.inverted++
	}
	b.minStart, b.maxStart = min(b.minStart, e.start), max(b.maxStart, e.start)
	b.minEnd, b.maxEnd = min(b.minEnd, e.end), max(b.maxEnd, e.end)
	k := b.kind(e.status, e.flags)
	kd := &b.kinds[k]
	kd.n++
	setBit(&kd.bits, i)
	for slot >= uint32(len(f.local)) {
		f.local = append(f.local, 0)
	}
	f.local[slot] = i
	r := x.bodyOf(slot)
	for l := range numLists {
		vs := r.list(l)
		for j, v := range vs {
			if !slices.Contains(vs[:j], v) {
				b.lists[l].add(&f.values[l], v, i, k, len(b.start))
			}
		}
	}
	if e.point >= 0 {
		b.points.add(&f.points, int64(e.point), i, k, len(b.start))
	}
	f.categoryCells(b, r, k, 1)
	f.addToSpan(r, num, e, 1)
}

// addToSpan adds (delta 1) or removes (-1) the document of row body r (its
// entry e) in bucket num to or from the span of the bucket: its count,
// kind and category cells, and on adding its date bounds. A span left
// empty goes. A removal is made before the values' numbers may go (the
// cells' keys need them), and its caller then recomputes the span's date
// bounds (boundSpan). The caller holds mu.
func (f *facetIndex) addToSpan(r *rowBody, num int64, e *entry, delta int) {
	sn := num >> spanShift
	sp := f.spans[sn]
	if sp == nil {
		sp = &fbucket{num: sn, minStart: math.MaxInt64, maxStart: math.MinInt64, minEnd: math.MaxInt64, maxEnd: math.MinInt64}
		f.spans[sn] = sp
	}
	k := sp.kind(e.status, e.flags)
	sp.n += delta
	sp.kinds[k].n += int32(delta)
	f.categoryCells(sp, r, k, delta)
	for l := range numLists {
		vs := r.list(l)
		for j, v := range vs {
			if !slices.Contains(vs[:j], v) {
				sp.lists[l].count(f.values[l].num[v], k, delta)
			}
		}
	}
	if sp.n == 0 {
		delete(f.spans, sn)
		return
	}
	if delta > 0 {
		sp.minStart, sp.maxStart = min(sp.minStart, e.start), max(sp.maxStart, e.start)
		sp.minEnd, sp.maxEnd = min(sp.minEnd, e.end), max(sp.maxEnd, e.end)
	}
}

// boundSpan recomputes the date bounds of the span of bucket num from its
// buckets (already updated) after the removal of a document of entry e,
// when e was at one of them. The caller holds mu.
func (f *facetIndex) boundSpan(num int64, e *entry) {
	sn := num >> spanShift
	sp := f.spans[sn]
	if sp == nil {
		return
	}
	if e.start == sp.minStart || e.start == sp.maxStart || e.end == sp.minEnd || e.end == sp.maxEnd {
		sp.minStart, sp.maxStart, sp.minEnd, sp.maxEnd = math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64
		for j := sn << spanShift; ; j++ {
			if b := f.buckets[j]; b != nil {
				sp.minStart, sp.maxStart = min(sp.minStart, b.minStart), max(sp.maxStart, b.maxStart)
				sp.minEnd, sp.maxEnd = min(sp.minEnd, b.minEnd), max(sp.maxEnd, b.maxEnd)
			}
			if j == sn<<spanShift|(1<<spanShift-1) {
				break
			}
		}
	}
}

// remove takes the document at slot (its entry e) out of its bucket; a
// bucket left empty goes. The caller holds mu, and the row still has the
// lists it was added with.
func (f *facetIndex) remove(x *Index, slot uint32, e *entry) {
	b := f.buckets[bucketOf(e.start)]
	if b == nil {
		return // cannot happen: every document of the date order is in one
	}
	i := f.local[slot]
	clearBit(b.live, i)
	b.free = append(b.free, i)
	b.n--
	if e.end < e.start {
		f.inverted--
	}
	k := b.kind(e.status, e.flags)
	b.kinds[k].n--
	clearBit(b.kinds[k].bits, i)
	r := x.bodyOf(slot)
	f.categoryCells(b, r, k, -1) // before the values' numbers may go
	f.addToSpan(r, b.num, e, -1)
	defer f.boundSpan(b.num, e) // once the bucket's bounds are recomputed
	for l := range numLists {
		vs := r.list(l)
		for j, v := range vs {
			if !slices.Contains(vs[:j], v) {
				b.lists[l].remove(&f.values[l], v, i, k, len(b.start))
			}
		}
	}
	if e.point >= 0 {
		b.points.remove(&f.points, int64(e.point), i, k, len(b.start))
	}
	if b.n == 0 {
		delete(f.buckets, b.num)
		if j, ok := slices.BinarySearch(f.nums, b.num); ok {
			f.nums = slices.Delete(f.nums, j, j+1)
		}
		return
	}
	if e.start == b.minStart || e.start == b.maxStart || e.end == b.minEnd || e.end == b.maxEnd {
		b.bound()
	}
}

// bound recomputes the bucket's date bounds from its live documents.
func (b *fbucket) bound() {
	b.minStart, b.maxStart, b.minEnd, b.maxEnd = math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64
	for i := range b.start {
		if b.live[i>>6]&(1<<(i&63)) != 0 {
			b.minStart, b.maxStart = min(b.minStart, b.start[i]), max(b.maxStart, b.start[i])
			b.minEnd, b.maxEnd = min(b.minEnd, b.end[i]), max(b.maxEnd, b.end[i])
		}
	}
}

// kind returns the number of the bucket's kind of status and flags,
// adding it.
func (b *fbucket) kind(status, flags uint8) int {
	for k := range b.kinds {
		if b.kinds[k].status == status && b.kinds[k].flags == flags {
			return k
		}
	}
	b.kinds = append(b.kinds, fkind{status: status, flags: flags})
	return len(b.kinds) - 1
}

// dense reports whether n documents of a bucket of size local numbers
// are kept as a bit set: when a bit set's words are fewer than half the
// local numbers (counting them in a set costs a word each, or a number
// each). sparse, with hysteresis, whether a bit set goes back to numbers.
func dense(n, size int) bool   { return n*32 > size }
func sparseN(n, size int) bool { return n*64 < size }

// add adds local number i (of kind k) to value v.
func (fv *fvalues) add(nums *valueNumbers, v int64, i uint32, k, size int) {
	if fv.at == nil {
		fv.at = map[int32]int32{}
	}
	vn := nums.get(v)
	at, ok := fv.at[vn]
	if !ok {
		at = int32(len(fv.vs))
		fv.at[vn] = at
		fv.vs = append(fv.vs, fvalue{v: vn})
		nums.refs[vn]++
	}
	e := &fv.vs[at]
	e.n++
	for k >= len(e.byKind) {
		e.byKind = append(e.byKind, 0)
	}
	e.byKind[k]++
	if e.bits != nil {
		setBit(&e.bits, i)
		return
	}
	e.docs = append(e.docs, i)
	if dense(len(e.docs), size) {
		for _, d := range e.docs {
			setBit(&e.bits, d)
		}
		e.docs = nil
	}
}

// count adds delta (1 or -1) to the count of value number vn (of kind k)
// without postings (a span's values: the numbers are held by the
// buckets' values, which hold the span's documents too), dropping a value
// left with none.
func (fv *fvalues) count(vn int32, k, delta int) {
	if fv.at == nil {
		fv.at = map[int32]int32{}
	}
	at, ok := fv.at[vn]
	if !ok {
		if delta < 0 {
			return // cannot happen: a span's document has its values
		}
		at = int32(len(fv.vs))
		fv.at[vn] = at
		fv.vs = append(fv.vs, fvalue{v: vn})
	}
	e := &fv.vs[at]
	e.n += int32(delta)
	for k >= len(e.byKind) {
		e.byKind = append(e.byKind, 0)
	}
	e.byKind[k] += int32(delta)
	if e.n > 0 {
		return
	}
	fv.drop(at, vn)
}

// drop removes the emptied value number vn, at index at of fv.vs, moving
// the last value into its place.
func (fv *fvalues) drop(at, vn int32) {
	last := int32(len(fv.vs) - 1)
	if at != last {
		fv.vs[at] = fv.vs[last]
		fv.at[fv.vs[at].v] = at
	}
	fv.vs = fv.vs[:last]
	delete(fv.at, vn)
}

// remove removes local number i (of kind k) from value v.
func (fv *fvalues) remove(nums *valueNumbers, v int64, i uint32, k, size int) {
	vn, ok := nums.num[v]
	if !ok {
		return
	}
	at, ok := fv.at[vn]
	if !ok {
		return
	}
	e := &fv.vs[at]
	e.n--
	e.byKind[k]--
	if e.bits != nil {
		clearBit(e.bits, i)
		if sparseN(int(e.n), size) {
			e.docs = make([]uint32, 0, e.n)
			eachBit(e.bits, func(d uint32) { e.docs = append(e.docs, d) })
			e.bits = nil
		}
	} else if j := slices.Index(e.docs, i); j >= 0 {
		e.docs[j] = e.docs[len(e.docs)-1]
		e.docs = e.docs[:len(e.docs)-1]
	}
	if e.n > 0 {
		return
	}
	fv.drop(at, vn)
	nums.release(vn)
}

// get returns the number of value v, giving it one.
func (n *valueNumbers) get(v int64) int32 {
	if k, ok := n.num[v]; ok {
		return k
	}
	var k int32
	if f := len(n.free); f > 0 {
		k, n.free = n.free[f-1], n.free[:f-1]
		n.ids[k], n.refs[k] = v, 0
	} else {
		k = int32(len(n.ids))
		n.ids, n.refs = append(n.ids, v), append(n.refs, 0)
	}
	n.num[v] = k
	return k
}

// release drops a bucket's hold of value number k; a value no bucket
// holds gives its number back.
func (n *valueNumbers) release(k int32) {
	if n.refs[k]--; n.refs[k] == 0 {
		delete(n.num, n.ids[k])
		n.free = append(n.free, k)
	}
}

func setBit(s *[]uint64, i uint32) {
	w := int(i >> 6)
	for w >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[w] |= 1 << (i & 63)
}

func clearBit(s []uint64, i uint32) {
	if w := int(i >> 6); w < len(s) {
		s[w] &^= 1 << (i & 63)
	}
}

// eachBit calls fn with every bit set in s, in order.
func eachBit(s []uint64, fn func(i uint32)) {
	for w, word := range s {
		for word != 0 {
			fn(uint32(w<<6 + bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
}

// The ways a query's facets take a bucket (facetIndex.paths).
const (
	pathWhole = iota // held whole by the dates, no list filter: its counts
	pathCells        // held whole, one category: the category's cells
	pathSet          // the matches as a bit set
	pathCut          // the same, the dates cutting the bucket
	pathSpan         // a span held whole, no list filter or one category: the span's counts or cells
	numPaths
)

// facetSums accumulates a query's counts: per list filter, by value
// number; featured and ticketed by false and true.
type facetSums struct {
	lists              [numLists][]int
	asked              [numLists]bool
	featured, ticketed *[2]int
	// work counts the steps: a value's counts or postings read in a
	// bucket, a bit set's words, a document's dates read; paths the
	// buckets taken each way.
	work  uint64
	paths [numPaths]uint64
	// matches counts the matches.
	matches int
}

// count adds the facets of the date order's documents that match p to s.
func (f *facetIndex) count(x *Index, p *plan, s *facetSums) {
	for l, asked := range s.asked {
		if asked {
			s.lists[l] = make([]int, len(f.values[l].ids))
		}
	}
	want := [numLists][]int64{p.q.CategoryIDs, p.q.TagIDs, p.q.VenueIDs, p.q.OrganizerIDs}
	filtered, lists := false, 0
	for _, w := range want {
		if len(w) > 0 {
			filtered, lists = true, lists+1
		}
	}
	// byCategory: the only list filter is one category, whose cells count
	// the buckets that the dates hold whole.
	byCategory := lists == 1 && len(want[listCategories]) == 1
	lo, hi := bucketOf(p.startMin), bucketOf(p.startMax)
	var m, t []uint64 // scratch bit sets
	ok := make([]bool, 0, 8)
	for i := sort.Search(len(f.nums), func(i int) bool { return f.nums[i] >= lo }); i < len(f.nums) && f.nums[i] <= hi; i++ {
		if !filtered && p.inside == nil {
			if sp, next := f.wholeSpan(p, i); sp != nil {
				// The dates hold the span whole, no list filter: its
				// values' counts count its buckets at once.
				s.paths[pathSpan]++
				var all, some bool
				if ok, all, some = sp.keeps(p, ok[:0]); some {
					s.addWhole(sp, ok, all)
				}
				i = next - 1
				continue
			}
		}
		if byCategory && p.inside == nil {
			if sp, next := f.wholeSpan(p, i); sp != nil {
				// The dates hold the span whole: its cells count its
				// buckets at once.
				s.paths[pathSpan]++
				var some bool
				if ok, _, some = sp.keeps(p, ok[:0]); some {
					if cc := sp.byCategory[want[listCategories][0]]; cc != nil {
						s.addCells(sp, cc, ok)
					}
				}
				i = next - 1
				continue
			}
		}
		b := f.buckets[f.nums[i]]
		if b.minEnd > p.endMax || b.maxEnd < p.endMin {
			continue // no document's end is in the bounds
		}
		var all, some bool
		if ok, all, some = b.keeps(p, ok[:0]); !some {
			continue
		}
		whole := b.minStart >= p.startMin && b.maxStart <= p.startMax && b.minEnd >= p.endMin && b.maxEnd <= p.endMax
		// A radius is a filter the buckets decide by their points
		// (matchSet), unless every document of a bucket is inside it.
		inside := p.inside == nil || whole && f.allInside(b, p, &s.work)
		if whole && !filtered && inside {
			s.paths[pathWhole]++
			s.addWhole(b, ok, all)
			continue
		}
		if whole && byCategory && inside {
			s.paths[pathCells]++
			if cc := b.byCategory[want[listCategories][0]]; cc != nil {
				s.addCells(b, cc, ok)
			}
			continue
		}
		if whole {
			s.paths[pathSet]++
		} else {
			s.paths[pathCut]++
		}
		var empty bool
		if m, t, empty = f.matchSet(x, b, p, &want, ok, all, whole, m, t, &s.work); empty {
			continue
		}
		s.addSet(b, m)
	}
}

// wholeSpan returns the span of the bucket at f.nums[i] when that bucket
// is the first of its span and p's dates hold the span whole (so every
// bucket of it, all in p's window), and the index in f.nums after the
// span's last bucket; nil otherwise.
func (f *facetIndex) wholeSpan(p *plan, i int) (*fbucket, int) {
	sn := f.nums[i] >> spanShift
	if i > 0 && f.nums[i-1]>>spanShift == sn {
		return nil, 0
	}
	sp := f.spans[sn]
	if sp == nil || sp.minStart < p.startMin || sp.maxStart > p.startMax || sp.minEnd < p.endMin || sp.maxEnd > p.endMax {
		return nil, 0
	}
	next := i + 1
	for next < len(f.nums) && f.nums[next]>>spanShift == sn {
		next++
	}
	return sp, next
}

// allInside reports whether every document of bucket b is at a point
// inside p's circle, a step (added to work) per point of the bucket.
func (f *facetIndex) allInside(b *fbucket, p *plan, work *uint64) bool {
	in, n := p.insideByNumber(f), 0
	for j := range b.points.vs {
		*work++
		fv := &b.points.vs[j]
		if in[fv.v] == 0 {
			return false
		}
		n += int(fv.n)
	}
	return n == b.n
}

// matchSet returns the matches of p in bucket b as a bit set of its local
// numbers, in m (t is scratch; both are returned for reuse), and whether
// there is none: the documents of the values of the list filters (want;
// none: every document), at the points inside p's circle (with a
// radius), of the kinds ok (all: every kind with documents) and, unless
// the dates hold the bucket whole, in the dates. It adds its steps to
// work.
func (f *facetIndex) matchSet(x *Index, b *fbucket, p *plan, want *[numLists][]int64, ok []bool, all, whole bool,
	m, t []uint64, work *uint64) (_, _ []uint64, empty bool) {
	words := (len(b.start) + 63) / 64
	m = slices.Grow(m[:0], words)[:words]
	first := true
	for l, vs := range want {
		if len(vs) == 0 {
			continue
		}
		t = slices.Grow(t[:0], words)[:words]
		clear(t)
		for _, v := range vs {
			if vn, in := f.values[l].num[v]; in {
				if at, in := b.lists[l].at[vn]; in {
					*work += orInto(t, &b.lists[l].vs[at])
				}
			}
		}
		first = intersectInto(m, t, first)
		*work += uint64(words)
		if isEmpty(m) {
			return m, t, true
		}
	}
	if p.inside != nil {
		// The documents of the points inside the circle, from their
		// postings; or, when the list filters left fewer documents than
		// those postings hold, each document left decided by its point.
		in := p.insideByNumber(f)
		left := math.MaxInt
		if !first {
			left = andCount(m, m)
			*work += uint64(words)
		}
		postN := 0
		if left > len(b.points.vs) {
			// (No more documents left than points: they are decided one
			// by one, without counting the postings.)
			for j := range b.points.vs {
				*work++
				if fv := &b.points.vs[j]; in[fv.v] != 0 {
					postN += int(fv.n)
				}
			}
		}
		if !first {
			if left < postN || left <= len(b.points.vs) {
				for w := range m {
					word := m[w]
					for word != 0 {
						i := w<<6 + bits.TrailingZeros64(word)
						word &= word - 1
						*work++
						if p.inside[x.ents[b.slot[i]].point+1] == 0 {
							m[w] &^= 1 << (i & 63)
						}
					}
				}
				postN = -1
			}
		}
		if postN >= 0 {
			t = slices.Grow(t[:0], words)[:words]
			clear(t)
			for j := range b.points.vs {
				if fv := &b.points.vs[j]; in[fv.v] != 0 {
					*work += orInto(t, fv)
				}
			}
			first = intersectInto(m, t, first)
			*work += uint64(words)
		}
		if isEmpty(m) {
			return m, t, true
		}
	}
	if first {
		copy(m, b.live)
	}
	if !all {
		t = slices.Grow(t[:0], words)[:words]
		clear(t)
		for k := range b.kinds {
			if ok[k] {
				orWords(t, b.kinds[k].bits)
				*work += uint64(words)
			}
		}
		andInto(m, t)
	}
	if !whole {
		// The dates cut the bucket: each document left is decided.
		for w := range m {
			word := m[w]
			for word != 0 {
				i := w<<6 + bits.TrailingZeros64(word)
				word &= word - 1
				*work++
				if st, en := b.start[i], b.end[i]; st < p.startMin || st > p.startMax || en < p.endMin || en > p.endMax {
					m[w] &^= 1 << (i & 63)
				}
			}
		}
	}
	return m, t, false
}

// keeps returns, per kind of the bucket, whether p keeps it, whether it
// keeps every kind with documents, and whether it keeps any.
func (b *fbucket) keeps(p *plan, ok []bool) (_ []bool, all, some bool) {
	all = true
	for k := range b.kinds {
		kd := &b.kinds[k]
		keep := kd.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<kd.status) != 0)
		ok = append(ok, keep)
		if kd.n > 0 {
			all, some = all && keep, some || keep
		}
	}
	return ok, all, some
}

// addWhole adds the counts of every document of b of the kinds ok (all:
// every kind with documents).
func (s *facetSums) addWhole(b *fbucket, ok []bool, all bool) {
	for k := range b.kinds {
		kd := &b.kinds[k]
		if !ok[k] || kd.n == 0 {
			continue
		}
		s.work++
		s.matches += int(kd.n)
		if s.featured != nil {
			s.featured[kd.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)] += int(kd.n)
		}
		if s.ticketed != nil {
			s.ticketed[kd.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)] += int(kd.n)
		}
	}
	for l, asked := range s.asked {
		if !asked {
			continue
		}
		sums := s.lists[l]
		for j := range b.lists[l].vs {
			fv := &b.lists[l].vs[j]
			s.work++
			if all {
				sums[fv.v] += int(fv.n)
				continue
			}
			n := 0
			for k, c := range fv.byKind {
				if ok[k] {
					n += int(c)
				}
			}
			sums[fv.v] += n
		}
	}
}

// addCells adds the counts of the cells cc of b of the kinds ok. The
// cells are in the order of their keys (kind, list filter, value), so the
// cells of a kind that p does not keep, and of a list filter whose facet
// is not asked for, are passed over by a binary search each (a step per
// search): a category's facets read the cells of the lists they count,
// not those of the tags and organizers too.
func (s *facetSums) addCells(b *fbucket, cc *cells, ok []bool) {
	cs := cc.cs
	for i := 0; i < len(cs); {
		c := cs[i]
		s.work++
		key := c.key()
		k, l, vn := int(key>>28), int(key>>25&7), int32(key&(1<<25-1))
		if !ok[k] {
			i = cc.from(i, cellKey(k+1, 0, 0))
			continue
		}
		if l < numLists {
			if !s.asked[l] {
				i = cc.from(i, cellKey(k, l+1, 0))
				continue
			}
			s.lists[l][vn] += c.n()
			i++
			continue
		}
		i++
		s.matches += c.n()
		flags := b.kinds[k].flags
		if s.featured != nil {
			s.featured[flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)] += c.n()
		}
		if s.ticketed != nil {
			s.ticketed[flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)] += c.n()
		}
	}
}

// addSet adds the counts of the documents of b in the bit set m.
func (s *facetSums) addSet(b *fbucket, m []uint64) {
	s.matches += andCount(m, m)
	s.work += uint64(len(m))
	if s.featured != nil || s.ticketed != nil {
		for k := range b.kinds {
			kd := &b.kinds[k]
			if kd.n == 0 {
				continue
			}
			n := andCount(m, kd.bits)
			s.work += uint64(len(kd.bits))
			if s.featured != nil {
				s.featured[kd.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)] += n
			}
			if s.ticketed != nil {
				s.ticketed[kd.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)] += n
			}
		}
	}
	for l, asked := range s.asked {
		if !asked {
			continue
		}
		sums := s.lists[l]
		for j := range b.lists[l].vs {
			fv := &b.lists[l].vs[j]
			n := 0
			if fv.bits != nil {
				n = andCount(m, fv.bits)
				s.work += uint64(len(fv.bits))
			} else {
				for _, d := range fv.docs {
					n += int(m[d>>6] >> (d & 63) & 1)
				}
				s.work += uint64(len(fv.docs))
			}
			sums[fv.v] += n
		}
	}
}

// orInto sets in t the documents of value fv, and returns the steps it
// took.
func orInto(t []uint64, fv *fvalue) uint64 {
	if fv.bits != nil {
		orWords(t, fv.bits)
		return uint64(len(fv.bits))
	}
	for _, d := range fv.docs {
		t[d>>6] |= 1 << (d & 63)
	}
	return uint64(len(fv.docs))
}

// orWords ors s into t (s may be shorter: its missing words are zero).
func orWords(t, s []uint64) {
	for w, v := range s[:min(len(s), len(t))] {
		t[w] |= v
	}
}

// intersectInto narrows m to t: m becomes t when first (nothing narrowed
// it yet), else m AND t. It returns false, the next call's first.
func intersectInto(m, t []uint64, first bool) bool {
	if first {
		copy(m, t)
	} else {
		andInto(m, t)
	}
	return false
}

// andInto ands t into m (of the same length).
func andInto(m, t []uint64) {
	for w := range m {
		m[w] &= t[w]
	}
}

// andCount counts the bits set in both m and s.
func andCount(m, s []uint64) int {
	n := 0
	for w, v := range s[:min(len(s), len(m))] {
		n += bits.OnesCount64(m[w] & v)
	}
	return n
}

func isEmpty(m []uint64) bool {
	for _, w := range m {
		if w != 0 {
			return false
		}
	}
	return true
}

// each is plan.each by the buckets, for a plan in the date order (not
// ranked, series not collapsed) with list filters whose filters the
// buckets decide (bucketed), or with no candidates at all (every document
// of its dates, statuses and flags: then its whole buckets are counted
// from their kinds): each bucket of the window in turn, its matches a bit
// set (matchSet), counted by skip when it takes them, else read, the
// first ordered of them in the date order. So a list filtered by a category costs a step
// per posting of the category in the window (or per 64 documents of a
// week, for a category on many of them) and the page, where the
// candidates would each be read from the entries. When a bucket's
// matches are many more than the first it must order, only those
// starting at or before the k-th start (kthStart, from the bucket's own
// dates) are compared entry by entry, and the others are counted by skip
// when it takes them: a week that the dates cut holds an occurrence of
// every weekly series (50,000 at the load benchmark's largest), where
// ordering them all was most of the default list's cost. Below bucketListMin
// candidates per bucket of the window, reading them costs less, and each
// leaves them to plan.each. It reports whether it ran.
func (f *facetIndex) each(x *Index, p *plan, ordered int, fn func(e *entry), skip func(n int) bool) bool {
	first, last, takes := f.takes(x, p, skip != nil)
	if !takes {
		return false
	}
	want := [numLists][]int64{p.q.CategoryIDs, p.q.TagIDs, p.q.VenueIDs, p.q.OrganizerIDs}
	// oneCategory: the only filters are the dates, kinds and one category,
	// whose cells count the buckets the dates hold whole.
	oneCategory := p.inside == nil && len(want[listCategories]) == 1 && len(want[listTags])+len(want[listVenues])+len(want[listOrganizers]) == 0
	var m, t []uint64
	var slots []uint32
	var starts []int64
	ok := make([]bool, 0, 8)
	var work, sorted uint64
	seen := 0 // the matches counted or read so far
	for i := first; i < last; i++ {
		if oneCategory && skip != nil {
			if sp, next := f.wholeSpan(p, i); sp != nil {
				// The dates hold the span of this bucket whole: its count
				// is its cells' (a step per kind), and when the caller
				// only counts it, its buckets are passed over at once.
				n := 0
				if cc := sp.byCategory[want[listCategories][0]]; cc != nil {
					ok, _, _ = sp.keeps(p, ok[:0])
					n = cc.docs(ok)
				}
				work += uint64(len(sp.kinds))
				if n == 0 || skip(n) {
					seen += n
					i = next - 1
					continue
				}
			}
		}
		b := f.buckets[f.nums[i]]
		if b.minEnd > p.endMax || b.maxEnd < p.endMin {
			continue
		}
		var all, some, empty bool
		if ok, all, some = b.keeps(p, ok[:0]); !some {
			continue
		}
		whole := b.minStart >= p.startMin && b.maxStart <= p.startMax && b.minEnd >= p.endMin && b.maxEnd <= p.endMax
		if p.cands == nil && whole && skip != nil {
			// No filter but the kinds: the bucket's count is its kinds'.
			n := 0
			for k := range b.kinds {
				if ok[k] {
					n += int(b.kinds[k].n)
				}
			}
			work += uint64(len(b.kinds))
			if n == 0 {
				continue
			}
			if skip(n) {
				seen += n
				continue
			}
		}
		if oneCategory && whole && skip != nil {
			// One category, the bucket held whole: its count is the
			// category's cells of the kinds kept (a step per kind, not
			// per 64 documents of the week), and most such weeks are
			// only counted.
			n := 0
			if cc := b.byCategory[want[listCategories][0]]; cc != nil {
				n = cc.docs(ok)
			}
			work += uint64(len(ok))
			if n == 0 {
				continue
			}
			if skip(n) {
				seen += n
				continue
			}
		}
		if m, t, empty = f.matchSet(x, b, p, &want, ok, all, whole, m, t, &work); empty {
			continue
		}
		n := andCount(m, m)
		if n == 0 || skip != nil && skip(n) {
			seen += n
			continue
		}
		work += uint64(n)
		// Only the first of them that the caller orders need the date
		// order (see plan.each).
		k := max(ordered-seen, 0)
		seen += n
		if k > 0 && k*fewFirst <= n {
			// Few of many: the first k start at or before the k-th
			// smallest start, read from the bucket's dates; only those
			// are ordered by the entries (a week that the dates cut
			// holds an occurrence of every weekly series).
			var upTo int64
			upTo, starts = kthStart(b.start, m, k, starts)
			slots = slots[:0]
			for w, word := range m {
				for ; word != 0; word &= word - 1 {
					if i := w<<6 + bits.TrailingZeros64(word); b.start[i] <= upTo {
						slots = append(slots, b.slot[i])
					}
				}
			}
			firstK(slots, k, func(a, b uint32) int { return x.compare(x.ents[a], x.ents[b]) })
			sorted += uint64(len(slots))
			for _, slot := range slots[:k] {
				fn(&x.ents[slot])
			}
			if skip != nil && skip(n-k) {
				continue
			}
			// The others, in any order.
			for _, slot := range slots[k:] {
				fn(&x.ents[slot])
			}
			for w, word := range m {
				for ; word != 0; word &= word - 1 {
					if i := w<<6 + bits.TrailingZeros64(word); b.start[i] > upTo {
						fn(&x.ents[b.slot[i]])
					}
				}
			}
			continue
		}
		slots = slots[:0]
		eachBit(m, func(i uint32) { slots = append(slots, b.slot[i]) })
		firstK(slots, k, func(a, b uint32) int { return x.compare(x.ents[a], x.ents[b]) })
		if k > 0 {
			sorted += uint64(len(slots))
		}
		for _, slot := range slots {
			fn(&x.ents[slot])
		}
	}
	f.listWork.Add(work)
	f.ordered.Add(sorted)
	return true
}

// fewFirst: a bucket's matches are at least this many times the first
// ones a list needs of them when each orders only those starting at or
// before the k-th start (kthStart) rather than every match.
const fewFirst = 8

// kthStart returns the k-th smallest start (1 <= k <= the bits set in
// m) of the local numbers set in m, with h as scratch (returned for
// reuse): a max-heap of the k smallest so far, which most starts pass
// with one comparison.
func kthStart(start []int64, m []uint64, k int, h []int64) (int64, []int64) {
	h = h[:0]
	for w, word := range m {
		for ; word != 0; word &= word - 1 {
			v := start[w<<6+bits.TrailingZeros64(word)]
			if len(h) == k && v >= h[0] {
				continue
			}
			h = pushSmallest(h, k, v)
		}
	}
	return h[0], h
}

// pushSmallest adds v to h, a max-heap of at most k values, keeping the
// k smallest: v is appended while h holds fewer, else it replaces the
// largest (the caller made sure that v is smaller).
func pushSmallest(h []int64, k int, v int64) []int64 {
	if len(h) < k {
		h = append(h, v)
		for j := len(h) - 1; j > 0; {
			up := (j - 1) / 2
			if h[up] >= h[j] {
				break
			}
			h[up], h[j] = h[j], h[up]
			j = up
		}
		return h
	}
	h[0] = v
	for j := 0; ; {
		c := 2*j + 1
		if c >= k {
			break
		}
		if c+1 < k && h[c+1] > h[c] {
			c++
		}
		if h[j] >= h[c] {
			break
		}
		h[j], h[c] = h[c], h[j]
		j = c
	}
	return h
}

// takes reports whether each reads p's list by the buckets (counting,
// when counted, is whether the caller counts what it can), and the range
// [first, last) of the buckets of its window in f.nums.
func (f *facetIndex) takes(x *Index, p *plan, counted bool) (first, last int, ok bool) {
	if p.ranked() || p.q.CollapseSeries || !bucketed(p) {
		return 0, 0, false
	}
	lo, hi := bucketOf(p.startMin), bucketOf(p.startMax)
	first = sort.Search(len(f.nums), func(i int) bool { return f.nums[i] >= lo })
	last = sort.Search(len(f.nums), func(i int) bool { return f.nums[i] > hi })
	if p.cands == nil {
		// Every document of the window a candidate: read by the buckets
		// when the index has groups (the date order does not hold their
		// members) and the buckets are fewer than the blocks of the date
		// order that plan.each would count (a bucket costs about as much
		// as a few blocks: its kinds, and its page's documents). Without
		// groups the date order's blocks answer it (at 1,000,000 events
		// the buckets made the default list's p50 1.85 → 3.3 ms).
		ok = p.inside == nil && counted && (x.nGrouped > 0 || bucketBlocks == 0) && bucketBlocks*(last-first) <= x.docs/blockMax
	} else {
		ok = p.cands.GetCardinality() >= uint64(bucketListMin*(last-first))
	}
	return first, last, ok
}

// bucketBlocks is how many blocks of the date order a bucket read by
// facetIndex.each costs about as much as, for a list without candidates.
// A variable so that the tests can read every such list by the buckets.
var bucketBlocks = 4
