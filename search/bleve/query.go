package bleve

import (
	"context"
	"strconv"

	blevesearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/calendar/eventcal/search"
)

// This file turns EventQuery and PlaceQuery into Bleve queries. Every set
// filter becomes one clause of a conjunction; the values of a list filter
// become a disjunction. Nothing is scored (the requests sort by fields), so
// Bleve can merge the postings of term disjunctions into bitmaps.

// eventQuery builds the query of q's filters (paging and sort are the
// request's); text is the query of q's words (textQuery), nil for none.
func eventQuery(q search.EventQuery, text query.Query) query.Query {
	var and []query.Query
	add := func(c query.Query) { and = append(and, c) }
	if len(q.IDs) > 0 {
		add(query.NewDocIDQuery(docIDs(q.IDs)))
	}
	if len(q.Statuses) > 0 {
		add(anyKeyword(fieldStatus, q.Statuses))
	}
	// Each date bound is its own range with the exact inclusivity of the
	// contract; Unix seconds are exact as float64.
	if q.StartGTE.Set {
		add(numberRange(fieldStart, q.StartGTE.Value, true, true))
	}
	if q.StartGT.Set {
		add(numberRange(fieldStart, q.StartGT.Value, true, false))
	}
	if q.StartLT.Set {
		add(numberRange(fieldStart, q.StartLT.Value, false, false))
	}
	if q.EndLTE.Set {
		add(numberRange(fieldEnd, q.EndLTE.Value, false, true))
	}
	if q.EndLT.Set {
		add(numberRange(fieldEnd, q.EndLT.Value, false, false))
	}
	if q.EndGT.Set {
		add(numberRange(fieldEnd, q.EndGT.Value, true, false))
	}
	for _, f := range []struct {
		field string
		ids   []int64
	}{{"category_ids", q.CategoryIDs}, {"tag_ids", q.TagIDs}, {"venue_ids", q.VenueIDs}, {"organizer_ids", q.OrganizerIDs}} {
		if len(f.ids) > 0 {
			add(anyNumber(f.field, f.ids))
		}
	}
	for _, f := range []struct {
		field string
		v     search.Opt[bool]
	}{{"featured", q.Featured}, {"ticketed", q.Ticketed}, {fieldHasGeo, q.HasGeo}} {
		if f.v.Set {
			add(boolIs(f.field, f.v.Value))
		}
	}
	if q.Near.Set {
		add(nearQuery(q.Near.Value))
	}
	if q.ParentID.Set {
		add(anyNumber("parent_id", []int64{q.ParentID.Value}))
	}
	if q.ExcludeHidden {
		add(boolIs("hide_from_listings", false))
	}
	if q.ExcludeProtected {
		add(boolIs("has_password", false))
	}
	if text != nil {
		add(text)
	}
	return all(and)
}

// placeQuery builds the query of q's filters; text is the query of q's
// words (placeTextQuery), nil for none.
func placeQuery(q search.PlaceQuery, text query.Query) query.Query {
	var and []query.Query
	add := func(c query.Query) { and = append(and, c) }
	if len(q.IDs) > 0 {
		add(query.NewDocIDQuery(docIDs(q.IDs)))
	}
	if len(q.Statuses) > 0 {
		add(anyKeyword(fieldStatus, q.Statuses))
	}
	if q.HasEvents.Set {
		add(boolIs(fieldHasEvents, q.HasEvents.Value))
	}
	if q.UpcomingAfter.Set {
		// Any allowed status whose latest start is at or after the instant;
		// no allowed status means no place qualifies.
		var or []query.Query
		for _, s := range q.UpcomingStatuses {
			or = append(or, numberRange(prefixLastStart+"."+s, q.UpcomingAfter.Value, true, true))
		}
		add(anyOf(or))
	}
	if text != nil {
		add(text)
	}
	return all(and)
}

