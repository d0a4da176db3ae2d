// Package memindex answers event queries (search.EventQuery) from an
// in-memory copy of the indexed event documents: one compact row per
// event, the rows in date order, and per language an inverted index of the
// words of the text (roaring bitmaps of row slots).
//
// Why it exists: the calendar's lists need exact totals, a date order and
// filters that match a large share of the events (the default list matches
// every upcoming event). Bleve answers such a query by visiting every hit:
// its collector reads the sort key's doc value of each one, and its numeric
// range and geo searchers walk their terms' postings, so a list costs
// O(matches) at a few hundred nanoseconds a hit. Measured on the bench
// (2 cores, 10,000 events, uncached): 19 ms at p50 for the default list,
// 57 ms for a 50 km geo list, and 0.36 s for a text search at 100,000
// events. Here a list is one pass over the rows in date order at a few
// nanoseconds a row (the date bounds cut the pass by binary search), the
// text is a union and intersection of bitmaps, and the geo radius is the
// exact search.DistanceKm on the rows that pass a latitude band, so every
// filter is decided exactly as the reference (search/searchtest) decides it.
//
// The index is derived data and holds no state of its own: the engine that
// owns it (search/bleve) persists every document and reloads them at start.
// It is safe for concurrent use: queries share a read lock, and Apply and
// Remove take the write lock for the few microseconds per document they
// need (the date orders are merged once per call, not once per document).
package memindex

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// Index is the in-memory event index. The zero value is not usable: call
// New.
type Index struct {
	mu gosync.RWMutex
	// rows holds the events by slot; a slot of a removed event is free
	// (listed in free) until an added event takes it.
	rows []row
	free []uint32
	// slotOf maps an event ID to its slot.
	slotOf map[int64]uint32
	// byStart and byPublish list the live slots ordered by (Start, ID)
	// and (PublishDate, ID): the two orders of search.EventSort.
	byStart, byPublish []uint32
	// langs holds the words of each language's text.
	langs map[string]*vocabulary
}

// row is one event: the fields the filters, orders and facets read.
type row struct {
	live                        bool
	id, start, end, publish     int64
	parent                      int64
	status                      string
	featured, ticketed, hidden  bool
	protected, hasGeo, hasPoint bool
	lat, lng                    float64
	cats, tags, venues, orgs    []int64
	// words lists the word entries whose bitmaps hold this row, so that a
	// replaced or removed event leaves no posting behind.
	words []wordRef
}

// wordRef is one posting of a row: a word entry and the part of the text
// (title or body) it occurs in.
type wordRef struct {
	w     *word
	title bool
}

// word is one distinct word of one language's text, with the rows whose
// title and whose description or excerpt hold it.
type word struct {
	text        string
	vocab       *vocabulary
	title, body roaring.Bitmap
}

// vocabulary is the words of one language: by text, and sorted for prefix
// and typo walks.
type vocabulary struct {
	byText map[string]*word
	sorted []string
}

// New returns an empty index.
func New() *Index {
	return &Index{slotOf: map[int64]uint32{}, langs: map[string]*vocabulary{}}
}

// Count returns the number of events in the index.
func (x *Index) Count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.slotOf)
}

// Apply adds or replaces events. Within one call a later document of the
// same ID wins.
func (x *Index) Apply(docs []search.EventDocument) {
	if len(docs) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	touched := make(map[uint32]bool, len(docs))
	for i := range docs {
		d := &docs[i]
		slot, ok := x.slotOf[d.ID]
		if ok {
			x.unlink(slot)
		} else {
			slot = x.allocate()
			x.slotOf[d.ID] = slot
		}
		x.rows[slot] = x.link(slot, d)
		touched[slot] = true
	}
	x.reorder(touched)
}

// Remove deletes events; IDs not in the index are ignored.
func (x *Index) Remove(ids []int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	touched := map[uint32]bool{}
	for _, id := range ids {
		slot, ok := x.slotOf[id]
		if !ok {
			continue
		}
		x.unlink(slot)
		x.rows[slot] = row{}
		delete(x.slotOf, id)
		x.free = append(x.free, slot)
		touched[slot] = true
	}
	if len(touched) > 0 {
		x.reorder(touched)
	}
}

