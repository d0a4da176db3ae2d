package handlers

import (
	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/htmlpolicy"
	"github.com/calendar/eventcal/app/input"
)

// filterText applies the HTML policy to the validated text values of a
// bag, in place, unless the caller has unfiltered_html. It runs inside
// validation, so every write path (inline venues and organizers included)
// stores only filtered text.
func (r *Request) filterText(b *input.Bag, args []Arg) {
	if access.CanUnfilteredHTML(r.user) {
		return
	}
	for _, a := range args {
		if a.Text == notText {
			continue
		}
		filter := htmlpolicy.Plain
		if a.Text == richText {
			filter = htmlpolicy.Rich
		}
		switch v := b.Values[a.Name].(type) {
		case string:
			b.Values[a.Name] = filter(v)
		case []any:
			for i, x := range v {
				if s, ok := x.(string); ok {
					v[i] = filter(s)
				}
			}
		}
	}
}
