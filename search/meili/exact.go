package meili

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// One rule of the search contract is decided in Go, on data Meilisearch
// returns, because Meilisearch cannot decide it exactly on its own: the
// last millimetres of the edge of a Near circle. "All the words in one
// field" for places is expressed in Meilisearch's terms (searchOneField).

// The edge of a Near circle. search.GeoCircle.Contains is Meilisearch's
// own _geoRadius rule, float operation for float operation (see
// search.DistanceM for the source it follows), so a _geoRadius filter with
// the exact radius would decide every point as the contract does, but for
// two functions: cos and asin come from Go's math package here and from
// the C library Meilisearch was built with there (glibc or musl; neither
// promises correct rounding, and Go's Cos and Asin are not correctly
// rounded either). A last-place difference in cos moves h (the haversine
// sum, in [0, 1]) by a few 1e-16; after the millimetre rounding that can
// move a point lying within a millimetre or so of the edge to the other
// side. So the engine still decides those points itself, but the ring it
// asks for is only as wide as that difference can be: 2 mm either side for a
// radius of kilometres (it widens for radii under a few metres, where
// 1 − cos θ cancels and both sides' distances are noisy).
//
// The bound, with the rounding: DistanceM(p) ≤ r means the unrounded
// distance is ≤ r + ½ mm, so Go's h ≤ hav(r + ½ mm), Meilisearch's h ≤
// hav(r + ½ mm) + edgeSlackH, and Meilisearch's rounded distance ≤
// dist(hav(r + ½ mm) + edgeSlackH) + ½ mm (+ asin's last place, 1e-8 m),
// below outer (edgeRing takes a whole millimetre where ½ mm is needed);
// the same argument bounds inner from the other side. It also
// covers Meilisearch's early stop (its R-tree walk in chord order stops at
// the first point measured outside the radius): points whose order the
// walk gets wrong are within float noise of each other, far less than the
// ring's width, so they are all on the same side of the edge.
const (
	// edgeSlackH bounds |h_Go − h_Meilisearch|: 1 ulp of cos on each side
	// gives ≤ 2.2e-16 on each cos, so ≤ 1.1e-16 on hav(Δφ) and ≤ 1e-15 on
	// cos φ1 · cos φ2 · hav(Δλ), with a few roundings of the sum; 4e-15
	// is about twice that.
	edgeSlackH = 4e-15
	// edgeSlackM is the millimetre rounding on either side.
	edgeSlackM = 0.001
)

// edgeRing returns the radii in metres of the ring around a circle of
// radius r metres outside which Meilisearch's _geoRadius and
// search.GeoCircle.Contains cannot disagree (inner < 0 when the ring
// reaches the centre).
func edgeRing(r float64) (inner, outer float64) {
	const earth = search.EarthRadiusM
	hav := func(d float64) float64 {
		s := math.Sin(min(max(d, 0), math.Pi*earth) / (2 * earth))
		return s * s
	}
	dist := func(h float64) float64 { return 2 * earth * math.Asin(math.Sqrt(min(max(h, 0), 1))) }
	inner = dist(hav(r-edgeSlackM)-edgeSlackH) - edgeSlackM
	if inner <= 0 {
		inner = -1
	}
	return inner, dist(hav(r+edgeSlackM)+edgeSlackH) + edgeSlackM
}

