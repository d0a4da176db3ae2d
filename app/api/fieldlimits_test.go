package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/limits"
)

// invalidParamOf expects a 400 rest_invalid_param naming param.
func invalidParamOf(param string) func(t *testing.T, r *resp) {
	return func(t *testing.T, r *resp) {
		t.Helper()
		if r.str("code") != "rest_invalid_param" || r.path("data.params."+param) == nil {
			t.Errorf("want rest_invalid_param on %s, got %s", param, r.raw)
		}
	}
}

// TestFieldLimits (issue 7, finding 3): every text field has a length,
// every list a count; a value over it is 400 rest_invalid_param with the
// WordPress error envelope, and a multi-megabyte word never reaches the
// index.
func TestFieldLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := func(extra map[string]any) map[string]any {
		b := map[string]any{"title": "T", "start_date": "2026-12-01", "end_date": "2026-12-01"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	ids := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = "Term " + strconv.Itoa(i)
		}
		return out
	}
	venue := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall"}).id()
	venues := make([]any, limits.MaxLinksPerEvent+1)
	for i := range venues {
		venues[i] = venue
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	e.run(t, []scenario{
		{name: "title at the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"title": long(limits.MaxTitle)}), status: 201},
		{name: "title over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"title": long(limits.MaxTitle + 1)}), status: 400,
			want: map[string]any{"data.params.title": "title must be at most 1000 characters long; received 1001."}},
		{name: "title counted in characters", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"title": strings.Repeat("é", limits.MaxTitle)}), status: 201},
		{name: "slug over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"slug": long(limits.MaxSlug + 1)}), status: 400, check: invalidParamOf("slug")},
		{name: "description over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"description": long(limits.MaxDescription + 1)}), status: 400, check: invalidParamOf("description")},
		{name: "excerpt over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"excerpt": long(limits.MaxExcerpt + 1)}), status: 400, check: invalidParamOf("excerpt")},
		{name: "password over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"password": long(limits.MaxPassword + 1)}), status: 400, check: invalidParamOf("password")},
		{name: "cost item over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"cost": []any{"5", long(limits.MaxShortText + 1)}}), status: 400, check: invalidParamOf("cost")},
		{name: "too many categories", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"categories": ids(limits.MaxTermsPerField + 1)}), status: 400,
			want: map[string]any{"data.params.categories": "categories must contain at most 100 items; received 101."}},
		{name: "too many tags as CSV", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"tags": strings.Repeat("t,", limits.MaxTermsPerField+1)}), status: 400, check: invalidParamOf("tags")},
		{name: "category name over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"categories": []any{long(limits.MaxTermName + 1)}}), status: 400, check: invalidParamOf("categories")},
		{name: "too many venues", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"venue": venues}), status: 400, check: invalidParamOf("venue")},
		{name: "inline venue name over the limit", method: "POST", url: "events", as: "editor", body: ev(map[string]any{"venue": map[string]any{"venue": long(limits.MaxTitle + 1)}}), status: 400, check: invalidParamOf("venue")},
		{name: "update title over the limit", method: "PATCH", url: "venues/" + strconv.FormatInt(venue, 10), as: "editor", body: map[string]any{"venue": long(limits.MaxTitle + 1)}, status: 400, check: invalidParamOf("venue")},
		{name: "venue address over the limit", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "V", "address": long(limits.MaxShortText + 1)}, status: 400, check: invalidParamOf("address")},
		{name: "organizer website over the limit", method: "POST", url: "organizers", as: "editor", body: map[string]any{"organizer": "O", "website": "https://x.test/" + long(limits.MaxURL)}, status: 400, check: invalidParamOf("website")},
		{name: "category name over the limit on the term route", method: "POST", url: "categories", as: "editor", body: map[string]any{"name": long(limits.MaxTermName + 1)}, status: 400, check: invalidParamOf("name")},
		{name: "list include over the count", method: "GET", url: "events?include=" + strings.Repeat("1,", limits.MaxListItems+1), status: 400, check: invalidParamOf("include")},
		{name: "list search over the limit", method: "GET", url: "events?search=" + long(limits.MaxQueryText+1), status: 400, check: invalidParamOf("search")},
		{name: "3.9 MB one-word title refused", method: "POST", url: "events", as: "contributor", body: ev(map[string]any{"title": long(3_900_000)}), status: 413,
			want: map[string]any{"code": "rest_request_too_large", "data.status": 413}},
	})
}

