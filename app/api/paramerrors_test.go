package api_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestInvalidParameterMessages: every 400 names the parameter, what was
// received and what is accepted, in the message, in data.params and in
// data.details, with the codes and statuses unchanged: 400
// rest_invalid_param, as WordPress answers a parameter its validator
// refuses (issue 21, item 2).
func TestInvalidParameterMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	venue := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Paradiso"})
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Concert", "start_date": "2026-12-01 20:00:00", "end_date": "2026-12-01 23:00:00"})
	evURL := "events/" + strconv.FormatInt(ev.id(), 10)
	event := func(k string, v any) map[string]any {
		return map[string]any{"title": "T", "start_date": "2026-12-01 20:00:00", "end_date": "2026-12-01 23:00:00", k: v}
	}
	q := url.QueryEscape
	tests := []struct {
		name, method, url string
		body              any
		status            int
		code              string
		param             string // the parameter data.params and data.details name ("" for none)
		words             []string
	}{
		{"day/month date", "GET", "events?start_date=" + q("03/12/2027 19:30"), nil, 400, "rest_invalid_param", "start_date",
			[]string{"Invalid parameter(s): start_date", "start_date must be a date", "YYYY-MM-DD", "ambiguous", "2027-12-03 19:30 for 3 December", "2027-03-12 19:30 for 12 March", `received "03/12/2027 19:30"`}},
		{"no such day in either order", "GET", "events?start_date=" + q("31/02/2027"), nil, 400, "rest_invalid_param", "start_date",
			[]string{"start_date must be a date", "no date in either day/month or month/day order", `received "31/02/2027"`}},
		{"day after the month's last", "GET", "events?end_date=2027-02-31", nil, 400, "rest_invalid_param", "end_date",
			[]string{"end_date must be a date", "February 2027 has 28 days", `received "2027-02-31"`}},
		{"year out of range", "GET", "events?start_date=99999999999999", nil, 400, "rest_invalid_param", "start_date",
			[]string{"start_date must be a date from the year 1000 to 9999", `received "99999999999999"`}},
		{"relative bound", "GET", "events?starts_after=" + q("before my birthday"), nil, 400, "rest_invalid_param", "starts_after",
			[]string{"starts_after must be a date", "tomorrow 9am", `received "before my birthday"`}},
		{"per_page 0", "GET", "events?per_page=0", nil, 400, "rest_invalid_param", "per_page",
			[]string{"Invalid parameter(s): per_page", "per_page must be a whole number of 1 or more", `received "0"`}},
		{"per_page -1", "GET", "venues?per_page=-1", nil, 400, "rest_invalid_param", "per_page",
			[]string{"per_page must be a whole number of 1 or more", `received "-1"`}},
		{"page not a number", "GET", "categories?page=foo", nil, 400, "rest_invalid_param", "page",
			[]string{"page must be an integer", `received "foo"`}},
		{"unknown category", "GET", "events?categories=nosuch", nil, 400, "rest_invalid_param", "categories",
			[]string{"Invalid parameter(s): categories", `There is no category with the ID, slug or name "nosuch"`}},
		{"unknown tag", "GET", "events?tags=jazz,nosuch", nil, 400, "rest_invalid_param", "tags",
			[]string{`There is no tag with the ID, slug or name "jazz"`}},
		{"empty category list", "GET", "events?categories=,", nil, 400, "rest_invalid_param", "categories",
			[]string{"categories must name one or more categories by ID, slug or name"}},
		{"venue slug for an ID", "GET", "events?venue=paradiso", nil, 400, "rest_invalid_param", "venue",
			[]string{"Invalid parameter(s): venue", "venue must be venue IDs", "not slugs or names", `"paradiso" is not an ID`}},
		{"unknown venue", "GET", "events?venue=999", nil, 400, "rest_invalid_param", "venue",
			[]string{"There is no venue with ID 999", `received "999"`}},
		{"organizer of another kind", "GET", "events?organizer=" + strconv.FormatInt(venue.id(), 10), nil, 400, "rest_invalid_param", "organizer",
			[]string{"There is no organizer with ID " + strconv.FormatInt(venue.id(), 10)}},
		{"post_parent not an event", "GET", "events?post_parent=" + strconv.FormatInt(venue.id(), 10), nil, 400, "rest_invalid_param", "post_parent",
			[]string{"There is no event with ID " + strconv.FormatInt(venue.id(), 10)}},
		{"post_parent slug", "GET", "events?post_parent=concert", nil, 400, "rest_invalid_param", "post_parent",
			[]string{"post_parent must be an integer", `received "concert"`}},
		{"include", "GET", "events?include=foo-bar,23", nil, 400, "rest_invalid_param", "include",
			[]string{"include must be one or more IDs", `received "foo-bar,23"`}},
		{"empty search", "GET", "events?search=", nil, 400, "rest_invalid_param", "search",
			[]string{"search must be a non-empty string", `received ""`}},
		{"boolean", "GET", "events?featured=maybe", nil, 400, "rest_invalid_param", "featured",
			[]string{"featured must be a boolean: true, false, 1 or 0", `received "maybe"`}},
		{"status", "GET", "events?status=bogus", nil, 400, "rest_invalid_param", "status",
			[]string{"status must be one or more of publish", `"bogus" is none of them`}},
		{"status for anonymous", "GET", "venues?status=draft", nil, 400, "rest_invalid_param", "status",
			[]string{"status must be publish", `received "draft"`}},
		{"latitude", "GET", "events?geoloc_lat=91&geoloc_lng=4", nil, 400, "rest_invalid_param", "geoloc_lat",
			[]string{"geoloc_lat must be a number from -90 to 90", `received "91"`}},
		{"radius", "GET", "events?geoloc_lat=52&geoloc_lng=4&geoloc_radius=0", nil, 400, "rest_invalid_param", "geoloc_radius",
			[]string{"geoloc_radius must be a number greater than 0", `received "0"`}},
		{"facets", "GET", "events?facets=colour", nil, 400, "rest_invalid_param", "facets",
			[]string{"facets must be among categories", `"colour" is not`}},
		{"enum", "GET", "events?context=print", nil, 400, "rest_invalid_param", "context",
			[]string{"context must be one of view, edit", `received "print"`}},
		{"language", "GET", "events?multilang_language=xx", nil, 400, "rest_invalid_param", "multilang_language",
			[]string{"multilang_language must be one of nl, en, fr", `received "xx"`}},
		{"term offset", "GET", "tags?offset=-2", nil, 400, "rest_invalid_param", "offset",
			[]string{"offset must be a whole number of 0 or more", `received "-2"`}},
		{"relevance without search", "GET", "events?orderby=relevance", nil, 400, "rest_invalid_param", "orderby",
			[]string{"orderby=relevance requires search"}},

		{"write: day/month start", "POST", "events", event("start_date", "31/02/2027"), 400, "rest_invalid_param", "start_date",
			[]string{"start_date must be a date", `received "31/02/2027"`}},
		{"write: end before start", "POST", "events", event("end_date", "2026-11-30 10:00:00"), 400, "rest_invalid_param", "end_date",
			[]string{"The end date must not be before the start date", "2026-11-30 10:00:00", "2026-12-01 20:00:00"}},
		{"write: venue slug", "POST", "events", event("venue", "paradiso"), 400, "rest_invalid_param", "venue",
			[]string{"venue must be venue IDs", `"paradiso" is not an ID`, "not a slug or a name"}},
		{"write: unknown venue", "POST", "events", event("venue", 999), 400, "rest_invalid_param", "venue",
			[]string{"There is no venue with ID 999", "received 999"}},
		{"write: organizer id object", "POST", "events", event("organizer", map[string]any{"id": "mojo"}), 400, "rest_invalid_param", "organizer",
			[]string{"organizer must be organizer IDs", `"mojo" is not an ID`}},
		{"write: inline venue without a name", "POST", "events", event("venue", map[string]any{"city": "Amsterdam"}), 400, "rest_invalid_param", "venue",
			[]string{"Invalid venue data", "Missing parameter(s): venue"}},
		{"write: time zone", "POST", "events", event("timezone", "Mars/Olympus"), 400, "rest_invalid_param", "timezone",
			[]string{"timezone must be an IANA time zone name", "UTC+2", `received "Mars/Olympus"`}},
		{"write: website", "PATCH", evURL, map[string]any{"website": "not a url"}, 400, "rest_invalid_param", "website",
			[]string{"website must be empty or an absolute http or https URL", `received "not a url"`}},
		{"write: image", "PATCH", evURL, map[string]any{"image": "ftp://x.test/a.jpg"}, 400, "rest_invalid_param", "image",
			[]string{"image must be the ID of a registered image", `received "ftp://x.test/a.jpg"`}},
		{"write: unknown image", "PATCH", evURL, map[string]any{"image": 999999}, 400, "rest_invalid_param", "image",
			[]string{"There is no image with ID 999999"}},
		{"write: author", "PATCH", evURL, map[string]any{"author": 999999}, 400, "rest_invalid_param", "author",
			[]string{"There is no user with ID 999999", "received 999999"}},
		{"write: status", "PATCH", evURL, map[string]any{"status": "gone"}, 400, "rest_invalid_param", "status",
			[]string{"status must be one of publish, future", `received "gone"`}},
		{"write: boolean", "PATCH", evURL, map[string]any{"all_day": "sometimes"}, 400, "rest_invalid_param", "all_day",
			[]string{"all_day must be a boolean", `received "sometimes"`}},
		{"write: title list", "PATCH", evURL, map[string]any{"title": []any{"a", "b"}}, 400, "rest_invalid_param", "title",
			[]string{"title must be a string, not a list", `received ["a","b"]`}},
		{"write: empty title", "PATCH", evURL, map[string]any{"title": " "}, 400, "rest_invalid_param", "title",
			[]string{"title must be a non-empty string", `received " "`}},
		{"write: latitude", "POST", "venues", map[string]any{"venue": "V", "geo_lat": 95}, 400, "rest_invalid_param", "geo_lat",
			[]string{"geo_lat must be a number from -90 to 90", "received 95"}},
		{"write: term parent", "POST", "categories", map[string]any{"name": "C", "parent": 999999}, 400, "rest_invalid_param", "parent",
			[]string{"There is no category with ID 999999"}},
		{"write: missing title", "POST", "events", map[string]any{"start_date": "2026-12-01", "end_date": "2026-12-01"}, 400, "rest_missing_callback_param", "",
			[]string{"Missing parameter(s): title"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			as := ""
			if tt.method != "GET" {
				as = "editor"
			}
			r := e.do(tt.method, tt.url, as, tt.body)
			if r.status != tt.status || r.str("code") != tt.code {
				t.Fatalf("%d %s, want %d %s; body %s", r.status, r.str("code"), tt.status, tt.code, r.raw)
			}
			msg := r.str("message")
			for _, w := range tt.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			if tt.param == "" {
				return
			}
			pmsg := r.str("data.params." + tt.param)
			dmsg := r.str("data.details." + tt.param + ".message")
			if pmsg == "" || pmsg != dmsg || !strings.Contains(msg, pmsg) {
				t.Errorf("data.params.%s = %q, details message %q: want the same, non-empty, and in the message %q", tt.param, pmsg, dmsg, msg)
			}
			if got := r.str("data.details." + tt.param + ".code"); got != "rest_invalid_param" {
				t.Errorf("details code %q", got)
			}
			if got := r.str("data.details." + tt.param + ".data.param"); got != tt.param {
				t.Errorf("details data.param %q", got)
			}
			// No parameter of any 400 answers the bare WordPress message.
			params, _ := r.path("data.params").(map[string]any)
			for name, m := range params {
				if m == "Invalid parameter." {
					t.Errorf("data.params.%s is bare", name)
				}
			}
		})
	}
}

