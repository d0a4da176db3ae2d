package memindex

import "sort"

// This file lists a radius query in the date order from the facet
// buckets' documents per geo point (nearCounted): a bucket that the dates
// hold whole is counted a step per point it holds, and only the buckets
// of the page and those the dates cut are read.

// insideByNumber returns, per number the facet buckets give a point
// (facetIndex.points), whether the point is inside p's circle (1) or not
// (0), computing it once per plan (a step per point).
func (p *plan) insideByNumber(f *facetIndex) []uint8 {
	if p.insideNum == nil {
		ids := f.points.ids
		p.insideNum = make([]uint8, len(ids))
		for vn, pt := range ids {
			if pt+1 < int64(len(p.inside)) {
				p.insideNum[vn] = p.inside[pt+1]
			}
		}
	}
	return p.insideNum
}

// nearsCounted reports whether nearCounted can answer p: a radius, and no
// filter beyond those the entry decides (dates, statuses, flags): no
// candidates, no filter read from the row, series not collapsed.
func nearsCounted(p *plan) bool {
	return p.inside != nil && p.cands == nil && !p.mainNone && !p.needsRest() && !p.q.CollapseSeries && !p.ranked()
}

// nearStepCost is what a step of nearCounted (a point of a bucket)
// costs, in entries that plan.each counts (countIn, one branchless
// loop per block): nearCounted answers a radius only when its steps cost
// less than the entries of the date order. Measured (BenchmarkSmallSearch,
// MEMINDEX_NEAR_STEP_COST, 200 points, two years): a step costs about 4.6
// entries; the two ways cost the same at 100,000 events (21,000 steps),
// plan.each 1.4x less at 60,000 and 2.5x less at 30,000. 4 keeps
// nearCounted at 100,000. A variable so that the tests can take every
// radius either way (0: always nearCounted).
var nearStepCost = 4

// nearCheaper reports whether nearCounted costs less than plan.each for
// p (which nearsCounted accepts): the points of the buckets of p's dates
// (a step each) weighed by nearStepCost against the entries of the date
// order (plan.each reads those inside the dates). In a small index a
// bucket's points are nearly its documents, and reading the date order
// is cheaper (the load benchmark's 3,000 events); an index with groups
// always takes nearCounted (their members are in the buckets, not in the
// date order).
func (s *searcher) nearCheaper(p *plan) bool {
	x, f := s.x, s.x.facets
	if x.nGrouped > 0 || nearStepCost == 0 {
		return true
	}
	entries := x.docs
	lo, hi := s.x.bucketOf(p.startMin), s.x.bucketOf(p.startMax)
	steps := 0
	for i := sort.Search(len(f.nums), func(i int) bool { return f.nums[i] >= lo }); i < len(f.nums) && f.nums[i] <= hi; i++ {
		if steps += len(f.buckets[f.nums[i]].points.vs); steps*nearStepCost >= entries {
			x.nearDeclined.Add(1)
			return false
		}
	}
	return true
}

