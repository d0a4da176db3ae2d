package api_test

import (
	"strings"
	"testing"
)

// TestSiteURLFollowsListenAddr: with LISTEN_ADDR=:9000 and no SITE_URL,
// every absolute link the service writes (the Link header and
// next_rest_url of a list, the OpenAPI server URL, an iCalendar UID, the
// event's url) points at port 9000, where it listens.
func TestSiteURLFollowsListenAddr(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "LISTEN_ADDR", ":9000", "SITE_URL", "")
	const base = "http://localhost:9000"
	for _, title := range []string{"One", "Two"} {
		e.must(201, "POST", "events", "editor", map[string]any{"title": title, "status": "publish",
			"start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00"})
	}
	e.flush()
	list := e.must(200, "GET", "events?per_page=1&start_date=2026-11-01", "", nil)
	tests := []struct {
		name, got string
	}{
		{"next_rest_url", list.str("next_rest_url")},
		{"Link header", strings.TrimPrefix(list.header.Get("Link"), "<")},
		{"event url", list.str("events.0.url")},
		{"OpenAPI server", e.must(200, "GET", "doc", "", nil).str("servers.0.url")},
	}
	feed := e.must(200, "GET", "events.ics?start_date=2026-11-01", "", nil).raw
	for _, line := range strings.Split(feed, "\r\n") {
		if strings.HasPrefix(line, "UID:") {
			tests = append(tests, struct{ name, got string }{"feed UID", line})
		}
	}
	if len(tests) != 6 {
		t.Fatalf("the feed has no two UIDs:\n%s", feed)
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, "localhost:9000") || strings.Contains(tt.got, ":8080") {
			t.Errorf("%s = %q, want a link on %s", tt.name, tt.got, base)
		}
	}
}
