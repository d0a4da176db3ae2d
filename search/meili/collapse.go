package meili

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// searchBothCollapsed runs a CollapseSeries query over both event indexes
// of the scheme-4 layout (an editor's list with
// hide_subsequent_recurrences while a migration is pending; in the current
// layout such a list is one search of the editor index: hidden.go).
//
// Why not one federated search: a federated query's count is not
// exhaustive (prepare_search gets no page/hitsPerPage inside a federation),
// so Meilisearch does not apply distinct to its candidates and
// estimatedTotalHits would count occurrences; and a series whose
// occurrences have statuses of both kinds (an override of one occurrence's
// status) is in both indexes, where each index's distinct keeps one hit.
//
// So: each index is searched with distinct id and page/hitsPerPage (exact
// distinct totals), for the first offset+limit+overlap hits; the two lists
// are merged in the query's order in Go, keeping each series' first hit,
// and the page is cut from the merge. overlap, the number of series that
// match in both indexes, is found first: the IDs matching in the hidden
// index (one hit per series), then how many of those match in the
// published one. Total is the two distinct totals less the overlap. The
// facets come from the uncollapsed federated search (every matching
// document counts, as without CollapseSeries).
func (e *queryRunner) searchBothCollapsed(ctx context.Context, p plan, hidden string) (search.Result, error) {
	filters, found, err := e.bothFilters(ctx, p, hidden)
	if err != nil || !found {
		return search.Result{}, err
	}
	fail := func(err error) (search.Result, error) {
		return search.Result{}, fmt.Errorf("meili: collapsed search of %s and %s: %w", p.index, hidden, err)
	}
	distinctIn := func(uid, filter string, hitsPerPage int64, retrieve []string) (*meilisearch.SearchResponse, error) {
		req := &meilisearch.SearchRequest{
			Query: p.req.Query, Sort: p.req.Sort, AttributesToSearchOn: p.req.AttributesToSearchOn,
			MatchingStrategy: p.req.MatchingStrategy, Distinct: attrID, AttributesToRetrieve: retrieve,
			Page: 1, HitsPerPage: ptr(hitsPerPage), ShowRankingScore: p.req.Sort == nil,
		}
		if filter != "" {
			req.Filter = filter
		}
		resp, err := e.client.Index(uid).SearchWithContext(ctx, req.Query, req)
		if err != nil {
			return nil, e.fail("collapsed search of "+uid, err)
		}
		return resp, nil
	}

	// The series matching in both indexes.
	inHidden, err := distinctIn(hidden, filters[hidden], maxTotalHits, []string{attrID})
	if err != nil {
		return search.Result{}, err
	}
	if int(inHidden.TotalHits) > len(inHidden.Hits) {
		return fail(fmt.Errorf("%d events match in %s, more than one page of %d", inHidden.TotalHits, hidden, maxTotalHits))
	}
	var hiddenIDs []int64
	for _, h := range inHidden.Hits {
		id, err := hitID(h)
		if err != nil {
			return fail(err)
		}
		hiddenIDs = append(hiddenIDs, id)
	}
	overlap := 0
	for _, part := range filterChunks(hiddenIDs, e.opts.BatchSize) {
		resp, err := distinctIn(p.index, and(filters[p.index], in(attrID, part)), 0, nil)
		if err != nil {
			return search.Result{}, err
		}
		overlap += int(resp.TotalHits)
	}

	// The first offset+limit+overlap hits of each index, merged.
	n := int64(p.offset + p.limit + overlap)
	retrieve := []string{attrID, attrOccurrence, attrStart, attrPublishDate}
	var merged []collapsedHit
	total := -overlap
	for _, uid := range []string{p.index, hidden} {
		if p.limit == 0 {
			n = 0
		}
		resp, err := distinctIn(uid, filters[uid], n, retrieve)
		if err != nil {
			return search.Result{}, err
		}
		total += int(resp.TotalHits)
		for _, h := range resp.Hits {
			c, err := readCollapsedHit(h)
			if err != nil {
				return fail(err)
			}
			merged = append(merged, c)
		}
	}
	sortHits(merged, p.req.Sort)
	seen := map[int64]bool{}
	merged = slices.DeleteFunc(merged, func(c collapsedHit) bool {
		if seen[c.id] {
			return true
		}
		seen[c.id] = true
		return false
	})
	res := resultPage(merged, p.offset, p.limit, total)
	if len(p.facets) > 0 {
		all := p
		all.collapse = false
		r := *p.req
		r.Distinct = ""
		all.req = &r
		all.limit = 0
		counted, err := e.searchBoth(ctx, all, hidden)
		if err != nil {
			return search.Result{}, err
		}
		res.Facets = counted.Facets
	}
	return res, nil
}

// collapsedHit is a hit of a collapsed search with what orders it.
type collapsedHit struct {
	id             int64
	occ            string
	start, publish int64
	score          float64
}

func readCollapsedHit(h meilisearch.Hit) (collapsedHit, error) {
	var c collapsedHit
	var err error
	if c.id, err = hitID(h); err != nil {
		return c, err
	}
	for attr, dst := range map[string]any{attrOccurrence: &c.occ, attrStart: &c.start, attrPublishDate: &c.publish, "_rankingScore": &c.score} {
		if raw, ok := h[attr]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return c, fmt.Errorf("decode hit %s %s: %w", attr, raw, err)
			}
		}
	}
	return c, nil
}
