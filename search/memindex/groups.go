package memindex

import (
	"cmp"
	"container/heap"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// groupIndex holds the steps of the groups of uniform occurrences (see
// group) on the Index it embeds: placing a document in its group or the
// date order, and ordering group hits.
type groupIndex struct{ *Index }

// This file holds the groups of uniform occurrences (see group): how a
// write forms them and places a document in one or in the date order, and
// how a query decides them (groupHit, plan.groups, plan.span) and merges
// their members into a page in the date order (cursors).

// place puts the entry of the row at slot in its group g, or, when g is
// nil, in the date order; and in the facet buckets either way (they hold
// every document: see facetIndex), unless the index is built in bulk
// (NewBulk: Finish builds both). The caller holds mu.
func (x *groupIndex) place(slot uint32, g *group) {
	if g != nil {
		x.join(slot, g)
	}
	if x.bulk {
		return // the date order and the buckets are built at Finish
	}
	if g == nil {
		x.order.insert(x.Index, x.ents[slot])
	}
	e := x.ents[slot]
	x.facets.add(x.Index, slot, &e)
}

// unplace takes the entry of the row at slot out of the facet buckets and
// out of its group or the date order. The caller holds mu.
func (x *groupIndex) unplace(slot uint32) {
	e := x.ents[slot]
	if !x.bulk {
		x.facets.remove(x.Index, slot, &e)
	}
	if x.rows[slot].grp != 0 {
		x.leave(slot)
	} else if !x.bulk {
		x.order.remove(x.Index, e)
	}
}

// join puts the row at slot in its group g, marking its entry
// flagGrouped (the facet buckets are the caller's). The caller holds mu.
func (x *groupIndex) join(slot uint32, g *group) {
	x.ents[slot].flags |= flagGrouped
	e := x.ents[slot]
	if g.at < 0 {
		g.series, g.rep, g.at = e.series, slot, len(x.groups)
		x.groups = append(x.groups, g)
		x.heads = append(x.heads, groupHead{})
		x.reps.Add(slot)
		x.addRep(slot, g.at)
	}
	i := sort.Search(len(g.occ), func(i int) bool { return x.compare(x.ents[g.occ[i].slot], e) >= 0 })
	g.occ = slices.Insert(g.occ, i, member{start: e.start, slot: slot})
	x.collapse.joined(g, i, x.groups)
	g.joined(i)
	x.heads[g.at] = g.head(x.Index)
	x.rows[slot].grp = uint32(g.at) + 1
	x.grouped.Add(slot)
	x.nGrouped++
	x.regrouped++
}

// leave takes the row at slot (in a group) out of its group, clearing
// its entry's flagGrouped; a group left empty leaves the index (the facet
// buckets are the caller's). The caller holds mu.
func (x *groupIndex) leave(slot uint32) {
	g := x.groupOf(slot)
	x.rows[slot].grp = 0
	x.grouped.Remove(slot)
	x.nGrouped--
	x.regrouped++
	switch i := sort.Search(len(g.occ), func(i int) bool { return x.compare(x.ents[g.occ[i].slot], x.ents[slot]) >= 0 }); {
	case i == 0 && len(g.occ) > 0 && g.occ[0].slot == slot:
		// The first: a series rewritten leaves its old group from the
		// front, so no member moves.
		g.occ = g.occ[1:]
		x.collapse.left(g, 0, x.groups)
	case i < len(g.occ) && g.occ[i].slot == slot:
		g.occ = slices.Delete(g.occ, i, i+1)
		x.collapse.left(g, i, x.groups)
		if i < len(g.occ) {
			g.restep() // a member from between two others
		}
	}
	x.ents[slot].flags &^= flagGrouped
	if g.rep == slot {
		x.reps.Remove(slot)
		x.dropRep(slot)
		if len(g.occ) > 0 {
			g.rep = g.occ[0].slot
			x.reps.Add(g.rep)
			x.addRep(g.rep, g.at)
		}
	}
	if len(g.occ) == 0 {
		end := len(x.groups) - 1
		last := x.groups[end]
		if last != g {
			x.repAt[x.repIndex(last.rep)] = int32(g.at)
		}
		x.groups[g.at], x.heads[g.at], last.at = last, x.heads[end], g.at
		x.groups, x.heads = x.groups[:end], x.heads[:end]
		// The last group's members name it by its index: it moved.
		for _, m := range last.occ {
			x.rows[m.slot].grp = uint32(last.at) + 1
		}
		g.at = -1
		// A group without members keeps no body (a member that joins it
		// again takes its own, as the first did).
		x.releaseBody(g.body)
		g.body = 0
		return
	}
	x.heads[g.at] = g.head(x.Index)
}

// repIndex returns the index in repSlots of slot (a representative's).
func (x *groupIndex) repIndex(slot uint32) int {
	i, _ := slices.BinarySearch(x.repSlots, slot)
	return i
}

// addRep adds slot, the representative of the group at index at of
// groups, to repSlots and repAt (at the end when it is the largest: a
// load adds them so).
func (x *groupIndex) addRep(slot uint32, at int) {
	i := x.repIndex(slot)
	x.repSlots = slices.Insert(x.repSlots, i, slot)
	x.repAt = slices.Insert(x.repAt, i, int32(at))
}

// dropRep takes slot, a representative no more, out of repSlots and
// repAt.
func (x *groupIndex) dropRep(slot uint32) {
	if i := x.repIndex(slot); i < len(x.repSlots) && x.repSlots[i] == slot {
		x.repSlots = slices.Delete(x.repSlots, i, i+1)
		x.repAt = slices.Delete(x.repAt, i, i+1)
	}
}

// joined keeps g.step after a member joined at i: a member after the
// last or before the first keeps a step its neighbour's distance
// matches, and keeps a group not known to be evenly spaced so (its other
// members' distances are as they were); any other join looks at every
// member (restep). So a series written in order costs a step per member.
func (g *group) joined(i int) {
	n := len(g.occ)
	switch {
	case n > 2 && g.step == 0 && (i == 0 || i == n-1):
	case n > 2 && i == n-1 && g.occ[i].start-g.occ[i-1].start == g.step:
	case n > 2 && i == 0 && g.occ[1].start-g.occ[0].start == g.step:
	default:
		g.restep()
	}
}

// restep sets g.step from g's members: the distance between the first
// two when every two in a row are that far apart (and it is above 0),
// else 0. A distance that overflows int64 is negative, so a step above 0
// is exact.
func (g *group) restep() {
	g.step = 0
	if len(g.occ) < 2 {
		return
	}
	s := g.occ[1].start - g.occ[0].start
	if s <= 0 {
		return
	}
	for k := 2; k < len(g.occ); k++ {
		if g.occ[k].start-g.occ[k-1].start != s {
			return
		}
	}
	g.step = s
}

// groupsOf returns, for each document of docs, the new group it joins
// (nil: none, it goes to the date order): the occurrences of one series
// that differ from a template occurrence in their dates only (see group).
// The template is the occurrence of the series, of at most three tried
// (the first, the middle and the last), that the most others share; a
// group needs two members.
func groupsOf(docs []search.EventDocument) []*group {
	out := make([]*group, len(docs))
	byID := map[int64][]int{}
	for i := range docs {
		if docs[i].Occurrence != "" {
			byID[docs[i].ID] = append(byID[docs[i].ID], i)
		}
	}
	for _, idx := range byID {
		if len(idx) < 2 {
			continue
		}
		var members []int
		for _, t := range []int{idx[0], idx[len(idx)/2], idx[len(idx)-1]} {
			tmpl := &docs[t]
			if !groupable(tmpl) {
				continue
			}
			var m []int
			for _, i := range idx {
				if i == t || sameButDates(tmpl, &docs[i]) {
					m = append(m, i)
				}
			}
			if len(m) > len(members) {
				members = m
			}
			if 2*len(members) > len(idx) {
				break // a majority: no other template has more
			}
		}
		if len(members) < 2 {
			continue
		}
		g := &group{dur: docs[members[0]].End - docs[members[0]].Start, at: -1}
		for _, i := range members {
			out[i] = g
		}
	}
	return out
}

// groupable reports whether an occurrence can be in a group: its end is
// not before its start (so a bound on the end is one on the start).
func groupable(d *search.EventDocument) bool {
	return d.End >= d.Start && d.End-d.Start >= 0
}

// sameButDates reports whether occurrence b differs from a in its dates
// only, with the same duration: everything but the dates that a query
// decides on a document is the same.
func sameButDates(a, b *search.EventDocument) bool {
	return groupable(b) && a.ID == b.ID && b.End-b.Start == a.End-a.Start && a.Status == b.Status && a.EventStatusOf() == b.EventStatusOf() &&
		a.PublishDate == b.PublishDate && a.ParentID == b.ParentID && docFlags(a) == docFlags(b) &&
		samePoint(a, b) && slices.Equal(a.CategoryIDs, b.CategoryIDs) && slices.Equal(a.TagIDs, b.TagIDs) &&
		slices.Equal(a.VenueIDs, b.VenueIDs) && slices.Equal(a.OrganizerIDs, b.OrganizerIDs) && maps.Equal(a.Text, b.Text)
}

// samePoint reports whether a and b have the same geo point entry: both
// none, or equal points (a NaN point equals nothing: it gets an entry of
// its own).
func samePoint(a, b *search.EventDocument) bool {
	pa, pb := a.HasGeo && a.Geo != nil, b.HasGeo && b.Geo != nil
	if !pa || !pb {
		return pa == pb
	}
	return *a.Geo == *b.Geo
}

// groupHit is a group that a query matches and the range [lo, hi) of its
// members within the query's date bounds.
type groupHit struct {
	g      *group
	lo, hi int
	// start is the start of member lo; series is g's series number.
	start  int64
	series uint32
}

// compareHits orders group hits by their members lo in the date order.
func (x *groupIndex) compareHits(a, b *groupHit) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return x.compare(x.ents[a.g.occ[a.lo].slot], x.ents[b.g.occ[b.lo].slot])
}

