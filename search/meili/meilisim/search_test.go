package meilisim

import (
	"fmt"
	"slices"
	"testing"
)

// ids returns the ids of a search answer's hits, in order.
func ids(t *testing.T, answer map[string]any) []string {
	t.Helper()
	hits, ok := answer["hits"].([]any)
	if !ok {
		t.Fatalf("answer without hits: %v", answer)
	}
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprint(h.(map[string]any)["id"]))
	}
	return out
}

// index creates uid with settings (over create's) and documents, and
// processes the tasks.
func index(s *Server, c *client, uid string, settings map[string]any, documents []any) {
	c.create(uid)
	c.do("PATCH", "/indexes/"+uid+"/settings", settings)
	c.do("POST", "/indexes/"+uid+"/documents", documents)
	s.Drain()
}

// TestSearchCapsAfterDistinct: maxTotalHits caps the total after distinct
// and no hit past it is returned; faceting.maxValuesPerFacet cuts each
// facet's values in sortFacetValuesBy order.
func TestSearchCapsAfterDistinct(t *testing.T) {
	s, c := start(t, Options{})
	var documents []any
	tags := []string{"c", "a", "c", "b", "c", "b"}
	for id := 1; id <= 6; id++ {
		documents = append(documents, map[string]any{"id": id, "series": (id + 1) / 2, "tag": tags[id-1], "title": "hall"})
	}
	index(s, c, "a", map[string]any{
		"filterableAttributes": []string{"series", "tag"}, "sortableAttributes": []string{"id"},
		"pagination": map[string]any{"maxTotalHits": 3},
		"faceting":   map[string]any{"maxValuesPerFacet": 2, "sortFacetValuesBy": map[string]any{"*": "alpha"}},
	}, documents)
	tests := []struct {
		name      string
		body      map[string]any
		wantIDs   []string
		totalKey  string
		wantTotal float64
	}{
		// 6 documents, 3 series: the total counts 3 series, capped at 3
		// (a cap before distinct would leave the series of ids 1-3: 2).
		{"distinct, exhaustive", map[string]any{"distinct": "series", "hitsPerPage": 10, "page": 1, "sort": []string{"id:asc"}}, []string{"1", "3", "5"}, "totalHits", 3},
		{"offset past the cap", map[string]any{"offset": 2, "limit": 10, "sort": []string{"id:asc"}}, []string{"3"}, "estimatedTotalHits", 3},
		{"offset beyond the cap", map[string]any{"offset": 4, "limit": 10, "sort": []string{"id:asc"}}, []string{}, "estimatedTotalHits", 3},
		{"page past the cap", map[string]any{"hitsPerPage": 2, "page": 2, "sort": []string{"id:asc"}}, []string{"3"}, "totalHits", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, answer := c.do("POST", "/indexes/a/search", tt.body)
			if status != 200 {
				t.Fatalf("search = %d %v", status, answer)
			}
			if got := ids(t, answer); !slices.Equal(got, tt.wantIDs) || answer[tt.totalKey] != tt.wantTotal {
				t.Errorf("hits %v %s %v, want %v %v", got, tt.totalKey, answer[tt.totalKey], tt.wantIDs, tt.wantTotal)
			}
		})
	}

	facets := func() map[string]any {
		status, answer := c.do("POST", "/indexes/a/search", map[string]any{"facets": []string{"tag"}, "hitsPerPage": 10})
		if status != 200 {
			t.Fatalf("search = %d %v", status, answer)
		}
		return answer["facetDistribution"].(map[string]any)["tag"].(map[string]any)
	}
	if got := facets(); len(got) != 2 || got["a"] != 1.0 || got["b"] != 2.0 {
		t.Errorf("alpha facets %v, want the first 2 values a:1 b:2", got)
	}
	c.do("PATCH", "/indexes/a/settings", map[string]any{"faceting": map[string]any{"maxValuesPerFacet": 2, "sortFacetValuesBy": map[string]any{"*": "count"}}})
	s.Drain()
	if got := facets(); len(got) != 2 || got["c"] != 3.0 || got["b"] != 2.0 {
		t.Errorf("count facets %v, want the 2 largest c:3 b:2", got)
	}
}

