package meili

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// Events are kept in two indexes (attribute scheme 5): <prefix>events
// holds the published ones (status publish, all an anonymous caller may
// see), and <prefix>events_hidden, the editor index, holds EVERY event,
// published included, whatever its status (the name is that of scheme 3
// and 4, where it held the other statuses only; it is kept so that a
// rebuild swaps like for like).
//
// Why a published index of its own: Meilisearch derives a query word's
// typo and prefix matches from the word list of the whole index, whatever
// the filter (crates/milli/src/search/new/query_term/
// compute_derivations.rs at v1.18.0), and caps them (1,000 prefix words,
// 150 one-typo and 50 two-typo words: limits.rs). With one index, the
// words of drafts and private events would lengthen every anonymous
// search's walk of that list and could use up the caps, leaving out
// published matches. With the split, an anonymous search (statuses
// [publish]) reads the published index only: its cost and its matches do
// not depend on hidden text.
//
// Why the editor index holds every event (schemes 3 and 4 split the
// statuses between the two indexes and answered an editor with one
// federated multi-search over both): an editor's search now reads ONE
// index, like an anonymous one. So
//
//   - a status change is a replacement by key inside the editor index: an
//     event never sits in two indexes an editor list merges, so it cannot
//     be listed twice or missing there while it moves;
//   - an editor's deep page costs what an anonymous one costs (a
//     federated search builds full hits for offset+limit documents in
//     EACH index before skipping: crates/meilisearch/src/search/federated/
//     perform.rs), and a collapsed editor list is one search with distinct
//     id (no fetch of every hidden hit to merge in Go);
//   - totals are the index's own exact totalHits, not a federated
//     estimatedTotalHits.
//
// The price is that published text is indexed twice; anonymous searches
// cost what they did.
//
// Write order (indexEvents). Each write takes a new write generation G
// (a number unique to that write, attrGen in every document it adds). In
// each of the two indexes, the new documents of the batch's events (for
// the published index, those of status publish) are ADDED first, then the
// documents of those events written by any other write are deleted by
// filter: "id IN [...] AND gen != G". The primary key is the occurrence
// key, so an addition replaces a document of the same key in place:
// between the two tasks a listed event is never missing (its new
// documents are there) and never doubled (one document per key); only an
// occurrence a series edit removed, or an event that left the published
// index, lingers until the deletion, which is the very next task of that
// index. Tasks of one index run in the order they were enqueued
// (crates/index-scheduler), whatever the version's autobatching (v1.18.0
// never batches a deletion by filter with additions; later versions may
// batch a deletion with the additions that follow it, never the reverse),
// so the deletion always follows the additions. The deletion is sent for
// every event of the batch in both indexes, whether or not a search can
// see it yet: an addition of an earlier attempt still queued when a task
// timed out runs before the retry's tasks, and the retry's deletion then
// removes what it left (its generation is not G).
//
// During a migration (Outdated: the live indexes were written under an
// older scheme, until the rebuild's swap) the live indexes are written in
// their own layout, never in the new one: scheme 4 (same primary key,
// statuses split) gets the same add-then-delete-by-generation writes with
// published documents in the published index and the others in the
// hidden one (every addition before any deletion, so that an event moving
// between them is never in neither), and searches there are answered the
// scheme-4 way (searchBoth). Indexes of scheme 3 or older have the
// primary key id (one document per event), where an addition under the
// key "key" would fail (index_primary_key_already_exists): they get the
// same writes in the same layout, with the event's first document only,
// under their primary key id. The rebuild receives every write too (the
// sync worker's dual write) and brings every occurrence at its swap. No
// edited event is hidden and no sync batch fails because of the
// migration.

// publicStatus is the one status of the published index.
const publicStatus = "publish"

// attrGen is the write generation of an event document (indexEvents).
const attrGen = "gen"

// eventLayout writes and searches the events in the layout of their two
// indexes (described at the top of this file).
type eventLayout struct{ *core }

// nextGen returns a write generation no earlier write of this engine
// used: the current time in microseconds (below 2^53, exact in
// Meilisearch's float filters), or one more than the last one. Only
// uniqueness matters (the deletion filter is gen != G); the clock keeps
// generations of different processes apart.
func (e *eventLayout) nextGen() int64 {
	for {
		last := e.gen.Load()
		g := max(last+1, time.Now().UnixMicro())
		if e.gen.CompareAndSwap(last, g) {
			return g
		}
	}
}