// groups decides the groups: those whose representative passes every
// filter but the dates, with their members in the date bounds. When q
// has candidates, they are narrowed to the date order's documents (the
// groups' members are decided here).
func (p *plan) groups(x *Index) []groupHit {
	if !p.grouped {
		return nil
	}
	var out []groupHit
	if p.cands == nil {
		if v, ok := hitPool.Get().(*[]groupHit); ok && cap(*v) >= len(x.heads) {
			out = (*v)[:0]
		} else {
			out = make([]groupHit, 0, len(x.heads))
		}
	}
	rest := p.needsRest()
	// A collapsed list without facets lists a group by its first member
	// in the bounds and counts it once: its last is not looked for.
	firstOnly := p.q.CollapseSeries && len(p.q.Facets) == 0 && !p.ranked()
	try := func(i int) {
		h := &x.heads[i]
		if h.flags&p.flagMask != p.flagWant || p.statuses != 0 && p.statuses&(1<<h.status) == 0 ||
			p.inside != nil && p.inside[h.point+1] == 0 {
			return
		}
		g := x.groups[i]
		if rest && !p.passesRest(x, &x.ents[g.occ[0].slot]) { // every member has the representative's statuses and parent
			return
		}
		if lo, hi, start := p.span(x, g, h, firstOnly); lo < hi {
			out = append(out, groupHit{g: g, lo: lo, hi: hi, start: start, series: h.series})
		}
	}
	defer func() { x.searchedGroups.Add(uint64(p.searched)) }()
	if p.cands == nil {
		for i := range x.heads {
			try(i)
		}
		x.decided.Add(uint64(len(x.heads)))
		return out
	}
	var matched, singles *roaring.Bitmap
	if p.cached != nil {
		matched, singles = x.matches.derived(x, p.cached)
	} else {
		matched = roaring.And(p.cands, x.reps)
	}
	if v, ok := hitPool.Get().(*[]groupHit); ok && uint64(cap(*v)) >= matched.GetCardinality() {
		out = (*v)[:0]
	} else {
		out = make([]groupHit, 0, matched.GetCardinality())
	}
	it := matched.ManyIterator()
	buf := make([]uint32, 256)
	// The representatives come in slot order: each is found in repSlots
	// from the one before, by steps that double then a binary search.
	reps, k := x.repSlots, 0
	// members counts the candidates in groups: a group's members are
	// candidates together (the same text, lists, point and key; a row a
	// writer holds hidden is in no group), so those of the groups whose
	// representative is one, read here anyway, rather than an
	// intersection's count over every candidate (millions of a common
	// prefix's rows with many series).
	members := 0
	for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
		for _, slot := range buf[:n] {
			step := 1
			for k+step < len(reps) && reps[k+step] <= slot {
				k += step
				step *= 2
			}
			k += sort.Search(min(step, len(reps)-k), func(j int) bool { return reps[k+j] >= slot })
			members += len(x.groups[x.repAt[k]].occ)
			try(int(x.repAt[k]))
		}
		x.decided.Add(uint64(n))
	}
	if x.nGrouped > 0 {
		p.unsplit = true
		switch {
		case singles != nil:
			p.cands, p.unsplit = singles, false // (shared: no one changes it)
			p.mainNone = p.cands.IsEmpty()
		case !p.ranked() && !p.q.CollapseSeries:
			// The candidates outside groups are counted, not made: a
			// query in the date order reads them whole only in
			// plan.each (which splits them first), and firstCounted
			// counts them with cardinalities and tests each entry it
			// reads (the date order holds no group's member).
			p.singlesN = p.cands.GetCardinality() - uint64(members)
			p.mainNone = p.singlesN == 0
		default:
			p.split(x)
			p.mainNone = p.cands.IsEmpty()
		}
	}
	return out
}