// TestFederatedSearch: how a federated multi-search merges, counts and
// what it costs (federated/perform.rs).
func TestFederatedSearch(t *testing.T) {
	s, c := federatedIndexes(t, Options{})
	query := func(uid string, extra map[string]any) map[string]any {
		q := map[string]any{"indexUid": uid}
		for k, v := range extra {
			q[k] = v
		}
		return q
	}

	t.Run("weighted ranking score without sort", func(t *testing.T) {
		tests := []struct {
			name       string
			weightX    float64
			yFirst     bool
			wantIndex  string
			wantWeight float64
		}{
			{"equal scores: the lower query index first", 1, false, "x", 1},
			{"equal scores, y asked first", 1, true, "y", 1},
			{"lower weight ranks after", 0.5, false, "y", 1},
			{"higher weight ranks first", 2, true, "x", 2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				queries := []any{
					query("x", map[string]any{"federationOptions": map[string]any{"weight": tt.weightX}, "showRankingScore": true}),
					query("y", nil),
				}
				if tt.yFirst {
					queries[0], queries[1] = queries[1], queries[0]
				}
				status, answer := c.do("POST", "/multi-search", map[string]any{
					"federation": map[string]any{"limit": 1},
					"queries":    queries,
				})
				if status != 200 {
					t.Fatalf("multi-search = %d %v", status, answer)
				}
				hit := answer["hits"].([]any)[0].(map[string]any)
				fed, _ := hit["_federation"].(map[string]any)
				if fed["indexUid"] != tt.wantIndex || fed["weightedRankingScore"] != tt.wantWeight {
					t.Errorf("first hit's _federation %v, want index %s, weightedRankingScore %v", fed, tt.wantIndex, tt.wantWeight)
				}
			})
		}
	})

	t.Run("merged facets", func(t *testing.T) {
		status, answer := c.do("POST", "/multi-search", map[string]any{
			"federation": map[string]any{"limit": 1, "facetsByIndex": map[string]any{"x": []string{"tag"}, "y": []string{"tag"}}, "mergeFacets": map[string]any{}},
			"queries":    []any{query("x", nil), query("y", nil)},
		})
		if status != 200 {
			t.Fatalf("multi-search = %d %v", status, answer)
		}
		tag := answer["facetDistribution"].(map[string]any)["tag"].(map[string]any)
		if tag["0"] != 6.0 || tag["1"] != 7.0 || tag["2"] != 7.0 {
			t.Errorf("tag counts %v, want 0:6 1:7 2:7 over every candidate", tag)
		}
	})

	t.Run("inconsistent facet order", func(t *testing.T) {
		c.do("PATCH", "/indexes/y/settings", map[string]any{"faceting": map[string]any{"sortFacetValuesBy": map[string]any{"*": "count"}}})
		s.Drain()
		status, answer := c.do("POST", "/multi-search", map[string]any{
			"federation": map[string]any{"facetsByIndex": map[string]any{"x": []string{"tag"}, "y": []string{"tag"}}, "mergeFacets": map[string]any{}},
			"queries":    []any{query("x", nil), query("y", nil)},
		})
		if status != 400 || answer["code"] != "invalid_multi_search_facet_order" {
			t.Errorf("multi-search = %d %v, want 400 invalid_multi_search_facet_order", status, answer)
		}
	})
}

// federatedIndexes creates indexes x (odd ids 1-19) and y (even ids
// 2-20), sortable by id, maxTotalHits 3.
func federatedIndexes(t *testing.T, opts Options) (*Server, *client) {
	s, c := start(t, opts)
	var odd, even []any
	for id := 1; id <= 20; id++ {
		doc := map[string]any{"id": id, "tag": fmt.Sprint(id % 3), "title": "hall"}
		if id%2 == 1 {
			odd = append(odd, doc)
		} else {
			even = append(even, doc)
		}
	}
	settings := map[string]any{
		"filterableAttributes": []string{"tag"}, "sortableAttributes": []string{"id"},
		"rankingRules": []string{"sort", "words", "typo", "proximity", "attribute", "exactness"},
		"pagination":   map[string]any{"maxTotalHits": 3},
	}
	index(s, c, "x", settings, odd)
	index(s, c, "y", settings, even)
	return s, c
}

