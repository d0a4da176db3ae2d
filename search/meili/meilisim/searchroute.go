package meilisim

// The search route over one index.

import (
	"cmp"
	"net/http"
	"slices"
)

// searchRoutes answers the search and multi-search routes and emulates
// Meilisearch's ranking.
type searchRoutes struct{ *Server }

// Search answers POST /indexes/{uid}/search as perform_search and
// prepare_search do (crates/meilisearch/src/search/mod.rs at v1.18.0):
//
//   - the hits are the matches after distinct (bucket_sort in
//     crates/milli/src/search/new/bucket_sort.rs), and no hit past the
//     index's pagination.maxTotalHits is ever returned: offset becomes
//     min(offset, maxTotalHits) and limit min(limit, maxTotalHits -
//     offset), in both pagination modes;
//   - the total (totalHits with page/hitsPerPage, else
//     estimatedTotalHits) is min(candidates, maxTotalHits), where the
//     candidates are counted AFTER distinct (execute_search applies
//     apply_distinct_rule when the count is exhaustive): the cap comes
//     after distinct, never before;
//   - facets are counted over the same candidates (emulateDistinct), at
//     most faceting.maxValuesPerFacet values per facet (limitFacets);
//   - _rankingScore is added to each hit when showRankingScore is true
//     (the simulator's score: rankedSearch).
//
// Every hit built counts in HitsBuilt.
func (f *searchRoutes) Search(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	body, _ := bodyOf(r).(map[string]any)
	var all []map[string]any
	var scores map[string]float64
	switch {
	case f.Hits != nil:
		all = f.Hits(uid, body)
	case f.Emulate:
		f.Mu.Lock()
		found, sc, err := f.rankedSearch(f.Indexes[uid], body)
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		all, scores = found, sc
	}
	forFacets := all
	f.Mu.Lock()
	ix = f.Indexes[uid]
	capHits := maxTotalHits(ix)
	keyOf := ix.KeyOf
	if f.Emulate {
		var err *APIError
		all, forFacets, err = emulateDistinct(ix, body, all)
		if err != nil {
			f.Mu.Unlock()
			f.Reply(w, 400, err)
			return
		}
	}
	f.Mu.Unlock()
	num := func(key string, def int) int {
		if v, ok := body[key].(float64); ok {
			return int(v)
		}
		return def
	}
	q, _ := body["q"].(string)
	answer := map[string]any{"query": q, "processingTimeMs": 1}
	total := min(len(all), capHits)
	var offset, limit int
	if _, hasPage := body["page"]; hasPage || body["hitsPerPage"] != nil {
		perPage, page := num("hitsPerPage", 20), num("page", 1)
		offset, limit = perPage*(page-1), perPage
		if page == 0 {
			offset, limit = 0, 0
		}
		totalPages := 0
		if perPage > 0 {
			totalPages = (total + perPage - 1) / perPage
		}
		answer["hitsPerPage"], answer["page"], answer["totalPages"], answer["totalHits"] = perPage, page, totalPages, total
	} else {
		offset, limit = num("offset", 0), num("limit", 20)
		answer["offset"], answer["limit"], answer["estimatedTotalHits"] = offset, limit, total
	}
	// prepare_search: no hit beyond maxTotalHits.
	offset = min(offset, capHits)
	limit = min(limit, capHits-offset)
	hits := []map[string]any{}
	for i := offset; i < len(all) && i < offset+limit; i++ {
		hit := project(all[i], body["attributesToRetrieve"])
		if body["showRankingScore"] == true {
			hit = withField(hit, "_rankingScore", scoreOf(scores, keyOf(all[i])))
		}
		hits = append(hits, hit)
	}
	answer["hits"] = hits
	f.Mu.Lock()
	f.Served += len(hits)
	f.built += len(hits)
	f.Mu.Unlock()
	if f.Emulate {
		f.Mu.Lock()
		dist, err := emulateFacets(ix, body, forFacets)
		if err == nil {
			dist = limitFacets(ix, dist, -1)
		}
		f.Mu.Unlock()
		if err != nil {
			f.Reply(w, 400, err)
			return
		}
		if dist != nil {
			answer["facetDistribution"] = dist
		}
	}
	f.Reply(w, 200, answer)
}

// scoreOf is a document's ranking score (1 when the test's Hits gave the
// documents).
func scoreOf(scores map[string]float64, key string) float64 {
	if s, ok := scores[key]; ok {
		return s
	}
	return 1
}

// withField returns a copy of hit with one more field.
func withField(hit map[string]any, name string, v any) map[string]any {
	out := make(map[string]any, len(hit)+1)
	for k, x := range hit {
		out[k] = x
	}
	out[name] = v
	return out
}

// facetOrder is how the values of a facet are ordered before
// maxValuesPerFacet cuts them: faceting.sortFacetValuesBy, the facet's own
// entry or "*" ("alpha" by default), as
// crates/meilisearch/src/search/mod.rs (compute_facet_distribution_stats)
// reads it.
func facetOrder(ix *Index, attr string) string {
	by, _ := ix.Settings["faceting"].(map[string]any)["sortFacetValuesBy"].(map[string]any)
	if o, ok := by[attr].(string); ok {
		return o
	}
	if o, ok := by["*"].(string); ok {
		return o
	}
	return "alpha"
}

// limitFacets keeps, of each facet's values, the first n in the facet's
// order (facetOrder): crates/milli/src/search/facet/facet_distribution.rs
// stops at max_values_per_facet. A negative n is the index's
// faceting.maxValuesPerFacet (default 100). The caller holds f.Mu.
func limitFacets(ix *Index, dist map[string]map[string]int, n int) map[string]map[string]int {
	if n < 0 {
		n = 100
		switch v := ix.Settings["faceting"].(map[string]any)["maxValuesPerFacet"].(type) {
		case float64:
			n = int(v)
		case int:
			n = v
		}
	}
	for attr, counts := range dist {
		dist[attr] = firstFacetValues(counts, facetOrder(ix, attr), n)
	}
	return dist
}

// firstFacetValues keeps the first n values of counts in order ("alpha":
// lexicographic; "count": largest count first, then lexicographic).
func firstFacetValues(counts map[string]int, order string, n int) map[string]int {
	if len(counts) <= n {
		return counts
	}
	values := make([]string, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	slices.SortFunc(values, func(a, b string) int {
		if order == "count" {
			if c := cmp.Compare(counts[b], counts[a]); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	})
	out := make(map[string]int, n)
	for _, v := range values[:n] {
		out[v] = counts[v]
	}
	return out
}

// project keeps the attributes a search asked for.
func project(doc map[string]any, attrs any) map[string]any {
	list, ok := attrs.([]any)
	if !ok {
		return doc
	}
	out := map[string]any{}
	for _, a := range list {
		if v, ok := doc[a.(string)]; ok {
			out[a.(string)] = v
		}
	}
	return out
}

// HitsBuilt is how many hits the server has built (formatted documents,
// HitMaker::make_hit in crates/meilisearch/src/search/mod.rs) since it
// started or the last ResetHitsBuilt: a search's page, and for a
// federated multi-search up to offset+limit hits per index before the
// federation's offset is skipped. It measures a request's cost without
// timing it.
func (f *searchRoutes) HitsBuilt() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.built
}

// ResetHitsBuilt sets the HitsBuilt counter back to zero.
func (f *searchRoutes) ResetHitsBuilt() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.built = 0
}
