package api_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// eventKeys is the key order of an Event object: the original plugin's
// keys in its order, then our additions.
var eventKeys = []string{"id", "global_id", "global_id_lineage", "author", "status", "date", "date_utc", "modified",
	"modified_utc", "url", "rest_url", "title", "description", "excerpt", "slug", "image", "all_day", "start_date",
	"start_date_details", "end_date", "end_date_details", "utc_start_date", "utc_start_date_details", "utc_end_date",
	"utc_end_date_details", "timezone", "timezone_abbr", "cost", "cost_details", "website", "show_map",
	"show_map_link", "hide_from_listings", "sticky", "featured", "categories", "tags", "venue", "organizer",
	"custom_fields", "ticketed", "language", "translations", "recurrence", "event_status", "event_status_reason", "source"}

func TestEventCreateReadShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Paradiso", "city": "Amsterdam", "country": "Netherlands", "province": "Noord-Holland", "geo_lat": 52.36, "geo_lng": 4.88})
	o := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Mojo", "email": "info@mojo.test"})
	c := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Concerts"})
	created := e.must(201, "POST", "events", "editor", map[string]any{
		"title": "Jazz Night", "description": "<p>Live</p>", "excerpt": "Short",
		"start_date": "2026-12-01 20:00:00", "end_date": "2026-12-01 23:00:00", "timezone": "Europe/Amsterdam",
		"venue": v.id(), "organizer": []any{o.id()}, "categories": []any{c.id()}, "tags": "jazz,live",
		"cost": "20$", "featured": true, "website": "https://jazz.test/night", "image": "https://img.test/a/poster.jpg",
	})
	if got := keysOf(t, created.raw); !equalStrings(got, eventKeys) {
		t.Fatalf("keys\n got %v\nwant %v", got, eventKeys)
	}
	id := created.id()
	cases := []scenario{
		{name: "by id", method: "GET", url: "events/" + strconv.FormatInt(id, 10), status: 200, want: map[string]any{
			"title": "Jazz Night", "description": "<p>Live</p>", "slug": "jazz-night", "status": "publish",
			"author":     strconv.FormatInt(e.users["editor"].ID, 10),
			"start_date": "2026-12-01 20:00:00", "end_date": "2026-12-01 23:00:00",
			"utc_start_date": "2026-12-01 19:00:00", "utc_end_date": "2026-12-01 22:00:00",
			"start_date_details": map[string]any{"year": "2026", "month": "12", "day": "01", "hour": "20", "minutes": "00", "seconds": "00"},
			"timezone":           "Europe/Amsterdam", "timezone_abbr": "CET",
			"cost": "20$", "cost_details": map[string]any{"currency_symbol": "$", "currency_code": "", "currency_position": "postfix", "values": []any{"20"}},
			"featured": true, "sticky": false, "show_map": true, "show_map_link": true, "hide_from_listings": false,
			"website": "https://jazz.test/night", "venue.venue": "Paradiso", "venue.stateprovince": "Noord-Holland",
			"venue.geo_lat": 52.36, "organizer.0.organizer": "Mojo", "organizer.0.email": "info@mojo.test",
			"categories.0.name": "Concerts", "categories.0.taxonomy": "tribe_events_cat", "categories.0.count": 1,
			"tags.0.slug": "jazz", "tags.1.slug": "live", "tags.0.taxonomy": "post_tag",
			"image.url": "https://img.test/a/poster.jpg", "image.extension": "jpg",
			"language": "en", "translations": []any{"en"}, "json_ld.@type": "Event", "json_ld.name": "Jazz Night",
			"json_ld.startDate": "2026-12-01T19:00:00Z", "json_ld.location.@type": "Place", "venue.json_ld.@type": "Place",
			"rest_url":  "http://example.test" + root + "/events/" + strconv.FormatInt(id, 10),
			"global_id": "example.test?id=" + strconv.FormatInt(id, 10),
		}},
		{name: "by slug", method: "GET", url: "events/by-slug/jazz-night", status: 200, want: map[string]any{"id": id}},
		{name: "head", method: "HEAD", url: "events/" + strconv.FormatInt(id, 10), status: 200},
		{name: "missing id", method: "GET", url: "events/999999", status: 404, want: map[string]any{"code": "rest-event-not-found", "data.status": 404}},
		{name: "missing slug", method: "GET", url: "events/by-slug/nope", status: 404, want: map[string]any{"code": "rest-event-not-found"}},
		{name: "venue id on event route", method: "GET", url: "events/" + strconv.FormatInt(v.id(), 10), status: 400, want: map[string]any{"code": "rest-invalid-event-id"}},
		{name: "non-numeric id", method: "GET", url: "events/foo", status: 404, want: map[string]any{"code": "rest_no_route"}},
		{name: "unknown path", method: "GET", url: "nothing", status: 404, want: map[string]any{"code": "rest_no_route"}},
		{name: "list context has no json_ld on create", method: "GET", url: "events/" + strconv.FormatInt(id, 10), status: 200,
			check: func(t *testing.T, r *resp) {
				if created.path("json_ld") != nil {
					t.Error("create response must not carry json_ld")
				}
			}},
	}
	e.run(t, cases)
}

func TestEventValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ok := map[string]any{"title": "T", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []scenario{
		{name: "anonymous write is 401 before validation", method: "POST", url: "events", body: map[string]any{}, status: 401, want: map[string]any{"code": "rest_forbidden"}},
		{name: "missing title", method: "POST", url: "events", as: "editor", body: with("title", nil), status: 400,
			want: map[string]any{"code": "rest_missing_callback_param", "data.params": []any{"title"}}},
		{name: "missing all", method: "POST", url: "events", as: "editor", body: map[string]any{}, status: 400,
			want: map[string]any{"data.params": []any{"title", "start_date", "end_date"}}},
		{name: "empty title", method: "POST", url: "events", as: "editor", body: with("title", ""), status: 400, want: map[string]any{"code": "rest_invalid_param"}, contains: []string{`"title"`}},
		{name: "bad start", method: "POST", url: "events", as: "editor", body: with("start_date", "before my birthday"), status: 400, want: map[string]any{"code": "rest_invalid_param", "data.details.start_date.data.received": "before my birthday"}, contains: []string{"start_date must be a date"}},
		{name: "end before start", method: "POST", url: "events", as: "editor", body: with("end_date", "2026-11-30 10:00"), status: 400, want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"end_date"}},
		{name: "bad website", method: "POST", url: "events", as: "editor", body: with("website", "foo"), status: 400, contains: []string{"website"}},
		{name: "bad boolean", method: "POST", url: "events", as: "editor", body: with("featured", "maybe"), status: 400, contains: []string{"featured"}},
		{name: "empty boolean", method: "POST", url: "events", as: "editor", body: with("sticky", ""), status: 400, contains: []string{"sticky"}},
		{name: "bad status", method: "POST", url: "events", as: "editor", body: with("status", "kinda_thinking_about_it"), status: 400, contains: []string{"status"}},
		{name: "bad author", method: "POST", url: "events", as: "editor", body: with("author", 2389), status: 400, contains: []string{"author"}},
		{name: "author not integer", method: "POST", url: "events", as: "editor", body: with("author", "foo"), status: 400, contains: []string{"author"}},
		{name: "bad date", method: "POST", url: "events", as: "editor", body: with("date", "foo"), status: 400, contains: []string{`"date"`}},
		{name: "bad timezone", method: "POST", url: "events", as: "editor", body: with("timezone", "Mars/Olympus"), status: 400, contains: []string{"timezone"}},
		{name: "unknown venue", method: "POST", url: "events", as: "editor", body: with("venue", 2389), status: 400, contains: []string{"venue"}},
		{name: "venue foo", method: "POST", url: "events", as: "editor", body: with("venue", "foo"), status: 400, contains: []string{"venue"}},
		{name: "inline venue without name", method: "POST", url: "events", as: "editor", body: with("venue", map[string]any{"city": "X"}), status: 400, contains: []string{"venue"}},
		{name: "unknown organizer", method: "POST", url: "events", as: "editor", body: with("organizer", []any{2389}), status: 400, contains: []string{"organizer"}},
		{name: "image not registered", method: "POST", url: "events", as: "editor", body: with("image", 2389), status: 400, contains: []string{"image"}},
		{name: "image raw file", method: "POST", url: "events", as: "editor", body: with("image", "https://x.test/a.raw"), status: 400, contains: []string{"image"}},
		{name: "image not url", method: "POST", url: "events", as: "editor", body: with("image", "foo bar"), status: 400, contains: []string{"image"}},
		{name: "contributor image url", method: "POST", url: "events", as: "contributor", body: with("image", "https://x.test/a.png"), status: 400, contains: []string{"image"}},
		{name: "bad language", method: "POST", url: "events", as: "editor", body: with("multilang_language", "xx"), status: 400, contains: []string{"multilang_language"}},
		{name: "malformed json", method: "POST", url: "events", as: "editor", body: `{"title":`, status: 400, want: map[string]any{"code": "rest_invalid_json"}},
		{name: "bad token", method: "POST", url: "events", as: "token:nope", body: ok, status: 401},
		{name: "relative dates ok", method: "POST", url: "events", as: "editor", body: with("start_date", "tomorrow 9am"), status: 201,
			want: map[string]any{"start_date": "2026-11-23 09:00:00"}},
		{name: "unix timestamp", method: "POST", url: "events", as: "editor", body: map[string]any{"title": "U", "start_date": 1798794000, "end_date": 1798797600}, status: 201,
			want: map[string]any{"utc_start_date": "2027-01-01 09:00:00"}},
		{name: "form encoded", method: "POST", url: "events", as: "editor", body: url.Values{"title": {"Form"}, "start_date": {"2026-12-02"}, "end_date": {"2026-12-02 10:00"}, "categories[]": {"a", "b"}}, status: 201,
			want: map[string]any{"title": "Form", "categories.1.name": "b"}},
		{name: "all day bounds", method: "POST", url: "events", as: "editor", body: map[string]any{"title": "A", "start_date": "2026-12-03 10:00", "end_date": "2026-12-04 11:00", "all_day": "true"}, status: 201,
			want: map[string]any{"start_date": "2026-12-03 00:00:00", "end_date": "2026-12-04 23:59:59", "all_day": true}},
		{name: "cost list", method: "POST", url: "events", as: "editor", body: with("cost", []any{"0$", "20$", "30$"}), status: 201,
			want: map[string]any{"cost": "Free – 30$", "cost_details.values": []any{"0", "20", "30"}, "cost_details.currency_position": "postfix"}},
		{name: "query parameters work", method: "POST", url: "events?title=Q&start_date=2026-12-05&end_date=2026-12-05", as: "editor", status: 201, want: map[string]any{"title": "Q"}},
		{name: "json beats query", method: "POST", url: "events?title=Query", as: "editor", body: ok, status: 201, want: map[string]any{"title": "T"}},
	}
	e.run(t, cases)
}

func TestEventUpdateDeletePermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(as string, extra map[string]any) int64 {
		body := map[string]any{"title": "E " + as, "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"}
		for k, v := range extra {
			body[k] = v
		}
		return e.must(201, "POST", "events", as, body).id()
	}
	adminEv := mk("admin", nil)
	contribDraft := mk("contributor", nil)
	contribPub := mk("editor", map[string]any{"author": e.users["contributor"].ID})
	path := func(id int64) string { return "events/" + strconv.FormatInt(id, 10) }
	cases := []scenario{
		{name: "contributor create is draft", method: "GET", url: path(contribDraft), as: "contributor", status: 200, want: map[string]any{"status": "draft"}},
		{name: "contributor asking publish gets pending", method: "POST", url: "events", as: "contributor",
			body: map[string]any{"title": "P", "start_date": "2026-12-01", "end_date": "2026-12-01", "status": "publish"}, status: 201, want: map[string]any{"status": "pending"}},
		{name: "author publishes", method: "POST", url: "events", as: "author",
			body: map[string]any{"title": "P", "start_date": "2026-12-01", "end_date": "2026-12-01", "status": "publish"}, status: 201, want: map[string]any{"status": "publish"}},
		{name: "anonymous update 401", method: "POST", url: path(contribDraft), body: map[string]any{"title": "x"}, status: 401},
		{name: "anonymous delete 401", method: "DELETE", url: path(contribDraft), status: 401},
		{name: "anonymous delete of missing is 401", method: "DELETE", url: "events/999999", status: 401},
		{name: "contributor edits admin event 403", method: "POST", url: path(adminEv), as: "contributor", body: map[string]any{"title": "x"}, status: 403, want: map[string]any{"code": "rest_forbidden"}},
		{name: "contributor deletes admin event 403", method: "DELETE", url: path(adminEv), as: "contributor", status: 403},
		{name: "contributor edits own published 403", method: "PUT", url: path(contribPub), as: "contributor", body: map[string]any{"title": "x"}, status: 403},
		{name: "contributor deletes own published 403", method: "DELETE", url: path(contribPub), as: "contributor", status: 403},
		{name: "other contributor cannot edit draft", method: "PATCH", url: path(contribDraft), as: "contributor2", body: map[string]any{"title": "x"}, status: 403},
		{name: "by-slug applies the object check", method: "POST", url: "events/by-slug/e-admin", as: "contributor", body: map[string]any{"title": "x"}, status: 403},
		{name: "contributor edits own draft", method: "PATCH", url: path(contribDraft), as: "contributor", body: map[string]any{"excerpt": "new"}, status: 200,
			want: map[string]any{"excerpt": "new", "title": "E contributor", "status": "draft"}},
		{name: "partial update keeps other fields", method: "PUT", url: path(adminEv), as: "editor", body: map[string]any{"featured": true}, status: 200,
			want: map[string]any{"featured": true, "title": "E admin", "start_date": "2026-12-01 10:00:00"}},
		{name: "one date can change", method: "POST", url: path(adminEv), as: "editor", body: map[string]any{"end_date": "2026-12-02 12:00"}, status: 200,
			want: map[string]any{"start_date": "2026-12-01 10:00:00", "end_date": "2026-12-02 12:00:00"}},
		{name: "end before start on update", method: "POST", url: path(adminEv), as: "editor", body: map[string]any{"end_date": "2026-11-01"}, status: 400},
		{name: "anonymous cannot read draft", method: "GET", url: path(contribDraft), status: 403, want: map[string]any{"code": "event-not-accessible"}},
		{name: "other contributor cannot read draft", method: "GET", url: path(contribDraft), as: "contributor2", status: 403},
		{name: "editor reads draft", method: "GET", url: path(contribDraft), as: "editor", status: 200},
		{name: "update missing", method: "POST", url: "events/999999", as: "editor", body: map[string]any{"title": "x"}, status: 404, want: map[string]any{"code": "rest-event-not-found"}},
		{name: "contributor deletes own draft", method: "DELETE", url: path(contribDraft), as: "contributor", status: 200, want: map[string]any{"status": "trash"}},
		{name: "second delete 410", method: "DELETE", url: path(contribDraft), as: "contributor", status: 410, want: map[string]any{"code": "event-is-in-trash"}},
		{name: "trashed is 403 for anonymous", method: "GET", url: path(contribDraft), status: 403, want: map[string]any{"code": "event-no-longer-available"}},
		{name: "trashed is 200 for editor", method: "GET", url: path(contribDraft), as: "editor", status: 200, want: map[string]any{"status": "trash"}},
		{name: "author cannot force", method: "DELETE", url: path(contribPub) + "?force=true", as: "author", status: 403},
		{name: "editor force deletes", method: "DELETE", url: path(adminEv) + "?force=true", as: "editor", status: 200},
		{name: "gone after force", method: "GET", url: path(adminEv), status: 404},
		{name: "admin token works", method: "POST", url: "events", as: "token:admin-secret",
			body: map[string]any{"title": "Admin", "start_date": "2026-12-01", "end_date": "2026-12-01"}, status: 201, want: map[string]any{"status": "publish"}},
	}
	e.run(t, cases)
}

func TestEventPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Secret", "description": "hidden",
		"start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "password": "s3cret"}).id()
	p := "events/" + strconv.FormatInt(id, 10)
	e.run(t, []scenario{
		{name: "no password", method: "GET", url: p, status: 403, want: map[string]any{"code": "event-password-protected"}},
		{name: "wrong password", method: "GET", url: p + "?password=nope", status: 403},
		{name: "right password", method: "GET", url: p + "?password=s3cret", status: 200, want: map[string]any{"description": "hidden"}, absent: []string{"password"}},
		{name: "by slug right password", method: "GET", url: "events/by-slug/secret?password=s3cret", status: 200},
		{name: "editor with context edit", method: "GET", url: p + "?context=edit", as: "editor", status: 200},
		{name: "contributor context edit not enough", method: "GET", url: p + "?context=edit", as: "contributor", status: 403},
		{name: "remove password", method: "POST", url: p, as: "editor", body: map[string]any{"password": ""}, status: 200},
		{name: "open now", method: "GET", url: p, status: 200},
	})
}

func TestEventLanguages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Summer Party", "description": "English text",
		"start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"}).id()
	p := "events/" + strconv.FormatInt(id, 10)
	e.run(t, []scenario{
		{name: "french update", method: "POST", url: p + "?multilang_language=fr", as: "editor", body: map[string]any{"title": "Fête d'été"}, status: 200,
			want: map[string]any{"title": "Fête d'été", "slug": "fete-dete", "language": "fr", "translations": []any{"en", "fr"}}},
		{name: "read french", method: "GET", url: p + "?multilang_language=fr", status: 200,
			want: map[string]any{"title": "Fête d'été", "description": "English text", "language": "fr"}},
		{name: "read french by prefix", method: "GET", url: "/fr" + root + "/" + p, status: 200, want: map[string]any{"title": "Fête d'été"}},
		{name: "query beats prefix", method: "GET", url: "/fr" + root + "/" + p + "?multilang_language=en", status: 200, want: map[string]any{"title": "Summer Party"}},
		{name: "german falls back", method: "GET", url: p + "?multilang_language=de", status: 200,
			want: map[string]any{"title": "Summer Party", "language": "en", "slug": "summer-party"}},
		{name: "default unchanged", method: "GET", url: p, status: 200, want: map[string]any{"title": "Summer Party"}},
		{name: "french slug", method: "GET", url: "events/by-slug/fete-dete?multilang_language=fr", status: 200, want: map[string]any{"id": id}},
		{name: "default slug in french", method: "GET", url: "events/by-slug/summer-party?multilang_language=fr", status: 200, want: map[string]any{"id": id}},
		{name: "unknown language", method: "GET", url: p + "?multilang_language=xx", status: 400, want: map[string]any{"code": "rest_invalid_param"}},
	})
}

