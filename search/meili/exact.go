package meili

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// Two rules of the search contract are decided in Go, on data Meilisearch
// returns, because Meilisearch cannot decide them exactly on its own:
// the edge of a Near circle, and "all the words in one field" for places.

// nearSlack is how far (relative to the radius, at least nearMinSlackM
// meters) Meilisearch's own distance may be trusted to agree with
// search.DistanceKm. Both are haversine distances, but with their own
// earth radius constant and their own float rounding, so a point lying
// exactly on the circle (the conformance suite puts one there) could fall
// on either side. 1e-3 is far above any plausible difference (the earth
// radius constants in use, 6,371.0, 6,371.0088 and 6,371.088 km, differ by
// less than 2e-5; float rounding is around 1e-15).
const (
	nearSlack     = 1e-3
	nearMinSlackM = 10.0
)

// nearFilter returns the geo condition of a Near query, exact to the
// contract's search.DistanceKm: points well inside the circle are left to
// Meilisearch's _geoRadius, and the few points in a thin ring around the
// edge are fetched (with every other filter and the text query applied)
// and measured here; those inside are kept by ID. ok is false when nothing
// can be inside.
func (e *Engine) nearFilter(ctx context.Context, p plan) (cond string, ok bool, err error) {
	c := *p.near
	r := c.RadiusKm * 1000
	slack := max(nearMinSlackM, r*nearSlack)
	inner, outer := r-slack, r+slack

	ring := and(p.filter, geoRadius(c.Center, outer), when(inner > 0, not(geoRadius(c.Center, inner))))
	req := *p.req
	req.Filter = ring
	req.Sort = nil
	req.Facets = nil
	req.AttributesToRetrieve = []string{attrID, attrGeo}
	req.Page, req.HitsPerPage = 1, ptr(int64(maxTotalHits))
	resp, err := e.client.Index(p.index).SearchWithContext(ctx, req.Query, &req)
	if err != nil {
		return "", false, e.fail("search "+p.index+" (edge of the circle)", err)
	}
	var inside []int64
	for _, h := range resp.Hits {
		id, err := hitID(h)
		if err != nil {
			return "", false, fmt.Errorf("meili: search %s: %w", p.index, err)
		}
		var at search.GeoPoint
		if err := json.Unmarshal(h[attrGeo], &at); err != nil {
			return "", false, fmt.Errorf("meili: search %s: decode _geo of %d: %w", p.index, id, err)
		}
		if search.DistanceKm(at, c.Center) <= c.RadiusKm {
			inside = append(inside, id)
		}
	}
	cond = or(when(inner > 0, geoRadius(c.Center, inner)), listIn(attrID, inside))
	return cond, cond != "", nil
}

// searchOneField runs a place text query of several words. Meilisearch
// returns every candidate (all words somewhere in the searched attributes),
// in order, with those attributes; a candidate is kept when one attribute
// alone matches every term (search.Term.Matches, as the contract says), and
// the page is cut here. Places are few (venues and organizers, not events) and only
// multi-word queries take this path.
func (e *Engine) searchOneField(ctx context.Context, p plan) (search.Result, error) {
	req := *p.req
	req.AttributesToRetrieve = append([]string{attrID}, p.oneField.attrs...)
	req.Page, req.HitsPerPage = 1, ptr(int64(maxTotalHits))
	resp, err := e.client.Index(p.index).SearchWithContext(ctx, req.Query, &req)
	if err != nil {
		return search.Result{}, e.fail("search "+p.index, err)
	}
	var kept []int64
	for _, h := range resp.Hits {
		id, err := hitID(h)
		if err != nil {
			return search.Result{}, fmt.Errorf("meili: search %s: %w", p.index, err)
		}
		if hasAllWordsInOne(h, p.oneField) {
			kept = append(kept, id)
		}
	}
	res := search.Result{Total: len(kept), IDs: []int64{}}
	if p.limit > 0 && p.offset < len(kept) {
		res.IDs = kept[p.offset:min(p.offset+p.limit, len(kept))]
	}
	return res, nil
}

func hasAllWordsInOne(h meilisearch.Hit, rule *oneField) bool {
	for _, a := range rule.attrs {
		var text string
		if raw, ok := h[a]; !ok || json.Unmarshal(raw, &text) != nil {
			continue
		}
		words := search.Words(text)
		all := true
		for _, t := range rule.terms {
			all = all && t.MatchesAny(words)
		}
		if all {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
