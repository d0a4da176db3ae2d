package searchtest

import (
	"fmt"
	"math"
	"testing"

	"github.com/calendar/eventcal/search"
)

// NearEdgeCenters are the centres of RunNearEdges: a city, the equator,
// high latitudes, both poles exactly, and both sides of the antimeridian.
var NearEdgeCenters = []search.GeoPoint{
	{Lat: 48.8566, Lng: 2.3522},
	{Lat: 0.5, Lng: 10},
	{Lat: 70, Lng: 25},
	{Lat: 90, Lng: 0},
	{Lat: -90, Lng: 45},
	{Lat: 89.99, Lng: 120},
	{Lat: -33.9, Lng: 179.99},
	{Lat: 10, Lng: -180},
}

// NearEdgeEvents generates, around each of NearEdgeCenters, events on a
// spiral of great-circle bearings and distances from 0.3 m to about 80 km
// (crossing the antimeridian and passing over the poles where the centre
// is near them), the centre itself, its antipode, and the same places
// written with longitude 180 and -180. Their IDs start at 1.
func NearEdgeEvents() []search.EventDocument {
	var docs []search.EventDocument
	add := func(p search.GeoPoint) {
		id := int64(len(docs) + 1)
		docs = append(docs, search.EventDocument{
			ID: id, Status: "publish", Start: FixtureNow + id*60, End: FixtureNow + id*60 + 3600,
			PublishDate: FixtureNow, Geo: &p, HasGeo: true,
			CategoryIDs: []int64{}, TagIDs: []int64{}, VenueIDs: []int64{}, OrganizerIDs: []int64{},
			Text: map[string]search.Text{"en": {Title: fmt.Sprintf("Point %d", id)}},
		})
	}
	for _, c := range NearEdgeCenters {
		add(c)
		add(search.GeoPoint{Lat: -c.Lat, Lng: normLng(c.Lng + 180)})
		for k := range 36 {
			distM := 0.3 * math.Pow(1.4, float64(k)) // 0.3 m to about 38 km
			if k%4 == 3 {
				distM *= 2
			}
			p := destination(c, float64(k)*53, distM)
			add(p)
			if math.Abs(p.Lng) > 179.9 {
				add(search.GeoPoint{Lat: p.Lat, Lng: -p.Lng}) // the other side
			}
		}
		// A parallel of points at the same distance from a pole (and at
		// longitudes ±180 from everywhere else).
		for _, lng := range []float64{-180, -90, 0, 90, 180} {
			add(search.GeoPoint{Lat: math.Copysign(89.5, c.Lat+1e-9), Lng: lng})
		}
	}
	return docs
}

// NearEdgeQueries returns, for each centre, circles through a few of the
// generated points within 100 km of it (every third, at most
// nearEdgePoints, and one of the parallel at latitude ±89.5, which for a
// pole puts ten points exactly on the circle): radius that point's
// distance (the point is exactly on the circle), one float step and one
// millimetre on either side of it, plus radius zero and a circle larger
// than the earth. Few, because Bleve's geo query is slow near the poles.
func NearEdgeQueries(docs []search.EventDocument) []search.EventQuery {
	const nearEdgePoints = 6
	var out []search.EventQuery
	q := func(c search.GeoPoint, km float64) {
		out = append(out, search.EventQuery{Lang: "en", Limit: wholeLimit,
			Near: search.Some(search.GeoCircle{Center: c, RadiusKm: km})})
	}
	for _, c := range NearEdgeCenters {
		q(c, 0)
		q(c, 30000)
		var picked []float64
		parallel := false
		for i, d := range docs {
			km := search.DistanceKm(*d.Geo, c)
			if km > 100 {
				continue
			}
			onParallel := math.Abs(d.Geo.Lat) == 89.5 && !parallel
			if !onParallel && (i%3 != 0 || len(picked) >= nearEdgePoints) {
				continue
			}
			parallel = parallel || onParallel
			picked = append(picked, km)
		}
		for _, km := range picked {
			q(c, km)
			q(c, math.Nextafter(km, 0))
			q(c, math.Nextafter(km, math.Inf(1)))
			q(c, km-1e-6)
			q(c, km+1e-6)
		}
	}
	return out
}

// RunNearEdges checks that a Near filter keeps exactly the events
// search.GeoCircle.Contains puts inside the circle, on the generated data
// of NearEdgeEvents and NearEdgeQueries (points exactly on the circle, a
// float step or a millimetre inside or outside, at the poles and across
// the antimeridian). Run includes it; an engine's own tests may run it
// again under other conditions.
func RunNearEdges(t *testing.T, newEngine func(t *testing.T) search.Engine) {
	e := openEngine(t, newEngine)
	docs := NearEdgeEvents()
	indexAll(t, e, docs, nil)
	queries := NearEdgeQueries(docs)
	// The generated circles must exercise the edge: many keep a point
	// that a radius one millimetre smaller drops.
	edges := 0
	for _, q := range queries {
		smaller := q
		smaller.Near.Value.RadiusKm -= 1e-6
		if ExpectedEvents(docs, q).Total > ExpectedEvents(docs, smaller).Total {
			edges++
		}
	}
	if edges < len(queries)/10 {
		t.Fatalf("only %d of %d generated circles have a point on their edge", edges, len(queries))
	}
	newModel(docs, nil).agree(t, e, queries, nil)
}

// destination is the point at distM metres from p along the great circle
// of the given initial bearing (degrees from north).
func destination(p search.GeoPoint, bearing, distM float64) search.GeoPoint {
	rad := math.Pi / 180
	phi1, lambda1, theta := p.Lat*rad, p.Lng*rad, bearing*rad
	delta := distM / search.EarthRadiusM
	phi2 := math.Asin(math.Sin(phi1)*math.Cos(delta) + math.Cos(phi1)*math.Sin(delta)*math.Cos(theta))
	lambda2 := lambda1 + math.Atan2(math.Sin(theta)*math.Sin(delta)*math.Cos(phi1), math.Cos(delta)-math.Sin(phi1)*math.Sin(phi2))
	return search.GeoPoint{Lat: phi2 / rad, Lng: normLng(lambda2 / rad)}
}

// normLng brings a longitude into [-180, 180].
func normLng(lng float64) float64 {
	for lng > 180 {
		lng -= 360
	}
	for lng < -180 {
		lng += 360
	}
	return lng
}
