// Package handlers serves the API's routes: one file per resource (posts.go
// for events, venues and organizers by ID or slug, lists.go, feeds.go,
// terms.go, accounts.go, admin.go, webhooks.go, index.go and openapi.go for
// the interface itself), with the route table in routes.go. A handler reads
// in order: its input (the route's declared parameters, validated by
// Prepare, and app/input), the access decision (app/access), the store or
// search call, and the presentation (app/present).
//
// The root app registers Routes behind its middleware (authentication,
// write rates, the response cache, metrics) and calls Prepare, then the
// route's Handle, for every request.
package handlers