// allocate returns a free slot, growing rows when none is.
func (x *Index) allocate() uint32 {
	if n := len(x.free); n > 0 {
		slot := x.free[n-1]
		x.free = x.free[:n-1]
		return slot
	}
	x.rows = append(x.rows, row{})
	return uint32(len(x.rows) - 1)
}

// link builds the row of d at slot and adds its words to the postings.
func (x *Index) link(slot uint32, d *search.EventDocument) row {
	r := row{
		live: true, id: d.ID, start: d.Start, end: d.End, publish: d.PublishDate, parent: d.ParentID,
		status: d.Status, featured: d.Featured, ticketed: d.Ticketed, hidden: d.HideFromListings,
		protected: d.HasPassword, hasGeo: d.HasGeo,
		cats: slices.Clone(d.CategoryIDs), tags: slices.Clone(d.TagIDs),
		venues: slices.Clone(d.VenueIDs), orgs: slices.Clone(d.OrganizerIDs),
	}
	if d.HasGeo && d.Geo != nil {
		r.hasPoint, r.lat, r.lng = true, d.Geo.Lat, d.Geo.Lng
	}
	for lang, t := range d.Text {
		v := x.langs[lang]
		if v == nil {
			v = &vocabulary{byText: map[string]*word{}}
			x.langs[lang] = v
		}
		add := func(words []string, title bool) {
			for _, w := range words {
				e := v.byText[w]
				if e == nil {
					e = &word{text: w, vocab: v}
					v.byText[w] = e
					i, _ := slices.BinarySearch(v.sorted, w)
					v.sorted = slices.Insert(v.sorted, i, w)
				}
				b := &e.body
				if title {
					b = &e.title
				}
				if b.CheckedAdd(slot) {
					r.words = append(r.words, wordRef{w: e, title: title})
				}
			}
		}
		add(textWords(t.Title), true)
		add(textWords(t.Description), false)
		add(textWords(t.Excerpt), false)
	}
	r.words = slices.Clip(r.words)
	return r
}

// textWords returns the words of an indexed text by the contract's rules.
func textWords(s string) []string { return search.Words(search.PlainText(s)) }

// unlink removes the postings of the row at slot; a word no row holds any
// more leaves its language's vocabulary.
func (x *Index) unlink(slot uint32) {
	for _, ref := range x.rows[slot].words {
		e := ref.w
		if ref.title {
			e.title.Remove(slot)
		} else {
			e.body.Remove(slot)
		}
		if e.title.IsEmpty() && e.body.IsEmpty() {
			forget(e)
		}
	}
}

// forget drops an unused word from its vocabulary.
func forget(e *word) {
	v := e.vocab
	delete(v.byText, e.text)
	if i, ok := slices.BinarySearch(v.sorted, e.text); ok {
		v.sorted = slices.Delete(v.sorted, i, i+1)
	}
}

// reorder puts the touched slots back into both date orders: the untouched
// slots keep their places, and the touched live ones, sorted, are merged
// in. One pass over each order, whatever the number of documents.
func (x *Index) reorder(touched map[uint32]bool) {
	var added []uint32
	for slot := range touched {
		if x.rows[slot].live {
			added = append(added, slot)
		}
	}
	x.byStart = x.merge(x.byStart, touched, added, x.startLess)
	x.byPublish = x.merge(x.byPublish, touched, added, x.publishLess)
}

