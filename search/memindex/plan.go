package memindex

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// This file turns a query into a plan: its bounds, statuses, flags and
// candidate bitmap, and the passes that decide an entry (plan.each,
// plan.passes).

// plan is a query made ready to run over the index.
type plan struct {
	q search.EventQuery
	// none: nothing can match (a word without a match, an unknown
	// language or status, a negative radius, no listed value).
	none bool
	// statuses: the codes of q.Statuses as bits; byName: q.Statuses holds
	// a status without a code, compared by name on code 0.
	statuses uint64
	byName   bool
	// flagMask and flagWant: an entry passes when flags&mask == want.
	flagMask, flagWant uint8
	// The date bounds of q as inclusive ranges.
	startMin, startMax, endMin, endMax int64
	// cands holds the candidates of the list filters, IDs and words
	// (nil: every event).
	cands *roaring.Bitmap
	// grouped: the groups are decided on their representatives
	// (plan.groups) and merged with the date order, which does not hold
	// their members; the facet buckets' members are left out by their
	// flag. Otherwise the plan is answered by the facet buckets alone,
	// which hold every document (see byBuckets).
	grouped bool
	// mainNone: no document of the date order but the groups' members
	// can match (the candidates, narrowed to it, are none), while a group
	// may (a grouped plan only).
	mainNone bool
	// set holds cands as a bit set once each built it (copies of the plan
	// with other date bounds share it).
	set []uint64
	// scratch holds what the query took from the pools (set, and the
	// sets of the plans copied from this one), given back when Search
	// is done.
	scratch *scratch
	// words holds the scored ways each word matches, for a relevance
	// order.
	words [][]scoredClass
	// inside says for each point whether it is inside q.Near (1) or not
	// (0), at the point's index plus one, so that an entry without a
	// point (-1) reads 0 (nil: no radius).
	inside []uint8
	// cached is the match cache's entry whose rows cands is (nil: cands
	// is not a cached word's rows), whose bitmaps derived from them
	// plan.groups reuses.
	cached *matchEntry
	// searched counts the groups whose members span searched for the
	// date bounds (Index.searchedGroups).
	searched int
	// insideNum holds inside by the points' numbers in the facet buckets
	// (see insideByNumber; nil until asked for).
	insideNum []uint8
	// unsplit: cands still holds groups' members, which plan.groups
	// decided (the date order holds none of them), and singlesN is the
	// number of the others, the date order's; plan.split narrows cands
	// to those when a pass reads them whole (plan.each). A query in the
	// date order that counts its matches from cardinalities
	// (firstCounted) so never copies a common prefix's rows.
	unsplit  bool
	singlesN uint64
}

// ranked reports whether the hits are ordered by something other than
// the date order: relevance, or the publish date.
func (p *plan) ranked() bool { return p.words != nil || p.q.Sort == search.ByPublishDate }

// scoredClass is the rows where a query word matches in one way (title or
// body; exact, prefix or typo) and the score that way is worth.
type scoredClass struct {
	rows  *roaring.Bitmap
	score float64
}

// The scores of the relevance order: a title outweighs the description and
// excerpt, an exact word outweighs a prefix, and a prefix a typo. An
// event's score is the sum over the query's words of the best way each
// matches. The ratios are wide, so a record whose title holds every word
// exactly ranks before one that matches only through typos in its
// description, whatever the other words.
const (
	scoreTitle  = 4.0
	scoreExact  = 1.0
	scorePrefix = 0.4
	scoreTypo   = 0.1
)