// layout returns the attribute scheme whose layout the live indexes have:
// attributeScheme, or the older scheme recorded for them while a
// migration is pending.
func (e *eventLayout) layout() int64 {
	if s := e.liveScheme.Load(); e.outdated.Load() && s < attributeScheme {
		return s
	}
	return attributeScheme
}

// legacyLayout reports whether the live event indexes are still in a
// layout of scheme 4 or older (a migration is pending): published and
// other events in disjoint indexes.
func (e *eventLayout) legacyLayout() bool {
	return e.layout() < 5
}

// textPerLanguage reports whether the live event indexes hold the text of
// every language in its own attributes (scheme 5 or older; documents.go).
func (e *eventLayout) textPerLanguage() bool {
	return e.layout() < 6
}

// indexEvents writes the documents of events, replacing every document of
// those events in both indexes (see the write order above).
func (e *eventLayout) indexEvents(ctx context.Context, docs []search.EventDocument) error {
	var ids []int64
	seen := map[int64]bool{}
	// oversized: documents over the request budget, left out
	// (cutDocuments) and reported once the others are indexed.
	var oversized []error
	for _, d := range docs {
		if !seen[d.ID] {
			seen[d.ID] = true
			ids = append(ids, d.ID)
		}
	}
	// Indexes of scheme 3 or older: one document per event, primary key id.
	pk, onePerEvent := attrKey, e.legacyLayout() && e.liveScheme.Load() < 4
	if onePerEvent {
		pk = attrID
	}
	gen := e.nextGen()
	parts := map[Index][]map[string]any{}
	written := map[int64]bool{}
	// The text attributes are decided per event (documents.go).
	perLanguage := e.textPerLanguage()
	base := e.baseLanguage()
	langs := map[int64][]string{}
	if !perLanguage {
		byEvent := map[int64][]search.EventDocument{}
		for _, d := range docs {
			byEvent[d.ID] = append(byEvent[d.ID], d)
		}
		for id, of := range byEvent {
			langs[id] = eventLanguages(of, base)
		}
	}
	for _, d := range docs {
		if onePerEvent {
			if written[d.ID] {
				continue
			}
			written[d.ID] = true
		}
		doc := eventDocument(d)
		if perLanguage {
			putText(doc, d.Text)
		} else {
			putEventText(doc, d.Text, base, langs[d.ID])
		}
		doc[attrGen] = gen
		if d.Status == publicStatus {
			parts[EventIndex] = append(parts[EventIndex], doc)
		}
		if d.Status != publicStatus || !e.legacyLayout() {
			parts[EventHiddenIndex] = append(parts[EventHiddenIndex], doc)
		}
	}
	// Every addition before any deletion: in the current layout only the
	// order inside each index matters; in the scheme-4 layout of a pending
	// migration an event moving between the indexes is then briefly in
	// both (an editor's federated list may show it twice), never in
	// neither.
	order := []Index{EventHiddenIndex, EventIndex}
	// Between two addition requests of a write that needs several per
	// index (never before the first, never while one is unfinished; a
	// write of one request per index never yields), the caller's yield function
	// may run other writes (search.Yield): a small edit made while a large
	// series is sent waits for at most the request in flight, not for the
	// rest of the series. The other writes concern other events (the sync
	// worker keeps the marks of this write's events out of them), so this
	// write's order, every addition then the deletion by generation, is
	// unchanged; if the process dies mid-way, the mark is still set and
	// the retry's deletion removes what this write added (its generation
	// is not the retry's).
	// A write whose documents fit one request per index never yields.
	large := false
	for i, ix := range order {
		requests := 0
		before := func() error {
			requests++
			large = large || requests > 1
			if !large || i == 0 && requests == 1 {
				return nil
			}
			return search.Yield(ctx)
		}
		err := e.sendEventDocuments(ctx, e.IndexUID(ix), pk, parts[ix], before)
		if err != nil && !tooLarge(err) {
			return err
		}
		if err != nil {
			oversized = append(oversized, err)
		}
	}
	// An event with a document over the request budget keeps what the
	// indexes hold of it (its stale documents are not deleted): the write
	// is reported (DocumentTooLargeError) and retried by the sync worker.
	if skip := oversizedIDs(oversized, parts); len(skip) > 0 {
		ids = slices.DeleteFunc(ids, func(id int64) bool { return skip[id] })
	}
	for _, ix := range order {
		if err := e.deleteStale(ctx, e.IndexUID(ix), ids, gen); err != nil {
			return err
		}
	}
	return errors.Join(oversized...)
}

