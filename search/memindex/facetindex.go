package memindex

import (
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

// This file holds the facet buckets: the documents of the date order
// grouped by week of their start, with per bucket the counts of each list
// value (per kind: status and flags), per category the counts of the
// values of its documents, and the bucket's own small bit sets, so that a
// query's facets cost a step per value and bucket of its date window, not
// a step per match (see facetIndex); and the lists with list filters read
// by them (facetIndex.each).

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
//   - a span of 1<<f.spanShift buckets (facetIndex.spans) that the dates
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
	// knobs are the index's (its buckets' width and spans).
	*knobs
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
	// spans holds, per span of 1<<f.spanShift consecutive bucket numbers
	// (the bucket's number >> f.spanShift), the kinds, date bounds, values'
	// counts per kind and category cells of all the documents of its
	// buckets (no postings): a query without list filters or of one
	// category counts a span that its dates hold whole from the span's
	// counts or cells, as it would a bucket (a step per value and kind),
	// so the weeks inside a long window cost a span's per 1<<f.spanShift
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
	// numbered marks a part of a parallel build (addSorted): every value
	// and point already has its number in values and points, which add
	// only reads (it neither numbers values nor counts their buckets in
	// refs: addSorted counts them once the parts are merged).
	numbered bool
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

// addFrom adds delta (1 or -1) to the cell of key, adding or dropping
// it; the key's cell, if any, is at or after index lo (the cells before
// lo have smaller keys). It returns the index of the key's cell, or where
// it would be.
func (c *cells) addFrom(lo int, key uint64, delta int) int {
	i := c.from(lo, key)
	if i == len(c.cs) || c.cs[i].key() != key {
		if delta > 0 {
			c.cs = slices.Insert(c.cs, i, cell(key<<cellBits|uint64(delta)))
		}
		return i
	}
	if n := c.cs[i].n() + delta; n > 0 {
		c.cs[i] = cell(key<<cellBits | uint64(n))
	} else {
		c.cs = slices.Delete(c.cs, i, i+1)
	}
	return i
}

// from returns the index of the first cell at or after i whose key is at
// least key (len(c.cs) when there is none). A binary search written out
// (cells are ordered by key, the key being the cell's high bits): with
// slices.BinarySearchFunc's comparison function the search of the cells
// was a quarter of the facet buckets' build.
func (c *cells) from(i int, key uint64) int {
	lo, hi := i, len(c.cs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.cs[m].key() < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
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
// repeats), as addFrom does for each. Up to manyKeys keys it adds them one at
// a time; more (a document of many categories or tags) are merged with
// the cells in one pass into a new slice, since inserting or dropping
// cells one at a time moves the cells after each: cubic work in the keys
// over a document's categories.
func (c *cells) addAll(keys []uint64, delta int) {
	if len(keys) <= manyKeys {
		// Each key's cell is after the previous key's.
		i := 0
		for _, key := range keys {
			i = c.addFrom(i, key, delta)
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

func newFacetIndex(k *knobs) *facetIndex {
	f := &facetIndex{knobs: k, buckets: map[int64]*fbucket{}, spans: map[int64]*fbucket{}}
	for l := range f.values {
		f.values[l].num = map[int64]int32{}
	}
	f.points.num = map[int64]int32{}
	return f
}

// add puts the document at slot (its entry e, in the date order) in its
// bucket. The caller holds mu.
func (f *facetIndex) add(x *Index, slot uint32, e *entry) {
	num := f.bucketOf(e.start)
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
			if slices.Contains(vs[:j], v) {
				continue
			}
			if f.numbered {
				b.lists[l].addNum(f.values[l].num[v], i, k, len(b.start))
			} else {
				b.lists[l].add(&f.values[l], v, i, k, len(b.start))
			}
		}
	}
	if e.point >= 0 {
		if f.numbered {
			b.points.addNum(f.points.num[int64(e.point)], i, k, len(b.start))
		} else {
			b.points.add(&f.points, int64(e.point), i, k, len(b.start))
		}
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
	sn := num >> f.spanShift
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
	sn := num >> f.spanShift
	sp := f.spans[sn]
	if sp == nil {
		return
	}
	if e.start == sp.minStart || e.start == sp.maxStart || e.end == sp.minEnd || e.end == sp.maxEnd {
		sp.minStart, sp.maxStart, sp.minEnd, sp.maxEnd = math.MaxInt64, math.MinInt64, math.MaxInt64, math.MinInt64
		for j := sn << f.spanShift; ; j++ {
			if b := f.buckets[j]; b != nil {
				sp.minStart, sp.maxStart = min(sp.minStart, b.minStart), max(sp.maxStart, b.maxStart)
				sp.minEnd, sp.maxEnd = min(sp.minEnd, b.minEnd), max(sp.maxEnd, b.maxEnd)
			}
			if j == sn<<f.spanShift|(1<<f.spanShift-1) {
				break
			}
		}
	}
}

// remove takes the document at slot (its entry e) out of its bucket; a
// bucket left empty goes. The caller holds mu, and the row still has the
// lists it was added with.
func (f *facetIndex) remove(x *Index, slot uint32, e *entry) {
	b := f.buckets[f.bucketOf(e.start)]
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

// add adds local number i (of kind k) to value v, numbering v.
func (fv *fvalues) add(nums *valueNumbers, v int64, i uint32, k, size int) {
	vn := nums.get(v)
	if fv.addNum(vn, i, k, size) {
		nums.refs[vn]++
	}
}

// addNum adds local number i (of kind k) to the value numbered vn, and
// reports whether the value is new in fv (the caller counts the bucket in
// the value's refs).
func (fv *fvalues) addNum(vn int32, i uint32, k, size int) (added bool) {
	if fv.at == nil {
		fv.at = map[int32]int32{}
	}
	at, ok := fv.at[vn]
	if !ok {
		at = int32(len(fv.vs))
		fv.at[vn] = at
		fv.vs = append(fv.vs, fvalue{v: vn})
		added = true
	}
	e := &fv.vs[at]
	e.n++
	for k >= len(e.byKind) {
		e.byKind = append(e.byKind, 0)
	}
	e.byKind[k]++
	if e.bits != nil {
		setBit(&e.bits, i)
		return added
	}
	e.docs = append(e.docs, i)
	if dense(len(e.docs), size) {
		for _, d := range e.docs {
			setBit(&e.bits, d)
		}
		e.docs = nil
	}
	return added
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
