package api_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
)

// TestRequestLogErrorCode: the request line of an error response carries
// the API error code of its envelope; a successful one has none.
func TestRequestLogErrorCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := withLogger(t, e, nil)
	tests := []struct {
		name, method, url, as string
		body                  any
		headers               map[string]string
		status                int
		code                  string
	}{
		{name: "ok", method: "GET", url: "events", status: 200},
		{name: "invalid parameter", method: "GET", url: "events?per_page=x", status: 400, code: "rest_invalid_param"},
		{name: "missing parameters", method: "POST", url: "events", as: "editor", body: map[string]any{"description": "d"}, status: 400, code: "rest_missing_callback_param"},
		{name: "anonymous write", method: "POST", url: "events", body: map[string]any{"title": "x"}, status: 401, code: "rest_forbidden"},
		{name: "no route", method: "GET", url: "nothing", status: 404, code: "rest_no_route"},
		{name: "no event", method: "GET", url: "events/424242", status: 404, code: "rest-event-not-found"},
		{name: "JSON as a form", method: "POST", url: "events", as: "editor", body: `{"title":"x"}`,
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415, code: "rest_unsupported_media_type"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			id := "code-" + strconv.Itoa(i)
			headers := map[string]string{"X-Request-ID": id}
			for k, v := range tt.headers {
				headers[k] = v
			}
			if r := e.doWith(tt.method, tt.url, tt.as, tt.body, headers); r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			lines := logs.lines(t, "request", id)
			if len(lines) != 1 {
				t.Fatalf("%d request lines", len(lines))
			}
			got, has := lines[0]["code"]
			if tt.code == "" && has {
				t.Errorf("a %d line has code %v", tt.status, got)
			}
			if tt.code != "" && got != tt.code {
				t.Errorf("code = %v, want %s", got, tt.code)
			}
		})
	}
}

// TestUntrustedProxyWarning: a request forwarded (X-Forwarded-For,
// Forwarded or X-Real-IP) by a peer that is not in TRUSTED_PROXIES logs a
// warning naming TRUSTED_PROXIES and the per-address limit, once an hour
// at most; a trusted proxy, and a request without those headers, log none.
func TestUntrustedProxyWarning(t *testing.T) {
	t.Parallel()
	// Requests made with api.Test come from 0.0.0.0.
	tests := []struct {
		name, trusted string
		headers       []map[string]string
		want          int
	}{
		{"no proxy header", "", []map[string]string{nil, nil}, 0},
		{"X-Forwarded-For, untrusted: once", "", []map[string]string{{"X-Forwarded-For": "203.0.113.9"}, {"X-Forwarded-For": "203.0.113.10"}, {"Forwarded": "for=203.0.113.11"}}, 1},
		{"Forwarded, untrusted", "10.0.0.0/8", []map[string]string{{"Forwarded": "for=203.0.113.9;proto=https"}}, 1},
		{"X-Real-IP, untrusted", "", []map[string]string{{"X-Real-IP": "203.0.113.9"}}, 1},
		{"trusted proxy", "0.0.0.0/32", []map[string]string{{"X-Forwarded-For": "203.0.113.9"}, {"Forwarded": "for=203.0.113.9"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "TRUSTED_PROXIES", tt.trusted)
			logs := withLogger(t, e, func(o *api.Options) { o.Now = e.clockNow })
			for _, h := range tt.headers {
				e.must(200, "GET", "events", "", nil)
				e.doWith("GET", "events", "", nil, h)
			}
			warnings := logs.warnings(t)
			if len(warnings) != tt.want {
				t.Fatalf("%d warnings, want %d: %v", len(warnings), tt.want, warnings)
			}
			if tt.want == 0 {
				return
			}
			w := warnings[0]
			if msg, _ := w["msg"].(string); !containsAll(msg, "TRUSTED_PROXIES", "MAX_CONNECTIONS_PER_ADDRESS", "429") {
				t.Errorf("message %q", msg)
			}
			if w["peer"] != "0.0.0.0" || w["max_connections_per_address"] != float64(e.cfg.MaxConnectionsPerAddress) {
				t.Errorf("fields %v", w)
			}
			// An hour later it is logged again.
			e.setNow(e.now.Add(time.Hour))
			e.doWith("GET", "events", "", nil, tt.headers[0])
			if n := len(logs.warnings(t)); n != 2 {
				t.Errorf("%d warnings an hour later, want 2", n)
			}
		})
	}
}

// warnings returns the decoded WARN lines.
func (b *logBuffer) warnings(t *testing.T) []map[string]any {
	t.Helper()
	raw := b.String()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(raw), "\n") {
		if l == "" {
			continue
		}
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		if line["level"] == "WARN" {
			out = append(out, line)
		}
	}
	return out
}

// containsAll reports whether s contains every one of words.
func containsAll(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
