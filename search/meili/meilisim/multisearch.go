package meilisim

// Federated multi-search, as crates/meilisearch/src/search/federated/
// perform.rs does it (v1.18.0; unchanged in what is modelled at v1.50.0).

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// fedHit is one hit of a federated search before it is rendered.
type fedHit struct {
	doc        map[string]any
	index      string
	query      int
	weighted   float64 // the ranking score times the query's weight
	score      float64
	sort       []any // the values of the query's sort attributes
	sortDesc   []bool
	sortFirst  bool // the sort rule comes before the text rules
	showScore  bool
	attributes any
}

// compareFedHits orders two hits as weighted_scores::compare
// (crates/meilisearch/src/search/federated/weighted_scores.rs) does, for
// the ranking rules the simulator emulates: when both hits carry sort
// values and the sort rule comes first (a placeholder search, or
// rankingRules starting with "sort"), their sort values decide first,
// then the weighted ranking score (higher first); otherwise the weighted
// score decides, then the sort values. Ties go to the lower query index
// (merge_index_local_results and merge_index_global_results: "break ties
// using query index").
func compareFedHits(a, b *fedHit) int {
	bySort := func() int {
		if len(a.sort) == 0 || len(b.sort) == 0 {
			return 0
		}
		for i := range min(len(a.sort), len(b.sort)) {
			if a.sortDesc[i] != b.sortDesc[i] {
				// Opposite directions are not comparable: the weighted
				// global score decides (weighted_scores.rs).
				return 0
			}
			if c := compareSortValues(a.sort[i], b.sort[i], a.sortDesc[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	byScore := func() int { return cmp.Compare(b.weighted, a.weighted) }
	byQuery := func() int { return cmp.Compare(a.query, b.query) }
	if a.sortFirst && b.sortFirst {
		return cmp.Or(bySort(), byScore(), byQuery())
	}
	return cmp.Or(byScore(), bySort(), byQuery())
}

// MultiSearch answers a federated POST /multi-search as
// crates/meilisearch/src/search/federated/perform.rs does:
//
//   - a query naming a missing index is index_not_found with status 400,
//     not 404 (SearchByIndex::execute patches the status: the index is
//     not in the URL), its message prefixed with the query's place;
//     pagination or facets inside a federated query are refused
//     (PaginationInFederatedQuery, FacetsInFederatedQuery in
//     crates/meilisearch/src/error.rs);
//   - each index is searched by each of its queries with offset 0 and
//     limit offset+limit (required_hit_count), the queries' lists merged
//     (merge_index_local_results), each document once, and offset+limit
//     hits BUILT per index before the federation skips offset: the cost
//     grows with the offset (counted in HitsBuilt). From v1.34.0
//     (perform.rs: usize::min(params.required_hit_count, max_total_hits),
//     still so at v1.50.0) an index builds at most its maxTotalHits hits,
//     so a page past them is empty; v1.18.0 has no such cap;
//   - the indexes' lists are merged (merge_index_global_results) by
//     _rankingScore times the query's federationOptions.weight when there
//     is no sort, by sort values otherwise (compareFedHits), then offset
//     and limit cut the page;
//   - estimatedTotalHits is the sum over the indexes of the size of the
//     union of the index's queries' candidates (merge_metadata): exact, and
//     capped neither by maxTotalHits nor, as a federated query is never an
//     exhaustive count, reduced by distinct;
//   - facetsByIndex counts each index's facets over those candidates, at
//     most the index's maxValuesPerFacet values; with mergeFacets they are
//     summed and cut to mergeFacets.maxValuesPerFacet
//     (federated/types.rs, FederatedFacets::merge), and indexes that order
//     a facet's values differently are refused
//     (invalid_multi_search_facet_order, check_facet_order); without it
//     the answer has facetsByIndex.
//
// Distinct inside a federated query, the federation's page, hitsPerPage
// and distinct (v1.50.0) and non-federated multi-search are not emulated
// (refused with 400 bad_request).
func (f *searchRoutes) MultiSearch(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	fed, ok := body["federation"].(map[string]any)
	if !ok {
		f.Reply(w, 400, NewAPIError("bad_request", "the simulator only emulates federated multi-search"))
		return
	}
	num := func(key string, def int) int {
		if v, ok := fed[key].(float64); ok {
			return int(v)
		}
		return def
	}
	for _, k := range []string{"page", "hitsPerPage", "distinct"} {
		if _, ok := fed[k]; ok {
			f.Reply(w, 400, NewAPIError("bad_request", "the simulator does not emulate federation."+k))
			return
		}
	}
	offset, limit := num("offset", 0), num("limit", 20)
	queries, _ := body["queries"].([]any)
	bad := func(status int, e *APIError, query int) {
		e.Message = fmt.Sprintf("Inside `.queries[%d]`: %s", query, e.Message)
		f.Reply(w, status, e)
	}

	// Queries grouped by index, in the order of their first query.
	var order []string
	byIndex := map[string][]int{}
	for i, raw := range queries {
		q, _ := raw.(map[string]any)
		for _, k := range []string{"page", "hitsPerPage", "limit", "offset"} {
			if _, ok := q[k]; ok {
				e := NewAPIError("invalid_multi_search_query_pagination", fmt.Sprintf("Using pagination options is not allowed in federated queries.\n - Hint: remove `%s` from query #%d or remove `federation` from the request\n - Hint: pass `federation.limit` and `federation.offset` for pagination in federated search", k, i))
				bad(400, &e, i)
				return
			}
		}
		if _, ok := q["facets"]; ok {
			e := NewAPIError("invalid_multi_search_query_facets", fmt.Sprintf("Using facet options is not allowed in federated queries.\n - Hint: remove `facets` from query #%d or remove `federation` from the request", i))
			bad(400, &e, i)
			return
		}
		if _, ok := q["distinct"]; ok {
			e := NewAPIError("bad_request", "the simulator does not emulate distinct in a federated search")
			bad(400, &e, i)
			return
		}
		uid, _ := q["indexUid"].(string)
		if byIndex[uid] == nil {
			order = append(order, uid)
		}
		byIndex[uid] = append(byIndex[uid], i)
	}

	f.Mu.Lock()
	defer f.Mu.Unlock()
	facetsByIndex, _ := fed["facetsByIndex"].(map[string]any)
	mergeFacets, merge := fed["mergeFacets"].(map[string]any)
	for uid := range facetsByIndex {
		if f.Indexes[uid] == nil {
			// check_unused_facets: also 400.
			e := indexNotFound(uid)
			e.Message = fmt.Sprintf("Inside `.federation.facetsByIndex.%s`: %s", uid, e.Message)
			f.replyLocked(w, 400, e)
			return
		}
	}
	var lists [][]*fedHit
	total := 0
	dist := map[string]map[string]int{}
	distByIndex := map[string]any{}
	facetOrderOf := map[string][2]string{} // facet -> index, order
	for _, uid := range order {
		ix := f.Indexes[uid]
		if ix == nil {
			bad(400, indexNotFound(uid), byIndex[uid][0])
			return
		}
		required := offset + limit
		if f.federatedCap {
			required = min(required, maxTotalHits(ix))
		}
		rules, _ := ix.Settings["rankingRules"].([]any)
		sortFirst := len(rules) > 0 && rules[0] == "sort"
		var perQuery [][]*fedHit
		candidates := map[string]map[string]any{}
		var candidateOrder []string
		for _, i := range byIndex[uid] {
			q := queries[i].(map[string]any)
			var found []map[string]any
			var scores map[string]float64
			switch {
			case f.Hits != nil:
				f.Mu.Unlock()
				found = f.Hits(uid, q)
				f.Mu.Lock()
			case f.Emulate:
				var err *APIError
				found, scores, err = f.rankedSearch(ix, q)
				if err != nil {
					bad(400, err, i)
					return
				}
			}
			weight := 1.0
			if opts, ok := q["federationOptions"].(map[string]any); ok {
				if v, ok := opts["weight"].(float64); ok {
					weight = v
				}
			}
			var sortAttrs []string
			var desc []bool
			sortBy, _ := q["sort"].([]any)
			for _, s := range sortBy {
				attr, dir, _ := strings.Cut(fmt.Sprint(s), ":")
				sortAttrs, desc = append(sortAttrs, attr), append(desc, dir == "desc")
			}
			qText, _ := q["q"].(string)
			var list []*fedHit
			for _, d := range found {
				key := ix.KeyOf(d)
				if candidates[key] == nil {
					candidateOrder = append(candidateOrder, key)
				}
				candidates[key] = d
				if len(list) == required {
					continue // search.limit(required_hit_count)
				}
				h := &fedHit{doc: d, index: uid, query: i, score: scoreOf(scores, key), sortDesc: desc,
					sortFirst: sortFirst || qText == "", showScore: q["showRankingScore"] == true, attributes: q["attributesToRetrieve"]}
				h.weighted = h.score * weight
				for _, a := range sortAttrs {
					v := d[a]
					if a == "id" {
						// The service's ids sort as numbers.
						v, _ = strconv.ParseFloat(fmt.Sprint(v), 64)
					}
					h.sort = append(h.sort, v)
				}
				list = append(list, h)
			}
			perQuery = append(perQuery, list)
		}
		// merge_index_local_results, each document once, then
		// .take(required_hit_count) hits made.
		seen := map[string]bool{}
		var local []*fedHit
		for _, h := range mergeLists(perQuery) {
			if key := ix.KeyOf(h.doc); !seen[key] {
				seen[key] = true
				local = append(local, h)
				if len(local) == required {
					break
				}
			}
		}
		f.built += len(local)
		lists = append(lists, local)
		total += len(candidates)

		if facets, ok := facetsByIndex[uid].([]any); ok {
			docs := make([]map[string]any, 0, len(candidateOrder))
			for _, k := range candidateOrder {
				docs = append(docs, candidates[k])
			}
			d, err := emulateFacets(ix, map[string]any{"facets": facets}, docs)
			if err != nil {
				err.Message = fmt.Sprintf("Inside `.federation.facetsByIndex.%s`: %s", uid, err.Message)
				f.replyLocked(w, 400, err)
				return
			}
			d = limitFacets(ix, d, -1)
			if !merge {
				distByIndex[uid] = map[string]any{"distribution": d, "stats": map[string]any{}}
				continue
			}
			for a, counts := range d {
				o := facetOrder(ix, a)
				if prev, ok := facetOrderOf[a]; ok && prev[1] != o {
					e := NewAPIError("invalid_multi_search_facet_order", fmt.Sprintf("Inside `.federation.facetsByIndex.%s`: Inconsistent order for values in facet `%s`: index `%s` orders %s, but index `%s` orders %s.\n - Hint: Remove `federation.mergeFacets` or change `faceting.sortFacetValuesBy` to be consistent in settings.", uid, a, prev[0], prev[1], uid, o))
					f.replyLocked(w, 400, &e)
					return
				}
				facetOrderOf[a] = [2]string{uid, o}
				if dist[a] == nil {
					dist[a] = map[string]int{}
				}
				for v, n := range counts {
					dist[a][v] += n
				}
			}
		}
	}
	merged := mergeLists(lists)
	hits := []map[string]any{}
	for i := offset; i < len(merged) && i < offset+limit; i++ {
		h := merged[i]
		hit := withField(project(h.doc, h.attributes), "_federation", map[string]any{
			"indexUid": h.index, "queriesPosition": h.query, "weightedRankingScore": h.weighted,
		})
		if h.showScore {
			hit["_rankingScore"] = h.score
		}
		hits = append(hits, hit)
	}
	f.Served += len(hits)
	answer := map[string]any{"hits": hits, "processingTimeMs": 1, "limit": limit, "offset": offset, "estimatedTotalHits": total}
	if facetsByIndex != nil {
		if merge {
			if n, ok := mergeFacets["maxValuesPerFacet"].(float64); ok {
				for a, counts := range dist {
					dist[a] = firstFacetValues(counts, facetOrderOf[a][1], int(n))
				}
			}
			answer["facetDistribution"] = dist
			answer["facetStats"] = map[string]any{}
		} else {
			answer["facetsByIndex"] = distByIndex
		}
	}
	f.replyLocked(w, 200, answer)
}

// mergeLists merges ranked lists into one by compareFedHits, keeping the
// order of each list (a k-way merge, as itertools' kmerge_by in
// perform.rs).
func mergeLists(lists [][]*fedHit) []*fedHit {
	var out []*fedHit
	pos := make([]int, len(lists))
	for {
		best := -1
		for i, l := range lists {
			if pos[i] == len(l) {
				continue
			}
			if best < 0 || compareFedHits(l[pos[i]], lists[best][pos[best]]) < 0 {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][pos[best]])
		pos[best]++
	}
}

// replyLocked is Reply for a caller holding f.Mu: it renders the answer
// (which may hold stored documents) before the lock is released.
func (f *searchRoutes) replyLocked(w http.ResponseWriter, status int, body any) {
	f.Reply(w, status, JSONValue(body))
}