// split narrows the candidates of p to the date order's documents (those
// outside groups) when plan.groups left them whole (p.unsplit): from the
// match cache's entry when they are its rows (matchCache.singlesOf), else
// as a new bitmap.
func (p *plan) split(x *Index) {
	if !p.unsplit {
		return
	}
	p.unsplit = false
	if p.cached != nil && p.cands == p.cached.rows {
		p.cands = x.matches.singlesOf(x, p.cached) // (shared: no one changes it)
	} else {
		p.cands = roaring.AndNot(p.cands, x.grouped)
	}
}

// candsCount returns the number of p's candidates in the date order (a
// grouped plan's, once plan.groups decided the groups).
func (p *plan) candsCount() uint64 {
	if p.unsplit {
		return p.singlesN
	}
	return p.cands.GetCardinality()
}

// hitPool holds the group hits of queries done (putHits), so that a
// query deciding every group reuses a slice of their number.
var hitPool sync.Pool

// putHits gives back the group hits of a query once it is done with them.
func putHits(gs []groupHit) {
	if cap(gs) >= 256 {
		clear(gs[:cap(gs)]) // no group kept alive by the pool
		hitPool.Put(&gs)
	}
}

// span returns the range [lo, hi) of g's members within p's date bounds
// and the start of member lo: a member's end is its start plus g.dur, so
// the bounds on the end are bounds on the start. The members are read
// only when the bounds cut the group (its head says). With firstOnly, hi
// is lo+1 when there is a member in the bounds (the others are not
// looked for).
func (p *plan) span(x *Index, g *group, h *groupHead, firstOnly bool) (int, int, int64) {
	lo, hi := p.startMin, p.startMax
	if p.endMin != math.MinInt64 {
		if b := p.endMin - h.dur; b <= p.endMin { // else below int64: no bound
			lo = max(lo, b)
		}
	}
	if p.endMax != math.MaxInt64 {
		b := p.endMax - h.dur
		if b > p.endMax {
			return 0, 0, 0 // below int64: no start is low enough
		}
		hi = min(hi, b)
	}
	if lo > hi || h.last < lo || h.first > hi {
		return 0, 0, 0
	}
	if lo <= h.first && (h.last <= hi || firstOnly && h.first <= hi) {
		if firstOnly {
			return 0, 1, h.first
		}
		return 0, int(h.n), h.first
	}
	if h.step > 0 {
		return p.spanByStep(h, lo, hi, firstOnly)
	}
	p.searched++
	occ := g.occ
	i, j := 0, len(occ)
	if h.first < lo {
		i = startsFrom(occ, lo)
	}
	if firstOnly {
		if i < len(occ) && occ[i].start <= hi {
			return i, i + 1, occ[i].start
		}
		return 0, 0, 0
	}
	if h.last > hi { // (so hi+1 does not overflow)
		j = i + startsFrom(occ[i:], hi+1)
	}
	if i >= j {
		return 0, 0, 0
	}
	return i, j, occ[i].start
}

