package api_test

import (
	"strconv"
	"testing"
)

func TestVenueRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Le Bataclan", "address": "50 Bd Voltaire",
		"city": "Paris", "country": "France", "province": "Île-de-France", "zip": "75011", "phone": "+33 1", "website": "https://bataclan.test",
		"show_map": "false", "geo_lat": "48.863", "geo_lng": 2.37})
	id := v.id()
	p := "venues/" + strconv.FormatInt(id, 10)
	draft := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Draft Hall", "status": "draft"}).id()
	e.run(t, []scenario{
		{name: "shape", method: "GET", url: p, status: 200, want: map[string]any{
			"venue": "Le Bataclan", "slug": "le-bataclan", "city": "Paris", "stateprovince": "Île-de-France", "zip": "75011",
			"show_map": false, "show_map_link": true, "geo_lat": 48.863, "geo_lng": 2.37, "json_ld.@type": "Place",
			"json_ld.address.addressLocality": "Paris", "status": "publish", "language": "en",
		}, absent: []string{"state", "excerpt", "image", "description"}},
		{name: "by slug", method: "GET", url: "venues/by-slug/le-bataclan", status: 200, want: map[string]any{"id": id}},
		{name: "duplicate returns existing id with 201", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "le bataclan", "country": "Elsewhere"}, status: 201,
			want: map[string]any{"id": id, "country": "Elsewhere"}},
		{name: "different description is not a duplicate", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "Le Bataclan", "description": "other"}, status: 201,
			check: func(t *testing.T, r *resp) {
				if r.id() == id {
					t.Error("a different description must create a new venue")
				}
				if r.str("slug") != "le-bataclan-2" {
					t.Errorf("slug = %q, want le-bataclan-2", r.str("slug"))
				}
			}},
		{name: "empty name", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": ""}, status: 400, contains: []string{`"venue"`}},
		{name: "missing name", method: "POST", url: "venues", as: "editor", body: map[string]any{"city": "X"}, status: 400, want: map[string]any{"code": "rest_missing_callback_param"}},
		{name: "bad website", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "W", "website": "foo"}, status: 400},
		{name: "bad latitude", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "G", "geo_lat": 91}, status: 400, contains: []string{"geo_lat"}},
		{name: "bad status", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "S", "status": "kinda_thinking_about_it"}, status: 400},
		{name: "bad author", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "S", "author": 23}, status: 400},
		{name: "bad date_utc", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "S", "date_utc": "foo"}, status: 400},
		{name: "anonymous create", method: "POST", url: "venues", body: map[string]any{"venue": "X"}, status: 401},
		{name: "update clears key", method: "POST", url: p, as: "editor", body: map[string]any{"phone": ""}, status: 200, absent: []string{"phone"}, want: map[string]any{"zip": "75011"}},
		{name: "contributor cannot edit", method: "POST", url: p, as: "contributor", body: map[string]any{"city": "X"}, status: 403},
		{name: "draft hidden from anonymous", method: "GET", url: "venues/" + strconv.FormatInt(draft, 10), status: 403, want: map[string]any{"code": "venue-not-accessible"}},
		{name: "draft visible to editor", method: "GET", url: "venues/" + strconv.FormatInt(draft, 10), as: "editor", status: 200},
		{name: "missing", method: "GET", url: "venues/99999", status: 404, want: map[string]any{"code": "rest-venue-not-found"}},
		{name: "trash", method: "DELETE", url: p, as: "editor", status: 200, want: map[string]any{"status": "trash"}},
		{name: "trash twice", method: "DELETE", url: p, as: "editor", status: 410, want: map[string]any{"code": "venue-is-in-trash"}},
		{name: "trashed hidden", method: "GET", url: p, status: 403, want: map[string]any{"code": "venue-no-longer-available"}},
		{name: "french update by slug", method: "PATCH", url: "venues/by-slug/draft-hall?multilang_language=fr", as: "editor", body: map[string]any{"venue": "Salle Brouillon"}, status: 200,
			want: map[string]any{"venue": "Salle Brouillon", "slug": "salle-brouillon", "language": "fr"}},
	})
}

func TestOrganizerRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.must(201, "POST", "organizers", "author", map[string]any{"organizer": "Acme Events", "email": "hi@acme.test", "phone": "1111", "website": "https://acme.test"})
	id := o.id()
	p := "organizers/" + strconv.FormatInt(id, 10)
	e.run(t, []scenario{
		{name: "shape", method: "GET", url: p, status: 200, want: map[string]any{"organizer": "Acme Events", "email": "hi@acme.test",
			"phone": "1111", "website": "https://acme.test", "slug": "acme-events", "json_ld.@type": "Person", "author": strconv.FormatInt(e.users["author"].ID, 10)},
			absent: []string{"description", "excerpt", "image"}},
		{name: "duplicate subset", method: "POST", url: "organizers", as: "author", body: map[string]any{"organizer": "Acme Events", "phone": "2222"}, status: 201, want: map[string]any{"id": id}},
		{name: "missing name", method: "POST", url: "organizers", as: "author", body: map[string]any{"email": "x"}, status: 400},
		{name: "bad website", method: "POST", url: "organizers", as: "author", body: map[string]any{"organizer": "X", "website": "foo"}, status: 400},
		{name: "clear email", method: "PUT", url: p, as: "author", body: map[string]any{"email": ""}, status: 200, absent: []string{"email"}},
		{name: "keep others", method: "PUT", url: p, as: "author", body: map[string]any{"description": "d"}, status: 200, want: map[string]any{"website": "https://acme.test"}},
		{name: "other author forbidden", method: "PUT", url: p, as: "author2", body: map[string]any{"description": "x"}, status: 403},
		{name: "by slug", method: "GET", url: "organizers/by-slug/acme-events", status: 200, want: map[string]any{"id": id}},
		{name: "delete by slug", method: "DELETE", url: "organizers/by-slug/acme-events", as: "author", status: 200, want: map[string]any{"status": "trash"}},
		{name: "delete twice", method: "DELETE", url: p, as: "author", status: 410, want: map[string]any{"code": "organizer-is-in-trash"}},
		{name: "missing", method: "DELETE", url: "organizers/99999", as: "author", status: 404, want: map[string]any{"code": "rest-organizer-not-found"}},
	})
}

func TestTermRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := e.must(201, "POST", "categories", "author", map[string]any{"name": "Music", "description": "All music"})
	pid := parent.id()
	if loc := parent.header.Get("Location"); loc == "" {
		t.Error("create must send Location")
	}
	child := e.must(201, "POST", "categories", "author", map[string]any{"name": "Jazz", "parent": pid}).id()
	e.must(201, "POST", "events", "editor", map[string]any{"title": "E", "start_date": "2026-12-01", "end_date": "2026-12-01", "categories": []any{child}})
	for i := 0; i < 4; i++ {
		e.must(201, "POST", "tags", "editor", map[string]any{"name": "tag " + strconv.Itoa(i)})
	}
	cp := "categories/" + strconv.FormatInt(child, 10)
	e.run(t, []scenario{
		{name: "shape", method: "GET", url: cp, status: 200, want: map[string]any{"id": child, "count": 1, "name": "Jazz", "slug": "jazz",
			"taxonomy": "tribe_events_cat", "parent": pid, "meta": []any{}, "url": "http://example.test/events/category/jazz/",
			"urls.up": "http://example.test" + root + "/categories/" + strconv.FormatInt(pid, 10)}},
		{name: "tag has no parent", method: "GET", url: "tags?hide_empty=0&per_page=1", status: 200, absent: []string{"tags.0.parent"},
			want: map[string]any{"total": 4, "total_pages": 4, "next_rest_url": "http://example.test" + root + "/tags/?hide_empty=0&per_page=1&page=2"}},
		{name: "hide_empty default", method: "GET", url: "categories", status: 200, want: map[string]any{"total": 1, "categories.0.name": "Jazz"}},
		{name: "all by name", method: "GET", url: "categories?hide_empty=false", status: 200, want: map[string]any{"total": 2, "categories.0.name": "Jazz", "categories.1.name": "Music"}},
		{name: "parent filter", method: "GET", url: "categories?hide_empty=0&parent=" + strconv.FormatInt(pid, 10), status: 200, want: map[string]any{"total": 1}},
		{name: "search", method: "GET", url: "categories?hide_empty=0&search=mus", status: 200, want: map[string]any{"total": 1, "categories.0.name": "Music"}},
		{name: "past last page is empty 200", method: "GET", url: "tags?hide_empty=0&page=9", status: 200, want: map[string]any{"tags": []any{}}},
		{name: "offset", method: "GET", url: "tags?hide_empty=0&per_page=2&offset=3&orderby=id", status: 200, want: map[string]any{"tags.0.name": "tag 3", "total": 4}},
		{name: "negative offset", method: "GET", url: "tags?offset=-1", status: 400},
		{name: "bad include", method: "GET", url: "categories?include=2389", status: 400},
		{name: "empty order", method: "GET", url: "categories?order=", status: 400},
		{name: "duplicate name", method: "POST", url: "categories", as: "author", body: map[string]any{"name": "jazz", "parent": pid}, status: 400, want: map[string]any{"code": "term_exists", "data.term_id": child}},
		{name: "empty name", method: "POST", url: "tags", as: "editor", body: map[string]any{"name": ""}, status: 400},
		{name: "bad parent", method: "POST", url: "categories", as: "author", body: map[string]any{"name": "X", "parent": 2389}, status: 400},
		{name: "contributor cannot create category", method: "POST", url: "categories", as: "contributor", body: map[string]any{"name": "X"}, status: 403},
		{name: "author cannot create tag", method: "POST", url: "tags", as: "author", body: map[string]any{"name": "X"}, status: 403},
		{name: "anonymous create", method: "POST", url: "tags", body: map[string]any{"name": "X"}, status: 401},
		{name: "update", method: "PATCH", url: cp, as: "author", body: map[string]any{"description": "Swing"}, status: 200, want: map[string]any{"description": "Swing", "name": "Jazz"}},
		{name: "french name", method: "PATCH", url: cp + "?multilang_language=fr", as: "author", body: map[string]any{"name": "Le Jazz"}, status: 200, want: map[string]any{"name": "Le Jazz", "slug": "le-jazz", "language": "fr"}},
		{name: "own ancestor", method: "PATCH", url: "categories/" + strconv.FormatInt(pid, 10), as: "author", body: map[string]any{"parent": child}, status: 400},
		{name: "delete returns old count", method: "DELETE", url: cp, as: "author", status: 200, want: map[string]any{"count": 1, "name": "Jazz"}},
		{name: "delete again 404", method: "DELETE", url: cp, as: "author", status: 404, want: map[string]any{"code": "rest-category-not-found"}},
		{name: "category id on tag route", method: "GET", url: "tags/" + strconv.FormatInt(pid, 10), status: 404, want: map[string]any{"code": "rest-tag-not-found"}},
	})
}

func TestNamespaceIndexAndMisc(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(t, []scenario{
		{name: "index", method: "GET", url: root, status: 200, want: map[string]any{"namespace": "calendar/events/v1",
			"routes./calendar/events/v1/events/{id}.methods": []any{"GET", "POST", "PUT", "PATCH", "DELETE"}},
			contains: []string{`"/calendar/events/v1/events/by-slug/{slug}"`, `"_links"`}},
		{name: "healthz", method: "GET", url: "/healthz", status: 200},
		{name: "readyz", method: "GET", url: "/readyz", status: 200},
		{name: "method override", method: "POST", url: "tags/1?_method=DELETE", status: 401},
	})
}
