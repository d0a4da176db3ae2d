package meili

import (
	"slices"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// plan is a search request ready to send, and how to turn its answer into
// the requested page. A nil req means the query can match nothing: no
// request is sent and the result is empty.
type plan struct {
	index string
	req   *meilisearch.SearchRequest
	// skip and limit select the requested page inside the page window.
	skip, limit int
	// near, when set, is a geo filter that run completes before sending
	// req (see Engine.nearFilter); filter is then req's filter without it.
	near   *search.GeoCircle
	filter string
	// oneField, when set, asks run for the hits with every word in one
	// attribute, one federated search per page (Engine.searchOneField).
	oneField *oneField
	// offset is the requested offset (the federation's offset).
	offset int
	// facets are the requested event facets (req.Facets holds their
	// attributes).
	facets []string
	// collapse: req lists each series once (req.Distinct); the facets are
	// then counted by a request of their own without it.
	collapse bool
	// pairLang, when set, is the language of a text query on indexes of
	// the current scheme: run answers it with two searches
	// (Engine.runPair, documents.go).
	pairLang string
}

// facetAttrs maps each event facet to the attribute whose
// facetDistribution counts it. Every one is filterable (settingsFor), as
// Meilisearch requires of a facet.
var facetAttrs = map[string]string{
	search.FacetCategories: attrCategoryIDs,
	search.FacetTags:       attrTagIDs,
	search.FacetVenue:      attrVenueIDs,
	search.FacetOrganizer:  attrOrganizerIDs,
	search.FacetFeatured:   attrFeatured,
	search.FacetTicketed:   attrTicketed,
}

// oneField is the place rule "all the terms in one field": one query per
// attribute.
type oneField struct {
	attrs []string
}

// The sort orders. Each ends with the unique id (for events, the id and the
// occurrence key), so the order is total.
var (
	sortByStart       = []string{attrStart + ":asc", attrID + ":asc", attrOccurrence + ":asc"}
	sortByPublishDate = []string{attrPublishDate + ":asc", attrID + ":asc", attrOccurrence + ":asc"}
	sortPlaces        = []string{attrPublishDate + ":desc", attrID + ":desc"}
)

// planEvents translates an event query.
func planEvents(q search.EventQuery, v vocabulary, index string) plan {
	req := &meilisearch.SearchRequest{Sort: sortByStart, AttributesToRetrieve: []string{attrID, attrOccurrence}}
	if q.Sort == search.ByPublishDate {
		req.Sort = sortByPublishDate
	}
	if q.CollapseSeries {
		// One hit per series: Meilisearch's distinct keeps, of the
		// documents of one id, the first in the ranking order (the sort
		// is the first ranking rule), and with page/hitsPerPage counts
		// totalHits after distinct, exactly (execute_search in
		// crates/milli/src/search/new/mod.rs applies apply_distinct_rule
		// to all the candidates when the count is exhaustive). Its
		// facetDistribution is computed over those candidates, one
		// document per series chosen by internal document order, not the
		// listed one, so facets are asked for without distinct
		// (Engine.run).
		req.Distinct = attrID
	}
	f := eventFilter(q)
	if f != "" {
		req.Filter = f
	}
	var attrs []string
	if slices.Contains(v.languages, q.Lang) {
		attrs = textAttrs(q.Lang)
	}
	if !textQuery(req, q.Query, attrs) {
		return plan{}
	}
	if q.Relevance && req.Query != "" {
		// Best match first: without a sort, the ranking rules after
		// "sort" (words, typo, proximity, attribute, exactness) decide.
		// Meilisearch breaks their ties by its internal document order,
		// not by date; the contract lets the engines differ there.
		req.Sort = nil
	}
	for _, f := range q.Facets {
		if a, ok := facetAttrs[f]; ok {
			req.Facets = append(req.Facets, a)
		}
	}
	p := paged(index, req, q.Offset, q.Limit)
	p.facets = slices.Clone(q.Facets)
	p.collapse = q.CollapseSeries
	if q.Near.Set {
		p.near, p.filter = &q.Near.Value, f
	}
	return p
}

// planPlaces translates a venue or organizer query.
func planPlaces(q search.PlaceQuery, ix Index, v vocabulary, index string) plan {
	req := &meilisearch.SearchRequest{Sort: sortPlaces, AttributesToRetrieve: []string{attrID}}
	f, ok := placeFilter(q, v)
	if !ok {
		return plan{}
	}
	if f != "" {
		req.Filter = f
	}
	var attrs []string
	if slices.Contains(v.languages, q.Lang) {
		attrs = textAttrs(q.Lang)
	}
	for _, name := range v.fieldsOf(ix) {
		attrs = append(attrs, attr(prefixField, name))
	}
	attrs = uniq(attrs)
	if !textQuery(req, q.Query, attrs) {
		return plan{}
	}
	p := paged(index, req, q.Offset, q.Limit)
	if terms := search.ParseQuery(q.Query); len(terms) > 1 {
		// Meilisearch's matchingStrategy "all" accepts words spread over
		// several attributes; the place contract wants them all in one
		// field (a venue titled "Jazz Club" in Amsterdam does not match
		// "jazz amsterdam"), which no single search expresses: a
		// federated search of one search per attribute does
		// (Engine.searchOneField). With a single word both rules agree.
		p.oneField = &oneField{attrs: attrs}
	}
	return p
}

// eventFilter builds the filter of every set field of an event query, in
// the order of the fields of search.EventQuery ("" when none is set).
// Near is left out: the engine adds it after deciding the documents on the
// circle's edge itself (Engine.nearFilter).
func eventFilter(q search.EventQuery) string {
	return and(
		listIn(attrStatus, q.Statuses),
		optCmp(gte, attrStart, q.StartGTE),
		optCmp(gt, attrStart, q.StartGT),
		optCmp(lt, attrStart, q.StartLT),
		optCmp(lte, attrEnd, q.EndLTE),
		optCmp(lt, attrEnd, q.EndLT),
		optCmp(gt, attrEnd, q.EndGT),
		listIn(attrID, q.IDs),
		listIn(attrCategoryIDs, q.CategoryIDs),
		listIn(attrTagIDs, q.TagIDs),
		listIn(attrVenueIDs, q.VenueIDs),
		listIn(attrOrganizerIDs, q.OrganizerIDs),
		optEq(attrFeatured, q.Featured),
		optEq(attrTicketed, q.Ticketed),
		optEq(attrHasGeo, q.HasGeo),
		optEq(attrParentID, q.ParentID),
		listIn(attrEventStatus, q.EventStatuses),
		// Positive comparisons with false rather than NOT … = true: both
		// attributes are always written, and a NOT would also keep a
		// document that lacked them.
		when(q.ExcludeHidden, eq(attrHideFromListings, false)),
		when(q.ExcludeProtected, eq(attrHasPassword, false)),
	)
}

// placeFilter builds the filter of a place query; ok is false when the
// query can match nothing.
func placeFilter(q search.PlaceQuery, v vocabulary) (f string, ok bool) {
	upcoming := ""
	if q.UpcomingAfter.Set {
		// A linked event of one of the statuses starts at or after the
		// instant: last_start_<status> >= after for one of them.
		after := q.UpcomingAfter.Value
		var alts []string
		for _, st := range uniq(q.UpcomingStatuses) {
			// A status outside the vocabulary is in no document's
			// LastStart: it cannot match.
			if !slices.Contains(v.statuses, st) {
				continue
			}
			f := attr(prefixLastStart, st)
			cond := gte(f, after)
			if after <= 0 {
				// 0 stands for "no linked event of this status", which
				// must not pass a bound at or below 0.
				cond = and(cond, ne(f, 0))
			}
			alts = append(alts, cond)
		}
		if len(alts) == 0 {
			return "", false
		}
		upcoming = or(alts...)
	}
	return and(
		listIn(attrStatus, q.Statuses),
		listIn(attrID, q.IDs),
		optEq(attrHasEvents, q.HasEvents),
		upcoming,
	), true
}

// textQuery adds the full-text part of a query to req, by the contract's
// text-matching rules (search/text.go), which are Meilisearch's own with
// the settings of settingsFor: it sends the terms of search.ParseQuery
// (folded, at most search.MaxQueryWords distinct words), separated by
// spaces, and a final space when the last term is not a prefix, so that
// Meilisearch's prefix rule (the last word, when nothing follows it) picks
// the same word. matchingStrategy "all" keeps only documents that match
// every word (the default, "last", drops words until enough documents
// match). A hyphenated query word arrives as its parts ("late-night" is
// sent as "late night"), which Meilisearch's tokenizer cuts the same way
// ('-' is one of its separators); no word holds a '-', so none is read as
// Meilisearch's negation operator ("-word" after a space). It returns
// false when the query can match nothing: it has words
// but no attribute to find them in (a language that no document has).
// https://www.meilisearch.com/docs/reference/api/search#query-q
// https://www.meilisearch.com/docs/reference/api/search#matching-strategy
func textQuery(req *meilisearch.SearchRequest, query string, attrs []string) bool {
	terms := search.ParseQuery(query)
	if len(terms) == 0 {
		return true
	}
	if len(attrs) == 0 {
		return false
	}
	words := make([]string, len(terms))
	for i, t := range terms {
		words[i] = t.Word
	}
	req.Query = strings.Join(words, " ")
	if !terms[len(terms)-1].Prefix {
		req.Query += " "
	}
	req.AttributesToSearchOn = attrs
	req.MatchingStrategy = meilisearch.All
	return true
}

// paged sets the page window of req for offset and limit and returns the
// plan.
func paged(index string, req *meilisearch.SearchRequest, offset, limit int) plan {
	page, perPage, skip := pageWindow(max(offset, 0), max(limit, 0))
	hpp := int64(perPage)
	req.Page = int64(page)
	req.HitsPerPage = &hpp
	return plan{index: index, req: req, skip: skip, limit: max(limit, 0), offset: max(offset, 0)}
}

// pageWindow chooses the page/hitsPerPage request whose page covers the
// hits [offset, offset+limit), and how many hits of that page to skip.
//
// Why pages: with page or hitsPerPage, Meilisearch counts matches
// exhaustively and returns totalHits; with offset/limit it returns
// estimatedTotalHits, which is only an estimate
// (https://www.meilisearch.com/docs/guides/front_end/pagination; the search
// route computes page p of size h as offset h·(p-1), limit h, and
// hitsPerPage 0 returns the exhaustive total without documents). The API's
// own pages are aligned (offset = (page-1)·per_page), which gives exactly
// the requested page; for other offsets the smallest page size h ≥ limit
// whose page containing offset also contains offset+limit-1 is used, and
// h = offset+limit (page 1) always qualifies.
func pageWindow(offset, limit int) (page, hitsPerPage, skip int) {
	if limit == 0 {
		return 1, 0, 0
	}
	for h := limit; ; h++ {
		if start := offset / h * h; offset+limit <= start+h {
			return offset/h + 1, h, offset - start
		}
	}
}

func listIn[T int64 | string](field string, vs []T) string {
	if len(vs) == 0 {
		return ""
	}
	return in(field, vs)
}

func optEq[T int64 | bool](field string, o search.Opt[T]) string {
	if !o.Set {
		return ""
	}
	return eq(field, o.Value)
}

func optCmp(cmp func(string, int64) string, field string, o search.Opt[int64]) string {
	if !o.Set {
		return ""
	}
	return cmp(field, o.Value)
}

func when(cond bool, f string) string {
	if !cond {
		return ""
	}
	return f
}
