package memindex

import (
	"math"
	"math/bits"
	"slices"
	"sort"
)

// This file holds the facet buckets' read side for facets: a query's
// counts summed from whole buckets, spans, category cells or the bucket's
// matches as a bit set (facetIndex.count).

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
	lo, hi := f.bucketOf(p.startMin), f.bucketOf(p.startMax)
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
	sn := f.nums[i] >> f.spanShift
	if i > 0 && f.nums[i-1]>>f.spanShift == sn {
		return nil, 0
	}
	sp := f.spans[sn]
	if sp == nil || sp.minStart < p.startMin || sp.maxStart > p.startMax || sp.minEnd < p.endMin || sp.maxEnd > p.endMax {
		return nil, 0
	}
	next := i + 1
	for next < len(f.nums) && f.nums[next]>>f.spanShift == sn {
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
