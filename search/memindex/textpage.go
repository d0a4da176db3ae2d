package memindex

import "math"

// This file takes the first page of a query with many candidates (a
// common word, a short prefix, a broad list filter) in the date order by
// a walk that stops at the page, and counts its matches from the
// candidates' cardinalities, so that neither grows with the number of
// candidates (see firstCounted).

// The costs that firstCounted weighs, in entries read in order: testing
// a slot in the candidates' bitmap (a search among its containers and in
// one), and taking a candidate in plan.each's sparse pass (reading its
// entry at random, and sorting it).
const containsCost, sortCost = 8, 8

// The ways firstCounted counts.
const (
	countFromKinds = 1 + iota
	countInside
)

// firstCounted returns the first collect matches of p in the date order
// and the number of all of them, as plan.each with its skip would give
// them, for a plan with candidates and no filter but those an entry
// decides (dates, statuses, flags); ok is false when it cannot (the
// caller then reads the matches with plan.each, which sets a bit per
// candidate and reads every entry inside the dates).
//
// It weighs what plan.each would cost (setting a bit per candidate and
// reading every entry inside the start bounds, or, for few candidates,
// sorting them) against two ways, and declines when neither costs less:
//
//   - When the dates leave few entries outside (the upcoming events, say),
//     the number is that of the candidates among the date order's entries
//     of the kinds (status and flags) p keeps, from the kinds' bitmaps
//     (Index.kinds, one AND cardinality each), less the candidates among
//     the entries outside p's dates, read one by one; the page is then
//     found by walking the date order from p's first start, testing each
//     entry's candidacy, until collect matches: about collect × (entries /
//     candidates) entries.
//   - Otherwise (next week's events) it reads the entries inside the
//     dates, the page first, and tests those that pass the other filters
//     in the candidates.
//
// Either declines once its tests have cost what plan.each would. So the
// work grows with the page and with the smaller of the entries inside
// and outside the dates, not with the candidates.
//
// A plan whose only filter beyond those is a radius is answered by
// nearCounted instead, from the facet buckets' documents per point.
//
// The work it did (entries read, kinds' bitmaps intersected) is added to
// Index.visited.
func (s *searcher) firstCounted(p *plan, collect int) (main []uint32, n int, ok bool) {
	if nearsCounted(p) && s.nearCheaper(p) {
		main, n = s.nearCounted(p, collect)
		return main, n, true
	}
	if p.cands == nil || p.mainNone || p.needsRest() || p.inside != nil || p.q.CollapseSeries {
		return nil, 0, false
	}
	card := p.candsCount()
	if card < uint64(s.x.minCounted) {
		return nil, 0, false
	}
	if !p.grouped && len(s.x.groups) > 0 {
		// The date order does not hold the groups' members: the buckets
		// answer p (see plan.byBuckets).
		return nil, 0, false
	}
	return s.countedIn(p, s.window(p), card, collect)
}

// countedIn is firstCounted for a plan whose start bounds lie at w in the
// date order and whose candidates number card (at least minCounted).
func (s *searcher) countedIn(p *plan, w *window, card uint64, collect int) (main []uint32, n int, ok bool) {
	x := s.x
	read := 0
	defer func() { x.visited.Add(uint64(read)) }()
	entries := x.docs - x.nGrouped
	inside := entries - w.outside
	c := max(int(min(card, math.MaxInt32)), 1)
	// What plan.each would cost, and the way from the kinds.
	old := c + inside
	if c*sparse < entries {
		old = c * sortCost
	}
	walk := (min(collect, c) + 1) * (entries / c) * containsCost
	budget := old / containsCost // the tests that cost what plan.each would
	if s.x.countedMode != 0 {
		budget = math.MaxInt
	}
	tested := 0
	test := func() bool {
		tested++
		return tested <= budget
	}
	fromKinds := s.x.countedMode == countFromKinds
	if s.x.countedMode == 0 && w.outside*containsCost+walk <= old {
		// The blocks whose ends the end bounds cut are read too: as
		// many as cost what plan.each would.
		fromKinds = s.mixed(p, w, (old-walk)/containsCost-w.outside)
	} else if fromKinds {
		s.mixed(p, w, math.MaxInt)
	}
	if fromKinds {
		n, read = s.countByKinds(p, w)
		want := min(collect, n)
		if want == 0 {
			return nil, n, true
		}
		read += s.walkWindow(p, w, func(slot uint32) bool {
			main = append(main, slot)
			return len(main) < want
		}, test)
		if len(main) < want {
			return nil, 0, false
		}
		return main, n, true
	}
	if s.x.countedMode == 0 && inside >= old {
		return nil, 0, false
	}
	read += s.walkWindow(p, w, func(slot uint32) bool {
		if n < collect {
			main = append(main, slot)
		}
		n++
		return true
	}, test)
	if tested > budget {
		return nil, 0, false
	}
	return main, n, true
}

