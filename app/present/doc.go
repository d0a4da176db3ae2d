// Package present turns records into the API's bytes: the JSON shapes of
// events, venues, organizers and terms (one file per shape: event.go,
// place.go, term.go, with cost.go, dates.go and jsonld.go for the fields
// they share), the ordered JSON object they are built of (Obj, obj.go) and
// the caches a render reads through (linked records and kept renderings,
// linkcache.go; term counts, counts.go). Beside the item shapes: the
// iCalendar mapping (ical.go), the admin shapes (users, tokens, webhooks:
// admin.go) and the list extras (facets, highlights, the redaction of
// protected events: search.go).
//
// Which linked records a reader sees is decided once, in
// Renderer.LinkedFor (with access.SeesLinked): every output format (JSON,
// json_ld, iCalendar, webhook messages) renders from what it returns.
package present