// geoSlackRatio and geoSlackKm widen the radius Bleve filters with, so that
// its candidates include every document search.GeoCircle.Contains puts
// inside the circle. Bleve measures with an earth diameter that varies with latitude
// (up to 0.25% from the mean radius DistanceKm uses) on points quantised to
// about a centimetre; 1% and 10 m cover both with room to spare.
const (
	geoSlackRatio = 0.01
	geoSlackKm    = 0.01
	// geoWholeEarthKm: beyond this radius the circle covers any point
	// Bleve's bounding boxes can describe, so every point is a candidate.
	geoWholeEarthKm = 10000
)

// nearQuery keeps the documents whose point is within c.RadiusKm of the
// centre by search.GeoCircle.Contains, exactly as the reference measures. Bleve's
// own distance query (on the widened radius) finds the candidates from the
// geo index; a custom filter then reads each candidate's exact point from
// its doc value (see pointKey) and applies Contains. Both run inside the one
// search, so the hits, the sort and the total all see the exact set.
func nearQuery(c search.GeoCircle) query.Query {
	r := c.RadiusKm
	if !(r >= 0) {
		return query.NewMatchNoneQuery() // negative or NaN radius; +Inf is everything
	}
	outer := r*(1+geoSlackRatio) + geoSlackKm
	var candidates query.Query
	if outer >= geoWholeEarthKm {
		candidates = boolIs(fieldHasGeo, true)
	} else {
		gq := query.NewGeoDistanceQuery(c.Center.Lng, c.Center.Lat, strconv.FormatFloat(outer, 'f', -1, 64)+"km")
		gq.SetField(fieldGeo)
		candidates = gq
	}
	exact := func(_ context.Context, d *blevesearch.DocumentMatch) (bool, error) {
		key, _ := d.Fields[fieldPoint].(string)
		p, ok := parsePointKey(key)
		return ok && c.Contains(p), nil
	}
	return query.NewCustomFilterQueryWithFilter(candidates, exact, []string{fieldPoint}, nil)
}

func term(field, value string) query.Query {
	q := query.NewTermQuery(value)
	q.SetField(field)
	return q
}

// anyKeyword matches a keyword field equal to any of the values.
func anyKeyword(field string, values []string) query.Query {
	or := make([]query.Query, len(values))
	for i, v := range values {
		or[i] = term(field, v)
	}
	return anyOf(or)
}

// anyNumber matches a numeric field (or any value of a numeric list field)
// equal to any of the values: each value is a one-point inclusive range,
// which Bleve answers with the single full-precision term.
func anyNumber(field string, values []int64) query.Query {
	or := make([]query.Query, len(values))
	for i, v := range values {
		f := float64(v)
		yes := true
		q := query.NewNumericRangeInclusiveQuery(&f, &f, &yes, &yes)
		q.SetField(field)
		or[i] = q
	}
	return anyOf(or)
}

// numberRange is a one-sided range on field: above v when lower, else below
// it, inclusive or not.
func numberRange(field string, v int64, lower, inclusive bool) query.Query {
	f := float64(v)
	var q *query.NumericRangeQuery
	if lower {
		q = query.NewNumericRangeInclusiveQuery(&f, nil, &inclusive, nil)
	} else {
		q = query.NewNumericRangeInclusiveQuery(nil, &f, nil, &inclusive)
	}
	q.SetField(field)
	return q
}

func boolIs(field string, v bool) query.Query {
	q := query.NewBoolFieldQuery(v)
	q.SetField(field)
	return q
}

// all is the conjunction of qs; with none it matches everything.
func all(qs []query.Query) query.Query {
	switch len(qs) {
	case 0:
		return query.NewMatchAllQuery()
	case 1:
		return qs[0]
	}
	return query.NewConjunctionQuery(qs)
}

// anyOf is the disjunction of qs; with none it matches nothing.
func anyOf(qs []query.Query) query.Query {
	switch len(qs) {
	case 0:
		return query.NewMatchNoneQuery()
	case 1:
		return qs[0]
	}
	return query.NewDisjunctionQuery(qs)
}
