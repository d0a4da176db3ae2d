package memindex

import (
	"math/bits"
	"sort"
)

// This file holds the facet buckets' read side for lists: the matches
// of a list filtered by the buckets' values, read bucket by bucket in the
// date order (facetIndex.each).

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
	lo, hi := f.bucketOf(p.startMin), f.bucketOf(p.startMax)
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
		ok = p.inside == nil && counted && (x.nGrouped > 0 || f.bucketBlocks == 0) && f.bucketBlocks*(last-first) <= x.docs/blockMax
	} else {
		ok = p.cands.GetCardinality() >= uint64(f.bucketListMin*(last-first))
	}
	return first, last, ok
}