func (x *Index) plan(q search.EventQuery) *plan {
	p := &plan{q: q, scratch: &scratch{}}
	p.startMin, p.startMax = bounds(q.StartGTE, q.StartGT, search.Opt[int64]{}, q.StartLT)
	p.endMin, p.endMax = bounds(search.Opt[int64]{}, q.EndGT, q.EndLTE, q.EndLT)
	if x.facets.inverted == 0 && x.nGrouped > 0 {
		// No document ends before it starts: one that ends by endMax
		// starts by it too, so the buckets and groups are read no
		// further. (Without groups the counted pages weigh the date
		// order's entries outside the start bounds, and this would make
		// them many: at 1,000,000 events the filtered list took 4 times
		// as long.)
		p.startMax = min(p.startMax, p.endMax)
	}
	if p.startMin > p.startMax || p.endMin > p.endMax {
		p.none = true
		return p
	}
	if len(q.Statuses) > 0 {
		for _, s := range q.Statuses {
			if c, ok := x.statuses[s]; ok {
				p.statuses |= 1 << c
			} else if len(x.statuses) >= maxStatusCode {
				p.byName, p.statuses = true, p.statuses|1
			}
		}
		if p.statuses == 0 {
			p.none = true
			return p
		}
	}
	for _, f := range []struct {
		o    search.Opt[bool]
		flag uint8
	}{{q.Featured, flagFeatured}, {q.Ticketed, flagTicketed}, {q.HasGeo, flagHasGeo}} {
		if f.o.Set {
			p.flagMask |= f.flag
			if f.o.Value {
				p.flagWant |= f.flag
			}
		}
	}
	if q.ExcludeHidden {
		p.flagMask |= flagHidden
	}
	if q.ExcludeProtected {
		p.flagMask |= flagProtected
	}
	// shared: p.cands is a bitmap of the match cache or of the index (a
	// list value's), which no one changes here (the next filter makes a
	// new one).
	shared := false
	// and narrows the candidates to b, a bitmap of the match cache or the
	// index when cached (else one p may change).
	and := func(b *roaring.Bitmap, cached bool) {
		switch {
		case p.cands == nil:
			p.cands, shared = b, cached
		case shared:
			p.cands, shared, p.cached = roaring.And(p.cands, b), false, nil
		default:
			p.cands.And(b)
		}
		if p.cands.IsEmpty() {
			p.none = true
		}
	}
	if len(q.IDs) > 0 {
		b := roaring.New()
		var buf [1]uint32
		for _, id := range q.IDs {
			b.AddMany(x.byID.get(id, &buf))
		}
		if and(b, false); p.none {
			return p
		}
	}
	for l, want := range [numLists][]int64{q.CategoryIDs, q.TagIDs, q.VenueIDs, q.OrganizerIDs} {
		if len(want) == 0 {
			continue
		}
		var parts []*roaring.Bitmap
		for _, v := range want {
			if b := x.lists[l][v]; b != nil {
				parts = append(parts, b)
			}
		}
		// One value: its bitmap itself, shared (read under the read lock,
		// never changed here: the next filter makes a new one), not a
		// copy (a category of 1,000,000 events copied on every request
		// was 7.5 % of the bench's uncached rows).
		if len(parts) == 1 {
			and(parts[0], true)
		} else {
			and(roaring.FastOr(parts...), false)
		}
		if p.none {
			return p
		}
	}
	if q.Near.Set {
		if p.near(x, q.Near.Value); p.none {
			return p
		}
	}
	terms := search.ParseQuery(q.Query)
	if len(terms) == 0 {
		return p
	}
	l := x.langs[q.Lang]
	if l == nil {
		p.none = true
		return p
	}
	// Several words alone: the rows that match them all are kept too.
	var all matchKey
	var whole *matchEntry
	if len(terms) > 1 && p.cands == nil {
		all = keyOfWords(p, q.Lang, terms)
		if whole = x.matches.get(all); whole != nil && !q.Relevance {
			p.cands, p.cached, p.none = whole.rows, whole, whole.rows.IsEmpty()
			return p
		}
		if whole == nil {
			defer func() {
				if !shared && p.cands != nil {
					p.cached = x.matches.put(p, x.seq, q.Lang, terms, all, p.cands)
				}
			}()
		}
	}
	for _, t := range terms {
		// The rows of a word are kept for the next queries, until a
		// write changes them (search-as-you-type), and for a relevance
		// order the ways they match (scored).
		k := keyOfMatch(p, q.Lang, t)
		e := x.matches.get(k)
		if e == nil && all != (matchKey{}) && whole == nil && !q.Relevance && p.cands == nil {
			// The first word of several, whose rows are narrowed to
			// every word's and kept so (all): a new bitmap of them is
			// narrowed in place, not kept and copied by the first
			// intersection (a search box typed into asks for ever new
			// pairs of words, and the first word's rows are millions with
			// many series).
			m, _, mShared := x.match(p, l, t, false)
			if !mShared {
				if and(m, false); p.none {
					return p
				}
				continue
			}
			e = x.matches.put(p, x.seq, q.Lang, []search.Term{t}, k, m)
		}
		if e == nil {
			m, classes, _ := x.match(p, l, t, q.Relevance)
			e = x.matches.put(p, x.seq, q.Lang, []search.Term{t}, k, m)
			if q.Relevance {
				x.matches.setClasses(e, classes)
			}
		}
		if q.Relevance {
			classes := x.matches.classesOf(e)
			if classes == nil {
				_, classes, _ = x.match(p, l, t, true)
				x.matches.setClasses(e, classes)
			}
			p.words = append(p.words, classes)
		}
		if whole != nil {
			continue // the rows of every word are whole's
		}
		if p.cands == nil {
			p.cached = e
		}
		if and(e.rows, true); p.none {
			return p
		}
	}
	if whole != nil {
		p.cands, p.cached, p.none = whole.rows, whole, whole.rows.IsEmpty()
	}
	return p
}