func TestEventLinkedData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v1 := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall A"}).id()
	v2 := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall B"}).id()
	o1 := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Org 1"}).id()
	o2 := e.must(201, "POST", "organizers", "editor", map[string]any{"organizer": "Org 2"}).id()
	base := map[string]any{"title": "L", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	ids := func(a, b int64) string { return strconv.FormatInt(a, 10) + "," + strconv.FormatInt(b, 10) }
	e.run(t, []scenario{
		{name: "venue object id", method: "POST", url: "events", as: "editor", body: with("venue", map[string]any{"id": v1}), status: 201, want: map[string]any{"venue.id": v1}},
		{name: "several venues", method: "POST", url: "events", as: "editor", body: with("venue", []any{v1, v2}), status: 201, want: map[string]any{"venue.0.id": v1, "venue.1.id": v2}},
		{name: "no venue", method: "POST", url: "events", as: "editor", body: base, status: 201, want: map[string]any{"venue": []any{}, "organizer": []any{}}},
		{name: "organizer csv", method: "POST", url: "events", as: "editor", body: with("organizer", ids(o2, o1)), status: 201, want: map[string]any{"organizer.0.id": o2, "organizer.1.id": o1}},
		{name: "inline venue created", method: "POST", url: "events", as: "editor", body: with("venue", map[string]any{"venue": "New Hall", "city": "Gent", "country": "Belgium", "province": "Oost-Vlaanderen"}), status: 201,
			want: map[string]any{"venue.venue": "New Hall", "venue.stateprovince": "Oost-Vlaanderen"}},
		{name: "inline venue reuses duplicate", method: "POST", url: "events", as: "editor", body: with("venue", map[string]any{"venue": "hall a"}), status: 201, want: map[string]any{"venue.id": v1}},
		{name: "mixed organizers", method: "POST", url: "events", as: "editor", body: with("organizer", []any{map[string]any{"id": o1}, map[string]any{"organizer": "Inline Org", "email": "x@y.test"}}), status: 201,
			want: map[string]any{"organizer.0.id": o1, "organizer.1.organizer": "Inline Org"}},
		{name: "terms by name slug and id", method: "POST", url: "events", as: "editor", body: with("categories", "Music,music,Theatre"), status: 201,
			check: func(t *testing.T, r *resp) {
				if n := len(r.path("categories").([]any)); n != 2 {
					t.Errorf("categories = %d, want 2 (name and slug of one term, one new)", n)
				}
			}},
	})
	// Unlinking on update and on venue trash.
	ev := e.must(201, "POST", "events", "editor", with("venue", v1, "organizer", []any{o1, o2}))
	p := "events/" + strconv.FormatInt(ev.id(), 10)
	e.must(200, "POST", p, "editor", map[string]any{"organizer": []any{}})
	if r := e.must(200, "GET", p, "", nil); len(r.path("organizer").([]any)) != 0 {
		t.Error("organizer=[] must unlink every organizer")
	}
	e.must(200, "DELETE", "venues/"+strconv.FormatInt(v1, 10), "editor", nil)
	if r := e.must(200, "GET", p, "", nil); len(r.path("venue").([]any)) != 0 {
		t.Errorf("trashing a venue must unlink it: %s", r.raw)
	}
	// Every write marks the item for indexing.
	marks, err := e.store.PendingMarks(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range marks {
		if m.Kind == repository.MarkPost && m.ID == ev.id() {
			found = true
		}
	}
	if !found {
		t.Error("event write left no index mark")
	}
}

func TestGlobalParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Fields", "description": "d",
		"start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "venue": map[string]any{"venue": "V", "city": "Gent"}}).id()
	e.flush()
	p := "events/" + strconv.FormatInt(id, 10)
	e.run(t, []scenario{
		{name: "_fields on an item", method: "GET", url: p + "?_fields=id,title,venue.city", status: 200,
			want: map[string]any{"id": id, "title": "Fields", "venue": map[string]any{"city": "Gent"}},
			check: func(t *testing.T, r *resp) {
				if got := keysOf(t, r.raw); !equalStrings(got, []string{"id", "title", "venue"}) {
					t.Errorf("keys %v", got)
				}
			}},
		{name: "_fields on a list", method: "GET", url: "events?_fields=events.title,total", status: 200,
			want: map[string]any{"total": 1, "events": []any{map[string]any{"title": "Fields"}}}},
		{name: "_envelope", method: "GET", url: "events?_envelope", status: 200,
			want: map[string]any{"status": 200, "body.total": 1, "headers.X-WP-Total": "1"}},
		{name: "_envelope on an error", method: "GET", url: "events/99999?_envelope=1", status: 200,
			want: map[string]any{"status": 404, "body.code": "rest-event-not-found"}},
	})
}
