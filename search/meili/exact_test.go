package meili

import (
	"math"
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestEdgeRing: the ring around a circle's edge holds the radius, is
// about 4 mm wide (2 mm either side) for radii from a kilometre to
// nearly half the earth, and widens only where the haversine's 1 − cos θ
// is noisy (radii of a few metres and less) or near the antipode.
func TestEdgeRing(t *testing.T) {
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