// TestFederatedSearchCost: a federated search builds offset+limit hits in
// each index before skipping the offset (perform.rs), uncapped at v1.18.0
// and capped at each index's maxTotalHits (3 here) from v1.34.0; the
// total is the candidates' count (10 + 10), capped in no version.
func TestFederatedSearchCost(t *testing.T) {
	tests := []struct {
		version       string
		offset, limit int
		wantIDs       []string
		wantBuilt     int
	}{
		{"1.18.0", 3, 2, []string{"4", "5"}, 10},
		{"1.18.0", 6, 2, []string{"7", "8"}, 16},
		{"1.18.0", 100, 2, []string{}, 20},
		{"1.50.0", 3, 2, []string{"4", "5"}, 6},
		{"1.50.0", 6, 2, []string{}, 6},
		{"1.50.0", 100, 2, []string{}, 6},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/offset_%d", tt.version, tt.offset), func(t *testing.T) {
			s, c := federatedIndexes(t, Options{Version: tt.version})
			sorted := []string{"id:asc"}
			status, answer := c.do("POST", "/multi-search", map[string]any{
				"federation": map[string]any{"offset": tt.offset, "limit": tt.limit},
				"queries":    []any{map[string]any{"indexUid": "x", "sort": sorted}, map[string]any{"indexUid": "y", "sort": sorted}},
			})
			if status != 200 {
				t.Fatalf("multi-search = %d %v", status, answer)
			}
			if got := ids(t, answer); !slices.Equal(got, tt.wantIDs) {
				t.Errorf("hits %v, want %v", got, tt.wantIDs)
			}
			if answer["estimatedTotalHits"] != 20.0 {
				t.Errorf("estimatedTotalHits %v, want 20 (uncapped)", answer["estimatedTotalHits"])
			}
			if got := s.HitsBuilt(); got != tt.wantBuilt {
				t.Errorf("hits built %d, want %d", got, tt.wantBuilt)
			}
		})
	}
}

// TestElementTest checks a filter's comparison of a document value with
// a literal (elementTest): each operator on numbers below, on and above
// the literal, booleans and strings (equality only), arrays (any
// element), a missing value, and a literal that is not a number.
func TestElementTest(t *testing.T) {
	for _, c := range []struct {
		op, lit string
		v       any
		want    bool
	}{
		{"=", "5", 5.0, true}, {"=", "5", 4.0, false}, {"=", "5.0", 5.0, true},
		{">", "5", 5.0, false}, {">", "5", 6.0, true},
		{">=", "5", 5.0, true}, {">=", "5", 4.0, false},
		{"<", "5", 5.0, false}, {"<", "5", 4.0, true},
		{"<=", "5", 5.0, true}, {"<=", "5", 6.0, false},
		{">", "abc", 6.0, false}, {"=", "abc", 6.0, false},
		{"=", "true", true, true}, {"=", "true", false, false}, {"=", "false", false, true}, {">", "true", true, false},
		{"=", "paris", "paris", true}, {"=", "paris", "Paris", false}, {">=", "paris", "paris", false},
		{"=", "3", "3", true}, {"=", "3", []any{1.0, 3.0}, true}, {">", "2", []any{1.0, 2.0}, false},
		{">", "2", []any{1.0, []any{5.0}}, true}, {"=", "x", []any{}, false}, {"=", "5", nil, false},
	} {
		if got := elementTest(c.op, c.lit)(c.v); got != c.want {
			t.Errorf("%v %s %s: %v, want %v", c.v, c.op, c.lit, got, c.want)
		}
	}
}
