package memindex

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// This file holds the collapsed list without filters but the dates,
// statuses and flags (collapsedByBuckets): its total from the groups'
// first and last starts kept sorted (groupSpans) and the date order's
// block summaries, and its page from the facet buckets, read in the date
// order from the start of its dates until the page is full. So it decides
// no group: its work grows with the weeks it walks and its page, not with
// the number of series.

// collapseState is what the collapsed lists keep about the groups beyond
// their heads: bounds on their members' gaps and durations, the groups of
// each series, and the groups' spans sorted (built when a query asks,
// after a write changed a group). Index embeds it; the writers change it
// holding mu.
type collapseState struct {
	// knobs are the index's (dirtyMax).
	*knobs
	// gen counts the changes to the groups (join, leave): spans built at
	// another gen are stale.
	gen uint64
	// maxGap bounds the gaps between the starts of consecutive members of
	// every group, and maxDur the groups' durations (end minus start). A
	// write raises them and nothing lowers them (an upper bound is all a
	// query needs; finding the new largest gap when one goes would read
	// every group).
	maxGap, maxDur int64
	// bySeries holds the groups of each series number; multi counts the
	// series with more than one (a series being rewritten, between the
	// holds of its write).
	bySeries [][]*group
	multi    int
	// spans holds the groups' spans of gen (nil: none built); spansMu
	// orders the queries that build them. dirty holds the groups changed
	// since the last build (each once: group.spanned.dirty), whose
	// spans the next build replaces.
	spans   atomic.Pointer[groupSpans]
	spansMu sync.Mutex
	dirty   []*group
}

// spanned is what the built spans hold of a group (in: they hold it).
type spanned struct {
	in, dirty     bool
	status, flags uint8
	first, last   int64
	dur           int64
}

// touch marks g changed since the spans were built; groups are the
// index's groups. Without spans only gen moves (the next build reads
// every group). Past dirtyMax changed groups (writes and no collapsed
// list to build the spans) the spans are dropped, so that the changed
// groups are not held: every group's spanned is cleared, those of the
// groups that left with the changed ones.
func (c *collapseState) touch(g *group, groups []*group) {
	c.gen++
	if c.spans.Load() == nil || g.spanned.dirty {
		return
	}
	if len(c.dirty) >= c.dirtyMax {
		for _, d := range c.dirty {
			d.spanned = spanned{}
		}
		for _, d := range groups {
			d.spanned = spanned{}
		}
		c.dirty = nil
		c.spans.Store(nil)
		return
	}
	g.spanned.dirty = true
	c.dirty = append(c.dirty, g)
}

// groupSpans holds, per kind (status and flags), the first and last
// starts of the groups of that kind and the ends of those members, each
// sorted, so that a query counts the groups that have a member in its
// dates with a binary search per kind and bound (see groupsInDates).
type groupSpans struct {
	gen   uint64
	kinds []spanKind
}

// spanKind is the groups of one status and flags: each array holds one
// value per group, sorted.
type spanKind struct {
	status, flags                  uint8
	first, firstEnd, last, lastEnd []int64
}

// joined updates c for a member joining g at index i of g.occ (g just
// installed when its first member joins); groups are the index's.
func (c *collapseState) joined(g *group, i int, groups []*group) {
	c.touch(g, groups)
	if len(g.occ) == 1 {
		c.maxDur = max(c.maxDur, g.dur)
		c.addSeries(g)
	}
	if i > 0 {
		c.maxGap = max(c.maxGap, distance(g.occ[i-1].start, g.occ[i].start))
	}
	if i+1 < len(g.occ) {
		c.maxGap = max(c.maxGap, distance(g.occ[i].start, g.occ[i+1].start))
	}
}

// left updates c for the member at index i of g.occ having left (g left
// the index when it has no member any more); groups are the index's.
func (c *collapseState) left(g *group, i int, groups []*group) {
	c.touch(g, groups)
	if len(g.occ) == 0 {
		c.dropSeries(g)
		return
	}
	if i > 0 && i < len(g.occ) {
		c.maxGap = max(c.maxGap, distance(g.occ[i-1].start, g.occ[i].start))
	}
}

