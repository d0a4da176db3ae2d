package memindex

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/calendar/eventcal/search"
)

// This file runs a query: Search, and the pages in the date order (ordered,
// merged with the groups' members, collapsed by series), with the partial
// sorts that take a page's first hits.

// maxPage bounds Offset and Limit so that their sum cannot overflow.
const maxPage = math.MaxInt32

// Search runs q: the page of IDs in q's order, the exact total, and the
// facets q asks for.
//
// The facet buckets hold every document, the groups' members too, so a
// list without words or IDs is answered there (plan.byBuckets), at a
// step per week of its window and its page, however many series it
// spans. A collapsed list without words, IDs, list filters, a radius or
// facets counts its groups from their sorted spans and reads its page
// from the buckets too (collapsedByBuckets), when its dates and page
// allow. Any other query (words, IDs, another collapsed list, a relevance
// or publish-date order) reads the date order, which holds the documents
// outside groups (single events, and occurrences with an override), and
// decides each group of uniform occurrences (see group) once, on its
// representative (only those among its candidates, when it has some),
// counting its members in the date bounds by binary search; its page
// merges the two in the date order.
func (x *Index) Search(ctx context.Context, q search.EventQuery) (search.Result, error) {
	if err := ctx.Err(); err != nil {
		return search.Result{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.bulk {
		return search.Result{}, errBulk
	}
	p := x.plan(q)
	defer p.scratch.release()
	s := &searcher{x: x, p: p, res: search.Result{IDs: []int64{}}, counts: newFacetCounts(x, p)}
	s.offset, s.limit = min(max(q.Offset, 0), maxPage), min(max(q.Limit, 0), maxPage)
	if !p.none {
		p.decideGroups(x, s.limit)
		if s.collapsedByBuckets() {
			s.res.Facets = s.counts.result(x)
			s.res.Occurrences = s.occs
			return s.res, nil
		}
		gs := p.groups(x)
		defer putHits(gs)
		switch {
		case s.countOnly(gs):
		case p.ranked():
			s.ranked(gs)
		case q.CollapseSeries:
			s.collapsed(gs)
		case len(gs) == 0:
			s.ordered()
		default:
			s.merged(gs)
		}
	}
	s.res.Facets = s.counts.result(x)
	s.res.Occurrences = s.occs
	return s.res, nil
}

// searcher is one run of Search: the page and total it builds.
type searcher struct {
	x             *Index
	p             *plan
	res           search.Result
	occs          []string
	counts        *facetCounts
	offset, limit int
	// seen holds a bit per series number, for CollapseSeries.
	seen []uint64
}

// put appends the document at slot to the page.
func (s *searcher) put(slot uint32) {
	r := &s.x.rows[slot]
	s.res.IDs = append(s.res.IDs, r.id)
	if r.occ != 0 && s.occs == nil {
		s.occs = make([]string, len(s.res.IDs)-1, cap(s.res.IDs))
	}
	if s.occs != nil {
		s.occs = append(s.occs, s.x.occNames.occString(r.occ))
	}
}

// first reports whether the document of entry e is the first of its
// series seen (always true for a single event, or without
// CollapseSeries): a bit per series number, read from the entry.
func (s *searcher) first(e *entry) bool {
	n := e.series
	if !s.p.q.CollapseSeries || n == 0 {
		return true
	}
	if s.seen == nil {
		s.seen = make([]uint64, s.x.seriesMax/64+1)
	}
	if s.seen[n>>6]&(1<<(n&63)) != 0 {
		return false
	}
	s.seen[n>>6] |= 1 << (n & 63)
	return true
}

// ordered runs a query in the date order when no group matches: the date
// order alone, where a block wholly before or after the page is only
// counted (when its summary can count it, and no facet is counted match
// by match).
func (s *searcher) ordered() {
	offset, limit := s.offset, s.limit
	var skip func(n int) bool
	if !s.counts.perMatch() {
		skip = func(n int) bool {
			if s.res.Total+n <= offset || s.res.Total >= offset+limit {
				s.res.Total += n
				return true
			}
			return false
		}
	}
	ordered := offset + limit
	if limit == 0 {
		ordered = 0 // the total only: no order needed
	}
	if skip != nil {
		if main, n, ok := s.firstCounted(s.p, ordered); ok {
			for _, slot := range main[min(offset, len(main)):] {
				s.put(slot)
			}
			s.res.Total = n
			return
		}
	}
	s.p.each(s.x, ordered, func(e *entry) {
		if s.res.Total >= offset && s.res.Total < offset+limit {
			s.put(e.slot)
		}
		s.res.Total++
		s.counts.add(e.slot, e)
	}, skip)
}

// merged runs a query in the date order with matching groups: the first
// offset+limit matches of the date order (the rest counted, from the
// blocks' summaries when they can), merged with the groups' members.
func (s *searcher) merged(gs []groupHit) {
	x := s.x
	need := s.offset + s.limit
	if s.limit == 0 {
		need = 0
	}
	deep := s.offset > s.x.deepOffset
	collect := need
	if deep {
		collect = 0
	}
	main, total := s.mainFirst(s.p, collect, true)
	for _, h := range gs {
		total += h.hi - h.lo
		s.counts.addGroup(x, h.g, h.hi-h.lo)
	}
	s.res.Total = total
	if need == 0 || s.offset >= total {
		return
	}
	from := s.offset
	if deep {
		s.p.split(x) // (once, not in each of the plans copied below)
		// The page's first match starts at t: the matches before it are
		// skipped whole, and the page is merged from the matches at t on.
		p := s.p
		mainUpTo := func(t int64) int {
			q := *p
			q.startMax = min(q.startMax, t)
			_, n := s.mainFirst(&q, 0, false)
			return n
		}
		// The date order's starts lie within its first and last entries'.
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		if len(x.order) > 0 {
			last := x.order[len(x.order)-1]
			lo, hi = x.order[0].e[0].start, last.e[len(last.e)-1].start
		}
		t, before := pageStart(gs, s.offset, mainUpTo, max(lo, p.startMin), min(hi, p.startMax))
		from -= before
		need = from + s.limit
		q := *p
		q.startMin = max(q.startMin, t)
		main, _ = s.mainFirst(&q, need, false)
		gs = membersFrom(gs, t)
	}
	// Only the groups whose first member in the bounds is among the need
	// first such can have a member on the page: need members come before
	// any member of the others.
	firstK(gs, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
	s.merge(main, newCursors(x, gs[:min(need, len(gs))]), from, need)
}

// mainFirst reads the date order's matches of p: the first collect of
// them in order, and their number (counting whole blocks from their
// summaries when it can). With facets counted match by match
// (facetCounts.perMatch), it counts every match in them.
func (s *searcher) mainFirst(p *plan, collect int, facets bool) ([]uint32, int) {
	var main []uint32
	n := 0
	var skip func(k int) bool
	if !facets || !s.counts.perMatch() {
		if main, n, ok := s.firstCounted(p, collect); ok {
			return main, n
		}
		skip = func(k int) bool {
			if len(main) >= collect {
				n += k
				return true
			}
			return false
		}
	}
	p.each(s.x, collect, func(e *entry) {
		if len(main) < collect {
			main = append(main, e.slot)
		}
		n++
		if facets {
			s.counts.add(e.slot, e)
		}
	}, skip)
	return main, n
}

// pageStart returns the start t of the match at position offset of a
// date-ordered merge and the number of its matches that start before t,
// by bisection on t. The merge is of a stream whose matches mainUpTo
// counts (those starting at or before a time; their starts lie within
// [lo, hi]) and of the members gs holds. The caller made sure that offset
// is below the merge's size.
func pageStart(gs []groupHit, offset int, mainUpTo func(t int64) int, lo, hi int64) (int64, int) {
	// upTo returns the number of matches starting at or before t.
	// The starts of each hit's first and last members, read once: most
	// steps decide a group on them.
	firsts, lasts := int64Pool.get(len(gs)), int64Pool.get(len(gs))
	defer int64Pool.put(firsts)
	defer int64Pool.put(lasts)
	for i := range gs {
		h := &gs[i]
		firsts[i], lasts[i] = h.g.occ[h.lo].start, h.g.occ[h.hi-1].start
		lo, hi = min(lo, firsts[i]), max(hi, lasts[i])
	}
	upTo := func(t int64) int {
		n := mainUpTo(t)
		for i := range gs {
			switch {
			case lasts[i] <= t:
				n += gs[i].hi - gs[i].lo
			case firsts[i] <= t:
				occ := gs[i].g.occ[gs[i].lo:gs[i].hi]
				n += sort.Search(len(occ), func(k int) bool { return occ[k].start > t })
			}
		}
		return n
	}
	// The smallest t with more than offset matches at or before it.
	for lo < hi {
		mid := int64(uint64(lo) + (uint64(hi)-uint64(lo))/2)
		if upTo(mid) > offset {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == math.MinInt64 {
		return lo, 0
	}
	return lo, upTo(lo - 1)
}

// membersFrom returns the group hits with their members starting at or after t
// (those left with none dropped), reusing gs.
func membersFrom(gs []groupHit, t int64) []groupHit {
	kept := gs[:0]
	for _, h := range gs {
		occ := h.g.occ[:h.hi]
		if h.lo += sort.Search(h.hi-h.lo, func(k int) bool { return occ[h.lo+k].start >= t }); h.lo < h.hi {
			h.start = occ[h.lo].start
			kept = append(kept, h)
		}
	}
	return kept
}

// merge puts on the page the matches from from to need of two streams in
// the date order: main (slots) and the groups' cursors.
func (s *searcher) merge(main []uint32, c *cursors, from, need int) {
	x := s.x
	for k, i := 0, 0; k < need; k++ {
		var slot uint32
		switch {
		case i < len(main) && (c.Len() == 0 || c.after(x.ents[main[i]])):
			slot = main[i]
			i++
		case c.Len() > 0:
			slot = c.pop()
		default:
			return
		}
		if k >= from {
			s.put(slot)
		}
	}
}

// collapsed runs a CollapseSeries query in the date order: each series is
// listed once, by its first match, which is the first member in the date
// bounds of its groups or a match of the date order (an occurrence with
// an override), whichever comes first; the date order is read whole (a
// series' first match there decides where it is listed).
func (s *searcher) collapsed(gs []groupHit) {
	x := s.x
	need := s.offset + s.limit
	if s.limit == 0 {
		need = 0
	}
	// gfirst holds, per series number, the index in gs of the group hit
	// with the first member in the bounds (-1: none, or a match of the
	// date order comes first).
	var gfirst []int32
	if len(gs) > 0 {
		gfirst = int32Pool.get(int(x.seriesMax) + 1)
		defer int32Pool.put(gfirst)
		for i := range gfirst {
			gfirst[i] = -1
		}
	}
	for i := range gs {
		h := &gs[i]
		if k := gfirst[h.series]; k < 0 || x.compareHits(h, &gs[k]) < 0 {
			gfirst[h.series] = int32(i)
		}
		s.counts.addGroup(x, h.g, h.hi-h.lo)
	}
	var main []uint32
	listed := 0
	var skip func(n int) bool
	if !s.counts.perMatch() {
		// A block without occurrences (each checks) after the page is
		// only counted: its single events are all listed.
		skip = func(n int) bool {
			if len(main) >= need {
				listed += n
				return true
			}
			return false
		}
	}
	s.p.each(x, math.MaxInt, func(e *entry) {
		s.counts.add(e.slot, e)
		if !s.first(e) {
			return
		}
		if n := e.series; gfirst != nil && n != 0 && gfirst[n] >= 0 {
			if x.before(*e, &gs[gfirst[n]]) {
				gfirst[n] = -1
			} else {
				return // the series is listed by its group's member
			}
		}
		if len(main) < need {
			main = append(main, e.slot)
		}
		listed++
	}, skip)
	var reps []groupHit
	for _, k := range gfirst {
		if k >= 0 {
			h := gs[k]
			h.hi = h.lo + 1 // the series is listed once
			reps = append(reps, h)
		}
	}
	s.res.Total = listed + len(reps)
	if need > 0 && s.offset < s.res.Total {
		firstK(reps, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
		s.merge(main, newCursors(x, reps[:min(need, len(reps))]), s.offset, need)
	}
}

// sortFirst puts the k first slots of c by the date order at its front, in
// order (the rest after them, in no order), by firstK.
func (x *Index) sortFirst(c []uint32, k int) {
	firstK(c, k, func(a, b uint32) int { return x.compare(x.ents[a], x.ents[b]) })
}

// firstK puts the k first elements of c by cmpFn at its front, in order
// (the rest after them, in no order): a quickselect, then a sort of the
// k, so that a page of a few thousand candidates costs no full sort.
func firstK[T any](c []T, k int, cmpFn func(a, b T) int) {
	if k <= 0 {
		return
	}
	if k <= firstFewMax && len(c) > 8*k {
		firstFew(c, k, cmpFn)
		return
	}
	selectK(c, k, cmpFn)
	slices.SortFunc(c[:min(k, len(c))], cmpFn)
}

// firstFewMax is the largest k for which firstK takes the k first of
// many elements by firstFew: a page's few first of thousands of group
// hits (a short prefix's matching series) cost about one comparison
// each, where a quickselect compares and swaps each several times.
const firstFewMax = 32

// firstFew is firstK for a small k (at most firstFewMax): one pass that
// keeps the indexes of the k first elements seen, in order (an element
// that comes after the k-th so far costs one comparison), then moves
// them to the front, the elements they displace taking their places.
func firstFew[T any](c []T, k int, cmpFn func(a, b T) int) {
	var buf [firstFewMax]int
	best := buf[:0]
	for i := range c {
		n := len(best)
		if n == k && cmpFn(c[i], c[best[n-1]]) >= 0 {
			continue
		}
		j := sort.Search(n, func(j int) bool { return cmpFn(c[i], c[best[j]]) < 0 })
		if n < k {
			best = append(best, 0)
		}
		copy(best[j+1:], best[j:len(best)-1])
		best[j] = i
	}
	// The chosen, in order; the front's others go where chosen ones
	// were past the front.
	var vals [firstFewMax]T
	var chosen [firstFewMax]bool // chosen[i]: c[i] (i < k) is among best
	for j, i := range best {
		vals[j] = c[i]
		if i < k {
			chosen[i] = true
		}
	}
	free := 0 // the next of best past the front
	for i := range len(best) {
		if chosen[i] {
			continue
		}
		for best[free] < k {
			free++
		}
		c[best[free]] = c[i]
		free++
	}
	copy(c, vals[:len(best)])
}

// selectK puts the k first elements of c by cmpFn at its front, in no
// order (the rest after them): a quickselect.
func selectK[T any](c []T, k int, cmpFn func(a, b T) int) {
	if k > 0 && k < len(c) {
		lo, hi := 0, len(c)-1
		for lo < hi {
			// Median of three as the pivot, then a Lomuto partition.
			mid := lo + (hi-lo)/2
			if cmpFn(c[mid], c[lo]) < 0 {
				c[mid], c[lo] = c[lo], c[mid]
			}
			if cmpFn(c[hi], c[lo]) < 0 {
				c[hi], c[lo] = c[lo], c[hi]
			}
			if cmpFn(c[mid], c[hi]) < 0 {
				c[mid], c[hi] = c[hi], c[mid]
			}
			pivot, store := c[hi], lo
			for i := lo; i < hi; i++ {
				if cmpFn(c[i], pivot) < 0 {
					c[i], c[store] = c[store], c[i]
					store++
				}
			}
			c[store], c[hi] = c[hi], c[store]
			switch {
			case store == k-1 || store == k:
				lo = hi // the k first are in front
			case store < k:
				lo = store + 1
			default:
				hi = store - 1
			}
		}
	}
}
