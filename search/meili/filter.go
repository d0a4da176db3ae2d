package meili

import (
	"strconv"
	"strings"

	"github.com/calendar/eventcal/search"
)

// Filter expressions are built only by the helpers in this file, so that
// every value reaching Meilisearch is formatted (and escaped) in one place.
// Grammar: https://www.meilisearch.com/docs/learn/filtering_and_sorting/filter_expression_reference
//
// Attribute names are never user input: they are the constants in
// documents.go or come from attr, which reduces them to [a-z0-9_-].

// quote is the only escaping function for filter values. It returns s as a
// double-quoted filter string in which every backslash and double quote is
// preceded by a backslash; nothing else is changed, unicode included.
//
// Why exactly these two: Meilisearch's filter parser ends a double-quoted
// value at the first unescaped double quote, turns \" back into ", and then
// runs the value through a general unescaper in which \\ is a backslash
// and \n, \t, \u{…} are escape sequences
// (meilisearch/meilisearch crates/filter-parser/src/value.rs, quoted_by and
// parse_value; behaviour since v1.4, see
// https://www.meilisearch.com/docs/changelog/v1.4). Doubling every
// backslash therefore keeps each one literal, and escaping the double quote
// keeps the value in one piece. Double quotes are used rather than single
// quotes so that apostrophes, far more common in names, need no escaping.
// Control characters need none: the filter travels as a JSON string and
// encoding/json escapes them there.
//
// The quoting works byte by byte: '\\' and '"' are ASCII and can never be
// part of a multi-byte UTF-8 sequence, so other characters pass through
// untouched.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// literal is a value that can appear on the right of a comparison.
type literal interface {
	int64 | bool | string
}

// value formats a literal: numbers and booleans bare, strings quoted.
// Booleans are compared as the words true and false, which is how
// Meilisearch stores boolean facet values.
func value[T literal](v T) string {
	switch x := any(v).(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return quote(x)
	}
	panic("unreachable")
}

// eq is "field = value".
func eq[T literal](field string, v T) string { return field + " = " + value(v) }

// maxFilterValues is the most values the service puts in one IN list,
// and, in the lists it builds itself from IDs it read or writes (deletions
// by ID, the overlap count of a collapsed search), in one request: longer
// lists are cut into several requests (filterChunks).
//
// Why: at v1.50.0 Meilisearch's filter parser
// builds an error object for every alternative a value fails to parse as
// (the _geo* checks in parse_value, crates/filter-parser/src/value.rs),
// and each such error copies the remaining filter and the whole filter
// (OwnedSpan's From<Span>, crates/filter-parser/src/lib.rs; error.rs,
// from_error_kind), so one value costs time in proportion to the length of
// the filter it is in, and a list of n values n² (v1.18.0 borrows the
// input and parses in linear time). Measured with the parser of each tag
// on one core: 100 IDs 0.4 ms, 1,000 IDs 8 ms (v1.18.0: 1 ms), 2,000 IDs
// 31 ms, 10,000 IDs 2.7 s. Several lists OR'ed in one filter cost as much
// as one list of all their values, which is why the bound is per request
// and not per list. 100 keeps a parse well under a millisecond and equals
// the API's bound on a caller's list (config/limits.MaxListItems), so a
// list from a query is never cut.
const maxFilterValues = 100

// filterChunks cuts vs into parts of at most maxFilterValues and at most
// batch values, in order.
func filterChunks[T any](vs []T, batch int) [][]T {
	size := min(batch, maxFilterValues)
	if size <= 0 {
		size = maxFilterValues
	}
	var out [][]T
	for start := 0; start < len(vs); start += size {
		out = append(out, vs[start:min(start+size, len(vs))])
	}
	return out
}

// in is "field IN [v1, v2, …]": on an array attribute it matches documents
// holding at least one of the values. Callers never pass an empty list (an
// empty list is "no filter" in search.EventQuery / search.PlaceQuery), nor
// one longer than maxFilterValues.
func in[T int64 | string](field string, vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = value(v)
	}
	return field + " IN [" + strings.Join(parts, ", ") + "]"
}

// ne is "field != value" (on an attribute every document has).
func ne(field string, v int64) string { return field + " != " + value(v) }

// gte, gt, lt and lte compare a numeric attribute with a number.
func gte(field string, v int64) string { return field + " >= " + value(v) }
func gt(field string, v int64) string  { return field + " > " + value(v) }
func lt(field string, v int64) string  { return field + " < " + value(v) }
func lte(field string, v int64) string { return field + " <= " + value(v) }

// and joins the non-empty conditions with AND ("" when there are none). It
// does not parenthesise: AND binds tighter than OR in Meilisearch's filter
// grammar (expression = or; or = and ("OR" and)*; and = not ("AND" not)*,
// see meilisearch/meilisearch crates/filter-parser/src/lib.rs), and or
// parenthesises its own result.
func and(conds ...string) string { return strings.Join(nonEmpty(conds), " AND ") }

// or joins the non-empty conditions with OR, in parentheses when there are
// several, so that the result can be an operand of and.
func or(conds ...string) string {
	conds = nonEmpty(conds)
	if len(conds) < 2 {
		return strings.Join(conds, "")
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// geoRadius keeps documents whose _geo point lies within meters of center
// (documents without _geo never match). Meilisearch takes the radius in
// meters: https://www.meilisearch.com/docs/capabilities/geo_search/how_to/filter_by_geo_radius
func geoRadius(center search.GeoPoint, meters float64) string {
	return "_geoRadius(" + number(center.Lat) + ", " + number(center.Lng) + ", " + number(meters) + ")"
}

// not negates a condition.
func not(cond string) string { return "NOT " + cond }

// number formats a float in plain decimal notation (never an exponent,
// which the filter grammar does not accept).
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func nonEmpty(conds []string) []string {
	out := conds[:0:0]
	for _, c := range conds {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}
