package api_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// attack is one hostile request: its method, target (relative to the
// API root unless it starts with "/"), caller (a role or login, ""
// anonymous), body, Content-Type and extra headers; big marks an answer
// that may be large whatever was sent (the interface document, the
// namespace index).
type attack struct {
	name   string
	method string
	target string
	as     string
	body   string
	ct     string
	header map[string]string
	big    bool
}

// sendAttack sends a as is (the target unescaped and unchanged) and
// returns the status, the body and the headers of the answer.
func sendAttack(t *testing.T, e *env, a attack) (int, string, http.Header) {
	t.Helper()
	target := a.target
	if !strings.HasPrefix(target, "/") {
		target = root + "/" + target
	}
	req := httptest.NewRequest("GET", "/", strings.NewReader(a.body))
	req.Method = a.method
	req.RequestURI = target
	if u, err := req.URL.Parse(target); err == nil {
		req.URL = u
	}
	if a.ct != "" {
		req.Header.Set("Content-Type", a.ct)
	} else if a.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range a.header {
		req.Header.Set(k, v)
	}
	if a.as != "" {
		req.Header.Set("Authorization", "Bearer "+e.tokens[a.as])
	}
	res, b := rawSend(t, e, req)
	return res.StatusCode, string(b), res.Header
}

// TestHostileProbes sends an attacker's requests to every kind of route,
// anonymous and in each role: huge, negative and overflowing numbers,
// long and repeated lists, far dates, NUL bytes, invalid UTF-8, overlong
// percent-encodings, path traversal in slugs and language prefixes,
// compressed and deeply nested bodies, huge arrays, method overrides,
// _envelope, _fields, _embed, _jsonp, context=edit and password guesses,
// huge recurrences, source, webhook, token and user bodies, both roots.
// Whatever is sent, the answer is never a 5xx, an error is the envelope
// with its status, and no answer grows past 20 kB with what was sent.
func TestHostileProbes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	ev := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall"})
	e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz"})
	e.flush()
	ids := make([]string, 1400)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	many := strings.Join(ids, ",")
	rep := strings.Repeat("categories[]=1&", 500)
	long := strings.Repeat("a", 100_000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"title":"` + strings.Repeat("x", 50<<20) + `"}`))
	_ = zw.Close()
	nested := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	arr := `{"title":"T","start_date":"2026-12-01","end_date":"2026-12-01","categories":[` + strings.TrimSuffix(strings.Repeat("1,", 100000), ",") + `]}`
	evs := fmt.Sprint(ev)
	probes := []attack{
		{name: "index", method: "GET", target: "?context=" + long[:5000], big: true},
		{name: "doc with many ranges", method: "GET", target: "doc", header: map[string]string{"Range": "bytes=" + strings.Repeat("0-1,", 1000)}, big: true},
		{name: "ids", method: "GET", target: "events?include=" + many},
		{name: "cat ids", method: "GET", target: "events?categories=" + many},
		{name: "rep", method: "GET", target: "events?" + rep},
		{name: "long search", method: "GET", target: "events?search=" + long[:7000]},
		{name: "regex search", method: "GET", target: "events?search=.*%2A%3F%5B(a%7Cb)%2B%5C"},
		{name: "neg page", method: "GET", target: "events?page=-1"},
		{name: "neg per_page", method: "GET", target: "events?per_page=-1"},
		{name: "zero per_page", method: "GET", target: "events?per_page=0"},
		{name: "huge per_page", method: "GET", target: "events?per_page=100000"},
		{name: "far dates", method: "GET", target: "events?start_date=0001-01-01&end_date=9999-12-31"},
		{name: "far dates ics", method: "GET", target: "events.ics?start_date=0001-01-01&end_date=9999-12-31"},
		{name: "neg year", method: "GET", target: "events?start_date=-5000-01-01"},
		{name: "NUL", method: "GET", target: "events?search=a%00b"},
		{name: "bad utf8", method: "GET", target: "events?search=%ff%fe"},
		{name: "overlong", method: "GET", target: "events/by-slug/%c0%ae%c0%ae"},
		{name: "traversal slug", method: "GET", target: "events/by-slug/..%2F..%2Fetc%2Fpasswd"},
		{name: "traversal lang", method: "GET", target: "/..%2F..%2F/calendar/events/v1/events"},
		{name: "lang bad", method: "GET", target: "/xx/calendar/events/v1/events"},
		{name: "lang on the TEC root", method: "GET", target: "/fr/wp-json/tribe/events/v1/events"},
		{name: "lang upper case", method: "GET", target: "/FR/calendar/events/v1/events"},
		{name: "lang twice", method: "GET", target: "/fr/fr/calendar/events/v1/events"},
		{name: "lang dot segment", method: "GET", target: "/fr/../calendar/events/v1/admin/users"},
		{name: "encoded dot segments", method: "GET", target: "/calendar/events/v1/events/%2e%2e/admin/users"},
		{name: "encoded slashes", method: "GET", target: "/calendar/events/v1/events/1%2f..%2f..%2fadmin%2fusers"},
		{name: "double slash", method: "GET", target: "/calendar/events/v1//admin/users"},
		{name: "lang admin", method: "GET", target: "/de/calendar/events/v1/admin/users?per_page=abc"},
		{name: "gzip body", method: "POST", target: "events", as: "editor", body: gz.String(), header: map[string]string{"Content-Encoding": "gzip"}},
		{name: "gzip anon", method: "POST", target: "events", body: gz.String(), header: map[string]string{"Content-Encoding": "gzip"}},
		{name: "nested", method: "POST", target: "events", as: "editor", body: nested},
		{name: "nested anon", method: "POST", target: "events", body: nested},
		{name: "array", method: "POST", target: "events", as: "editor", body: arr},
		{name: "if-none-match", method: "GET", target: "events", header: map[string]string{"If-None-Match": strings.Repeat(`"abc", `, 1000)}},
		{name: "override", method: "POST", target: "events/" + evs, header: map[string]string{"X-HTTP-Method-Override": "DELETE"}},
		{name: "override editor", method: "GET", target: "events/" + evs + "?_method=DELETE", as: "contributor"},
		{name: "_method anon", method: "POST", target: "events/" + evs + "?_method=DELETE"},
		{name: "envelope", method: "GET", target: "events?_envelope=1&per_page=50"},
		{name: "fields", method: "GET", target: "events?_fields=" + strings.Repeat("a.b.c.", 1000)},
		{name: "fields many", method: "GET", target: "events?_fields=" + strings.Repeat("id,", 2500)},
		{name: "embed", method: "GET", target: "events?_embed=" + long[:5000]},
		{name: "context edit", method: "GET", target: "events/" + evs + "?context=edit"},
		{name: "password", method: "GET", target: "events/" + evs + "?password=guess"},
		{name: "jsonp", method: "GET", target: "events?_jsonp=alert(1)//"},
		{name: "jsonp long", method: "GET", target: "events?_jsonp=" + long[:5000]},
		{name: "occ huge key", method: "GET", target: "events/" + evs + "/occurrences/" + long[:5000]},
		{name: "occ far", method: "GET", target: "events/" + evs + "/occurrences/99991231T190000"},
		{name: "occs", method: "GET", target: "events/" + evs + "/occurrences?per_page=100000&start_date=0001-01-01&end_date=9999-12-31"},
		{name: "ics", method: "GET", target: "events/" + evs + ".ics"},
		{name: "rrule huge", method: "POST", target: "events", as: "editor", body: `{"title":"T","start_date":"2026-12-01 10:00","end_date":"2026-12-01 11:00","recurrence":{"rules":["FREQ=SECONDLY"]}}`},
		{name: "rrule huge2", method: "POST", target: "events", as: "editor", body: `{"title":"T","start_date":"2026-12-01 10:00","end_date":"2026-12-01 11:00","recurrence":{"rules":["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"]}}`},
		{name: "rrule many", method: "POST", target: "events", as: "editor", body: `{"title":"T","start_date":"2026-12-01 10:00","end_date":"2026-12-01 11:00","recurrence":{"rules":[` + strings.TrimSuffix(strings.Repeat(`"FREQ=DAILY;COUNT=2",`, 5000), ",") + `]}}`},
		{name: "rrule exdates", method: "POST", target: "events", as: "editor", body: `{"title":"T","start_date":"2026-12-01 10:00","end_date":"2026-12-01 11:00","recurrence":{"rules":["FREQ=DAILY;COUNT=2"],"exclusions":[` + strings.TrimSuffix(strings.Repeat(`"2027-01-01",`, 50000), ",") + `]}}`},
		{name: "sources anon", method: "GET", target: "sources"},
		{name: "sources create huge url", method: "POST", target: "sources", as: "editor", body: `{"url":"http://` + long[:50000] + `"}`},
		{name: "sources create file", method: "POST", target: "sources", as: "editor", body: `{"url":"file:///etc/passwd","name":"x"}`},
		{name: "sources runs neg", method: "GET", target: "sources/1/runs?per_page=-1", as: "editor"},
		{name: "sources id huge", method: "GET", target: "sources/99999999999999999999999", as: "editor"},
		{name: "backups anon", method: "POST", target: "admin/backups"},
		{name: "backups as editor", method: "POST", target: "admin/backups?name=../../x", as: "editor", body: "{"},
		{name: "backups list anonymous", method: "GET", target: "admin/backups?name=../../x", body: long[:50000]},
		{name: "webhooks huge", method: "POST", target: "admin/webhooks", as: "admin", body: `{"url":"https://x.example/","events":[` + strings.TrimSuffix(strings.Repeat(`"event.created",`, 20000), ",") + `]}`},
		{name: "webhook deliveries", method: "GET", target: "admin/webhooks/1/deliveries?per_page=99999999999999999999", as: "admin"},
		{name: "tokens", method: "POST", target: "admin/tokens", as: "admin", body: `{"user":"` + long[:50000] + `"}`},
		{name: "tokens list", method: "GET", target: "admin/tokens?per_page=-5&user=" + long[:5000], as: "admin"},
		{name: "users", method: "PATCH", target: "admin/users/1", as: "admin", body: `{"role":"` + long[:50000] + `"}`},
		{name: "tec root", method: "GET", target: "/wp-json/tribe/events/v1/events?include=" + many},
		{name: "tec sources", method: "GET", target: "/wp-json/tribe/events/v1/sources", as: "editor"},
		{name: "docs", method: "GET", target: "/docs?x=" + long[:5000]},
		{name: "docs traversal", method: "GET", target: "/docs/..%2F..%2Fgo.mod"},
		{name: "split huge", method: "POST", target: "events/" + evs + "/occurrences/20270325T190000/split", as: "editor", body: `{"title":"` + long[:50000] + `"}`},
		{name: "occ patch", method: "PATCH", target: "events/" + evs + "/occurrences/20270325T190000", as: "editor", body: `{"start_date":"9999-12-31"}`},
	}
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			status, raw, _ := sendAttack(t, e, p)
			bad := status >= 500
			if status >= 400 {
				var envelope struct {
					Code    string `json:"code"`
					Message string `json:"message"`
					Data    struct {
						Status int `json:"status"`
					} `json:"data"`
				}
				if err := json.Unmarshal([]byte(raw), &envelope); err != nil || envelope.Code == "" || envelope.Data.Status != status {
					bad = true
				}
			}
			if len(raw) > 20000 && !p.big {
				bad = true
			}
			if bad {
				t.Errorf("%d (%d bytes) %.300s", status, len(raw), raw)
			}
		})
	}
}
