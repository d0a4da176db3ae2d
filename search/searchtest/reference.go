package searchtest

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/search"
)

// This file is the reference semantics of the search contract, written
// plainly in Go. The suite computes every expected result with it, so an
// engine passes only by agreeing with these functions, and a reader can
// settle any question about a filter by reading them.

// MatchEvent reports whether doc satisfies every filter of q. Paging and
// sorting are ignored.
func MatchEvent(doc search.EventDocument, q search.EventQuery) bool {
	return matchEvent(&doc, &q, search.ParseQuery(q.Query))
}

// matchEvent is MatchEvent with q.Query parsed into terms
// (search.ParseQuery): ExpectedHits and ExpectedFacets parse it once for
// all the documents.
func matchEvent(doc *search.EventDocument, q *search.EventQuery, terms []search.Term) bool {
	return matchEventWith(doc, q, terms, nil)
}

// matchEventWith is matchEvent with the words of doc's texts in q.Lang
// (wordsOf) at hand in words, when not nil (Reference finds them once).
func matchEventWith(doc *search.EventDocument, q *search.EventQuery, terms []search.Term, words *[3][]string) bool {
	if len(q.IDs) > 0 && !slices.Contains(q.IDs, doc.ID) {
		return false
	}
	if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, doc.Status) {
		return false
	}
	if q.StartGTE.Set && !(doc.Start >= q.StartGTE.Value) ||
		q.StartGT.Set && !(doc.Start > q.StartGT.Value) ||
		q.StartLT.Set && !(doc.Start < q.StartLT.Value) ||
		q.EndLTE.Set && !(doc.End <= q.EndLTE.Value) ||
		q.EndLT.Set && !(doc.End < q.EndLT.Value) ||
		q.EndGT.Set && !(doc.End > q.EndGT.Value) {
		return false
	}
	if !anyOf(doc.CategoryIDs, q.CategoryIDs) || !anyOf(doc.TagIDs, q.TagIDs) ||
		!anyOf(doc.VenueIDs, q.VenueIDs) || !anyOf(doc.OrganizerIDs, q.OrganizerIDs) {
		return false
	}
	if q.Featured.Set && doc.Featured != q.Featured.Value ||
		q.Ticketed.Set && doc.Ticketed != q.Ticketed.Value ||
		q.HasGeo.Set && doc.HasGeo != q.HasGeo.Value {
		return false
	}
	if q.Near.Set && !(doc.HasGeo && doc.Geo != nil &&
		q.Near.Value.Contains(*doc.Geo)) {
		return false
	}
	if q.ParentID.Set && doc.ParentID != q.ParentID.Value {
		return false
	}
	if len(q.EventStatuses) > 0 && !slices.Contains(q.EventStatuses, doc.EventStatusOf()) {
		return false
	}
	if q.ExcludeHidden && doc.HideFromListings || q.ExcludeProtected && doc.HasPassword {
		return false
	}
	if len(terms) > 0 {
		// Each term may match in a different field: the union of the
		// fields' words must match them all.
		if words == nil {
			w := wordsOf(doc, q.Lang)
			words = &w
		}
		if !matchesAllIn(terms, words[0], words[1], words[2]) {
			return false
		}
	}
	return true
}

// wordsOf returns the indexed words of doc's title, description and
// excerpt in lang (textWords).
func wordsOf(doc *search.EventDocument, lang string) [3][]string {
	t := doc.Text[lang]
	return [3][]string{textWords.Get(t.Title), textWords.Get(t.Description), textWords.Get(t.Excerpt)}
}

// MatchPlace reports whether doc satisfies every filter of q (its kind
// included). Paging and sorting are ignored.
func MatchPlace(doc search.PlaceDocument, q search.PlaceQuery) bool {
	if doc.Kind != q.Kind {
		return false
	}
	if len(q.IDs) > 0 && !slices.Contains(q.IDs, doc.ID) {
		return false
	}
	if len(q.Statuses) > 0 && !slices.Contains(q.Statuses, doc.Status) {
		return false
	}
	if q.HasEvents.Set && doc.HasEvents != q.HasEvents.Value {
		return false
	}
	if q.UpcomingAfter.Set {
		upcoming := false
		for _, s := range q.UpcomingStatuses {
			if last, ok := doc.LastStart[s]; ok && last >= q.UpcomingAfter.Value {
				upcoming = true
				break
			}
		}
		if !upcoming {
			return false
		}
	}
	if terms := search.ParseQuery(q.Query); len(terms) > 0 {
		// All the terms must match in one field (as in the original plugin): a venue
		// whose title says "jazz" and whose city says "paris" does not
		// match "jazz paris".
		t := doc.Text[q.Lang]
		fields := []string{t.Title, t.Description, t.Excerpt}
		for _, v := range doc.Fields {
			fields = append(fields, v)
		}
		if !slices.ContainsFunc(fields, func(f string) bool { return matchesAll(terms, TextWords(f)) }) {
			return false
		}
	}
	return true
}

