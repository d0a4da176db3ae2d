package embedded

import (
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/calendar/eventcal/search"
)

// This file turns a PlaceQuery into a Bleve query (event queries are
// answered by search/memindex). Every set filter becomes one clause of a
// conjunction; the values of a list filter become a disjunction. Nothing is
// scored (the requests sort by fields), so Bleve can merge the postings of
// term disjunctions into bitmaps.

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
