package meili

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// Events are kept in two indexes: <prefix>events holds the published ones
// (status publish, all an anonymous caller may see) and
// <prefix>events_hidden every other status (future, draft, pending,
// private, trash, ...).
//
// Why: Meilisearch derives a query word's typo and prefix matches from the
// word list of the whole index, whatever the filter
// (crates/milli/src/search/new/query_term/compute_derivations.rs at
// v1.18.0), and caps them (1,000 prefix words, 150 one-typo and 50
// two-typo words: limits.rs). With one index, the words of drafts and
// private events would lengthen every anonymous search's walk of that list
// (a prefix word with typos iterates every word starting with it) and
// could use up the caps, leaving out published matches. With the split,
// an anonymous search (statuses [publish]) reads the published index only:
// its cost and its matches do not depend on hidden text.
//
// A search whose statuses include both kinds (an editor's) is one
// federated multi-search over the two indexes (searchBoth): Meilisearch
// merges the two hit lists by their sort values, cuts the page with the
// federation's offset and limit, sums the two exact totals (the indexes
// hold distinct events: crates/meilisearch/src/search/federated/
// perform.rs:407-421) and merges the facet counts (mergeFacets).
// A write replaces all the documents of each of its events (the
// occurrences of a series, which may be in both indexes when one
// occurrence's status differs): each index is asked which of the batch's
// events it holds (one search with distinct id), a deletion by filter
// "id IN [...]" of those is enqueued, then the additions of the batch's
// documents of that index, and only then are the tasks awaited. Tasks of
// one index run in the order they were enqueued, so the additions always
// follow the deletion (a failure in between leaves an event missing until
// the sync worker retries the batch, never listed twice or with stale
// occurrences). Whether a search can fall between them depends on the
// autobatcher (crates/index-scheduler/src/scheduler/autobatcher.rs):
// before v1.45.0 a deletion by filter is never batched with additions
// (BatchStopReason::DeletionByFilterWithDocumentOperation at v1.18.0), so
// for the short time between the two batches a search may miss the
// events being rewritten; from v1.45.0 ("we can autobatch the deletion by
// filter and import but only if the document addition is *after* the
// deletion", still so at v1.50.0) a deletion by filter and the additions
// that FOLLOW it (not the reverse: that order breaks the batch) are one
// batch, so when both are enqueued before the scheduler takes the
// deletion, the replacement is applied at once.

// publicStatus is the one status of the published index.
const publicStatus = "publish"

// eventIndexOf is the index of an event status.
func eventIndexOf(status string) Index {
	if status == publicStatus {
		return EventIndex
	}
	return EventHiddenIndex
}

// indexEvents writes the documents of events to the index of their
// status, replacing every document of those events in both indexes.
func (e *Engine) indexEvents(ctx context.Context, docs []search.EventDocument) error {
	parts := map[Index][]search.EventDocument{}
	var ids []int64
	seen := map[int64]bool{}
	// oversized: documents over the request budget, left out
	// (cutDocuments) and reported once the others are indexed.
	var oversized []error
	for _, d := range docs {
		ix := eventIndexOf(d.Status)
		parts[ix] = append(parts[ix], d)
		if !seen[d.ID] {
			seen[d.ID] = true
			ids = append(ids, d.ID)
		}
	}
	for _, ix := range []Index{EventIndex, EventHiddenIndex} {
		uid, part := e.IndexUID(ix), parts[ix]
		held, err := e.present(ctx, uid, ids)
		if err != nil {
			return err
		}
		// The deletions are enqueued, then the first addition, before
		// any is awaited (so that they can share a batch); every later
		// addition is awaited before the next is sent.
		type enqueued struct {
			op   string
			info *meilisearch.TaskInfo
		}
		var pending []enqueued
		awaitPending := func() error {
			for _, t := range pending {
				if err := e.await(ctx, t.op, t.info, nil); err != nil {
					return err
				}
			}
			pending = nil
			return nil
		}
		for start := 0; start < len(held); start += e.opts.BatchSize {
			chunk := held[start:min(start+e.opts.BatchSize, len(held))]
			op := "delete the replaced events from " + uid
			info, err := e.client.Index(uid).DeleteDocumentsByFilterWithContext(ctx, in(attrID, chunk), nil)
			if err != nil {
				return e.fail(op, err)
			}
			pending = append(pending, enqueued{op, info})
		}
		pk := attrKey
		// Every addition is awaited before the next is sent, so that at
		// most one request body is held (cutDocuments).
		err = cutDocuments(uid, pk, len(part), e.opts.BatchSize, e.opts.MaxRequestBytes,
			func(i int) map[string]any { return eventDocument(part[i]) },
			func(body []byte, first, last int) error {
				op := fmt.Sprintf("add documents %d-%d to %s", first, last, uid)
				info, err := e.client.Index(uid).AddDocumentsWithContext(ctx, body, &meilisearch.DocumentOptions{PrimaryKey: &pk})
				if err != nil {
					return e.fail(op, err)
				}
				pending = append(pending, enqueued{op, info})
				return awaitPending()
			})
		if err != nil && !tooLarge(err) {
			return err
		}
		oversized = append(oversized, err)
		if err := awaitPending(); err != nil {
			return err
		}
	}
	return errors.Join(oversized...)
}

