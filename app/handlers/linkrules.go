package handlers

import (
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// What a write links to follows per-record rules the calendar service
// applies (app/calendar: duplicates, links by ID, new terms). Responses
// leave out linked venues and organizers the caller may not read (item
// reads, lists and json_ld alike): loadLinked.

// loadLinked is LinkedFor for the caller of the request.
func (r *Request) loadLinked(posts []*repository.Record) (*present.Linked, error) {
	return r.s.render.LinkedFor(r.ctx, r.user, posts)
}
