package meilisim

// Federated multi-search.

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MultiSearch answers a federated POST /multi-search over one index as
// Meilisearch does (crates/meilisearch/src/search/federated/perform.rs at
// v1.18.0): every query's matches, merged in the order of their sort
// values, each document once; the federation's offset and limit (defaults
// 0 and 20) cut the page; estimatedTotalHits is the size of the union of
// the queries' matches. Pagination inside a federated query is refused.
// Non-federated multi-search is not emulated.
func (f *Server) MultiSearch(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	fed, ok := body["federation"].(map[string]any)
	if !ok {
		f.Reply(w, 400, NewAPIError("bad_request", "the fake only emulates federated multi-search"))
		return
	}
	queries, _ := body["queries"].([]any)
	var merged []map[string]any
	seen := map[string]bool{}
	dist := map[string]map[string]int{}
	var sortBy []any
	var retrieve any
	for i, raw := range queries {
		q, _ := raw.(map[string]any)
		if _, ok := q["distinct"]; ok {
			// Meilisearch accepts it, but a federated query's count is not
			// exhaustive, so its candidates are not deduplicated: the
			// engine never relies on it, and the fake does not emulate it.
			f.Reply(w, 400, NewAPIError("bad_request", "the fake does not emulate distinct in a federated search"))
			return
		}
		for _, k := range []string{"page", "hitsPerPage", "limit", "offset", "facets"} {
			if _, ok := q[k]; ok {
				f.Reply(w, 400, NewAPIError("invalid_multi_search_query_pagination", fmt.Sprintf("Inside `.queries[%d]`: `%s` is not allowed in a federated search", i, k)))
				return
			}
		}
		uid, _ := q["indexUid"].(string)
		if f.Index(uid) == nil {
			// crates/meilisearch/src/search/federated/perform.rs
			// (SearchByIndex::execute): a missing index is index_not_found
			// with status 400, not 404 (the index is not in the URL), its
			// message prefixed with the query's place.
			e := indexNotFound(uid)
			e.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, e.Message)
			f.Reply(w, 400, e)
			return
		}
		var found []map[string]any
		switch {
		case f.Hits != nil:
			found = f.Hits(uid, q)
		case f.Emulate:
			f.Mu.Lock()
			var err *APIError
			found, err = f.EmulateSearch(f.Indexes[uid], q)
			f.Mu.Unlock()
			if err != nil {
				err.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", i, err.Message)
				f.Reply(w, 400, err)
				return
			}
		}
		sortBy, _ = q["sort"].([]any)
		retrieve = q["attributesToRetrieve"]
		f.Mu.Lock()
		keyOf := f.Indexes[uid].KeyOf
		f.Mu.Unlock()
		for _, d := range found {
			if id := uid + "/" + keyOf(d); !seen[id] {
				seen[id] = true
				merged = append(merged, d)
			}
		}
		if byIndex, _ := fed["facetsByIndex"].(map[string]any); byIndex[uid] != nil {
			f.Mu.Lock()
			d, err := emulateFacets(f.Indexes[uid], map[string]any{"facets": byIndex[uid]}, found)
			f.Mu.Unlock()
			if err != nil {
				f.Reply(w, 400, err)
				return
			}
			for a, counts := range d {
				if dist[a] == nil {
					dist[a] = map[string]int{}
				}
				for v, n := range counts {
					dist[a][v] += n
				}
			}
		}
	}
	slices.SortStableFunc(merged, func(a, b map[string]any) int {
		for _, s := range sortBy {
			attr, dir, _ := strings.Cut(fmt.Sprint(s), ":")
			x, y := a[attr], b[attr]
			if attr == "id" {
				x, _ = strconv.ParseFloat(fmt.Sprint(a["id"]), 64)
				y, _ = strconv.ParseFloat(fmt.Sprint(b["id"]), 64)
			}
			if c := compareSortValues(x, y, dir == "desc"); c != 0 {
				return c
			}
		}
		return 0
	})
	num := func(key string, def int) int {
		if v, ok := fed[key].(float64); ok {
			return int(v)
		}
		return def
	}
	offset, limit := num("offset", 0), num("limit", 20)
	hits := []map[string]any{}
	for i := offset; i < len(merged) && i < offset+limit; i++ {
		hits = append(hits, project(merged[i], retrieve))
	}
	f.Mu.Lock()
	f.Served += len(hits)
	f.Mu.Unlock()
	answer := map[string]any{"hits": hits, "processingTimeMs": 1, "limit": limit, "offset": offset, "estimatedTotalHits": len(merged)}
	if _, ok := fed["facetsByIndex"]; ok {
		if _, merge := fed["mergeFacets"]; !merge {
			f.Reply(w, 400, NewAPIError("bad_request", "the fake only emulates facetsByIndex with mergeFacets"))
			return
		}
		answer["facetDistribution"] = dist
	}
	f.Reply(w, 200, answer)
}