// present returns the IDs of ids that index uid holds documents of: one
// search per BatchSize IDs, one hit per event (distinct id: a series has
// many documents).
func (e *Engine) present(ctx context.Context, uid string, ids []int64) ([]int64, error) {
	var found []int64
	for start := 0; start < len(ids); start += e.opts.BatchSize {
		part := ids[start:min(start+e.opts.BatchSize, len(ids))]
		req := &meilisearch.SearchRequest{Filter: in(attrID, part), AttributesToRetrieve: []string{attrID},
			Distinct: attrID, Page: 1, HitsPerPage: ptr(int64(len(part)))}
		resp, err := e.client.Index(uid).SearchWithContext(ctx, "", req)
		if err != nil {
			return nil, e.fail("find events in "+uid, err)
		}
		for _, h := range resp.Hits {
			id, err := hitID(h)
			if err != nil {
				return nil, fmt.Errorf("meili: find events in %s: %w", uid, err)
			}
			found = append(found, id)
		}
	}
	return found, nil
}

// eventIndexesOf returns the indexes that may hold events of the
// statuses (every status when the list is empty).
func eventIndexesOf(statuses []string) []Index {
	public, hidden := len(statuses) == 0, len(statuses) == 0
	for _, s := range statuses {
		if s == publicStatus {
			public = true
		} else {
			hidden = true
		}
	}
	var out []Index
	if public {
		out = append(out, EventIndex)
	}
	if hidden {
		out = append(out, EventHiddenIndex)
	}
	return out
}

// searchEvents runs an event query on the indexes its statuses need.
func (e *Engine) searchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	ixs := eventIndexesOf(q.Statuses)
	if len(ixs) == 1 {
		return e.run(ctx, planEvents(q, e.vocabulary(), e.IndexUID(ixs[0])))
	}
	return e.searchBoth(ctx, planEvents(q, e.vocabulary(), e.IndexUID(EventIndex)), e.IndexUID(EventHiddenIndex))
}

// searchBoth runs the plan p (made for the published index) on it and on
// the hidden index as one federated multi-search.
func (e *Engine) searchBoth(ctx context.Context, p plan, hidden string) (search.Result, error) {
	if p.req == nil {
		return search.Result{}, nil
	}
	if p.collapse {
		return e.searchBothCollapsed(ctx, p, hidden)
	}
	filters, found, err := e.bothFilters(ctx, p, hidden)
	if err != nil || !found {
		return search.Result{}, err
	}
	fed := &meilisearch.MultiSearchFederation{Offset: int64(p.offset), Limit: int64(max(p.limit, 1))}
	if len(p.req.Facets) > 0 {
		fed.FacetsByIndex = map[string][]string{p.index: p.req.Facets, hidden: p.req.Facets}
		fed.MergeFacets = &meilisearch.MultiSearchFederationMergeFacets{MaxValuesPerFacet: maxTotalHits}
	}
	var queries []*meilisearch.SearchRequest
	for _, uid := range []string{p.index, hidden} {
		q := &meilisearch.SearchRequest{
			IndexUID:             uid,
			Query:                p.req.Query,
			Sort:                 p.req.Sort,
			AttributesToSearchOn: p.req.AttributesToSearchOn,
			MatchingStrategy:     p.req.MatchingStrategy,
			AttributesToRetrieve: []string{attrID, attrOccurrence},
		}
		if f := filters[uid]; f != "" {
			q.Filter = f
		}
		queries = append(queries, q)
	}
	resp, err := e.client.MultiSearchWithContext(ctx, &meilisearch.MultiSearchRequest{Federation: fed, Queries: queries})
	if err != nil {
		return search.Result{}, e.fail("search "+p.index+" and "+hidden, err)
	}
	hits := resp.Hits[:min(p.limit, len(resp.Hits))]
	res := search.Result{Total: int(resp.EstimatedTotalHits), IDs: make([]int64, 0, len(hits))}
	if err := readHits(&res, hits); err != nil {
		return search.Result{}, fmt.Errorf("meili: search %s and %s: %w", p.index, hidden, err)
	}
	if len(p.facets) > 0 {
		raw, err := json.Marshal(resp.FacetDistribution)
		if err != nil {
			return search.Result{}, err
		}
		if res.Facets, err = facetCounts(raw, p.facets); err != nil {
			return search.Result{}, fmt.Errorf("meili: search %s and %s: %w", p.index, hidden, err)
		}
	}
	return res, nil
}

// bothFilters returns the filter of plan p (made for the published index)
// in each of the two event indexes, with its Near circle decided in each
// (Engine.nearFilter); found is false when no document of either index is
// inside the circle.
func (e *Engine) bothFilters(ctx context.Context, p plan, hidden string) (filters map[string]string, found bool, err error) {
	filters = map[string]string{}
	if f, ok := p.req.Filter.(string); ok {
		filters[p.index], filters[hidden] = f, f
	} else {
		filters[p.index], filters[hidden] = "", ""
	}
	if p.near == nil {
		return filters, true, nil
	}
	for _, uid := range []string{p.index, hidden} {
		q := p
		q.index = uid
		geo, ok, err := e.nearFilter(ctx, q)
		if err != nil {
			return nil, false, err
		}
		// An index with nothing inside still takes part: with an
		// impossible condition (no ID is negative).
		if !ok {
			geo = eq(attrID, int64(-1))
		}
		found = found || ok
		filters[uid] = and(p.filter, geo)
	}
	return filters, found, nil
}
