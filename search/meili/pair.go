package meili

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/calendar/eventcal/search"
)

// runPair answers an event query with words in language p.pairLang on
// indexes of the current scheme (documents.go): the documents that name
// the language in attrLangs are searched on its attributes, the others on
// the base attributes, each search with the page window of the first
// offset+limit hits; the two hit lists are merged in the query's order and
// the page is cut from the merge. The two sets of documents are disjoint,
// and a series is on one side only (every document of an event names the
// same languages), so the total and the facet counts are the sums of the
// two searches' exact ones, with CollapseSeries as without.
func (e *queryRunner) runPair(ctx context.Context, p plan) (search.Result, error) {
	filter, _ := p.req.Filter.(string)
	if p.near != nil {
		// The edge of the circle is decided on every document in the ring
		// that passes the other filters, whatever its text (the searches
		// below apply the words): the ring is millimetres wide.
		q := p
		r := *p.req
		r.Query, r.AttributesToSearchOn, r.MatchingStrategy = "", nil, ""
		q.req = &r
		geo, ok, err := e.nearFilter(ctx, q)
		if err != nil || !ok {
			return search.Result{}, err
		}
		filter = and(p.filter, geo)
	}
	lang := p.pairLang
	sides := []struct {
		filter string
		attrs  []string
	}{
		{and(filter, eq(attrLangs, lang)), textAttrs(lang)},
		{and(filter, not(eq(attrLangs, lang))), baseAttrs},
	}
	window := int64(p.offset + p.limit)
	if p.limit == 0 {
		window = 0
	}
	var (
		merged []collapsedHit
		total  int
		facets map[string]map[string]int
	)
	for _, side := range sides {
		req := *p.req
		req.Filter = side.filter
		req.AttributesToSearchOn = side.attrs
		req.Page, req.HitsPerPage = 1, ptr(window)
		req.AttributesToRetrieve = []string{attrID, attrOccurrence, attrStart, attrPublishDate}
		req.ShowRankingScore = req.Sort == nil
		if p.collapse {
			req.Facets = nil
		}
		resp, err := e.client.Index(p.index).SearchWithContext(ctx, req.Query, &req)
		if err != nil {
			return search.Result{}, e.fail("search "+p.index, err)
		}
		total += int(resp.TotalHits)
		for _, h := range resp.Hits {
			c, err := readCollapsedHit(h)
			if err != nil {
				return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
			}
			merged = append(merged, c)
		}
		if len(p.facets) == 0 {
			continue
		}
		dist := resp.FacetDistribution
		if p.collapse {
			// Every matching document counts in the facets (as in run).
			r := req
			r.Facets = p.req.Facets
			r.Distinct, r.HitsPerPage, r.ShowRankingScore, r.AttributesToRetrieve = "", ptr(int64(0)), false, nil
			fr, err := e.client.Index(p.index).SearchWithContext(ctx, r.Query, &r)
			if err != nil {
				return search.Result{}, e.fail("search "+p.index+" (facets)", err)
			}
			dist = fr.FacetDistribution
		}
		counts, err := facetCounts(dist, p.facets)
		if err != nil {
			return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
		}
		if facets == nil {
			facets = counts
			continue
		}
		for f, byValue := range counts {
			for v, n := range byValue {
				facets[f][v] += n
			}
		}
	}
	sortHits(merged, p.req.Sort)
	res := resultPage(merged, p.offset, p.limit, total)
	res.Facets = facets
	return res, nil
}

// resultPage is the result of hits merged from several searches and
// ordered (sortHits): the total given, and the page from offset of at most
// limit hits, their IDs and, when one has an occurrence, the occurrences
// of all ("" for a single event).
func resultPage(hits []collapsedHit, offset, limit, total int) search.Result {
	page := hits[min(offset, len(hits)):]
	page = page[:min(limit, len(page))]
	res := search.Result{Total: total, IDs: make([]int64, 0, len(page))}
	for _, c := range page {
		res.IDs = append(res.IDs, c.id)
		if c.occ != "" && res.Occurrences == nil {
			res.Occurrences = make([]string, len(res.IDs)-1, len(page))
		}
		if res.Occurrences != nil {
			res.Occurrences = append(res.Occurrences, c.occ)
		}
	}
	return res
}

// sortHits orders hits merged from several searches as each search
// ordered its own: by the sort (start or publish date, then id and
// occurrence: a total order), or, for a relevance query (no sort), by
// _rankingScore, best first, the earlier search's hit first on a tie.
func sortHits(hits []collapsedHit, sort []string) {
	byPublish := slices.Contains(sort, sortByPublishDate[0])
	slices.SortStableFunc(hits, func(a, b collapsedHit) int {
		if sort == nil {
			return cmp.Compare(b.score, a.score)
		}
		ka, kb := a.start, b.start
		if byPublish {
			ka, kb = a.publish, b.publish
		}
		return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(a.id, b.id), cmp.Compare(a.occ, b.occ))
	})
}