// TestInvalidParameterReceivedValue: details carry the received value as
// sent (a JSON value, cut when long), the message quotes it as JSON.
func TestInvalidParameterReceivedValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("x", 200)
	r := e.do("GET", "events?start_date="+long, "", nil)
	if r.status != 400 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	got := r.str("data.details.start_date.data.received")
	if n := len([]rune(got)); n != 81 || !strings.HasSuffix(got, "…") {
		t.Errorf("received = %q (%d runes), want 80 runes and …", got, n)
	}
	r = e.do("POST", "events", "editor", map[string]any{"title": "T", "start_date": "2026-12-01", "end_date": "2026-12-01", "timezone": "<b>Mars</b>"})
	if !strings.Contains(r.str("message"), `received "<b>Mars</b>"`) {
		t.Errorf("message does not quote the value as sent: %s", r.raw)
	}
}

// TestUnsupportedBodyType: a write whose body is in a Content-Type the
// service cannot read is 415 with the envelope and the accepted types,
// never a "Missing parameter(s)" that hides that the body was ignored;
// writes without a body (parameters in the query string, which WordPress
// reads for every method) work as
// before, and an anonymous write is still 401 first.
func TestUnsupportedBodyType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.must(201, "POST", "events", "editor", map[string]any{"title": "Concert", "start_date": "2026-12-01 20:00:00", "end_date": "2026-12-01 23:00:00"})
	evURL := "events/" + strconv.FormatInt(ev.id(), 10)
	jsonBody := `{"title":"Fête","start_date":"2026-12-02 20:00:00","end_date":"2026-12-02 22:00:00"}`
	tests := []struct {
		name, method, url, as, body, contentType string
		status                                   int
		code                                     string
		words                                    []string
		header, headerValue                      string
	}{
		{name: "JSON as text/plain", method: "POST", url: "events", as: "editor", body: jsonBody, contentType: "text/plain", status: 415, code: "rest_unsupported_media_type",
			words:  []string{`"text/plain" is not supported`, "application/json", "application/x-www-form-urlencoded", "multipart/form-data"},
			header: "Accept-Post", headerValue: "application/json, application/x-www-form-urlencoded, multipart/form-data"},
		{name: "XML", method: "PATCH", url: evURL, as: "editor", body: "<event><title>X</title></event>", contentType: "application/xml; charset=utf-8", status: 415, code: "rest_unsupported_media_type",
			words: []string{`"application/xml" is not supported`}, header: "Accept-Patch", headerValue: "application/json, application/x-www-form-urlencoded, multipart/form-data"},
		{name: "form body without a type", method: "PUT", url: evURL, as: "editor", body: "title=X", contentType: "", status: 415, code: "rest_unsupported_media_type",
			words: []string{"Content-Type (none)"}},
		{name: "term as text/plain", method: "POST", url: "categories", as: "editor", body: `{"name":"Jazz"}`, contentType: "text/plain", status: 415, code: "rest_unsupported_media_type"},
		{name: "anonymous is 401 first", method: "POST", url: "events", body: jsonBody, contentType: "text/plain", status: 401, code: "rest_forbidden"},
		// curl -d without -H 'Content-Type: application/json' sends JSON as
		// a form: one key, no value, so every parameter would be missing.
		{name: "JSON as a form (curl -d)", method: "POST", url: "events", as: "editor", body: jsonBody, contentType: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type",
			words:  []string{"is JSON", "curl -d", "Content-Type: application/json"},
			header: "Accept-Post", headerValue: "application/json, application/x-www-form-urlencoded, multipart/form-data"},
		{name: "JSON with & and = as a form", method: "PATCH", url: evURL, as: "editor", body: " \n{\"title\": \"Rock & Roll = Fun\"}", contentType: "application/x-www-form-urlencoded; charset=UTF-8", status: 415, code: "rest_unsupported_media_type",
			words: []string{"Content-Type: application/json"}, header: "Accept-Patch", headerValue: "application/json, application/x-www-form-urlencoded, multipart/form-data"},
		{name: "broken JSON as a form", method: "PATCH", url: evURL, as: "editor", body: `{"title": "X",}`, contentType: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type",
			words: []string{"Content-Type: application/json"}},
		{name: "JSON array as a form", method: "PATCH", url: evURL, as: "editor", body: `["title"]`, contentType: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type"},
		{name: "term as a form of JSON", method: "POST", url: "categories", as: "editor", body: `{"name":"Jazz"}`, contentType: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type",
			words: []string{"Content-Type: application/json"}},
		{name: "venue as a form of JSON", method: "POST", url: "venues", as: "editor", body: `{"venue":"Hall"}`, contentType: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type",
			words: []string{"Content-Type: application/json"}},
		{name: "anonymous JSON as a form is 401 first", method: "POST", url: "events", body: jsonBody, contentType: "application/x-www-form-urlencoded", status: 401, code: "rest_forbidden"},
		{name: "a real form is read", method: "PATCH", url: evURL, as: "editor", body: "title=%7BForm%7D&excerpt=a%3Db", contentType: "application/x-www-form-urlencoded", status: 200},
		{name: "JSON without a type still read", method: "POST", url: "events", as: "editor", body: jsonBody, contentType: "", status: 201},
		{name: "JSON with a vendor type", method: "PATCH", url: evURL, as: "editor", body: `{"title":"Vendor"}`, contentType: "application/merge-patch+json", status: 200},
		{name: "empty text/plain body with query parameters", method: "PATCH", url: evURL + "?title=Query", as: "editor", body: "", contentType: "text/plain", status: 200},
		{name: "no body, query parameters", method: "POST", url: evURL + "?title=Again", as: "editor", status: 200},
		{name: "whitespace body", method: "PATCH", url: evURL + "?title=Spaces", as: "editor", body: " \n", contentType: "text/plain", status: 200},
		{name: "broken JSON", method: "PATCH", url: evURL, as: "editor", body: `{"title": "X",}`, contentType: "application/json", status: 400, code: "rest_invalid_json",
			words: []string{"Invalid JSON body passed", "at byte"}},
		{name: "cut JSON", method: "PATCH", url: evURL, as: "editor", body: `{"title": "X"`, contentType: "application/json", status: 400, code: "rest_invalid_json",
			words: []string{"Invalid JSON body passed", "ends before its JSON object does"}},
		{name: "JSON array", method: "PATCH", url: evURL, as: "editor", body: `["title"]`, contentType: "application/json", status: 400, code: "rest_invalid_json",
			words: []string{"Invalid JSON body passed", "must be a JSON object", "not an array"}},
		{name: "JSON and more", method: "PATCH", url: evURL, as: "editor", body: `{"title": "X"} {}`, contentType: "application/json", status: 400, code: "rest_invalid_json",
			words: []string{"one JSON object and nothing after it"}},
		{name: "delete without body", method: "DELETE", url: evURL, as: "editor", status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			var body any
			if tt.body != "" {
				body = tt.body
			}
			r := e.doWith(tt.method, tt.url, tt.as, body, map[string]string{"Content-Type": tt.contentType})
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if tt.code != "" && r.str("code") != tt.code {
				t.Errorf("code %q, want %q", r.str("code"), tt.code)
			}
			if tt.status == 415 {
				if got := r.num("data.status"); got != 415 {
					t.Errorf("data.status %v", got)
				}
				accepted, _ := r.path("data.accepted").([]any)
				if len(accepted) != 3 {
					t.Errorf("data.accepted = %v", r.path("data.accepted"))
				}
			}
			for _, w := range tt.words {
				if !strings.Contains(r.str("message"), w) {
					t.Errorf("message lacks %q: %s", w, r.str("message"))
				}
			}
			if tt.header != "" && r.header.Get(tt.header) != tt.headerValue {
				t.Errorf("%s = %q, want %q", tt.header, r.header.Get(tt.header), tt.headerValue)
			}
		})
	}
	// The refused writes changed nothing; the accepted ones did.
	e.t = t
	if got := e.do("GET", evURL, "editor", nil).str("title"); got != "Spaces" {
		t.Errorf("title after the writes = %q, want Spaces", got)
	}
}