// ExpectedEvents returns the result an engine must give for q over docs:
// the matches sorted by q.Sort, collapsed (CollapseSeries), then paged.
// Occurrences is always set, parallel to IDs.
func ExpectedEvents(docs []search.EventDocument, q search.EventQuery) search.Result {
	return pageOf(expectedMatches(docs, q), q.Offset, q.Limit)
}

// ExpectedEventsAndFacets returns ExpectedEvents and ExpectedFacets of q
// over docs, matching each document once for both.
func ExpectedEventsAndFacets(docs []search.EventDocument, q search.EventQuery) (search.Result, map[string]map[string]int) {
	matches := matchingEvents(docs, q)
	facets := facetsOf(matches, q.Facets)
	return pageOf(listed(matches, q), q.Offset, q.Limit), facets
}

// pageOfHits is the result of a query whose hits (ExpectedHits) are hits,
// paged by offset and limit: one ExpectedHits serves every page of a query.
func pageOfHits(hits []search.EventDocument, offset, limit int) search.Result {
	from := min(max(offset, 0), len(hits))
	to := from
	if limit > 0 {
		to = from + min(limit, len(hits)-from)
	}
	ptrs := make([]*search.EventDocument, to-from)
	for i := range ptrs {
		ptrs[i] = &hits[from+i]
	}
	res := pageOf(ptrs, 0, len(ptrs))
	res.Total = len(hits)
	return res
}

// pageOf is the result of a query whose hits, in order, are hits, paged
// by offset and limit.
func pageOf(hits []*search.EventDocument, offset, limit int) search.Result {
	// Page's bounds, without the IDs of every hit (a reference's query
	// may match tens of thousands of documents for a page of ten).
	from := min(max(offset, 0), len(hits))
	to := from
	if limit > 0 {
		to = from + min(limit, len(hits)-from)
	}
	ids, occs := make([]int64, to-from), make([]string, to-from)
	for i, d := range hits[from:to] {
		ids[i], occs[i] = d.ID, d.Occurrence
	}
	return search.Result{IDs: ids, Occurrences: occs, Total: len(hits)}
}

// ExpectedHits returns every document that q lists, in q's order (not
// paged): the matches sorted by q.Sort, and with CollapseSeries only the
// first of each ID.
func ExpectedHits(docs []search.EventDocument, q search.EventQuery) []search.EventDocument {
	var hits []search.EventDocument
	if matches := expectedMatches(docs, q); len(matches) > 0 {
		hits = make([]search.EventDocument, len(matches))
		for i, d := range matches {
			hits[i] = *d
		}
	}
	return hits
}

// expectedMatches is ExpectedHits as pointers into docs: the documents
// are sorted as pointers, and copied (by ExpectedHits) only when a
// caller wants them whole.
func expectedMatches(docs []search.EventDocument, q search.EventQuery) []*search.EventDocument {
	return listed(matchingEvents(docs, q), q)
}

// matchingEvents returns pointers to the documents of docs that match q
// (matchEvent), in docs' order.
func matchingEvents(docs []search.EventDocument, q search.EventQuery) []*search.EventDocument {
	terms := search.ParseQuery(q.Query)
	var matches []*search.EventDocument
	for i := range docs {
		if matchEvent(&docs[i], &q, terms) {
			matches = append(matches, &docs[i])
		}
	}
	return matches
}

// listed sorts matches (q's matches) in place by q.Sort and, with
// CollapseSeries, keeps the first of each ID; it returns them. (Matches
// already in that order, as from documents sorted by SortEvents, cost
// the sort one pass.)
func listed(matches []*search.EventDocument, q search.EventQuery) []*search.EventDocument {
	return listedWith(matches, q, nil)
}

// listedWith is listed with seen, when not nil, an empty map to collapse
// the series with (Reference reuses one for its queries).
func listedWith(matches []*search.EventDocument, q search.EventQuery, seen map[int64]bool) []*search.EventDocument {
	slices.SortFunc(matches, eventOrder(q.Sort))
	return collapsedWith(matches, q, seen)
}

// collapsedWith is listedWith of matches already in q's order: with
// CollapseSeries, only the first of each ID is kept.
func collapsedWith(matches []*search.EventDocument, q search.EventQuery, seen map[int64]bool) []*search.EventDocument {
	if q.CollapseSeries {
		if seen == nil {
			seen = map[int64]bool{}
		}
		matches = slices.DeleteFunc(matches, func(d *search.EventDocument) bool {
			if seen[d.ID] {
				return true
			}
			seen[d.ID] = true
			return false
		})
	}
	return matches
}

// ExpectedPlaces returns the result an engine must give for q over docs:
// the matches sorted by publish date descending then ID descending, then
// paged.
func ExpectedPlaces(docs []search.PlaceDocument, q search.PlaceQuery) search.Result {
	var hits []search.PlaceDocument
	for _, d := range docs {
		if MatchPlace(d, q) {
			hits = append(hits, d)
		}
	}
	SortPlaces(hits)
	ids := make([]int64, len(hits))
	for i, d := range hits {
		ids[i] = d.ID
	}
	return search.Result{IDs: Page(ids, q.Offset, q.Limit), Total: len(hits)}
}