// nearFilter returns the geo condition of a Near query, exact to the
// contract's search.GeoCircle.Contains: points inside the ring of edgeRing
// are left to Meilisearch's _geoRadius, and the few points in the ring
// (within millimetres of the edge for any radius over a few metres) are
// fetched (with every other filter and the text query applied, id and
// _geo only, one page of maxTotalHits) and decided here; those inside are
// kept by ID. ok is false when nothing can be inside (no request is sent
// then). A circle covering the whole earth needs no ring.
func (e *queryRunner) nearFilter(ctx context.Context, p plan) (cond string, ok bool, err error) {
	c := *p.near
	r := c.RadiusM()
	switch {
	case !(r >= 0):
		return "", false, nil // negative or NaN: Contains keeps nothing
	case r >= search.MaxDistanceM:
		return geoRadius(c.Center, math.Ceil(search.MaxDistanceM)), true, nil
	}
	inner, outer := edgeRing(r)

	ring := and(p.filter, geoRadius(c.Center, outer), when(inner > 0, not(geoRadius(c.Center, inner))))
	req := *p.req
	req.Filter = ring
	req.Sort = nil
	req.Facets = nil
	req.AttributesToRetrieve = []string{attrKey, attrGeo}
	req.Distinct = "" // every document on the edge, occurrences included
	req.Page, req.HitsPerPage = 1, ptr(int64(maxTotalHits))
	resp, err := e.client.Index(p.index).SearchWithContext(ctx, req.Query, &req)
	if err != nil {
		return "", false, e.fail("search "+p.index+" (edge of the circle)", err)
	}
	if int(resp.TotalHits) > len(resp.Hits) {
		return "", false, fmt.Errorf("meili: search %s: %d points on the edge of the circle, more than one page of %d", p.index, resp.TotalHits, maxTotalHits)
	}
	// The documents inside are named by their key: an occurrence whose
	// override moved it to another venue has its own point.
	var inside []string
	for _, h := range resp.Hits {
		var key string
		if err := json.Unmarshal(h[attrKey], &key); err != nil {
			return "", false, fmt.Errorf("meili: search %s: decode key %s: %w", p.index, h[attrKey], err)
		}
		var at search.GeoPoint
		if err := json.Unmarshal(h[attrGeo], &at); err != nil {
			return "", false, fmt.Errorf("meili: search %s: decode _geo of %s: %w", p.index, key, err)
		}
		if c.Contains(at) {
			inside = append(inside, key)
		}
	}
	cond = or(when(inner > 0, geoRadius(c.Center, inner)), listIn(attrKey, inside))
	return cond, cond != "", nil
}

// searchOneField runs a place text query of several words: "all the
// words in one field". A search with attributesToSearchOn [a] and
// matchingStrategy "all" finds exactly the places with every word in
// attribute a, so the rule is the union of one such search per searchable
// attribute, which Meilisearch computes itself in ONE federated
// multi-search (POST /multi-search with "federation"):
//
//   - the page: each query's hits in the sort order, merged by their sort
//     values (sort is the first ranking rule, and publish_date then id is
//     a total order: the merge compares Sort score values first,
//     crates/meilisearch/src/search/federated/weighted_scores.rs:34-45 at
//     v1.18.0), a place matched by several queries kept once
//     (documents_seen, federated/perform.rs:907-912), then offset and
//     limit of the federation applied; each query computes only
//     offset+limit hits (perform.rs:838-839);
//   - the total: estimatedTotalHits of a federated search over one index
//     is the size of the union of the queries' candidate sets
//     (perform.rs:879 and 954), not an estimate, and not capped by
//     maxTotalHits.
//
// So one request answers a page, and its size is the page's, whatever the
// number of places: the rule is no longer decided in Go on every
// candidate.
func (e *queryRunner) searchOneField(ctx context.Context, p plan) (search.Result, error) {
	queries := make([]*meilisearch.SearchRequest, 0, len(p.oneField.attrs))
	for _, a := range p.oneField.attrs {
		queries = append(queries, &meilisearch.SearchRequest{
			IndexUID:             p.index,
			Query:                p.req.Query,
			Filter:               p.req.Filter,
			Sort:                 p.req.Sort,
			AttributesToSearchOn: []string{a},
			MatchingStrategy:     meilisearch.All,
			AttributesToRetrieve: []string{attrID},
		})
	}
	// The client leaves out a limit of 0 (the server then uses 20): ask
	// for one hit and drop it.
	resp, err := e.client.MultiSearchWithContext(ctx, &meilisearch.MultiSearchRequest{
		Federation: &meilisearch.MultiSearchFederation{Offset: int64(p.offset), Limit: int64(max(p.limit, 1))},
		Queries:    queries,
	})
	if err != nil {
		return search.Result{}, e.fail("search "+p.index+" (all words in one field)", err)
	}
	hits := resp.Hits[:min(p.limit, len(resp.Hits))]
	res := search.Result{Total: int(resp.EstimatedTotalHits), IDs: make([]int64, 0, len(hits))}
	for _, h := range hits {
		id, err := hitID(h)
		if err != nil {
			return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
		}
		res.IDs = append(res.IDs, id)
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }
