// Package present turns records into the API's bytes. Every response
// shape is a typed value (Event, Venue, Organizer, EmbeddedTerm, Term, the
// JSON-LD shapes, the list envelopes List and TermList, the admin shapes
// User, Token and Webhook, the namespace index): one file per shape
// (event.go, place.go, term.go, jsonld.go, list.go, admin.go, index.go,
// with cost.go, dates.go and occurrence.go for the fields they share).
// Each writes its own fields, in the order the original plugin sends them
// and with its own omission rules, through an objWriter (typed.go); the
// field orders are pinned by TestTypedFieldOrder. Obj (obj.go), an object
// that keeps its keys in insertion order, remains for the shapes whose
// keys are data (facets, the OpenAPI document, error data) and for
// _fields, which picks fields from any response read back in order
// (SendJSON, send.go).
//
// Renderings are cached (linkcache.go): linked venues, organizers and
// terms are kept with their encoding, and so are the post-only fields of
// listed events (ListedEvent), written from the kept bytes; term counts
// are kept in counts.go. Beside the JSON shapes: the iCalendar mapping
// (ical.go) and the list extras (facets, highlights, the redaction of
// protected events: search.go).
//
// Which linked records a reader sees is decided once, in
// Renderer.LinkedFor (with access.SeesLinked): every output format (JSON,
// json_ld, iCalendar, webhook messages) renders from what it returns.
// Whether a reader sees a protected event's fields, and which statuses a
// list shows, is access.Reader's.
package present
