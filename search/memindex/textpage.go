package memindex

import "math"

// This file takes the first page of a query with many candidates (a
// common word, a short prefix, a broad list filter) in the date order by
// a walk that stops at the page, and counts its matches from the
// candidates' cardinalities, so that neither grows with the number of
// candidates (see firstCounted).

// minCounted is the number of candidates from which a query's page and
// total are found by firstCounted: below it, sorting the candidates
// (plan.each) costs little. A variable so that the tests can take every
// query through firstCounted.
var minCounted = 1024

// outsideShare and insideCost choose how firstCounted counts: from the
// kinds' cardinalities less the entries outside the dates when those are
// at most one entry in outsideShare (0: always), else by reading the
// entries inside the dates, testing those that pass the other filters in
// the candidates while insideCost times their number is at most the
// number of candidates (0: no limit; testing a candidate in the bitmap
// costs a few times setting its bit in plan.each's bit set). Variables so
// that the tests can take every query through either.
var outsideShare, insideCost = 2, 4

// firstCounted returns the first collect matches of p in the date order
// and the number of all of them, as plan.each with its skip would give
// them, for a plan with candidates and no filter but those an entry
// decides (dates, statuses, flags); ok is false when it cannot (the
// caller then reads the matches with plan.each, which sets a bit per
// candidate and reads every entry inside the dates).
//
// When the dates leave few entries outside (the upcoming events, say),
// the number is that of the candidates among the date order's entries of
// the kinds (status and flags) p keeps, from the kinds' bitmaps
// (Index.kinds, one AND cardinality each), less the candidates among the
// entries outside p's dates, read one by one; the page is then found by
// walking the date order from p's first start, testing each entry's
// candidacy, until collect matches: about collect × (entries /
// candidates) entries (it declines after as many entries as there are
// candidates, what plan.each would cost). Otherwise (next week's
// events) it reads the entries inside the dates, the page first, and
// tests those that pass the other filters in the candidates, declining
// past a share of the candidates (insideCost). So the work grows with
// the page and with the smaller of the entries inside and outside the
// dates, not with the candidates.
//
// The work it did (entries read, kinds' bitmaps intersected) is added to
// Index.visited.
func (s *searcher) firstCounted(p *plan, collect int) (main []uint32, n int, ok bool) {
	x := s.x
	if p.cands == nil || p.mainNone || p.needsRest() || p.inside != nil || p.q.CollapseSeries {
		return nil, 0, false
	}
	card := p.cands.GetCardinality()
	if card < uint64(minCounted) {
		return nil, 0, false
	}
	return s.countedIn(p, x.window(p), card, collect)
}

// countedIn is firstCounted for a plan whose start bounds lie at w in the
// date order and whose candidates number card (at least minCounted).
func (s *searcher) countedIn(p *plan, w window, card uint64, collect int) (main []uint32, n int, ok bool) {
	x := s.x
	read := 0
	defer func() { x.visited.Add(uint64(read)) }()
	entries := len(x.slotOf) - x.nGrouped
	if w.outside*outsideShare <= entries {
		n, read = x.countByKinds(p, w)
		want := min(collect, n)
		if want == 0 {
			return nil, n, true
		}
		budget := max(int(min(card, math.MaxInt32)), minCounted)
		tested := 0
		read += x.walkWindow(p, w, func(slot uint32) bool {
			main = append(main, slot)
			return len(main) < want
		}, func() bool {
			tested++
			return tested <= budget
		})
		if len(main) < want {
			return nil, 0, false
		}
		return main, n, true
	}
	// Inside the dates: the entries that pass the filters an entry
	// decides are tested, up to a share of the candidates.
	tested, budget := 0, card/uint64(max(insideCost, 1))
	read += x.walkWindow(p, w, func(slot uint32) bool {
		if n < collect {
			main = append(main, slot)
		}
		n++
		return true
	}, func() bool {
		tested++
		return insideCost == 0 || uint64(tested) <= budget
	})
	if insideCost != 0 && uint64(tested) > budget {
		return nil, 0, false
	}
	return main, n, true
}