// oversizedIDs returns the event IDs of the documents of parts that errs
// (DocumentTooLargeError, possibly joined) name by key.
func oversizedIDs(errs []error, parts map[Index][]map[string]any) map[int64]bool {
	keys := map[string]bool{}
	var walk func(err error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var one *DocumentTooLargeError
		if errors.As(err, &one) {
			keys[one.Key] = true
		}
	}
	for _, err := range errs {
		walk(err)
	}
	if len(keys) == 0 {
		return nil
	}
	out := map[int64]bool{}
	for _, docs := range parts {
		for _, d := range docs {
			if id, ok := d[attrID].(int64); ok && keys[fmt.Sprint(d[attrKey])] {
				out[id] = true
			}
		}
	}
	return out
}

// refreshScheme reads the scheme recorded for the live indexes, for an
// engine that found them outdated: once another process's rebuild has
// swapped in indexes of the current scheme (and recorded it), this engine
// reads and writes them in the current layout. A failed read changes
// nothing (the next search tries again). It costs one document read per
// search, and only while a migration is pending.
func (e *eventLayout) refreshScheme(ctx context.Context) {
	if scheme, err := e.recordedScheme(ctx); err == nil && scheme >= attributeScheme {
		e.current()
	}
}

// sendEventDocuments adds event documents to index uid (primary key pk),
// in requests of at most BatchSize documents and MaxRequestBytes bytes
// (payload.go), each awaited before the next is sent, so that one request
// body is held at a time. It is the one place event documents are sent; a
// document over the budget is left out and reported
// (DocumentTooLargeError) after the others are sent.
//
// before is called ahead of every request (see indexEvents).
func (e *eventLayout) sendEventDocuments(ctx context.Context, uid, pk string, docs []map[string]any, before func() error) error {
	return e.addDocumentsBetween(ctx, uid, pk, len(docs), func(i int) map[string]any { return docs[i] }, before)
}

// deleteStale deletes the documents of the events ids in index uid that
// a write other than the one of generation gen added. The IDs go in
// filters of at most maxFilterValues (filter.go), all queued before any
// is awaited (Meilisearch then runs them as one batch).
func (e *eventLayout) deleteStale(ctx context.Context, uid string, ids []int64, gen int64) error {
	op := "delete the replaced documents from " + uid
	var tasks []*meilisearch.TaskInfo
	for _, part := range filterChunks(ids, e.opts.BatchSize) {
		task, err := e.client.Index(uid).DeleteDocumentsByFilterWithContext(ctx, and(in(attrID, part), ne(attrGen, gen)), nil)
		if err != nil {
			return e.fail(op, err)
		}
		tasks = append(tasks, task)
	}
	for _, task := range tasks {
		if err := e.await(ctx, op, task, nil); err != nil {
			return err
		}
	}
	return nil
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

// searchEvents runs an event query: on the published index when its
// statuses are [publish] only, else on the editor index, which holds
// every event. While the live indexes are of an older layout (a pending
// migration), a query whose statuses span both is the federated search
// of that layout (searchBoth).
func (e *eventLayout) searchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	ixs := eventIndexesOf(q.Statuses)
	if e.legacyLayout() {
		e.refreshScheme(ctx)
	}
	if !e.legacyLayout() {
		ix := EventHiddenIndex
		if len(ixs) == 1 && ixs[0] == EventIndex {
			ix = EventIndex
		}
		p := planEvents(q, e.vocabulary(), e.IndexUID(ix))
		if p.req != nil && p.req.Query != "" && !e.textPerLanguage() {
			if q.Lang == e.baseLanguage() {
				p.req.AttributesToSearchOn = baseAttrs
			} else {
				p.pairLang = q.Lang
			}
		}
		return e.run(ctx, p)
	}
	if len(ixs) == 1 {
		return e.run(ctx, planEvents(q, e.vocabulary(), e.IndexUID(ixs[0])))
	}
	return e.searchBoth(ctx, planEvents(q, e.vocabulary(), e.IndexUID(EventIndex)), e.IndexUID(EventHiddenIndex))
}

// searchBoth runs the plan p (made for the published index) on it and on
// the hidden index as one federated multi-search: the editor search of
// the scheme-4 layout (statuses split between the two indexes), used only
// until a pending migration's swap. It merges the two hit lists by their
// sort values, cuts the page with the federation's offset and limit, sums
// the two exact totals (the indexes hold distinct events there:
// crates/meilisearch/src/search/federated/perform.rs:407-421) and merges
// the facet counts.
func (e *queryRunner) searchBoth(ctx context.Context, p plan, hidden string) (search.Result, error) {
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
func (e *queryRunner) bothFilters(ctx context.Context, p plan, hidden string) (filters map[string]string, found bool, err error) {
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
