package memindex

import (
	"math/bits"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// This file counts the facets of a query's matches.

// facetCounts counts the matches per value of each requested facet.
//
// Most queries (those whose filters are the dates, statuses, flags, list
// filters and a radius) count the date order's matches from the facet
// buckets at the end (fast; see facetIndex), so their facets cost a step
// per value and week of the window, not a step per match (with a radius,
// a step per document of the points inside the circle in each week, read
// from the buckets' postings). The others (text, IDs, parent, event
// status) count them as they go by: the flags at
// once, the list values at the end, by intersecting the set of matches
// with each value's bitmap (a few microseconds a value, where counting
// each match's values would read every matching row). Either way each
// group of uniform occurrences is counted once (addGroup).
type facetCounts struct {
	names []string
	// p is the query's plan; fast says whether the date order's matches
	// are counted from the facet buckets (add then counts nothing).
	p    *plan
	fast bool
	// lists[l] says whether list filter l's values are counted.
	lists [numLists]bool
	// matches holds the matching slots as a bit set (nil: no list facet,
	// or fast), and few the first fewMax of them, which are counted one by
	// one when they are all the matches and many values are asked for.
	matches []uint64
	few     []uint32
	n       int
	// featured and ticketed count false and true (nil: not asked for).
	featured, ticketed *[2]int
	// grouped counts, per list filter, the values of the groups' matching
	// members (addGroup).
	grouped [numLists]map[int64]int
	// counted says whether the buckets were counted (bucketCounts):
	// byValue holds their counts of the list values, and dateMatches the
	// date order's matches.
	counted     bool
	byValue     [numLists]map[int64]int
	dateMatches int
}

// fewMax and fewValues (knobs) choose how list facets are counted: with
// at most fewMax matches and more than fewValues values asked for, match
// by match (a few thousand map increments), else value by value (an
// intersection of bitmaps each, whose cost grows with the matches when
// they are few and spread).
const fewMax = 4096

// facetLists maps the ID facets to their list filter.
var facetLists = map[string]int{
	search.FacetCategories: listCategories, search.FacetTags: listTags,
	search.FacetVenue: listVenues, search.FacetOrganizer: listOrganizers,
}

func newFacetCounts(x *Index, p *plan) *facetCounts {
	names := p.q.Facets
	c := &facetCounts{names: names, p: p, fast: bucketed(p)}
	for _, f := range names {
		if l, ok := facetLists[f]; ok {
			c.lists[l] = true
			if c.matches == nil && !c.fast {
				c.matches = make([]uint64, (len(x.rows)+63)/64)
			}
		}
		switch f {
		case search.FacetFeatured:
			c.featured = &[2]int{}
		case search.FacetTicketed:
			c.ticketed = &[2]int{}
		}
	}
	return c
}

// bucketed reports whether the facet buckets decide every filter of p:
// the dates, statuses, flags, list filters and radius (by the buckets'
// points; not text, IDs, a parent, event statuses or a status without a
// code). A query with text is not, even when the text has no word (not
// parsed again here).
func bucketed(p *plan) bool {
	q := &p.q
	return q.Query == "" && len(q.IDs) == 0 && !p.needsRest()
}

// perMatch reports whether the counts need every match of the date order
// (add): facets are asked for, and the buckets do not count them.
func (c *facetCounts) perMatch() bool { return len(c.names) > 0 && !c.fast }

// add counts the match at slot (its entry e) of the date order.
func (c *facetCounts) add(slot uint32, e *entry) {
	if c.fast {
		return
	}
	if c.matches != nil {
		c.matches[slot>>6] |= 1 << (slot & 63)
		if c.n++; c.n <= fewMax {
			c.few = append(c.few, slot)
		}
	}
	if c.featured != nil {
		c.featured[e.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)]++
	}
	if c.ticketed != nil {
		c.ticketed[e.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)]++
	}
}

// countOnly answers a query that asks for its total and facets only (no
// page, series not collapsed) from the facet buckets, when they count
// its facets: the date order's matches counted there, and the groups'
// members in the date bounds. It reports whether it did. (The facet
// query of a list is such a query: its matches are not read one by one.)
func (s *searcher) countOnly(gs []groupHit) bool {
	c := s.counts
	if !c.fast || s.limit != 0 || s.p.q.CollapseSeries {
		return false
	}
	if len(c.names) == 0 && nearsCounted(s.p) {
		return false // nearCounted counts a radius without its postings
	}
	c.bucketCounts(s.x)
	total := c.dateMatches
	for _, h := range gs {
		total += h.hi - h.lo
		c.addGroup(s.x, h.g, h.hi-h.lo)
	}
	s.res.Total = total
	return true
}