func (x *Index) merge(order []uint32, touched map[uint32]bool, added []uint32, less func(a, b uint32) bool) []uint32 {
	slices.SortFunc(added, func(a, b uint32) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	out := make([]uint32, 0, len(order)+len(added))
	j := 0
	for _, slot := range order {
		if touched[slot] {
			continue
		}
		for j < len(added) && less(added[j], slot) {
			out = append(out, added[j])
			j++
		}
		out = append(out, slot)
	}
	return append(out, added[j:]...)
}

func (x *Index) startLess(a, b uint32) bool {
	ra, rb := &x.rows[a], &x.rows[b]
	return ra.start < rb.start || ra.start == rb.start && ra.id < rb.id
}

func (x *Index) publishLess(a, b uint32) bool {
	ra, rb := &x.rows[a], &x.rows[b]
	return ra.publish < rb.publish || ra.publish == rb.publish && ra.id < rb.id
}

// maxPage bounds Offset and Limit so that their sum cannot overflow.
const maxPage = math.MaxInt32

// Search runs q: the page of IDs in q's order, the exact total, and the
// facets q asks for.
func (x *Index) Search(ctx context.Context, q search.EventQuery) (search.Result, error) {
	if err := ctx.Err(); err != nil {
		return search.Result{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	p := x.plan(q)
	res := search.Result{IDs: []int64{}}
	counts := newFacetCounts(q.Facets)
	offset, limit := min(max(q.Offset, 0), maxPage), min(max(q.Limit, 0), maxPage)
	if p.none {
		res.Facets = counts.result()
		return res, nil
	}
	if p.relevance != nil {
		var hits []uint32
		p.each(x, func(slot uint32) {
			hits = append(hits, slot)
			counts.add(&x.rows[slot])
		})
		res.Total = len(hits)
		x.rank(hits, p.relevance, q.Sort)
		for _, slot := range hits[min(offset, len(hits)):min(offset+limit, len(hits))] {
			res.IDs = append(res.IDs, x.rows[slot].id)
		}
	} else {
		p.each(x, func(slot uint32) {
			if res.Total >= offset && res.Total < offset+limit {
				res.IDs = append(res.IDs, x.rows[slot].id)
			}
			res.Total++
			counts.add(&x.rows[slot])
		})
	}
	res.Facets = counts.result()
	return res, nil
}

// plan is a query made ready to run over the rows.
type plan struct {
	q search.EventQuery
	// none: nothing can match (a word without a match, an unknown
	// language, a negative radius).
	none bool
	// text holds the rows matching every word; nil without words.
	text *roaring.Bitmap
	// relevance holds the scored classes of each word for a relevance
	// order; nil otherwise.
	relevance [][]scoredClass
	// ids holds the slots of q.IDs, when set.
	ids []uint32
	// near: the circle, and the latitude band (radians) outside which no
	// point can be inside it.
	near           bool
	center         search.GeoPoint
	radius         float64
	minLat, maxLat float64
}

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

func (x *Index) plan(q search.EventQuery) plan {
	p := plan{q: q}
	if len(q.IDs) > 0 {
		seen := map[uint32]bool{}
		for _, id := range q.IDs {
			if slot, ok := x.slotOf[id]; ok && !seen[slot] {
				seen[slot] = true
				p.ids = append(p.ids, slot)
			}
		}
		if len(p.ids) == 0 {
			p.none = true
			return p
		}
	}
	if q.Near.Set {
		c := q.Near.Value
		if !(c.RadiusKm >= 0) {
			p.none = true // negative or NaN radius; +Inf is everything
			return p
		}
		p.near, p.center, p.radius = true, c.Center, c.RadiusKm
		// A point farther in latitude than the radius is farther in
		// distance: the great-circle distance is at least the earth
		// radius times the latitude difference. The band is widened by a
		// millionth so that rounding never drops a point inside.
		band := c.RadiusKm / earthRadiusKm * (1 + 1e-6)
		lat := c.Center.Lat * math.Pi / 180
		p.minLat, p.maxLat = lat-band, lat+band
	}
	terms := search.ParseQuery(q.Query)
	if len(terms) == 0 {
		return p
	}
	v := x.langs[q.Lang]
	if v == nil {
		p.none = true
		return p
	}
	relevance := q.Relevance
	for _, t := range terms {
		matched, classes := v.match(t, relevance)
		if matched.IsEmpty() {
			p.none = true
			return p
		}
		if p.text == nil {
			p.text = matched
		} else {
			p.text.And(matched)
		}
		if relevance {
			p.relevance = append(p.relevance, classes)
		}
	}
	if p.text.IsEmpty() {
		p.none = true
	}
	return p
}

// earthRadiusKm is the radius search.DistanceKm measures with.
const earthRadiusKm = 6371.0088

// match returns the rows where term t matches a word (in the title or the
// body), and, when scored, the same rows split by how they match.
func (v *vocabulary) match(t search.Term, scored bool) (*roaring.Bitmap, []scoredClass) {
	var parts []*roaring.Bitmap
	// classes: title exact, prefix, typo, then body exact, prefix, typo.
	var classes [6][]*roaring.Bitmap
	v.walk(t, func(e *word) {
		parts = append(parts, &e.title, &e.body)
		if !scored {
			return
		}
		k := 2
		switch {
		case e.text == t.Word:
			k = 0
		case t.Prefix && strings.HasPrefix(e.text, t.Word):
			k = 1
		}
		classes[k] = append(classes[k], &e.title)
		classes[3+k] = append(classes[3+k], &e.body)
	})
	matched := roaring.FastOr(parts...)
	if !scored {
		return matched, nil
	}
	weights := [6]float64{
		scoreTitle * scoreExact, scoreTitle * scorePrefix, scoreTitle * scoreTypo,
		scoreExact, scorePrefix, scoreTypo,
	}
	var out []scoredClass
	for k, bs := range classes {
		if len(bs) > 0 {
			out = append(out, scoredClass{rows: roaring.FastOr(bs...), score: weights[k]})
		}
	}
	// Best first, so a row's score for this word is its first class.
	slices.SortStableFunc(out, func(a, b scoredClass) int { return cmp.Compare(b.score, a.score) })
	return matched, out
}

// walk calls fn for every word of the vocabulary that t matches
// (search.Term.Matches). The walk reads only the words it must: the one
// word for an exact term, the words starting with it for a prefix, the
// words with its first letter for one typo, and every word only for two
// typos (where another first letter is allowed).
func (v *vocabulary) walk(t search.Term, fn func(*word)) {
	if len(t.Word) > search.MaxWordBytes {
		return
	}
	if t.Typos == 0 && !t.Prefix {
		if e := v.byText[t.Word]; e != nil {
			fn(e)
		}
		return
	}
	start := ""
	switch {
	case t.Typos == 0:
		start = t.Word
	case t.Typos < 2:
		r, _ := utf8.DecodeRuneInString(t.Word)
		start = string(r)
	}
	i := sort.SearchStrings(v.sorted, start)
	for ; i < len(v.sorted); i++ {
		w := v.sorted[i]
		if !strings.HasPrefix(w, start) {
			break
		}
		if t.Matches(w) {
			fn(v.byText[w])
		}
	}
}

// each calls fn for every matching row, in q's order.
func (p *plan) each(x *Index, fn func(slot uint32)) {
	order := x.byStart
	less := x.startLess
	if p.q.Sort == search.ByPublishDate {
		order, less = x.byPublish, x.publishLess
	}
	if p.ids != nil || p.text != nil && p.text.GetCardinality()*8 < uint64(len(order)) {
		// Few candidates: take them and sort them.
		cands := p.ids
		if cands == nil {
			cands = p.text.ToArray()
		} else {
			cands = slices.Clone(cands)
		}
		cands = slices.DeleteFunc(cands, func(slot uint32) bool { return !p.matches(&x.rows[slot], slot) })
		slices.SortFunc(cands, func(a, b uint32) int {
			if less(a, b) {
				return -1
			}
			return 1
		})
		for _, slot := range cands {
			fn(slot)
		}
		return
	}
	lo, hi := 0, len(order)
	if p.q.Sort == search.ByStart {
		lo, hi = x.startWindow(p.q)
	}
	for _, slot := range order[lo:hi] {
		if p.matches(&x.rows[slot], slot) {
			fn(slot)
		}
	}
}

// startWindow returns the part of byStart that q's start bounds allow.
func (x *Index) startWindow(q search.EventQuery) (lo, hi int) {
	order := x.byStart
	first := func(ok func(start int64) bool) int {
		return sort.Search(len(order), func(i int) bool { return ok(x.rows[order[i]].start) })
	}
	lo, hi = 0, len(order)
	if q.StartGTE.Set {
		lo = max(lo, first(func(s int64) bool { return s >= q.StartGTE.Value }))
	}
	if q.StartGT.Set {
		lo = max(lo, first(func(s int64) bool { return s > q.StartGT.Value }))
	}
	if q.StartLT.Set {
		hi = min(hi, first(func(s int64) bool { return s >= q.StartLT.Value }))
	}
	return lo, max(lo, hi)
}

// matches decides every filter of the query for one row, as
// searchtest.MatchEvent does.
func (p *plan) matches(r *row, slot uint32) bool {
	q := &p.q
	if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, r.status) {
		return false
	}
	if q.StartGTE.Set && !(r.start >= q.StartGTE.Value) ||
		q.StartGT.Set && !(r.start > q.StartGT.Value) ||
		q.StartLT.Set && !(r.start < q.StartLT.Value) ||
		q.EndLTE.Set && !(r.end <= q.EndLTE.Value) ||
		q.EndLT.Set && !(r.end < q.EndLT.Value) ||
		q.EndGT.Set && !(r.end > q.EndGT.Value) {
		return false
	}
	if q.Featured.Set && r.featured != q.Featured.Value ||
		q.Ticketed.Set && r.ticketed != q.Ticketed.Value ||
		q.HasGeo.Set && r.hasGeo != q.HasGeo.Value {
		return false
	}
	if q.ParentID.Set && r.parent != q.ParentID.Value {
		return false
	}
	if q.ExcludeHidden && r.hidden || q.ExcludeProtected && r.protected {
		return false
	}
	if !anyOf(r.cats, q.CategoryIDs) || !anyOf(r.tags, q.TagIDs) ||
		!anyOf(r.venues, q.VenueIDs) || !anyOf(r.orgs, q.OrganizerIDs) {
		return false
	}
	if p.text != nil && !p.text.Contains(slot) {
		return false
	}
	if p.near {
		if !r.hasPoint {
			return false
		}
		// The band holds for real latitudes; a point outside them (which
		// the API never stores) gets the exact check alone.
		if lat := r.lat * math.Pi / 180; (lat < p.minLat || lat > p.maxLat) && r.lat >= -90 && r.lat <= 90 {
			return false
		}
		if search.DistanceKm(search.GeoPoint{Lat: r.lat, Lng: r.lng}, p.center) > p.radius {
			return false
		}
	}
	return true
}

// anyOf reports whether have holds any of want; an empty want does not
// filter.
func anyOf(have, want []int64) bool {
	if len(want) == 0 {
		return true
	}
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}

// rank orders hits best match first, ties in the date order.
func (x *Index) rank(hits []uint32, words [][]scoredClass, by search.EventSort) {
	less := x.startLess
	if by == search.ByPublishDate {
		less = x.publishLess
	}
	scores := make(map[uint32]float64, len(hits))
	for _, slot := range hits {
		s := 0.0
		for _, classes := range words {
			for _, c := range classes {
				if c.rows.Contains(slot) {
					s += c.score
					break
				}
			}
		}
		scores[slot] = s
	}
	slices.SortFunc(hits, func(a, b uint32) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		if less(a, b) {
			return -1
		}
		return 1
	})
}

// facetCounts counts the matches per value of each requested facet.
type facetCounts struct {
	names []string
	ids   map[string]map[int64]int
	flags map[string]*[2]int
}

func newFacetCounts(names []string) *facetCounts {
	c := &facetCounts{ids: map[string]map[int64]int{}, flags: map[string]*[2]int{}}
	for _, f := range names {
		switch f {
		case search.FacetCategories, search.FacetTags, search.FacetVenue, search.FacetOrganizer:
			c.ids[f] = map[int64]int{}
		case search.FacetFeatured, search.FacetTicketed:
			c.flags[f] = &[2]int{}
		}
		// Another name counts nothing and answers an empty map, as the
		// reference (searchtest.ExpectedFacets) does.
		c.names = append(c.names, f)
	}
	return c
}

func (c *facetCounts) add(r *row) {
	if len(c.names) == 0 {
		return
	}
	for f, m := range c.ids {
		var vs []int64
		switch f {
		case search.FacetCategories:
			vs = r.cats
		case search.FacetTags:
			vs = r.tags
		case search.FacetVenue:
			vs = r.venues
		case search.FacetOrganizer:
			vs = r.orgs
		}
		for _, v := range vs {
			m[v]++
		}
	}
	for f, n := range c.flags {
		v := r.featured
		if f == search.FacetTicketed {
			v = r.ticketed
		}
		if v {
			n[1]++
		} else {
			n[0]++
		}
	}
}

// result returns the counts as the contract has them (values as strings,
// values without a match absent); nil when no facet was asked for.
func (c *facetCounts) result() map[string]map[string]int {
	if len(c.names) == 0 {
		return nil
	}
	out := make(map[string]map[string]int, len(c.names))
	for _, f := range c.names {
		m := map[string]int{}
		for v, n := range c.ids[f] {
			m[strconv.FormatInt(v, 10)] = n
		}
		if n := c.flags[f]; n != nil {
			if n[0] > 0 {
				m["false"] = n[0]
			}
			if n[1] > 0 {
				m["true"] = n[1]
			}
		}
		out[f] = m
	}
	return out
}