// window is where a plan's start bounds lie in the date order: its
// first entry (block b0, position i0), the entry after its last (b1, i1),
// the blocks between whose ends the end bounds do not hold whole (mixed),
// and the number of entries outside the start bounds or in those blocks.
type window struct {
	b0, i0, b1, i1 int
	outside        int
	mixed          []int
}

// window returns where p's start bounds lie in the date order.
func (x *Index) window(p *plan) window {
	var w window
	w.b0, w.i0 = x.order.lowerBound(p.startMin)
	w.b1, w.i1 = len(x.order), 0
	if p.startMax < math.MaxInt64 {
		w.b1, w.i1 = x.order.lowerBound(p.startMax + 1)
	}
	w.outside = w.i0 - w.i1
	for b := range w.b0 {
		w.outside += len(x.order[b].e)
	}
	for b := w.b1; b < len(x.order); b++ {
		w.outside += len(x.order[b].e)
	}
	for b := w.b0; b < min(w.b1+1, len(x.order)); b++ {
		if blk := x.order[b]; blk.minEnd < p.endMin || blk.maxEnd > p.endMax {
			w.mixed = append(w.mixed, b)
			w.outside += len(blk.e) // at most
		}
	}
	return w
}

// walkWindow calls fn with the slot of each match of p inside its start
// bounds w, in the date order, while fn returns true; test is called
// before an entry that passes the filters it decides (dates, statuses,
// flags) is tested in the candidates, and ends the walk when it returns
// false. It returns the number of entries it read.
func (x *Index) walkWindow(p *plan, w window, fn func(slot uint32) bool, test func() bool) int {
	statuses, mask, flags, endMin, endMax := p.statuses, p.flagMask, p.flagWant, p.endMin, p.endMax
	read := 0
	for b, i := w.b0, w.i0; b < len(x.order) && b <= w.b1; b, i = b+1, 0 {
		es := x.order[b].e
		if b == w.b1 {
			es = es[:w.i1]
		}
		for _, e := range es[min(i, len(es)):] {
			read++
			if e.end < endMin || e.end > endMax || e.flags&mask != flags || statuses != 0 && statuses&(1<<e.status) == 0 {
				continue
			}
			if !test() {
				return read
			}
			if p.cands.Contains(e.slot) && !fn(e.slot) {
				return read
			}
		}
	}
	return read
}

// countByKinds returns the number of p's candidates among the date
// order's entries that pass p's dates, statuses and flags, and the work
// it did: the candidates of the kinds p keeps (one AND cardinality per
// kind), less those among the entries outside the dates w (before the
// first start, after the last, or with an end outside the end bounds),
// which it reads. The caller made sure that p has candidates and no
// filter but those the entry decides.
func (x *Index) countByKinds(p *plan, w window) (n, read int) {
	for k, kb := range x.kinds {
		if k.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<k.status) != 0) {
			n += int(p.cands.AndCardinality(kb))
			read++
		}
	}
	// Less the candidates of those kinds outside the dates.
	out := func(es []entry, inBounds bool) {
		for _, e := range es {
			read++
			if inBounds && e.end >= p.endMin && e.end <= p.endMax {
				continue
			}
			if e.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<e.status) != 0) && p.cands.Contains(e.slot) {
				n--
			}
		}
	}
	for b := range w.b0 {
		out(x.order[b].e, false)
	}
	if w.b0 < len(x.order) {
		out(x.order[w.b0].e[:w.i0], false)
	}
	if w.b1 < len(x.order) {
		out(x.order[w.b1].e[w.i1:], false)
	}
	for b := w.b1 + 1; b < len(x.order); b++ {
		out(x.order[b].e, false)
	}
	for _, b := range w.mixed {
		lo, hi := 0, len(x.order[b].e)
		if b == w.b0 {
			lo = w.i0
		}
		if b == w.b1 {
			hi = w.i1
		}
		if lo < hi {
			out(x.order[b].e[lo:hi], true)
		}
	}
	return n, read
}