// addGroup counts n matching members of group g: as many times its
// representative's values and flags.
func (c *facetCounts) addGroup(x *Index, g *group, n int) {
	if c.featured == nil && c.ticketed == nil && c.lists == [numLists]bool{} {
		return // no facet: the group and its representative are not read
	}
	e := &x.ents[g.rep]
	if c.featured != nil {
		c.featured[e.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)] += n
	}
	if c.ticketed != nil {
		c.ticketed[e.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)] += n
	}
	for l, asked := range c.lists {
		if !asked {
			continue
		}
		if c.grouped[l] == nil {
			c.grouped[l] = map[int64]int{}
		}
		vs := x.bodyOf(g.rep).list(l)
		for i, v := range vs {
			if !slices.Contains(vs[:i], v) {
				c.grouped[l][v] += n
			}
		}
	}
}

// result returns the counts as the contract has them: an event counts once
// for each value it has (values as strings, values without a match absent;
// a name that is not a facet counts nothing, as in
// searchtest.ExpectedFacets); nil when no facet was asked for.
func (c *facetCounts) result(x *Index) map[string]map[string]int {
	if len(c.names) == 0 {
		return nil
	}
	// Few matches and many values: each match's values are counted (an
	// event counts once per value, as the bitmaps count it); otherwise the
	// matches are intersected with each value's bitmap.
	values := 0
	for l, asked := range c.lists {
		if asked {
			values += len(x.lists[l])
		}
	}
	var byValue [numLists]map[int64]int
	var matches *roaring.Bitmap
	if c.fast {
		byValue = c.bucketCounts(x)
	} else if c.matches != nil && c.n <= fewMax && values > x.fewValues {
		for l, asked := range c.lists {
			if !asked {
				continue
			}
			byValue[l] = map[int64]int{}
			for _, slot := range c.few {
				vs := x.bodyOf(slot).list(l)
				for i, v := range vs {
					if !slices.Contains(vs[:i], v) {
						byValue[l][v]++
					}
				}
			}
		}
	} else if c.matches != nil {
		matches = roaring.FromDense(c.matches, false)
	}
	out := make(map[string]map[string]int, len(c.names))
	for _, f := range c.names {
		l, ok := facetLists[f]
		var m map[string]int
		if ok {
			m = make(map[string]int, len(byValue[l])+len(c.grouped[l]))
		} else {
			m = map[string]int{}
		}
		if ok && byValue[l] != nil {
			for v, n := range byValue[l] {
				m[strconv.FormatInt(v, 10)] = n
			}
		} else if ok && !matches.IsEmpty() {
			for v, b := range x.lists[l] {
				if n := matches.AndCardinality(b); n > 0 {
					m[strconv.FormatInt(v, 10)] = int(n)
				}
			}
		}
		if ok {
			for v, n := range c.grouped[l] {
				m[strconv.FormatInt(v, 10)] += n
			}
		}
		var flags *[2]int
		switch f {
		case search.FacetFeatured:
			flags = c.featured
		case search.FacetTicketed:
			flags = c.ticketed
		}
		if flags != nil {
			if flags[0] > 0 {
				m["false"] = flags[0]
			}
			if flags[1] > 0 {
				m["true"] = flags[1]
			}
		}
		out[f] = m
	}
	return out
}

// bucketCounts adds the date order's matches counted from the facet
// buckets to the flags' counts and returns the list values' counts
// (counted once).
func (c *facetCounts) bucketCounts(x *Index) [numLists]map[int64]int {
	if c.counted {
		return c.byValue
	}
	c.counted = true
	out := &c.byValue
	if c.p.none {
		for l, asked := range c.lists {
			if asked {
				out[l] = map[int64]int{}
			}
		}
		return *out
	}
	s := &facetSums{asked: c.lists, featured: c.featured, ticketed: c.ticketed}
	x.facets.count(x, c.p, s)
	c.dateMatches = s.matches
	x.facets.work.Add(s.work)
	for i, n := range s.paths {
		x.facets.paths[i].Add(n)
	}
	for l, asked := range c.lists {
		if !asked {
			continue
		}
		sums, n := s.lists[l], 0
		for _, k := range sums {
			if k > 0 {
				n++
			}
		}
		out[l] = make(map[int64]int, n)
		for vn, k := range sums {
			if k > 0 {
				out[l][x.facets.values[l].ids[vn]] = k
			}
		}
	}
	return *out
}
