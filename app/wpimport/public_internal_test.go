package wpimport

import (
	"encoding/json"
	"testing"
)

// TestVenueGeoOnlyWhenPublic: the coordinates Events Calendar Pro adds to
// a venue are mapped for ReadPublic and, as before, not by the import.
func TestVenueGeoOnlyWhenPublic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw     string
		geo     bool
		wantLat float64
	}{
		{`{"id":5,"status":"publish","venue":"Hall","geo_lat":52.1,"geo_lng":"4.8"}`, true, 52.1},
		{`{"id":5,"status":"publish","venue":"Hall","geo_lat":"52.1","geo_lng":4.8}`, false, 0},
		{`{"id":5,"status":"publish","venue":"Hall","geo_lat":"","geo_lng":""}`, true, 0},
		{`{"id":5,"status":"publish","venue":"Hall","geo_lat":91,"geo_lng":4.8}`, true, 0},
		{`{"id":5,"status":"publish","venue":"Hall","geo_lat":"north","geo_lng":4.8}`, true, 0},
	} {
		m := &mapper{lang: "en", geo: c.geo}
		p, err := m.venue(json.RawMessage(c.raw))
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		v := p.Venue
		switch {
		case c.wantLat == 0 && (v.GeoLat != nil || v.GeoLng != nil):
			t.Errorf("%s (geo %v): coordinates %v %v; want none", c.raw, c.geo, *v.GeoLat, *v.GeoLng)
		case c.wantLat != 0 && (v.GeoLat == nil || *v.GeoLat != c.wantLat || v.GeoLng == nil || *v.GeoLng != 4.8):
			t.Errorf("%s: coordinates %v %v; want %v 4.8", c.raw, v.GeoLat, v.GeoLng, c.wantLat)
		}
	}
}