// distance returns b − a for a ≤ b, or math.MaxInt64 when that overflows.
func distance(a, b int64) int64 {
	if d := uint64(b) - uint64(a); d <= math.MaxInt64 {
		return int64(d)
	}
	return math.MaxInt64
}

// addSeries records g among its series' groups.
func (c *collapseState) addSeries(g *group) {
	for int(g.series) >= len(c.bySeries) {
		c.bySeries = append(c.bySeries, nil)
	}
	gs := append(c.bySeries[g.series], g)
	if len(gs) == 2 {
		c.multi++
	}
	c.bySeries[g.series] = gs
}

// dropSeries takes g out of its series' groups.
func (c *collapseState) dropSeries(g *group) {
	if int(g.series) >= len(c.bySeries) {
		return
	}
	gs := c.bySeries[g.series]
	if i := slices.Index(gs, g); i >= 0 {
		gs = slices.Delete(gs, i, i+1)
		if len(gs) == 1 {
			c.multi--
		}
		if len(gs) == 0 {
			gs = nil
		}
		c.bySeries[g.series] = gs
	}
}

// groupSpans returns the groups' spans, building them when a write
// changed a group since: the spans before, with the changed groups'
// values taken out and their new ones merged in (a pass over the spans
// and a sort of the changes), or all anew when there are no spans yet or
// many changes. The caller holds mu (read): no writer runs, and the
// queries that build are ordered by spansMu (the spans of other queries
// are never changed).
func (x *Index) groupSpans() *groupSpans {
	c := &x.collapse
	if s := c.spans.Load(); s != nil && s.gen == c.gen {
		return s
	}
	c.spansMu.Lock()
	defer c.spansMu.Unlock()
	old := c.spans.Load()
	if old != nil && old.gen == c.gen {
		return old
	}
	var s *groupSpans
	if old == nil || len(c.dirty) > len(x.groups)/8 {
		s = x.allSpans()
	} else {
		s = old.merged(x, c.dirty)
	}
	s.gen = c.gen
	for _, g := range c.dirty {
		g.spanned.dirty = false
	}
	c.dirty = c.dirty[:0]
	c.spans.Store(s)
	return s
}

// spannedNow returns what the spans hold of g now: its head's values, or
// nothing for a group that left.
func (x *Index) spannedNow(g *group) spanned {
	if g.at < 0 {
		return spanned{}
	}
	h := &x.heads[g.at]
	return spanned{in: true, status: h.status, flags: h.flags, first: h.first, last: h.last, dur: h.dur}
}

// allSpans builds the spans of every group.
func (x *Index) allSpans() *groupSpans {
	for _, g := range x.collapse.dirty {
		g.spanned = spanned{dirty: true} // (a group that left is in no spans)
	}
	s := &groupSpans{}
	for _, g := range x.groups {
		sp := x.spannedNow(g)
		sp.dirty = g.spanned.dirty
		g.spanned = sp
		sk := s.kind(sp.status, sp.flags)
		sk.first, sk.firstEnd = append(sk.first, sp.first), append(sk.firstEnd, endOf(sp.first, sp.dur))
		sk.last, sk.lastEnd = append(sk.last, sp.last), append(sk.lastEnd, endOf(sp.last, sp.dur))
	}
	for k := range s.kinds {
		sk := &s.kinds[k]
		for _, a := range [][]int64{sk.first, sk.firstEnd, sk.last, sk.lastEnd} {
			slices.Sort(a)
		}
	}
	return s
}

// kind returns s's kind of status and flags, adding it.
func (s *groupSpans) kind(status, flags uint8) *spanKind {
	for k := range s.kinds {
		if s.kinds[k].status == status && s.kinds[k].flags == flags {
			return &s.kinds[k]
		}
	}
	s.kinds = append(s.kinds, spanKind{status: status, flags: flags})
	return &s.kinds[len(s.kinds)-1]
}