// decideGroups sets p.grouped: whether p needs the groups, that is
// whether the facet buckets do not answer it alone (byBuckets). A query
// for a page of limit.
func (p *plan) decideGroups(x *Index, limit int) {
	if p.grouped = len(x.groups) > 0 && !p.byBuckets(x, limit); p.grouped {
		p.flagMask |= flagGrouped
	}
}

// byBuckets reports whether the facet buckets answer p alone, its page
// and total (and facets): a list in the date order without words or IDs
// (bucketed), series not collapsed, that asks for its total only (the
// buckets count it: countOnly), or has a radius and no candidates
// (nearCounted), or that facetIndex.each reads (see facetIndex.takes).
// Then the groups' members are read there like any other document, and
// the work does not grow with the number of series; otherwise the
// groups are decided on their representatives (a query with words or
// IDs: a group costs a step, where its members would each be a
// candidate).
func (p *plan) byBuckets(x *Index, limit int) bool {
	if p.ranked() || p.q.CollapseSeries || !bucketed(p) {
		return false
	}
	if limit == 0 && !(len(p.q.Facets) == 0 && nearsCounted(p)) || nearsCounted(p) {
		return true
	}
	_, _, ok := x.facets.takes(x, p, true)
	return ok
}

// keeps reports whether p can match an event of visibility vis: its
// status is one p keeps (a status without a code is compared by name
// here too), and its hidden and protected flags pass p's.
func (p *plan) keeps(vis visibility) bool {
	return keepsVisibility(p.q.Statuses, p.flagMask, p.flagWant, vis)
}

// keepsVisibility is plan.keeps for a plan of statuses and flags mask
// and want (only the visibility flags of which count).
func keepsVisibility(statuses []string, mask, want uint8, vis visibility) bool {
	if len(statuses) > 0 && !slices.Contains(statuses, vis.status) {
		return false
	}
	mask &= visibilityFlags
	return vis.flags&mask == want&mask
}

// sparse: below one candidate in this many events, the candidates are
// sorted rather than the date order read.
const sparse = 16

