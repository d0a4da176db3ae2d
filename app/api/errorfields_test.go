package api_test

import (
	"net/url"
	"strconv"
	"testing"
)

// TestErrorsIgnoreFields: _fields shapes successful responses only. An
// error answers its whole envelope (code, message, data.status) whatever
// _fields and _embed ask for, as WordPress leaves errors unfiltered; a
// client asking for "id,title" still learns what went wrong.
func TestErrorsIgnoreFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.must(201, "POST", "events", "admin", map[string]any{"title": "Admin's", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"}).id()
	adminURL := "events/" + strconv.FormatInt(admin, 10)
	tests := []struct {
		name, method, url, as string
		body                  any
		ct                    string
		status                int
		code                  string
	}{
		{name: "400 invalid parameter", method: "GET", url: "events?per_page=nope", status: 400, code: "rest_invalid_param"},
		{name: "400 missing parameters", method: "POST", url: "events", as: "editor", body: map[string]any{"description": "d"}, status: 400, code: "rest_missing_callback_param"},
		{name: "401 anonymous write", method: "POST", url: "events", body: map[string]any{"title": "x"}, status: 401, code: "rest_forbidden"},
		{name: "403 not allowed", method: "POST", url: adminURL, as: "contributor", body: map[string]any{"title": "x"}, status: 403, code: "rest_forbidden"},
		{name: "404 no route", method: "GET", url: "nothing", status: 404, code: "rest_no_route"},
		{name: "404 no event", method: "GET", url: "events/999999", status: 404, code: "rest-event-not-found"},
		{name: "415 JSON sent as a form", method: "POST", url: "events", as: "editor", body: `{"title":"x"}`, ct: "application/x-www-form-urlencoded", status: 415, code: "rest_unsupported_media_type"},
	}
	shaping := []string{"_fields=id,title", "_fields=code", "_fields=data.params", "_embed=1", "_fields=id&_embed"}
	for _, tt := range tests {
		for _, q := range shaping {
			t.Run(tt.name+" "+q, func(t *testing.T) {
				e.t = t
				target := tt.url + "?" + q
				if u, err := url.Parse(tt.url); err == nil && u.RawQuery != "" {
					target = tt.url + "&" + q
				}
				var headers map[string]string
				if tt.ct != "" {
					headers = map[string]string{"Content-Type": tt.ct}
				}
				r := e.doWith(tt.method, target, tt.as, tt.body, headers)
				if r.status != tt.status {
					t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
				}
				if got := r.str("code"); got != tt.code {
					t.Errorf("code %q, want %q: %s", got, tt.code, r.raw)
				}
				if r.str("message") == "" {
					t.Errorf("no message: %s", r.raw)
				}
				if got := r.num("data.status"); got != float64(tt.status) {
					t.Errorf("data.status %v, want %d: %s", got, tt.status, r.raw)
				}
			})
		}
	}
	// Successful responses are still shaped.
	e.t = t
	if got := keysOf(t, e.must(200, "GET", adminURL+"?_fields=id,title", "", nil).raw); !equalStrings(got, []string{"id", "title"}) {
		t.Errorf("_fields on an event: keys %v", got)
	}
}
