package present

import (
	"bytes"
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

// Highlight is an event's highlight field: its title and excerpt as
// plain text, HTML-escaped, with the matched words marked.
type Highlight struct {
	Title, Excerpt string
}

func (h *Highlight) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("title", h.Title)
	w.str("excerpt", h.Excerpt)
	return w.close()
}

// MarshalJSON writes the highlight.
func (h *Highlight) MarshalJSON() ([]byte, error) { return marshal(h) }

// AddHighlight sets the highlight of a rendered event from its rendered
// (and, for a locked event, redacted) title and excerpt, so it never
// shows text the caller may not see.
func AddHighlight(e *Event, terms []search.Term) {
	field := func(s string) string {
		return search.Highlight(strings.TrimSpace(search.PlainText(s)), terms)
	}
	e.Highlight = &Highlight{Title: field(e.Title), Excerpt: field(e.Excerpt)}
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
// a list, as the original plugin does (title, slug, dates and IDs stay;
// the flags are written null).
func RedactEvent(e *Event) {
	e.redacted, e.head = true, nil
	e.Description, e.Excerpt, e.Image, e.Cost, e.Website = "", "", nil, "", ""
	e.EventStatusReason = ""
	e.CostDetails = CostDetails{Values: []string{}}
	e.Categories, e.Tags, e.Venue, e.Organizer = nil, nil, nil, nil
	e.AllDay, e.ShowMap, e.ShowMapLink, e.HideFromListings, e.Sticky, e.Featured, e.Ticketed = false, false, false, false, false, false, false
}
