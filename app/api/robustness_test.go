package api_test

import (
	"fmt"
	"strconv"
	"testing"
)

// TestOddValuesNeverFail sends values of every JSON shape to every field of
// every write route and list: each answer must be a success or a 4xx with
// the error envelope, never a 5xx.
func TestOddValuesNeverFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Base", "start_date": "2026-12-01", "end_date": "2026-12-01"}).id()
	odd := []any{nil, "", " ", "0", "-1", "1e400", "9999999999999999999999", 1.5, -7, true, false, []any{}, []any{nil},
		[]any{[]any{1}}, map[string]any{}, map[string]any{"id": "x"}, map[string]any{"id": 1e30}, "\x00", "a,b,,c",
		"<script>", "2026-13-45", "@", "💥", "https://", "http://x.test/a.raw"}
	fields := map[string][]string{
		"events": {"title", "description", "excerpt", "slug", "author", "date", "date_utc", "status", "timezone", "all_day",
			"start_date", "end_date", "image", "cost", "website", "show_map", "show_map_link", "hide_from_listings", "sticky",
			"featured", "ticketed", "categories", "tags", "venue", "organizer", "password", "multilang_language"},
		"venues":     {"venue", "address", "city", "country", "province", "state", "stateprovince", "zip", "phone", "website", "show_map", "show_map_link", "geo_lat", "geo_lng", "image", "status"},
		"organizers": {"organizer", "phone", "email", "website", "image", "status", "author"},
		"categories": {"name", "description", "slug", "parent"},
	}
	base := map[string]map[string]any{
		"events":     {"title": "T", "start_date": "2026-12-01", "end_date": "2026-12-01"},
		"venues":     {"venue": "V"},
		"organizers": {"organizer": "O"},
		"categories": {"name": "C"},
	}
	for coll, names := range fields {
		for _, f := range names {
			for i, v := range odd {
				body := map[string]any{}
				for k, x := range base[coll] {
					body[k] = x
				}
				body[f] = v
				if coll == "categories" && f != "name" {
					body["name"] = fmt.Sprintf("C %s %d", f, i)
				}
				for _, target := range []string{coll, itemPath(coll, ev)} {
					if target == "" {
						continue
					}
					r := e.do("POST", target, "admin", body)
					if r.status >= 500 || (r.status >= 400 && r.str("code") == "") {
						t.Errorf("POST %s %s=%#v: %d %s", target, f, v, r.status, r.raw)
					}
				}
			}
		}
	}
	for _, q := range []string{"page", "per_page", "start_date", "end_date", "starts_before", "ends_after", "strict_dates", "search",
		"categories", "tags", "venue", "organizer", "featured", "status", "geoloc", "geoloc_lat", "geoloc_lng", "geoloc_radius",
		"include", "post_parent", "ticketed", "password", "context"} {
		for _, v := range []string{"", "x", "-1", "0", "1e400", "99999999999999999999", "%00", "a,,b", "[]", "2026-13-45"} {
			for _, coll := range []string{"events", "venues", "organizers", "categories", "tags"} {
				r := e.do("GET", coll+"?"+q+"="+v, "", nil)
				if r.status >= 500 || (r.status >= 400 && r.str("code") == "") {
					t.Errorf("GET %s?%s=%s: %d %s", coll, q, v, r.status, r.raw)
				}
			}
		}
	}
}

// itemPath is the by-ID path of the base event for the event collection.
func itemPath(coll string, id int64) string {
	if coll != "events" {
		return ""
	}
	return "events/" + strconv.FormatInt(id, 10)
}
