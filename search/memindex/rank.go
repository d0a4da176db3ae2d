package memindex

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/calendar/eventcal/search"
)

// This file is the ranked orders (relevance, publish date): scoring the
// hits, taking a page of them, and collapsing them by series.

// ranked runs a query ordered by something other than the date order:
// best match first (a relevance order), then by the query's date (start
// or publish date), then by ID and occurrence key. A relevance order by
// start with many candidates is run by its score tiers (rankedTiers).
// Otherwise every match of the date order is scored, and a group once
// (its members match the same words). In a start order a group's members are in that order already:
// within one score the matches are in the date order, so a page is cut
// from the scores' runs as a date-ordered page is (scorePage), at a cost
// that does not grow with its offset. In a publish-date order a group's
// members tie on everything but their key and are ranked one by one, as
// are the series' first matches of a collapsed query.
func (s *searcher) ranked(gs []groupHit) {
	x, p := s.x, s.p
	byStart := p.q.Sort != search.ByPublishDate
	if byStart && s.rankedTiers(gs) {
		return
	}
	var hits []rankHit
	p.each(x, 0, func(e *entry) {
		date := e.start
		if !byStart {
			date = x.bodyOf(e.slot).pub
		}
		hits = append(hits, rankHit{score: p.score(e.slot), date: date, slot: e.slot, gi: -1})
		s.counts.add(e.slot, e)
	}, nil)
	total := len(hits)
	for i := range gs {
		h := &gs[i]
		total += h.hi - h.lo
		s.counts.addGroup(x, h.g, h.hi-h.lo)
		score := p.score(h.g.rep)
		if byStart {
			// The first member stands for the group.
			hits = append(hits, rankHit{score: score, date: h.start, slot: h.g.occ[h.lo].slot, gi: int32(i)})
			continue
		}
		for k := h.lo; k < h.hi; k++ {
			slot := h.g.occ[k].slot
			hits = append(hits, rankHit{score: score, date: x.bodyOf(slot).pub, slot: slot, gi: -1})
		}
	}
	if p.q.CollapseSeries {
		// Each series once, by its best match (a group's first member is
		// its best).
		hits = s.collapseRanked(hits)
		total = len(hits)
	}
	s.res.Total = total
	if s.limit == 0 || s.offset >= total {
		return
	}
	if !byStart || p.q.CollapseSeries {
		selectK(hits, s.offset, s.compareRanked)
		page := hits[s.offset:]
		firstK(page, s.limit, s.compareRanked)
		for _, h := range page[:min(s.limit, len(page))] {
			s.put(h.slot)
		}
		return
	}
	s.scorePage(hits, gs)
}

// scorePage puts the page of a ranked query in a start order: the
// matches by score, best first, each score's matches in the date order
// (the date order's hits and the groups' members), the page cut from the
// runs of the scores it overlaps (datePage).
func (s *searcher) scorePage(hits []rankHit, gs []groupHit) {
	sizes := map[float64]int{}
	for _, h := range hits {
		n := 1
		if h.gi >= 0 {
			n = gs[h.gi].hi - gs[h.gi].lo
		}
		sizes[h.score] += n
	}
	scores := slices.Sorted(maps.Keys(sizes))
	slices.Reverse(scores)
	pos, left := s.offset, s.limit
	for _, score := range scores {
		n := sizes[score]
		if pos >= n {
			pos -= n
			continue
		}
		var main []uint32
		var groups []groupHit
		for _, h := range hits {
			switch {
			case h.score != score:
			case h.gi >= 0:
				groups = append(groups, gs[h.gi])
			default:
				main = append(main, h.slot)
			}
		}
		take := min(left, n-pos)
		s.datePage(main, groups, pos, take)
		if left -= take; left == 0 {
			return
		}
		pos = 0
	}
}

// datePage puts on the page the matches from position from, take of them,
// of the date-ordered merge of main (slots, in no order) and the members
// of gs. Past deepOffset it finds the start of the page first.
func (s *searcher) datePage(main []uint32, gs []groupHit, from, take int) {
	x := s.x
	if from > s.x.deepOffset {
		starts := make([]int64, len(main))
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i, slot := range main {
			starts[i] = x.ents[slot].start
			lo, hi = min(lo, starts[i]), max(hi, starts[i])
		}
		mainUpTo := func(t int64) int {
			n := 0
			for _, st := range starts {
				if st <= t {
					n++
				}
			}
			return n
		}
		t, before := pageStart(gs, from, mainUpTo, lo, hi)
		from -= before
		main = slices.DeleteFunc(main, func(slot uint32) bool { return x.ents[slot].start < t })
		gs = membersFrom(gs, t)
	}
	need := from + take
	x.sortFirst(main, need)
	firstK(gs, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
	s.merge(main[:min(need, len(main))], newCursors(x, gs[:min(need, len(gs))]), from, need)
}

// rankHit is a match in a ranked query: its score and date, and, for a
// group's first member standing for the group (gi >= 0), the group hit.
type rankHit struct {
	score float64
	date  int64
	slot  uint32
	gi    int32
}

// compareRanked orders ranked hits: best score first, then by date, ID
// and occurrence key.
func (s *searcher) compareRanked(a, b rankHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.date, b.date); c != 0 {
		return c
	}
	ra, rb := &s.x.rows[a.slot], &s.x.rows[b.slot]
	return cmp.Or(cmp.Compare(ra.id, rb.id), s.x.occNames.compareOcc(ra.occ, rb.occ))
}

// collapseRanked keeps, of the hits of each series, the first in the
// ranked order (single events all stay).
func (s *searcher) collapseRanked(hits []rankHit) []rankHit {
	best := map[uint32]int{}
	keep := hits[:0]
	for _, h := range hits {
		n := s.x.ents[h.slot].series
		if n == 0 {
			keep = append(keep, h)
			continue
		}
		if i, ok := best[n]; !ok {
			best[n] = len(keep)
			keep = append(keep, h)
		} else if s.compareRanked(h, keep[i]) < 0 {
			keep[i] = h
		}
	}
	return keep
}

// score returns the relevance score of the document at slot: for each
// query word, the score of the best way it matches (0 without words).
func (p *plan) score(slot uint32) float64 {
	total := 0.0
	for _, classes := range p.words {
		for _, c := range classes {
			if c.rows.Contains(slot) {
				total += c.score
				break
			}
		}
	}
	return total
}