// spanByStep is span for a group whose members are evenly spaced
// (h.step > 0) and that the start bounds [lo, hi] cut (lo <= h.last,
// h.first <= hi, and not both lo <= h.first and h.last <= hi): the
// members' indexes in the bounds are found by division, reading none of
// them (a member a query has not read yet is a cache miss).
func (p *plan) spanByStep(h *groupHead, lo, hi int64, firstOnly bool) (int, int, int64) {
	step := uint64(h.step)
	i, j := uint64(0), uint64(h.n)
	if h.first < lo {
		d := uint64(lo) - uint64(h.first) // the distance, exact as unsigned
		i = d / step
		if d%step != 0 {
			i++
		}
	}
	if h.last > hi {
		j = (uint64(hi)-uint64(h.first))/step + 1
	}
	if i >= j {
		return 0, 0, 0
	}
	if firstOnly {
		j = i + 1
	}
	return int(i), int(j), h.first + int64(i*step)
}

// startsFrom returns the index of the first member of occ (in order)
// that starts at or after t. The members of a group are about evenly
// spaced (a weekly series' are), so it guesses the index from t's place
// between the first and last starts and searches outward from the guess
// in steps that double: a step or two where a binary search reads as
// many members as the group has halvings (each a cache miss, over a
// group's members that nothing else reads).
func startsFrom(occ []member, t int64) int {
	n := len(occ)
	if n == 0 || occ[0].start >= t {
		return 0
	}
	if occ[n-1].start < t {
		return n
	}
	// occ[0].start < t <= occ[n-1].start: the answer is in [1, n-1].
	f, l := float64(occ[0].start), float64(occ[n-1].start)
	g := min(max(int((float64(t)-f)/(l-f)*float64(n-1)), 1), n-1)
	lo, hi := g, g // the answer is in (lo, hi]
	if occ[g].start >= t {
		for step := 1; ; step *= 2 {
			lo = max(g-step, 0)
			if lo == 0 || occ[lo].start < t {
				break
			}
			hi = lo
		}
	} else {
		for step := 1; ; step *= 2 {
			hi = min(g+step, n-1)
			if hi == n-1 || occ[hi].start >= t {
				break
			}
			lo = hi
		}
	}
	return lo + 1 + sort.Search(hi-lo-1, func(k int) bool { return occ[lo+1+k].start >= t })
}

