package present

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/search"
)

// Facets renders facets in the order of search.EventFacets, values
// in the engine's order (an object of counts per facet).
func Facets(facets map[string]map[string]int) *Obj {
	o := NewObj()
	for _, f := range search.EventFacets {
		counts, ok := facets[f]
		if !ok {
			continue
		}
		c := NewObj()
		for _, v := range sortedKeys(counts) {
			c.Set(v, counts[v])
		}
		o.Set(f, c)
	}
	return o
}

// AddHighlight sets highlight {title, excerpt} on a rendered event: the
// plain text of its rendered title and excerpt, HTML-escaped, with the
// matched words marked. It reads the rendered (and, for a locked event,
// redacted) fields, so it never shows text the caller may not see.
func AddHighlight(o *Obj, terms []search.Term) {
	field := func(name string) string {
		v, _ := o.Get(name)
		s, _ := v.(string)
		return search.Highlight(strings.TrimSpace(search.PlainText(s)), terms)
	}
	o.Set("highlight", NewObj().Set("title", field("title")).Set("excerpt", field("excerpt")))
}

// sortedKeys returns the values of a facet in order: numbers (IDs)
// numerically, then the other values (true, false) alphabetically.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.ParseInt(a, 10, 64)
		y, errB := strconv.ParseInt(b, 10, 64)
		switch {
		case errA == nil && errB == nil:
			return cmp.Compare(x, y)
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// RedactEvent blanks the protected fields of a password-protected event in
// a list, as the original plugin does (title, slug, dates and IDs stay).
func RedactEvent(o *Obj) {
	for k, v := range map[string]any{"description": "", "excerpt": "", "image": false, "all_day": nil, "show_map": nil,
		"show_map_link": nil, "hide_from_listings": nil, "sticky": nil, "featured": nil, "ticketed": nil, "cost": "",
		"website": "", "categories": []any{}, "tags": []any{}, "venue": []any{}, "organizer": []any{}, "custom_fields": []any{}} {
		if _, ok := o.Get(k); ok {
			o.Set(k, v)
		}
	}
	o.Set("cost_details", NewObj().Set("currency_symbol", "").Set("currency_position", "").Set("currency_code", "").Set("values", []any{}))
}
