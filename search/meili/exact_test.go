package meili

import (
	"math"
	"net/http"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestEdgeRing: the ring around a circle's edge holds the radius, is
// about 4 mm wide (2 mm either side) for radii from a kilometre to
// nearly half the earth, and widens only where the haversine's 1 − cos θ
// is noisy (radii of a few metres and less) or near the antipode.
func TestEdgeRing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		radiusM  float64
		maxWidth float64 // metres
	}{
		{0, 1},
		{0.5, 1},
		{5, 0.15},
		{100, 0.011},
		{1_000, 0.005},
		{20_000, 0.005},
		{1_000_000, 0.005},
		{10_000_000, 0.005},
		{search.MaxDistanceM - 1000, 0.005},
		{search.MaxDistanceM - 1, 1},
	}
	for _, tt := range tests {
		inner, outer := edgeRing(tt.radiusM)
		if !(outer > tt.radiusM) || !(inner < tt.radiusM) {
			t.Errorf("edgeRing(%v) = %v, %v: want the radius strictly inside", tt.radiusM, inner, outer)
		}
		if w := outer - max(inner, 0); w > tt.maxWidth {
			t.Errorf("edgeRing(%v) is %v m wide, want at most %v", tt.radiusM, w, tt.maxWidth)
		}
		if tt.radiusM >= 1000 && inner <= 0 {
			t.Errorf("edgeRing(%v): inner %v, want an inner circle", tt.radiusM, inner)
		}
	}
	if inner, _ := edgeRing(0); inner > 0 {
		t.Errorf("edgeRing(0) inner = %v, want none", inner)
	}
	if _, outer := edgeRing(math.Inf(1)); !(outer >= math.Pi*search.EarthRadiusM) {
		t.Errorf("edgeRing(+Inf) outer = %v, want the whole earth", outer)
	}
}

// TestNearRequests: a circle that can hold nothing sends no request, one
// covering the whole earth needs no ring (one request), and a ring with
// more points than one page is an error rather than a silently short
// list.
func TestNearRequests(t *testing.T) {
	t.Parallel()
	paris := search.GeoPoint{Lat: 48.8566, Lng: 2.3522}
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	f.AddIndex("calendar_events", nil)
	// A ring whose totalHits exceeds the page it returned (maxTotalHits
	// points, too many to generate here: the answer says so instead).
	crowded := func(r *http.Request) (int, any, bool) {
		return 200, map[string]any{"hits": []any{map[string]any{"id": 1, "_geo": map[string]any{"lat": 48.9, "lng": 2.4}}},
			"page": 1, "hitsPerPage": maxTotalHits, "totalPages": 2, "totalHits": maxTotalHits + 1}, true
	}
	tests := []struct {
		name     string
		radiusKm float64
		answer   func(r *http.Request) (int, any, bool)
		requests int
		filter   string // of the last request
		wantErr  bool
	}{
		{name: "negative", radiusKm: -1, requests: 0},
		{name: "NaN", radiusKm: math.NaN(), requests: 0},
		{name: "whole earth", radiusKm: 20_040, requests: 1,
			filter: `status IN ["publish"] AND _geoRadius(48.8566, 2.3522, ` + number(math.Ceil(search.MaxDistanceM)) + ")"},
		{name: "infinite", radiusKm: math.Inf(1), requests: 1,
			filter: `status IN ["publish"] AND _geoRadius(48.8566, 2.3522, ` + number(math.Ceil(search.MaxDistanceM)) + ")"},
		{name: "crowded edge", radiusKm: 5, answer: crowded, requests: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Reset()
			f.Intercept = tt.answer
			_, err := e.SearchEvents(t.Context(), search.EventQuery{Limit: 10, Statuses: []string{"publish"},
				Near: search.Some(search.GeoCircle{Center: paris, RadiusKm: tt.radiusKm})})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			got := f.Calls(http.MethodPost, "/indexes/*")
			if len(got) != tt.requests {
				t.Fatalf("%d requests, want %d", len(got), tt.requests)
			}
			if tt.filter != "" {
				if s := got[len(got)-1].Body.(map[string]any)["filter"]; s != tt.filter {
					t.Errorf("filter %v, want %s", s, tt.filter)
				}
			}
		})
	}
}