// TestLongWordsIndexedWithinBound (issue 7, finding 3): one-word
// descriptions as long as the field allows (200,000 characters) are
// indexed, searchable by their other words, and the index work leaves the
// live heap within longWordBudget (the engine sees 64-byte words; without
// the cut the same writes left about 55 MiB).
func TestLongWordsIndexedWithinBound(t *testing.T) {
	const longWordBudget = 24 << 20
	e := newEnv(t)
	base := liveHeap()
	for i := range 3 {
		word := strings.Repeat(string(rune('a'+i)), limits.MaxDescription)
		e.must(201, "POST", "events", "editor", map[string]any{"title": "Longword " + strconv.Itoa(i) + " " + word[:limits.MaxTitle-20],
			"description": word, "start_date": "2026-12-01", "end_date": "2026-12-01"})
	}
	e.flush()
	grown := int64(liveHeap()) - int64(base)
	t.Logf("live heap grew by %d KiB", grown>>10)
	if grown > longWordBudget {
		t.Errorf("live heap grew by %d MiB; bound %d MiB", grown>>20, longWordBudget>>20)
	}
	e.run(t, []scenario{{name: "searchable", method: "GET", url: "events?search=Longword", status: 200, want: map[string]any{"total": 3}}})
}

// TestDateRange (issue 7, finding 7): dates outside years 1000-9999 are
// 400 rest_invalid_param on every date field, on both stores.
func TestDateRange(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testDateRange(t, newEnv(t)) })
	t.Run("mongo", func(t *testing.T) {
		testDateRange(t, newMongoEnv(t))
	})
}

func testDateRange(t *testing.T, e *env) {
	ev := func(k, v string) map[string]any {
		b := map[string]any{"title": "T", "start_date": "2026-12-01", "end_date": "2026-12-01"}
		b[k] = v
		return b
	}
	id := e.must(201, "POST", "events", "editor", ev("title", "Base")).id()
	venue := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall"}).id()
	item := "events/" + strconv.FormatInt(id, 10)
	cases := []scenario{
		{name: "date as a huge timestamp", method: "POST", url: "events", as: "editor", body: ev("date", "99999999999999"), status: 400, check: invalidParamOf("date")},
		{name: "date_utc before year 1000", method: "POST", url: "events", as: "editor", body: ev("date_utc", "0999-12-31 10:00:00"), status: 400, check: invalidParamOf("date_utc")},
		{name: "negative timestamp", method: "POST", url: "events", as: "editor", body: ev("date", "-99999999999"), status: 400, check: invalidParamOf("date")},
		{name: "start_date huge", method: "POST", url: "events", as: "editor", body: ev("start_date", "99999999999999"), status: 400, check: invalidParamOf("start_date")},
		{name: "end_date huge", method: "POST", url: "events", as: "editor", body: ev("end_date", "99999999999999"), status: 400, check: invalidParamOf("end_date")},
		{name: "year 9999 in a zone behind UTC", method: "POST", url: "events", as: "editor",
			body: map[string]any{"title": "T", "start_date": "9999-12-31 22:00:00", "end_date": "9999-12-31 23:00:00", "timezone": "UTC-5"}, status: 400, check: invalidParamOf("start_date")},
		{name: "update with a huge date", method: "PATCH", url: item, as: "editor", body: map[string]any{"date": "99999999999999"}, status: 400, check: invalidParamOf("date")},
		{name: "venue with a huge date", method: "PATCH", url: "venues/" + strconv.FormatInt(venue, 10), as: "editor", body: map[string]any{"date": "99999999999999"}, status: 400, check: invalidParamOf("date")},
		{name: "list filter with a huge date", method: "GET", url: "events?start_date=99999999999999", status: 400, check: invalidParamOf("start_date")},
		{name: "list filter before year 1000", method: "GET", url: "events?ends_after=0500-01-01", status: 400, check: invalidParamOf("ends_after")},
		{name: "year 1000 accepted", method: "POST", url: "events", as: "editor",
			body: map[string]any{"title": "Old", "start_date": "1000-01-02", "end_date": "1000-01-02", "date": "1000-01-02 10:00:00"}, status: 201,
			want: map[string]any{"start_date": "1000-01-02 00:00:00"}},
		{name: "year 9999 accepted", method: "POST", url: "events", as: "editor",
			body: map[string]any{"title": "Far", "start_date": "9999-12-30", "end_date": "9999-12-30"}, status: 201,
			want: map[string]any{"start_date": "9999-12-30 00:00:00"}},
		{name: "base event unchanged", method: "GET", url: item, status: 200, want: map[string]any{"title": "Base"}},
	}
	e.run(t, cases)
}
