package api_test

import (
	"strconv"
	"testing"
)

// TestSingleLanguageFallback: a record written in one language only keeps
// its text in every other language (docs/decisions.md, "Languages": the
// default language, then the record's first language), in lists, reads and
// searches, for events, venues, organizers and terms.
func TestSingleLanguageFallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fr := "?multilang_language=fr"
	ev := e.must(201, "POST", "events"+fr, "editor", map[string]any{"title": "Fête de la musique", "description": "Concerts gratuits",
		"start_date": "2026-12-21 18:00:00", "end_date": "2026-12-21 23:00:00"})
	ve := e.must(201, "POST", "venues"+fr, "editor", map[string]any{"venue": "Salle des fêtes"})
	or := e.must(201, "POST", "organizers"+fr, "editor", map[string]any{"organizer": "Comité des fêtes"})
	ca := e.must(201, "POST", "categories"+fr, "editor", map[string]any{"name": "Fêtes populaires"})
	// A record with a Dutch and a French text but no English one shows the
	// Dutch (nl comes before fr in LANGUAGES).
	nl := e.must(201, "POST", "events?multilang_language=nl", "editor", map[string]any{"title": "Koningsdag",
		"start_date": "2026-12-22 10:00:00", "end_date": "2026-12-22 18:00:00"})
	e.must(200, "POST", "events/"+strconv.FormatInt(nl.id(), 10)+fr, "editor", map[string]any{"title": "Fête du roi"})
	e.flush()
	id := func(r *resp) string { return strconv.FormatInt(r.id(), 10) }
	e.run(t, []scenario{
		{name: "event list in the default language", method: "GET", url: "events", status: 200, want: map[string]any{
			"total": 2, "events.0.id": ev.id(), "events.0.title": "Fête de la musique", "events.0.description": "Concerts gratuits",
			"events.0.slug": "fete-de-la-musique", "events.0.language": "fr", "events.0.translations": []any{"fr"},
			"events.1.title": "Koningsdag", "events.1.language": "nl", "events.1.translations": []any{"nl", "fr"}}},
		{name: "event search in the default language", method: "GET", url: "events?search=fete", status: 200, want: map[string]any{
			"total": 1, "events.0.id": ev.id(), "events.0.title": "Fête de la musique"}},
		{name: "event search in another language", method: "GET", url: "events?search=gratuits&multilang_language=de", status: 200, want: map[string]any{
			"total": 1, "events.0.title": "Fête de la musique"}},
		{name: "first language, not a later one", method: "GET", url: "events?search=roi", status: 200, want: map[string]any{"total": 0}},
		{name: "own language still wins", method: "GET", url: "events?search=roi" + "&multilang_language=fr", status: 200, want: map[string]any{
			"total": 1, "events.0.title": "Fête du roi", "events.0.language": "fr"}},
		{name: "event by id", method: "GET", url: "events/" + id(ev), status: 200, want: map[string]any{
			"title": "Fête de la musique", "language": "fr", "url": "http://example.test/event/fete-de-la-musique/"}},
		{name: "event by its only slug", method: "GET", url: "events/by-slug/fete-de-la-musique", status: 200, want: map[string]any{"id": ev.id()}},
		{name: "event by the slug of its first language", method: "GET", url: "events/by-slug/koningsdag?multilang_language=de", status: 200, want: map[string]any{"id": nl.id()}},
		{name: "not by the slug of a later language", method: "GET", url: "events/by-slug/fete-du-roi", status: 404, want: map[string]any{"code": "rest-event-not-found"}},
		{name: "venue by its only slug", method: "GET", url: "venues/by-slug/salle-des-fetes", status: 200, want: map[string]any{"id": ve.id()}},
		{name: "venue list", method: "GET", url: "venues?search=salle", status: 200, want: map[string]any{
			"total": 1, "venues.0.venue": "Salle des fêtes", "venues.0.slug": "salle-des-fetes", "venues.0.language": "fr"}},
		{name: "venue by id", method: "GET", url: "venues/" + id(ve), status: 200, want: map[string]any{"venue": "Salle des fêtes", "language": "fr"}},
		{name: "organizer list", method: "GET", url: "organizers?search=comite", status: 200, want: map[string]any{
			"total": 1, "organizers.0.organizer": "Comité des fêtes", "organizers.0.language": "fr"}},
		{name: "organizer by id", method: "GET", url: "organizers/" + id(or), status: 200, want: map[string]any{"organizer": "Comité des fêtes"}},
		{name: "category list", method: "GET", url: "categories?hide_empty=0&search=populaires", status: 200, want: map[string]any{
			"categories.0.id": ca.id(), "categories.0.name": "Fêtes populaires", "categories.0.slug": "fetes-populaires", "categories.0.language": "fr"}},
		{name: "category by id", method: "GET", url: "categories/" + id(ca), status: 200, want: map[string]any{"name": "Fêtes populaires", "language": "fr"}},
	})
}