// nearCounted returns the first collect matches of p in the date order
// and the number of all of them, as plan.each with its skip would give
// them, for a plan that nearsCounted accepts. It takes the facet buckets
// of p's dates in order (they partition the date order by week):
//
//   - a bucket that the dates hold whole is counted from its points: for
//     each point it holds that is inside the circle, the number of its
//     documents of the kinds (status and flags) p keeps, a step per point;
//   - a bucket that the dates cut, or that holds a part of the page, is
//     read: the date order's entries of its week in p's dates, or the
//     documents of its points inside the circle, whichever is fewer (for
//     the page, the date order is read until the page is full: about
//     page × documents / matches entries); the documents of its points
//     inside when the index has groups (their members are in the buckets,
//     not in the date order).
//
// So the work grows with the buckets of the window and the points each
// holds, the page, and the documents of the buckets the dates cut (two
// or so), not with the matches: a circle holding ten times the events
// costs the same. The steps (points and documents read) are added to
// Index.visited.
func (s *searcher) nearCounted(p *plan, collect int) (main []uint32, n int) {
	x, f := s.x, s.x.facets
	read := 0
	defer func() { x.visited.Add(uint64(read)) }()
	in := p.insideByNumber(f)
	read += len(in)
	lo, hi := s.x.bucketOf(p.startMin), s.x.bucketOf(p.startMax)
	ok := make([]bool, 0, 8)
	var slots []uint32
	for i := sort.Search(len(f.nums), func(i int) bool { return f.nums[i] >= lo }); i < len(f.nums) && f.nums[i] <= hi; i++ {
		b := f.buckets[f.nums[i]]
		if b.minEnd > p.endMax || b.maxEnd < p.endMin {
			continue
		}
		var all, some bool
		if ok, all, some = b.keeps(p, ok[:0]); !some {
			continue
		}
		whole := b.minStart >= p.startMin && b.maxStart <= p.startMax && b.minEnd >= p.endMin && b.maxEnd <= p.endMax
		// inN: the documents at points inside of the kinds p keeps (the
		// matches, when the dates hold the bucket whole); postN: all the
		// documents at points inside (the postings to read).
		inN, postN := 0, 0
		for j := range b.points.vs {
			fv := &b.points.vs[j]
			read++
			if in[fv.v] == 0 {
				continue
			}
			postN += int(fv.n)
			if all {
				inN += int(fv.n)
				continue
			}
			for k, c := range fv.byKind {
				if ok[k] {
					inN += int(c)
				}
			}
		}
		if inN == 0 {
			continue
		}
		need := collect - len(main)
		if whole && need <= 0 {
			n += inN
			continue
		}
		walk := b.n
		if whole {
			walk = min(b.n, (need+1)*(b.n/inN+1))
		}
		if walk <= postN && x.nGrouped == 0 { // (the date order holds no group's members)
			k, r := s.walkBucket(p, b, &main, need, !whole)
			read += r
			if whole {
				k = inN
			}
			n += k
			continue
		}
		var r int
		slots, r = f.nearIn(x, b, p, in, whole, slots[:0])
		read += r
		if need > 0 {
			x.sortFirst(slots, need)
			main = append(main, slots[:min(need, len(slots))]...)
		}
		n += len(slots)
	}
	return main, n
}

// walkBucket reads the date order's entries of bucket b in p's start
// bounds, in order, appending to main the first need matches of p; with
// all it reads them all and counts the matches, else it stops at the
// page. It returns the matches it saw and the entries it read.
func (s *searcher) walkBucket(p *plan, b *fbucket, main *[]uint32, need int, all bool) (n, read int) {
	x := s.x
	statuses, mask, want, endMin, endMax, inside := p.statuses, p.flagMask, p.flagWant, p.endMin, p.endMax, p.inside
	last := min(p.startMax, b.maxStart)
	for bi, i := x.order.lowerBound(max(p.startMin, b.minStart)); bi < len(x.order); bi, i = bi+1, 0 {
		es := x.order[bi].e
		for k := i; k < len(es); k++ {
			e := &es[k]
			if e.start > last {
				return n, read
			}
			read++
			if e.end < endMin || e.end > endMax || e.flags&mask != want ||
				statuses != 0 && statuses&(1<<e.status) == 0 || inside[e.point+1] == 0 {
				continue
			}
			if n < need {
				*main = append(*main, e.slot)
			}
			if n++; !all && n >= need {
				return n, read
			}
		}
	}
	return n, read
}

// nearIn returns the slots of p's matches in bucket b (in no order),
// read from the documents of its points inside the circle (in: by point
// number): their kinds and, unless the dates hold the bucket whole,
// their dates decided on their entries. It appends to slots and returns
// them, and the documents it read.
func (f *facetIndex) nearIn(x *Index, b *fbucket, p *plan, in []uint8, whole bool, slots []uint32) (_ []uint32, read int) {
	statuses, mask, want := p.statuses, p.flagMask, p.flagWant
	take := func(d uint32) {
		read++
		e := &x.ents[b.slot[d]]
		if e.flags&mask != want || statuses != 0 && statuses&(1<<e.status) == 0 ||
			!whole && (e.start < p.startMin || e.start > p.startMax || e.end < p.endMin || e.end > p.endMax) {
			return
		}
		slots = append(slots, e.slot)
	}
	for j := range b.points.vs {
		fv := &b.points.vs[j]
		if in[fv.v] == 0 {
			continue
		}
		if fv.bits != nil {
			eachBit(fv.bits, take)
		} else {
			for _, d := range fv.docs {
				take(d)
			}
		}
	}
	return slots, read
}
