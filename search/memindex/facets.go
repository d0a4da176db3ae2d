package memindex

import (
	"math/bits"
	"slices"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// This file counts the facets of a query's matches.

// facetCounts counts the matches per value of each requested facet: the
// flags as the matches go by, the list values at the end, by intersecting
// the set of matches with each value's bitmap (a few microseconds a value,
// where counting each match's values would read every matching row).
type facetCounts struct {
	names []string
	// lists[l] says whether list filter l's values are counted.
	lists [numLists]bool
	// matches holds the matching slots as a bit set (nil: no list facet),
	// and few the first fewMax of them, which are counted one by one when
	// they are all the matches and many values are asked for.
	matches []uint64
	few     []uint32
	n       int
	// featured and ticketed count false and true (nil: not asked for).
	featured, ticketed *[2]int
	// grouped counts, per list filter, the values of the groups' matching
	// members (addGroup).
	grouped [numLists]map[int64]int
}

// fewMax and fewValues choose how list facets are counted: with at most
// fewMax matches and more than fewValues values asked for, match by match
// (a few thousand map increments), else value by value (an intersection
// of bitmaps each, whose cost grows with the matches when they are few
// and spread).
// (Variables so that the tests can take both ways.)
var (
	fewMax    = 4096
	fewValues = 64
)

// facetLists maps the ID facets to their list filter.
var facetLists = map[string]int{
	search.FacetCategories: listCategories, search.FacetTags: listTags,
	search.FacetVenue: listVenues, search.FacetOrganizer: listOrganizers,
}

func newFacetCounts(x *Index, names []string) *facetCounts {
	c := &facetCounts{names: names}
	for _, f := range names {
		if l, ok := facetLists[f]; ok {
			c.lists[l] = true
			if c.matches == nil {
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

func (c *facetCounts) add(slot uint32, e *entry) {
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

// addGroup counts n matching members of group g: as many times its
// representative's values and flags.
func (c *facetCounts) addGroup(x *Index, g *group, n int) {
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
		vs := x.rows[g.rep].lists[l]
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
	if c.matches != nil && c.n <= fewMax && values > fewValues {
		for l, asked := range c.lists {
			if !asked {
				continue
			}
			byValue[l] = map[int64]int{}
			for _, slot := range c.few {
				vs := x.rows[slot].lists[l]
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
		m := map[string]int{}
		l, ok := facetLists[f]
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
