package memindex

import (
	"cmp"
	"maps"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// This file ranks a relevance query by its score tiers: the candidates
// split, with bitmap operations, by the score they get, so that a page is
// taken from the best tiers in the date order without scoring every
// match (see rankedTiers).

// maxTierOps bounds the bitmap intersections that split the candidates
// into tiers (a query of many words, each matching in several ways,
// makes many); past it the matches are scored one by one.
const maxTierOps = 64

// tier is the candidates that get one score.
type tier struct {
	score float64
	rows  *roaring.Bitmap
}

// tiers splits p's candidates by their score (plan.score), best first:
// for each query word in turn, each tier so far is split by the first of
// the word's classes (best first) that holds a row, the score of that
// class added (0 for a row that none holds, as plan.score adds nothing),
// the parts of equal score joined. The sums are taken in the words'
// order, as plan.score takes them, so that equal scores are equal. ok is
// false past maxTierOps intersections.
func (p *plan) tiers() (ts []tier, ok bool) {
	ts = []tier{{0, p.cands}}
	ops := 0
	for _, classes := range p.words {
		// The rows each class holds first, and those none holds.
		only := make([]*roaring.Bitmap, len(classes))
		seen := roaring.New()
		for j, c := range classes {
			only[j] = roaring.AndNot(c.rows, seen)
			seen.Or(c.rows)
		}
		next := map[float64]*roaring.Bitmap{}
		add := func(score float64, b *roaring.Bitmap) {
			if b.IsEmpty() {
				return
			}
			if cur := next[score]; cur != nil {
				cur.Or(b)
			} else {
				next[score] = b
			}
		}
		for _, t := range ts {
			for j, c := range classes {
				if ops++; ops > maxTierOps {
					return nil, false
				}
				add(t.score+c.score, roaring.And(t.rows, only[j]))
			}
			add(t.score, roaring.AndNot(t.rows, seen))
		}
		ts = ts[:0]
		for score, b := range next {
			ts = append(ts, tier{score, b})
		}
	}
	slices.SortFunc(ts, func(a, b tier) int { return cmp.Compare(b.score, a.score) })
	return ts, true
}

// rankedTiers runs a relevance query in a start order (the matches best
// score first, each score's in the date order) by its score tiers
// (plan.tiers): each tier's matches of the date order are counted as a
// date-ordered query's (countedIn, from the kinds' cardinalities), the
// groups' members by their representative's score, and the page is taken
// from the tiers it overlaps by a walk of the date order that stops at
// the page, merged with those groups' members. So the work grows with
// the page and the number of tiers, not with the matches. It returns
// false, having put nothing, when it cannot (the query asks for facets
// or collapses series, its page is deep, its candidates are few, or a
// count declines): ranked then scores every match.
func (s *searcher) rankedTiers(gs []groupHit) bool {
	x, p := s.x, s.p
	if len(p.q.Facets) > 0 || p.q.CollapseSeries || s.offset > s.x.deepOffset || p.cands == nil || p.needsRest() || p.inside != nil {
		return false
	}
	if p.cands.GetCardinality() < uint64(s.x.minCounted) {
		return false
	}
	var ts []tier
	var ok bool
	if p.cached != nil {
		ts, ok = x.matches.tiersOf(p.cached, p)
	} else {
		ts, ok = p.tiers()
	}
	if !ok {
		return false
	}
	w := s.window(p)
	// Each score's matches: the tier's in the date order, and the groups
	// whose representative gets it.
	type level struct {
		plan   *plan
		card   uint64
		main   int
		groups []groupHit
	}
	levels := map[float64]*level{}
	for _, t := range ts {
		tp := *p
		tp.cands, tp.set, tp.words = t.rows, nil, nil
		l := &level{plan: &tp, card: t.rows.GetCardinality()}
		if !p.mainNone {
			if l.card < uint64(s.x.minCounted) {
				_, l.main = s.mainFirst(&tp, 0, false)
			} else if _, l.main, ok = s.countedIn(&tp, w, l.card, 0); !ok {
				return false
			}
		}
		levels[t.score] = l
	}
	total := 0
	for _, l := range levels {
		total += l.main
	}
	// The groups by score: each hit's level noted, then the hits put in
	// place by level (levelGroups), each level's a part of gs, not a
	// copy (with many series, thousands of hits).
	var byLevel []*level
	at := map[*level]int32{}
	in := make([]int32, len(gs))
	for i := range gs {
		h := &gs[i]
		score := p.score(h.g.rep)
		l := levels[score]
		if l == nil {
			tp := *p
			tp.cands, tp.set, tp.words, tp.mainNone = roaring.New(), nil, nil, true
			l = &level{plan: &tp}
			levels[score] = l
		}
		k, ok := at[l]
		if !ok {
			k = int32(len(byLevel))
			at[l] = k
			byLevel = append(byLevel, l)
		}
		in[i] = k
		total += h.hi - h.lo
	}
	for k, part := range levelGroups(gs, in, len(byLevel)) {
		byLevel[k].groups = part
	}
	s.res.Total = total
	if s.limit == 0 || s.offset >= total {
		return true
	}
	scores := slices.Sorted(maps.Keys(levels))
	slices.Reverse(scores)
	pos, left := s.offset, s.limit
	for _, score := range scores {
		l := levels[score]
		n := l.main
		for _, h := range l.groups {
			n += h.hi - h.lo
		}
		if pos >= n {
			pos -= n
			continue
		}
		take := min(left, n-pos)
		need := pos + take
		var main []uint32
		if !l.plan.mainNone && l.main > 0 {
			if l.card < uint64(s.x.minCounted) {
				main, _ = s.mainFirst(l.plan, min(need, l.main), false)
			} else if main, _, ok = s.countedIn(l.plan, w, l.card, min(need, l.main)); !ok {
				main, _ = s.mainFirst(l.plan, min(need, l.main), false)
			}
		}
		gs := l.groups
		firstK(gs, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
		s.merge(main, newCursors(x, gs[:min(need, len(gs))]), pos, need)
		if left -= take; left == 0 {
			return true
		}
		pos = 0
	}
	return true
}

// levelGroups reorders gs in place so that the hits of each level (in[i]
// is hit i's, from 0 to levels-1) are together, and returns each
// level's part of gs: a bucket sort that swaps hits into their level's
// next free place, moving each hit at most once.
func levelGroups(gs []groupHit, in []int32, levels int) [][]groupHit {
	starts := make([]int, levels+1)
	for _, k := range in {
		starts[k+1]++
	}
	for k := range levels {
		starts[k+1] += starts[k]
	}
	next := slices.Clone(starts[:levels])
	for k := range levels {
		for i := next[k]; i < starts[k+1]; i = next[k] {
			d := in[i]
			if int(d) == k {
				next[k]++
				continue
			}
			j := next[d]
			next[d]++
			gs[i], gs[j] = gs[j], gs[i]
			in[i], in[j] = in[j], in[i]
		}
	}
	parts := make([][]groupHit, levels)
	for k := range parts {
		parts[k] = gs[starts[k]:starts[k+1]:starts[k+1]]
	}
	return parts
}
