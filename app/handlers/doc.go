// Package handlers serves the API's routes: one file per resource (posts.go
// for events, venues and organizers by ID or slug, with occurrences.go
// for the occurrences of a series, lists.go, feeds.go, terms.go,
// accounts.go, admin.go, webhooks.go, index.go and openapi.go for the
// interface itself), with the route table in routes.go. A handler reads
// in order: its input (the route's declared parameters, validated by
// Prepare, then decoded once into a typed command, decode.go; a date is
// read once, by its parameter's Decode, into a datetext.Value that the
// command carries), the access
// decision (app/access), the call (the calendar service, app/calendar, for
// the writes of events, venues and organizers; the store or the search
// engine otherwise), and the presentation (app/present).
//
// Events, venues and organizers each have their handler type (events,
// venues, organizers) over the read code they share (items).
//
// The root app registers Routes behind its middleware (authentication,
// write rates, the response cache, metrics) and calls Prepare, then the
// route's Handle, for every request.
package handlers
