package memindex

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// This file builds the facet buckets of many documents at once (a load's
// or a Finish's buildOrder) on several goroutines.
//
// Why: at start-up on 1,000,000 events and 50,000 weekly series (6.4
// million documents), facetIndex.add took 22.6 of 97.8 CPU-s, on one
// goroutine after everything else: the longest serial step of the
// start-up. The buckets are independent of each other but for the
// numbers of the values (facetIndex.values, points), shared by every
// bucket, which add gives in the order it meets the values; and the spans
// (facetIndex.spans), each shared by 1<<spanShift consecutive buckets.
// So the sorted documents are cut into parts at span boundaries (no
// bucket or span is in two parts), every value gets its number up front
// in the order the one-goroutine build would have given it (each part
// lists the values it meets first, in order, in parallel; the lists are
// then numbered part after part), and each part is built into its own
// buckets and spans, which are merged at the end. The result is the same
// facetIndex, number for number, as adding the documents one by one.

// facetPartsPerWorker is the number of parts addSorted cuts the documents
// into per goroutine, so that a goroutine done early takes another part
// (the parts' buckets are not equally costly).
const facetPartsPerWorker = 4

// addSorted adds the documents of all (in the date order, x.compare) to
// the buckets, as calling add for each in order does. Many documents,
// with two cores or more, into a facetIndex without buckets, are built on
// GOMAXPROCS goroutines (see above). The caller holds mu.
func (f *facetIndex) addSorted(x *Index, all []entry) {
	workers := runtime.GOMAXPROCS(0)
	var bounds []int
	if len(all) >= f.parallelFacetMin && workers >= 2 && len(f.buckets) == 0 && len(f.spans) == 0 {
		bounds = f.spanBounds(all, workers*facetPartsPerWorker)
	}
	if f.builtInParts != nil {
		f.builtInParts(max(len(bounds)-1, 1))
	}
	if len(bounds) < 3 { // one part
		for i := range all {
			f.add(x, all[i].slot, &all[i])
		}
		return
	}
	parts := len(bounds) - 1
	workers = min(workers, parts)
	// Every slot's local number is written by its part, in place.
	maxSlot := uint32(0)
	for i := range all {
		maxSlot = max(maxSlot, all[i].slot)
	}
	if n := int(maxSlot) + 1; n > len(f.local) {
		f.local = append(f.local, make([]uint32, n-len(f.local))...)
	}
	// The values' numbers, in the order add would give them.
	firsts := make([]firstValues, parts)
	eachPart(parts, workers, func(p int) { firsts[p] = firstSeen(x, all[bounds[p]:bounds[p+1]]) })
	for p := range firsts {
		for l := range numLists {
			for _, v := range firsts[p].lists[l] {
				f.values[l].get(v)
			}
		}
		for _, v := range firsts[p].points {
			f.points.get(v)
		}
	}
	// Each part's buckets and spans, on their own facetIndex (sharing
	// the numbers, read only, and the local numbers, written at the
	// part's own slots).
	built := make([]*facetIndex, parts)
	eachPart(parts, workers, func(p int) {
		pf := &facetIndex{knobs: f.knobs, buckets: map[int64]*fbucket{}, spans: map[int64]*fbucket{}, local: f.local,
			values: f.values, points: f.points, numbered: true}
		for i := bounds[p]; i < bounds[p+1]; i++ {
			pf.add(x, all[i].slot, &all[i])
		}
		built[p] = pf
	})
	// The parts hold consecutive, disjoint buckets and spans, in order.
	for _, pf := range built {
		for num, b := range pf.buckets {
			f.buckets[num] = b
		}
		for num, sp := range pf.spans {
			f.spans[num] = sp
		}
		f.nums = append(f.nums, pf.nums...)
		f.inverted += pf.inverted
	}
	// Each value's refs: the buckets that hold it.
	for _, b := range f.buckets {
		for l := range numLists {
			for _, v := range b.lists[l].vs {
				f.values[l].refs[v.v]++
			}
		}
		for _, v := range b.points.vs {
			f.points.refs[v.v]++
		}
	}
}

// spanBounds cuts all (in the date order) into about n parts of about as
// many documents, at span boundaries (a span's documents are in one
// part), and returns the offset of each part's first document and
// len(all) last.
func (k *knobs) spanBounds(all []entry, n int) []int {
	bounds := []int{0}
	size := max(len(all)/max(n, 1), 1)
	for start := 0; start < len(all); {
		end := min(start+size, len(all))
		if end < len(all) {
			// Up to the first document of a later span (all is sorted
			// by start, so by span).
			sn := k.bucketOf(all[end-1].start) >> k.spanShift
			if j := slices.IndexFunc(all[end:], func(e entry) bool { return k.bucketOf(e.start)>>k.spanShift != sn }); j >= 0 {
				end += j
			} else {
				end = len(all)
			}
		}
		bounds = append(bounds, end)
		start = end
	}
	return bounds
}

// eachPart calls fn(p) for every part p below parts, on workers
// goroutines, and returns once every call has.
func eachPart(parts, workers int, fn func(p int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				p := int(next.Add(1) - 1)
				if p >= parts {
					return
				}
				fn(p)
			}
		})
	}
	wg.Wait()
}

// firstValues is the values of each list filter, and the points, of a
// part of the date order, each once, in the order add meets them first.
type firstValues struct {
	lists  [numLists][]int64
	points []int64
}

// firstSeen returns the values and points of the documents of part in the
// order add meets them first: document after document, and in each, its
// values of a list in their order.
//
// The occurrences of a series share a body (their lists): a body met
// before in the part brings no value first, and is skipped (at start-up
// on 100,000 events and 25,000 weekly series, reading every document's
// lists here was a quarter of the CPU of the buckets' build).
func firstSeen(x *Index, part []entry) firstValues {
	var fv firstValues
	var seen [numLists]map[int64]struct{}
	for l := range seen {
		seen[l] = map[int64]struct{}{}
	}
	var bodies, points []uint64 // bit sets: by body number, by point
	for i := range part {
		if p := part[i].point; p >= 0 && !hasBit(points, uint32(p)) {
			setBit(&points, uint32(p))
			fv.points = append(fv.points, int64(p))
		}
		b := x.rows[part[i].slot].body
		if hasBit(bodies, b) {
			continue
		}
		setBit(&bodies, b)
		r := x.bodies.at(b)
		for l := range numLists {
			for _, v := range r.list(l) {
				if _, ok := seen[l][v]; !ok {
					seen[l][v] = struct{}{}
					fv.lists[l] = append(fv.lists[l], v)
				}
			}
		}
	}
	return fv
}

// hasBit reports whether bit i of s is set.
func hasBit(s []uint64, i uint32) bool {
	w := int(i >> 6)
	return w < len(s) && s[w]&(1<<(i&63)) != 0
}