// merged returns new spans: s with the values of the changed groups
// taken out and their new values (x.spannedNow) in, updating each
// group's spanned. s is not changed.
func (s *groupSpans) merged(x *Index, changed []*group) *groupSpans {
	type change struct{ out, in [4][]int64 }
	byKind := map[[2]uint8]*change{}
	at := func(status, flags uint8) *change {
		k := [2]uint8{status, flags}
		if byKind[k] == nil {
			byKind[k] = &change{}
		}
		return byKind[k]
	}
	values := func(sp spanned) [4]int64 {
		return [4]int64{sp.first, endOf(sp.first, sp.dur), sp.last, endOf(sp.last, sp.dur)}
	}
	for _, g := range changed {
		if g.spanned.in {
			ch := at(g.spanned.status, g.spanned.flags)
			for a, v := range values(g.spanned) {
				ch.out[a] = append(ch.out[a], v)
			}
		}
		now := x.spannedNow(g)
		if now.in {
			ch := at(now.status, now.flags)
			for a, v := range values(now) {
				ch.in[a] = append(ch.in[a], v)
			}
		}
		now.dirty = g.spanned.dirty
		g.spanned = now
	}
	out := &groupSpans{kinds: make([]spanKind, 0, len(s.kinds)+len(byKind))}
	for _, k := range s.kinds {
		nk := k
		if ch := byKind[[2]uint8{k.status, k.flags}]; ch != nil {
			arrs := [4]*[]int64{&nk.first, &nk.firstEnd, &nk.last, &nk.lastEnd}
			for a, arr := range arrs {
				*arr = mergeSpans(*arr, ch.out[a], ch.in[a])
			}
			delete(byKind, [2]uint8{k.status, k.flags})
		}
		if len(nk.first) > 0 {
			out.kinds = append(out.kinds, nk)
		}
	}
	for key, ch := range byKind { // kinds the spans did not hold
		nk := spanKind{status: key[0], flags: key[1]}
		arrs := [4]*[]int64{&nk.first, &nk.firstEnd, &nk.last, &nk.lastEnd}
		for a, arr := range arrs {
			*arr = mergeSpans(nil, nil, ch.in[a])
		}
		if len(nk.first) > 0 {
			out.kinds = append(out.kinds, nk)
		}
	}
	return out
}

// mergeSpans returns a new sorted array: the sorted values of a, less
// one occurrence of each value of out (all in a), plus the values of in
// (out and in are sorted here).
func mergeSpans(a, out, in []int64) []int64 {
	slices.Sort(out)
	slices.Sort(in)
	r := make([]int64, 0, len(a)-len(out)+len(in))
	i, j := 0, 0
	for _, v := range a {
		if i < len(out) && out[i] == v {
			i++
			continue
		}
		for j < len(in) && in[j] < v {
			r = append(r, in[j])
			j++
		}
		r = append(r, v)
	}
	return append(r, in[j:]...)
}

// endOf returns start + dur (dur ≥ 0), or math.MaxInt64 when that
// overflows.
func endOf(start, dur int64) int64 {
	if e := start + dur; e >= start {
		return e
	}
	return math.MaxInt64
}

// groupsInDates returns the number of groups of the kinds p keeps (its
// statuses and flags, flagGrouped aside) that have a member in p's dates,
// and whether it could count them exactly from the spans: as the groups
// of those kinds less those whose last member is before the dates and
// those whose first is after them. That holds when
//
//   - the lower bounds come down to one on the start or one on the end
//     (endMin ≤ startMin, or no startMin), and the upper bounds too
//     (startMax ≥ endMax, or no endMax, or startMax at least the longest
//     duration below endMax): a member's end is its start plus the
//     group's duration, not negative;
//   - no gap between consecutive members of a group is wider than the
//     dates (less the longest duration, when the bounds are a start and
//     an end): then a group that has members on both sides of the dates
//     has one inside, and none has all its members on both sides.
//
// The caller has checked that no series has more than one group.
func (p *plan) groupsInDates(x *Index) (int, bool) {
	c := &x.collapse
	var lowEnd, upEnd bool
	switch {
	case p.endMin <= p.startMin:
	case p.startMin == math.MinInt64:
		lowEnd = true
	default:
		return 0, false
	}
	switch {
	case p.startMax >= p.endMax:
		upEnd = true
	case p.endMax == math.MaxInt64 || p.startMax <= p.endMax-c.maxDur:
		// (A member that starts by startMax ends by endMax.)
	default:
		return 0, false
	}
	lo, hi, d := p.startMin, p.startMax, int64(0)
	if lowEnd {
		lo = p.endMin
	}
	if upEnd {
		hi = p.endMax
		if !lowEnd {
			d = c.maxDur
		}
	}
	if lo != math.MinInt64 && hi != math.MaxInt64 && (hi < lo || uint64(hi)-uint64(lo) < uint64(d)+uint64(c.maxGap)) {
		return 0, false
	}
	n := 0
	mask, want := p.flagMask&^flagGrouped, p.flagWant
	for _, k := range x.groupSpans().kinds {
		if k.flags&mask != want || p.statuses != 0 && p.statuses&(1<<k.status) == 0 {
			continue
		}
		early, late := k.last, k.first
		if lowEnd {
			early = k.lastEnd
		}
		if upEnd {
			late = k.firstEnd
		}
		n += len(k.first)
		n -= sort.Search(len(early), func(i int) bool { return early[i] >= lo })
		n -= len(late) - sort.Search(len(late), func(i int) bool { return late[i] > hi })
	}
	return n, true
}

