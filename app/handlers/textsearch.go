package handlers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/search"
)

// This file holds the search options of GET /events beyond the words
// themselves (issue 8): orderby=relevance, facets and highlight. The
// text-matching rules are the search package's (search/text.go).

// textSearchArgs declares orderby, facets and highlight of GET /events.
func textSearchArgs() []Arg {
	return []Arg{
		{Name: "orderby", Type: tString, Enum: []string{"date", "relevance"}, Default: "date",
			Desc: "relevance (only with search): best match first, then by date; date: by start date."},
		{Name: "facets", Type: tArray, Items: tString, Check: checkFacets,
			Desc: "Count the matching events per value of these fields (" + strings.Join(search.EventFacets, ", ") +
				"): the response gains facets, with exact counts over the whole result (not the page). Password-protected events count only for callers who may see their fields."},
		{Name: "highlight", Type: tBoolean, Default: "false",
			Desc: "true (with search): each event gains highlight.title and highlight.excerpt, HTML-escaped with <mark> around the matched words."},
	}
}

// checkFacets accepts a CSV or list of known facet names.
func checkFacets(_ *Request, v any) string {
	list := input.AsList(v)
	if len(list) == 0 {
		return "Must name one or more of " + strings.Join(search.EventFacets, ", ") + "."
	}
	for _, f := range list {
		s, _ := input.AsString(f)
		if !contains(search.EventFacets, s) {
			return fmt.Sprintf("Must be among %s; %s is not.", strings.Join(search.EventFacets, ", "), strconv.Quote(s))
		}
	}
	return ""
}

// applyTextSearchArgs sets the relevance order and the facets of q.
func applyTextSearchArgs(b *input.Bag, q *search.EventQuery) error {
	if b.Str("orderby") == "relevance" {
		if !b.Has("search") {
			return apierr.InvalidParam("orderby", "orderby=relevance requires search: send search with the words to rank by, or orderby=date.")
		}
		q.Relevance = true
	}
	if v, ok := b.Get("facets"); ok {
		for _, f := range input.AsList(v) {
			s, _ := input.AsString(f)
			if !contains(q.Facets, s) {
				q.Facets = append(q.Facets, s)
			}
		}
	}
	return nil
}

// facetsFromList reports whether the list query itself gives the reader's
// facets: it leaves protected events out, or the reader sees them all
// (access.Reader.SeesAllProtected: only then do password-protected events
// count in facets, whose values (categories, tags, venue, organizer,
// featured, ticketed) are protected fields).
func facetsFromList(rd access.Reader, q search.EventQuery) bool {
	return q.ExcludeProtected || rd.SeesAllProtected()
}

// eventFacets returns the facets of q for the caller: from res when q
// already leaves protected events out or the caller sees them all, else
// from a count-only query without them.
func (pt *events) eventFacets(lr lister, q search.EventQuery, res search.Result) (map[string]map[string]int, error) {
	if len(q.Facets) == 0 {
		return nil, nil
	}
	if facetsFromList(lr.reader, q) {
		return res.Facets, nil
	}
	q.ExcludeProtected, q.Offset, q.Limit, q.Relevance = true, 0, 0, false
	counted, err := pt.searchEvents(lr.ctx, q)
	if err != nil {
		return nil, err
	}
	return counted.Facets, nil
}
