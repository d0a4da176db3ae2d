package memindex

import (
	"math"

	"github.com/calendar/eventcal/search"
)

// This file is the geo part: the table of distinct points (addPoint) and
// how a radius query decides each point once (plan.near). A radius list
// is counted from the facet buckets' documents per point (geolist.go).

// addPoint returns the index of p in the point table, adding it.
func (x *Index) addPoint(p search.GeoPoint) int32 {
	// A point with a NaN coordinate never equals itself, so it is never
	// found again: it gets an entry of its own.
	shared := !math.IsNaN(p.Lat) && !math.IsNaN(p.Lng)
	if i, ok := x.pointOf[p]; ok && shared {
		x.points[i].refs++
		return i
	}
	var i int32
	if n := len(x.freePts); n > 0 {
		i = x.freePts[n-1]
		x.freePts = x.freePts[:n-1]
		x.points[i] = point{p: p, refs: 1}
	} else {
		x.points = append(x.points, point{p: p, refs: 1})
		i = int32(len(x.points) - 1)
	}
	if shared {
		x.pointOf[p] = i
	}
	return i
}

// near decides, for every point, whether it is inside the circle c by
// search.GeoCircle.Contains, as the reference does.
func (p *plan) near(x *Index, c search.GeoCircle) {
	if !(c.RadiusKm >= 0) {
		p.none = true // negative or NaN radius; +Inf is everything
		return
	}
	// A point farther in latitude than the radius is farther in distance:
	// the great-circle distance is at least the earth radius times the
	// latitude difference. The band is widened by a metre and a millionth,
	// far more than the distance's rounding (to the millimetre) and its
	// float error, so that no point inside is ever left out; a point
	// outside the real latitudes (which the API never stores) gets the
	// exact check alone.
	band := (c.RadiusM() + 1) / search.EarthRadiusM * (1 + 1e-6) * 180 / math.Pi
	p.inside = make([]uint8, len(x.points)+1)
	any := false
	for i, pt := range x.points {
		if pt.refs == 0 {
			continue
		}
		lat := pt.p.Lat
		if math.Abs(lat-c.Center.Lat) > band && lat >= -90 && lat <= 90 {
			continue
		}
		if c.Contains(pt.p) {
			p.inside[i+1], any = 1, true
		}
	}
	p.none = !any
}