// each calls fn for every matching row: the first ordered of them in the
// date order and the others after them in any order, or all in no
// particular order when p is ranked. When skip is not nil, each may count
// the matches of a block from its summary instead: it calls skip with
// their number, and calls fn for them only when skip returns false. It
// can for a block that the date bounds hold whole, in a query whose other
// filters are all decided by the summary (statuses and flags), or, with
// candidates or a radius, when every entry of the block passes those. A
// query whose list filters the facet buckets decide is read by them
// instead (facetIndex.each: a week's matches counted by skip, or read in
// order), when its candidates are not few.
func (p *plan) each(x *Index, ordered int, fn func(e *entry), skip func(n int) bool) {
	if p.mainNone {
		return
	}
	if p.split(x); x.facets.each(x, p, ordered, fn, skip) {
		return
	}
	// read counts the entries and candidates read (Index.visited).
	read := 0
	defer func() { x.visited.Add(uint64(read)) }()
	if p.cands != nil && p.cands.GetCardinality()*sparse < uint64(x.docs-x.nGrouped) {
		cands := p.cands.ToArray()
		read += len(cands)
		cands = slices.DeleteFunc(cands, func(slot uint32) bool { return !p.passes(x, &x.ents[slot]) })
		if !p.ranked() {
			x.sortFirst(cands, ordered)
		}
		for _, slot := range cands {
			fn(&x.ents[slot])
		}
		return
	}
	if p.cands != nil && p.set == nil {
		p.set = p.scratch.bitSet((len(x.rows) + 63) / 64)
		it := p.cands.ManyIterator()
		buf := make([]uint32, 256)
		for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
			read += n
			for _, slot := range buf[:n] {
				p.set[slot>>6] |= 1 << (slot & 63)
			}
		}
	}
	set := p.set
	// The cheap filters are decided here, on the entry, in one expression;
	// passesRest decides the others only when the query has them.
	rest := p.needsRest()
	statuses, mask, want, endMin, endMax, inside := p.statuses, p.flagMask, p.flagWant, p.endMin, p.endMax, p.inside

	if rest {
		skip = nil
	}
	b, i := x.order.lowerBound(p.startMin)
	for ; b < len(x.order); b, i = b+1, 0 {
		blk := x.order[b]
		if skip != nil && i == 0 && blk.e[len(blk.e)-1].start <= p.startMax && blk.minEnd >= endMin && blk.maxEnd <= endMax &&
			(blk.occurrences == 0 || !p.q.CollapseSeries) {
			// The dates hold the block whole: count its matches from the
			// summary, or, with candidates or a radius, when every entry
			// passes the statuses and flags, as the entries that are
			// candidates and inside the circle.
			n, all := 0, true
			read++
			for _, k := range blk.kinds {
				if k.flags&mask == want && (statuses == 0 || statuses&(1<<k.status) != 0) {
					n += int(k.n)
				} else {
					all = false
				}
			}
			if set != nil || inside != nil {
				if n = -1; all {
					n = countIn(blk.e, set, inside)
					read += len(blk.e)
				}
			}
			if n >= 0 && skip(n) {
				continue
			}
		}
		es := blk.e[i:]
		for k := range es {
			e := &es[k]
			if e.start > p.startMax {
				read += k + 1
				return
			}
			if e.end < endMin || e.end > endMax || e.flags&mask != want ||
				statuses != 0 && statuses&(1<<e.status) == 0 ||
				set != nil && set[e.slot>>6]&(1<<(e.slot&63)) == 0 ||
				inside != nil && inside[e.point+1] == 0 ||
				rest && !p.passesRest(x, e) {
				continue
			}
			fn(e)
		}
		read += len(es)
	}
}

// bounds turns lower (>=, >) and upper (<=, <) bounds into one inclusive
// range; an exclusive bound at the end of int64 leaves the range empty.
func bounds(gte, gt, lte, lt search.Opt[int64]) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if gte.Set {
		lo = max(lo, gte.Value)
	}
	if gt.Set {
		if gt.Value == math.MaxInt64 {
			return 1, 0
		}
		lo = max(lo, gt.Value+1)
	}
	if lte.Set {
		hi = min(hi, lte.Value)
	}
	if lt.Set {
		if lt.Value == math.MinInt64 {
			return 1, 0
		}
		hi = min(hi, lt.Value-1)
	}
	return lo, hi
}

// passes decides the filters of the entry (all but the candidates' own):
// statuses, dates, flags, parent and radius, as searchtest.MatchEvent does.
func (p *plan) passes(x *Index, e *entry) bool {
	if p.statuses != 0 && p.statuses&(1<<e.status) == 0 || e.flags&p.flagMask != p.flagWant ||
		e.start < p.startMin || e.start > p.startMax || e.end < p.endMin || e.end > p.endMax {
		return false
	}
	return p.passesRest(x, e)
}

// needsRest reports whether the query has filters that only passesRest
// decides (read from the row, not the entry or a block's summary).
func (p *plan) needsRest() bool {
	return p.byName || p.q.ParentID.Set || len(p.q.EventStatuses) > 0
}

// passesRest decides what passes leaves after the entry's own fields: a
// status without a code (by name), the radius, the parent and the event
// status.
func (p *plan) passesRest(x *Index, e *entry) bool {
	q := &p.q
	if e.status == 0 && p.statuses != 0 && (!p.byName || !slices.Contains(q.Statuses, x.names[x.bodyOf(e.slot).status])) {
		return false
	}
	if p.inside != nil && p.inside[e.point+1] == 0 {
		return false
	}
	if len(q.EventStatuses) > 0 && !slices.Contains(q.EventStatuses, x.names[x.bodyOf(e.slot).eventStatus]) {
		return false
	}
	return !q.ParentID.Set || x.bodyOf(e.slot).parent == q.ParentID.Value
}