// window is where a plan's start bounds lie in the date order: its
// first entry (block b0, position i0), the entry after its last (b1, i1),
// and about how many entries lie outside (from the blocks' number: they
// hold from half blockMax to blockMax entries); once found (mixed), the
// blocks between whose ends the end bounds do not hold whole.
type window struct {
	b0, i0, b1, i1 int
	outside        int
	mixedBlocks    []int
	scanned        bool
}

// window returns where p's start bounds lie in the date order, reading
// no block but those its binary searches read.
func (s *searcher) window(p *plan) *window {
	x := s.x
	w := &window{}
	w.b0, w.i0 = x.order.lowerBound(p.startMin)
	w.b1, w.i1 = len(x.order), 0
	if p.startMax < math.MaxInt64 {
		w.b1, w.i1 = x.order.lowerBound(p.startMax + 1)
	}
	if len(x.order) > 0 {
		per := (x.docs - x.nGrouped) / len(x.order)
		w.outside = max(0, (w.b0+len(x.order)-w.b1)*per+w.i0-w.i1)
	}
	return w
}

// mixed finds the blocks of w whose ends p's end bounds do not hold
// whole, and reports whether they hold at most limit entries (it stops
// counting past it).
func (s *searcher) mixed(p *plan, w *window, limit int) bool {
	x := s.x
	if w.scanned {
		n := 0
		for _, b := range w.mixedBlocks {
			n += len(x.order[b].e)
		}
		return n <= limit
	}
	if p.endMin == math.MinInt64 && p.endMax == math.MaxInt64 {
		w.scanned = true
		return true
	}
	n := 0
	w.mixedBlocks = w.mixedBlocks[:0]
	for b := w.b0; b < min(w.b1+1, len(x.order)); b++ {
		if blk := x.order[b]; blk.minEnd < p.endMin || blk.maxEnd > p.endMax {
			if n += len(blk.e); n > limit {
				return false
			}
			w.mixedBlocks = append(w.mixedBlocks, b)
		}
	}
	w.scanned = true
	return true
}

// walkWindow calls fn with the slot of each match of p inside its start
// bounds w, in the date order, while fn returns true; test is called
// before an entry that passes the filters it decides (dates, statuses,
// flags) is tested in the candidates, and ends the walk when it returns
// false. It returns the number of entries it read.
func (s *searcher) walkWindow(p *plan, w *window, fn func(slot uint32) bool, test func() bool) int {
	x := s.x
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
func (s *searcher) countByKinds(p *plan, w *window) (n, read int) {
	x := s.x
	// Every candidate is an entry of the date order, of one kind: the
	// candidates of the kinds p keeps are all of them less those of the
	// kinds it does not, whichever kinds hold fewer entries are
	// intersected (an anonymous search leaves out the drafts, hidden and
	// protected events: few).
	var keep, drop uint64
	for k, kb := range x.kinds {
		if k.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<k.status) != 0) {
			keep += kb.GetCardinality()
		} else {
			drop += kb.GetCardinality()
		}
		read++
	}
	byDrop := drop < keep
	if byDrop {
		n = int(p.candsCount())
	}
	for k, kb := range x.kinds {
		if keeps := k.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<k.status) != 0); keeps == byDrop {
			continue
		}
		c := int(p.cands.AndCardinality(kb))
		if byDrop {
			c = -c
		}
		n += c
		read++
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
	// A whole block outside without an entry of the kinds p keeps (such
	// as one of groups' members only, in a grouped plan) is passed over
	// on its summary.
	outBlock := func(b int) {
		read++
		if p.keepsAny(x.order[b]) {
			out(x.order[b].e, false)
		}
	}
	for b := range w.b0 {
		outBlock(b)
	}
	if w.b0 < len(x.order) {
		out(x.order[w.b0].e[:w.i0], false)
	}
	if w.b1 < len(x.order) {
		out(x.order[w.b1].e[w.i1:], false)
	}
	for b := w.b1 + 1; b < len(x.order); b++ {
		outBlock(b)
	}
	for _, b := range w.mixedBlocks {
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

// keepsAny reports whether the block holds an entry of a kind (status and
// flags) that p keeps, from its summary.
func (p *plan) keepsAny(blk *block) bool {
	for _, k := range blk.kinds {
		if k.flags&p.flagMask == p.flagWant && (p.statuses == 0 || p.statuses&(1<<k.status) != 0) {
			return true
		}
	}
	return false
}