// deepOccurrenceBlocks bounds the blocks of the date order holding
// occurrences (with an override, or of series without a group) within
// the dates of a deep collapsed page found by its start (deepCollapsed):
// each of its counts reads them entry by entry.
const deepOccurrenceBlocks = 16

// collapsedByBuckets runs a collapsed list (CollapseSeries) that has no
// words, IDs, list filters, radius, facets, parent or event-status filter
// in an index with groups (without, the date order alone answers it as
// cheaply), and reports whether it did. Its total is the date order's single events (counted from its blocks'
// summaries) plus the groups with a member in the dates (groupsInDates)
// plus the series whose occurrences with an override match and whose
// group does not; its page is read from the facet buckets, which hold
// every document, in the date order from the start of the dates, each
// series listed at its first match, until the page is full (a page past
// collapsedPageMax: deepCollapsed). It decides no group (Index.decided):
// the work grows with the kinds, the date order's blocks, the weeks the
// page spans and the page. It declines (and the path that decides every
// group runs) when a series has two groups, when groupsInDates cannot
// count the groups exactly (dates narrower than the widest gap between a
// group's members), and for a deep page when a series' occurrence with an
// override matches or deepCollapsed cannot find the page.
func (s *searcher) collapsedByBuckets() bool {
	x, p := s.x, s.p
	need := s.offset + s.limit
	if s.limit == 0 {
		need = 0
	}
	if !p.grouped || !p.q.CollapseSeries || p.ranked() || len(p.q.Facets) > 0 || p.cands != nil || p.inside != nil || p.needsRest() ||
		x.collapse.multi > 0 {
		return false
	}
	groups, ok := p.groupsInDates(x)
	if !ok {
		return false
	}
	total := groups
	// The date order: its single events, counted from the summaries of
	// the blocks without occurrences, and the occurrences with an
	// override, each series counted once unless its group has a member
	// in the dates.
	n, overrides := p.dateOrderListed(x)
	total += n
	s.res.Total = total
	if need = min(need, total); need <= s.offset {
		return true
	}
	if need <= x.collapsedPageMax {
		s.walkCollapsed(need)
		return true
	}
	if overrides {
		return false // (the deep walk tells a series' first match by its group alone)
	}
	return s.deepCollapsed(need)
}

// dateOrderListed returns the number of the date order's matches of p
// that a collapsed list lists: its single events (counted from the
// summaries of the blocks without occurrences) and the series whose
// occurrences with an override match and whose group has no member in
// the dates (each once); and whether any occurrence with an override
// (or of a series without a group) matches.
func (p *plan) dateOrderListed(x *Index) (total int, overrides bool) {
	var seen []uint64
	mask, want := p.flagMask&^flagGrouped, p.flagWant
	p.each(x, 0, func(e *entry) {
		n := e.series
		if n == 0 {
			total++
			return
		}
		overrides = true
		if seen == nil {
			seen = make([]uint64, x.seriesMax/64+1)
		}
		if seen[n>>6]&(1<<(n&63)) != 0 {
			return
		}
		seen[n>>6] |= 1 << (n & 63)
		if int(n) < len(x.collapse.bySeries) {
			for _, g := range x.collapse.bySeries[n] {
				h := &x.heads[g.at]
				if h.flags&mask == want && (p.statuses == 0 || p.statuses&(1<<h.status) != 0) {
					if lo, hi, _ := p.span(x, g, h, true); lo < hi {
						return // counted with the groups
					}
				}
			}
		}
		total++
	}, func(n int) bool {
		total += n // a block without occurrences: its single events
		return true
	})
	return total, overrides
}

