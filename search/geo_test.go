package search

import (
	"math"
	"testing"
)

// TestDistanceMIsMeilisearchs checks DistanceM against values Meilisearch
// and the crate it measures with print: geoutils 0.5.1's own test of
// haversine_distance_to (src/lib.rs, test_get_distance_haversine), and
// the _geoDistance (DistanceM rounded to the metre) of Meilisearch's
// tests (crates/meilisearch/tests/search/geo.rs in v1.18.0).
func TestDistanceMIsMeilisearchs(t *testing.T) {
	tests := []struct {
		name string
		a, b GeoPoint
		want float64 // metres
		// roundToMetre: the source prints whole metres.
		roundToMetre bool
	}{
		{"geoutils test", GeoPoint{27.740068, 85.337576}, GeoPoint{27.740286, 85.337059}, 56.36, false},
		{"meilisearch geo sort test", GeoPoint{45.4777599, 9.1967508}, GeoPoint{34.0522, -118.2437}, 9714063, true},
		{"same point", GeoPoint{45.4777599, 9.1967508}, GeoPoint{45.4777599, 9.1967508}, 0, false},
		{"pole to pole", GeoPoint{90, 0}, GeoPoint{-90, 123}, math.Round(math.Pi*EarthRadiusM*1000) / 1000, false},
		{"across the antimeridian", GeoPoint{0, 179.5}, GeoPoint{0, -179.5}, math.Round(2*EarthRadiusM*math.Asin(math.Sin(0.5*math.Pi/180))*1000) / 1000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, got := range []float64{DistanceM(tt.a, tt.b), DistanceM(tt.b, tt.a)} {
				if tt.roundToMetre {
					got = math.Round(got)
				}
				if math.Abs(got-tt.want) > 1e-9 {
					t.Errorf("DistanceM = %v, want %v", got, tt.want)
				}
			}
		})
	}
	if radPerDeg != 0.017453292519943295 {
		t.Errorf("radPerDeg = %v, want Rust's PI/180.0 = 0.017453292519943295", radPerDeg)
	}
}

// TestContains: the rule is Meilisearch's `distance <= radius +
// f64::EPSILON`, in metres, on the millimetre-rounded distance.
func TestContains(t *testing.T) {
	center := GeoPoint{48.8566, 2.3522}
	p := GeoPoint{48.9, 2.4}
	d := DistanceM(center, p)
	if d != math.Round(d*1000)/1000 {
		t.Fatalf("DistanceM = %v: not rounded to the millimetre", d)
	}
	tests := []struct {
		name   string
		radius float64 // km
		want   bool
	}{
		{"on the circle", d / 1000, math.Abs(d/1000*1000-d) == 0},
		{"a millimetre inside", (d + 0.001) / 1000, true},
		{"half a millimetre inside", (d + 0.0005) / 1000, true},
		{"a millimetre outside", (d - 0.001) / 1000, false},
		{"a float step outside", math.Nextafter(d, 0) / 1000, false},
		{"zero", 0, false},
		{"negative", -1, false},
		{"NaN", math.NaN(), false},
		{"infinite", math.Inf(1), true},
		{"the whole earth", MaxDistanceM / 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (GeoCircle{Center: center, RadiusKm: tt.radius}).Contains(p); got != tt.want {
				t.Errorf("Contains at %v km (distance %v m) = %v, want %v", tt.radius, d, got, tt.want)
			}
		})
	}
	if !(GeoCircle{Center: center}).Contains(center) {
		t.Error("a circle of radius zero must contain its centre")
	}
}