// cursors is a heap of groups' members in the date order: each group hit
// at its next member (lo).
type cursors struct {
	x  *Index
	hs []groupHit
}

// newCursors returns the heap of the group hits (which it reorders).
func newCursors(x *Index, hs []groupHit) *cursors {
	c := &cursors{x: x, hs: hs}
	heap.Init(c)
	return c
}

func (c *cursors) Len() int           { return len(c.hs) }
func (c *cursors) Less(i, j int) bool { return c.x.compareHits(&c.hs[i], &c.hs[j]) < 0 }
func (c *cursors) Swap(i, j int)      { c.hs[i], c.hs[j] = c.hs[j], c.hs[i] }
func (c *cursors) Push(v any)         { c.hs = append(c.hs, v.(groupHit)) }
func (c *cursors) Pop() any {
	h := c.hs[len(c.hs)-1]
	c.hs = c.hs[:len(c.hs)-1]
	return h
}

// after reports whether e comes before the first member of the heap
// (Len > 0).
func (c *cursors) after(e entry) bool { return c.x.before(e, &c.hs[0]) }

// before reports whether e comes before member lo of group hit h.
func (x *groupIndex) before(e entry, h *groupHit) bool {
	if e.start != h.start {
		return e.start < h.start
	}
	return x.compare(e, x.ents[h.g.occ[h.lo].slot]) < 0
}

// pop takes the first member of the heap (Len > 0) and returns its slot.
func (c *cursors) pop() uint32 {
	h := &c.hs[0]
	slot := h.g.occ[h.lo].slot
	if h.lo++; h.lo == h.hi {
		heap.Pop(c)
	} else {
		h.start = h.g.occ[h.lo].start
		heap.Fix(c, 0)
	}
	return slot
}