// deepCollapsed puts on the page the listed matches from s.offset to need
// (past collapsedPageMax) of a collapsed list none of whose matches is
// in the date order as a series' (an occurrence with an override), and
// reports whether it could. It finds the start t of the page's first
// match by bisection on t, counting the listed matches that start by t
// as the list up to t (groupsInDates and the date order's summaries: 2
// binary searches per kind and a step per block, about 60 times), then
// reads the buckets from t as walkCollapsed does, a group's member
// listed when the member before it in its group is outside the dates
// (listedMember). It cannot when the page starts within the longest
// duration before the end bound (then the path that decides every group
// takes it). When the page starts within the widest gap between members
// from the start of the dates, the first pages are walked from the start
// (walkCollapsed): the weeks of that gap bound the walk.
func (s *searcher) deepCollapsed(need int) bool {
	x, p := s.x, s.p
	c := &x.collapse
	if len(x.facets.nums) == 0 {
		return false
	}
	// The starts of the documents lie within the buckets' bounds.
	first, last := x.facets.buckets[x.facets.nums[0]], x.facets.buckets[x.facets.nums[len(x.facets.nums)-1]]
	a, b := max(p.startMin, first.minStart), min(p.startMax, last.maxStart)
	if p.endMax != math.MaxInt64 {
		// (Up to a start that far below endMax, the count holds.)
		b = min(b, p.endMax-c.maxDur)
	}
	if a > b {
		return false
	}
	// Each count reads the blocks of the date order with occurrences
	// entry by entry: with more than a few in the dates, the path that
	// decides every group (which reads the date order once) costs less.
	occBlocks := 0
	for i, _ := x.order.lowerBound(a); i < len(x.order) && x.order[i].e[0].start <= b; i++ {
		if x.order[i].occurrences > 0 {
			if occBlocks++; occBlocks > deepOccurrenceBlocks {
				return false
			}
		}
	}
	// upTo returns the number of listed matches that start by t, and
	// whether it could count them (from some t on, up to b, it can).
	upTo := func(t int64) (int, bool) {
		q := *p
		q.startMax = min(q.startMax, t)
		if q.startMin > q.startMax {
			return 0, true
		}
		g, ok := q.groupsInDates(x)
		if !ok {
			return 0, false
		}
		n, _ := q.dateOrderListed(x)
		return g + n, true
	}
	if n, ok := upTo(b); !ok || n <= s.offset {
		return false
	}
	n, ok := upTo(a)
	if !ok {
		// The smallest t whose count holds, by bisection too.
		lo, hi := a, b
		for lo < hi {
			mid := int64(uint64(lo) + (uint64(hi)-uint64(lo))/2)
			if _, ok := upTo(mid); ok {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		a = lo
		n, _ = upTo(a)
	}
	if n > s.offset {
		s.walkCollapsed(need) // the page is within the first gap
		return true
	}
	// upTo(a) <= offset < upTo(b): the smallest t in (a, b] with more
	// than offset listed by t.
	lo, hi := a+1, b
	for lo < hi {
		mid := int64(uint64(lo) + (uint64(hi)-uint64(lo))/2)
		if n, _ := upTo(mid); n > s.offset {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	before, _ := upTo(lo - 1)
	s.walkFrom(lo, before, need)
	return true
}

// walkCollapsed puts on the page the listed matches from s.offset to need
// of a collapsed list, reading the facet buckets of its dates in order,
// each bucket's matches in the date order (the first of them only, as
// many as the page still needs, then more when series seen before took
// some), until need are listed.
func (s *searcher) walkCollapsed(need int) { s.walkFrom(math.MinInt64, 0, need) }

// walkFrom is walkCollapsed from the matches that start at or after
// from, before listed matches starting before it. From the start of the
// dates (from at or before it) a series is listed at its first match
// read (searcher.first); from later (deepCollapsed) a group's member is
// listed when the member before it in its group is outside the dates
// (listedMember).
func (s *searcher) walkFrom(from int64, before, need int) {
	x, f := s.x, s.x.facets
	pp := *s.p
	pp.flagMask &^= flagGrouped // the buckets' members are read as any document
	fromStart := from <= pp.startMin
	pp.startMin = max(pp.startMin, from)
	var none [numLists][]int64
	var m, t []uint64
	// items holds a bucket's matches (at 25,000 weekly series, a week
	// holds 25,000 of them): from the pool, given back grown.
	items := memberPool.get(0)
	var starts []int64
	ok := make([]bool, 0, 8)
	var work, sorted uint64
	defer func() { f.listWork.Add(work); f.ordered.Add(sorted); memberPool.put(items) }()
	byDate := func(a, b member) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return x.compare(x.ents[a.slot], x.ents[b.slot])
	}
	listed := before
	lo, hi := s.x.bucketOf(pp.startMin), s.x.bucketOf(pp.startMax)
	for i := sort.Search(len(f.nums), func(i int) bool { return f.nums[i] >= lo }); i < len(f.nums) && f.nums[i] <= hi && listed < need; i++ {
		b := f.buckets[f.nums[i]]
		work++
		if b.minEnd > pp.endMax || b.maxEnd < pp.endMin {
			continue
		}
		var all, some, empty bool
		if ok, all, some = b.keeps(&pp, ok[:0]); !some {
			continue
		}
		whole := b.minStart >= pp.startMin && b.maxStart <= pp.startMax && b.minEnd >= pp.endMin && b.maxEnd <= pp.endMax
		if m, t, empty = f.matchSet(x, b, &pp, &none, ok, all, whole, m, t, &work); empty {
			continue
		}
		// The bucket's matches in rounds, each the next k of them in the
		// date order (k doubling when series seen before took some):
		// those starting after the round before's last start and at or
		// before the k-th smallest such start (kthStartAbove), ties
		// included, so that a week holding an occurrence of every series
		// orders its page's first matches, not all of them.
		n := andCount(m, m)
		work += uint64(n)
		after, hasAfter := int64(math.MinInt64), false
		for left, k := n, need-listed; left > 0 && listed < need; k *= 2 {
			k = min(max(k, need-listed), left)
			upTo := int64(math.MaxInt64)
			if k*fewFirst <= left {
				upTo, starts = kthStartAbove(b.start, m, after, hasAfter, k, starts)
			}
			items = items[:0]
			for w, word := range m {
				for ; word != 0; word &= word - 1 {
					i := w<<6 + bits.TrailingZeros64(word)
					if st := b.start[i]; st <= upTo && (!hasAfter || st > after) {
						items = append(items, member{start: st, slot: b.slot[i]})
					}
				}
			}
			sorted += uint64(len(items))
			slices.SortFunc(items, byDate)
			left -= len(items)
			after, hasAfter = upTo, true
			for _, it := range items {
				if fromStart && !s.first(&x.ents[it.slot]) || !fromStart && !s.p.listedMember(x, it) {
					continue
				}
				if listed >= s.offset {
					s.put(it.slot)
				}
				if listed++; listed == need {
					break
				}
			}
		}
	}
}

// kthStartAbove is kthStart over the local numbers set in m whose start
// is above after (all of them when !hasAfter): the k-th smallest such
// start (1 <= k <= their number), with h as scratch (returned for reuse).
func kthStartAbove(start []int64, m []uint64, after int64, hasAfter bool, k int, h []int64) (int64, []int64) {
	h = h[:0]
	for w, word := range m {
		for ; word != 0; word &= word - 1 {
			v := start[w<<6+bits.TrailingZeros64(word)]
			if len(h) == k && v >= h[0] || hasAfter && v <= after {
				continue
			}
			h = pushSmallest(h, k, v)
		}
	}
	return h[0], h
}

// listedMember reports whether a match m of a collapsed list is listed,
// when no series' match is in the date order and no series has two
// groups: a single event is; a group's member is when it is the first
// of its group or the member before it is outside p's dates.
func (p *plan) listedMember(x *Index, m member) bool {
	g := x.groupOf(m.slot)
	if g == nil {
		return true
	}
	occ := g.occ
	i := startsFrom(occ, m.start)
	for i < len(occ) && occ[i].slot != m.slot {
		i++
	}
	if i == 0 {
		return true
	}
	st := occ[i-1].start
	en := endOf(st, g.dur)
	return st < p.startMin || st > p.startMax || en < p.endMin || en > p.endMax
}