// SortEvents orders docs in place: ByStart is start ascending then ID
// ascending; ByPublishDate is publish date ascending then ID ascending;
// both then by occurrence key ascending (a single event's empty key
// first).
func SortEvents(docs []search.EventDocument, by search.EventSort) {
	order := eventOrder(by)
	slices.SortFunc(docs, func(a, b search.EventDocument) int { return order(&a, &b) })
}

// eventOrder returns the comparison SortEvents sorts by. (It compares
// the IDs and the occurrence keys only on equal dates and IDs: the
// reference sorts every query's matches.)
func eventOrder(by search.EventSort) func(a, b *search.EventDocument) int {
	byPublish := by == search.ByPublishDate
	return func(a, b *search.EventDocument) int {
		ka, kb := a.Start, b.Start
		if byPublish {
			ka, kb = a.PublishDate, b.PublishDate
		}
		if c := cmp.Compare(ka, kb); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Occurrence, b.Occurrence)
	}
}

// SortPlaces orders docs in place: publish date descending, then ID
// descending (WordPress's default order, which the original plugin's venue
// and organizer lists keep).
func SortPlaces(docs []search.PlaceDocument) {
	slices.SortFunc(docs, func(a, b search.PlaceDocument) int {
		return cmp.Or(cmp.Compare(b.PublishDate, a.PublishDate), cmp.Compare(b.ID, a.ID))
	})
}

// Page returns ids[offset:offset+limit], clamped to the slice. A negative
// offset counts as 0; a limit of 0 or less gives an empty page (a request
// for the total only).
func Page(ids []int64, offset, limit int) []int64 {
	offset = max(offset, 0)
	if limit <= 0 || offset >= len(ids) {
		return []int64{}
	}
	end := len(ids)
	if limit < end-offset {
		end = offset + limit
	}
	return slices.Clone(ids[offset:end])
}

// anyOf reports whether have holds any of want; an empty want does not
// filter.
func anyOf(have, want []int64) bool {
	if len(want) == 0 {
		return true
	}
	return slices.ContainsFunc(want, func(v int64) bool { return slices.Contains(have, v) })
}

// TextWords returns the words of indexed texts by the contract's rules:
// search.IndexedWords of search.PlainText of each (each text is one
// attribute: its first search.MaxAttributeWords words).
func TextWords(texts ...string) []string {
	var out []string
	for _, t := range texts {
		out = append(out, textWords.Get(t)...)
	}
	return out
}

// textWords memoises the indexed words of one text: the reference matches
// every document against every query of a suite.
var textWords = testsupport.Memo[string, []string]{F: func(t string) []string {
	return search.IndexedWords(search.PlainText(t))
}}

// matchesAll reports whether every term matches one of the words.
func matchesAll(terms []search.Term, words []string) bool {
	for _, t := range terms {
		if !t.MatchesAny(words) {
			return false
		}
	}
	return true
}

// matchesAllIn reports whether every term matches a word of one of the
// lists: matchesAll over the lists joined, without joining them.
func matchesAllIn(terms []search.Term, lists ...[]string) bool {
	for _, t := range terms {
		if !slices.ContainsFunc(lists, t.MatchesAny) {
			return false
		}
	}
	return true
}

// ExpectedFacets counts, for each facet of q.Facets, the matches of q over
// docs per value (search.FacetValues); nil when q asks for none. Every
// matching document counts, CollapseSeries or not.
func ExpectedFacets(docs []search.EventDocument, q search.EventQuery) map[string]map[string]int {
	if len(q.Facets) == 0 {
		return nil
	}
	return facetsOf(matchingEvents(docs, q), q.Facets)
}

// facetsOf counts, for each facet of facets, the documents of matches per
// value (search.FacetValues); nil when facets is empty.
func facetsOf(matches []*search.EventDocument, facets []string) map[string]map[string]int {
	if len(facets) == 0 {
		return nil
	}
	out := map[string]map[string]int{}
	for _, f := range facets {
		out[f] = map[string]int{}
	}
	for _, f := range facets {
		ids := facetIDs(f)
		if ids == nil {
			for _, d := range matches {
				for _, v := range search.FacetValues(*d, f) {
					out[f][v]++
				}
			}
			continue
		}
		// A facet of IDs: counted by ID, then named as FacetValues names
		// them (TestFacetIDs), without a string per document and value.
		byID := map[int64]int{}
		for _, d := range matches {
			for _, id := range ids(d) {
				byID[id]++
			}
		}
		for id, n := range byID {
			out[f][strconv.FormatInt(id, 10)] += n
		}
	}
	return out
}

// facetIDs returns the IDs of a document that facet f counts, for a facet
// of IDs (categories, tags, venue, organizer); nil for another.
func facetIDs(f string) func(d *search.EventDocument) []int64 {
	switch f {
	case search.FacetCategories:
		return func(d *search.EventDocument) []int64 { return d.CategoryIDs }
	case search.FacetTags:
		return func(d *search.EventDocument) []int64 { return d.TagIDs }
	case search.FacetVenue:
		return func(d *search.EventDocument) []int64 { return d.VenueIDs }
	case search.FacetOrganizer:
		return func(d *search.EventDocument) []int64 { return d.OrganizerIDs }
	}
	return nil
}
