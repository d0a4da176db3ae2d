package api_test

import (
	"testing"
)

// Issue 7, findings 4 and 6 on MongoDB (FerretDB): the duplicate-detection
// rules by role, the term rights and the three creation races.
func TestMongoPermissionsAndRaces(t *testing.T) {
	t.Parallel()
	e := newMongoEnv(t)
	t.Run("races", func(t *testing.T) { checkRaces(t, e.app, e.store, e.tokens["editor"]) })
	t.Run("duplicates", func(t *testing.T) {
		town := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Mongo Hall", "phone": "111"}).id()
		secret := e.must(201, "POST", "venues", "contributor2", map[string]any{"venue": "Mongo Secret", "phone": "222"}).id()
		e.run(t, []scenario{
			{name: "contributor reuses published unchanged", method: "POST", url: "venues", as: "contributor",
				body: map[string]any{"venue": "mongo hall", "phone": "999"}, status: 201, want: map[string]any{"id": town, "phone": "111"}},
			{name: "author does not see a draft", method: "POST", url: "venues", as: "author",
				body: map[string]any{"venue": "Mongo Secret", "phone": "evil"}, status: 201,
				check: notReused(secret, "a hidden draft")},
			{name: "owner updates own draft", method: "POST", url: "venues", as: "contributor2",
				body: map[string]any{"venue": "Mongo Secret", "phone": "223"}, status: 201, want: map[string]any{"id": secret, "phone": "223"}},
			{name: "editor updates", method: "POST", url: "venues", as: "editor",
				body: map[string]any{"venue": "Mongo Hall", "phone": "444"}, status: 201, want: map[string]any{"id": town, "phone": "444"}},
			{name: "contributor new category refused", method: "POST", url: "events", as: "contributor",
				body: map[string]any{"title": "T", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "categories": "Mongo New"}, status: 403},
			{name: "author new category", method: "POST", url: "events", as: "author",
				body: map[string]any{"title": "T", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "categories": "Mongo New", "tags": "Race-Tag"}, status: 201,
				want: map[string]any{"categories.0.name": "Mongo New", "tags.0.slug": "race-tag"}},
		})
	})
}
