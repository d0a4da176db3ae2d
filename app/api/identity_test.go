package api_test

import (
	"encoding/json"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
)

// probe GETs a probe path and decodes its JSON body.
func probe(t *testing.T, a *fiber.App, path string) map[string]any {
	t.Helper()
	res, err := a.Test(httptest.NewRequest("GET", path, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return body
}

// TestProbeIdentity: /healthz and /readyz name the instance that answered
// (version, revision, a random instance identifier, start time, process
// ID), so that two servers, or a server and another process already on
// the port, can be told apart; the status member stays as it was.
func TestProbeIdentity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	newApp := func(id api.Identity) *fiber.App {
		a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	started := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	release := api.Identity{Version: "v1.4.0", Revision: "0123456789abcdef0123456789abcdef01234567",
		Instance: "release-instance", Started: started, PID: 4711}
	first, second, third := newApp(api.Identity{}), newApp(api.Identity{}), newApp(release)
	version, revision := api.BuildVersion()
	hexID := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, path := range []string{"/healthz", "/readyz"} {
		a, b, c := probe(t, first, path), probe(t, second, path), probe(t, third, path)
		status := map[string]string{"/healthz": "ok", "/readyz": "ready"}[path]
		tests := []struct {
			name string
			body map[string]any
			want map[string]any
		}{
			{"first (this build)", a, map[string]any{"status": status, "version": version, "revision": revision, "pid": float64(api.NewIdentity().PID)}},
			{"second (this build)", b, map[string]any{"status": status, "version": version, "revision": revision}},
			{"release build", c, map[string]any{"status": status, "version": "v1.4.0", "revision": release.Revision,
				"instance": "release-instance", "started": "2026-11-25T18:00:00Z", "pid": float64(4711)}},
		}
		for _, tc := range tests {
			for k, want := range tc.want {
				if got := tc.body[k]; got != want {
					t.Errorf("%s %s: %s = %v, want %v", path, tc.name, k, got, want)
				}
			}
			if _, err := time.Parse(time.RFC3339, tc.body["started"].(string)); err != nil {
				t.Errorf("%s %s: started: %v", path, tc.name, err)
			}
		}
		for _, body := range []map[string]any{a, b} {
			if id, _ := body["instance"].(string); !hexID.MatchString(id) {
				t.Errorf("%s: instance %q is not 16 hex digits", path, id)
			}
		}
		if a["instance"] == b["instance"] {
			t.Errorf("%s: two servers report the same instance %v", path, a["instance"])
		}
		for _, k := range []string{"version", "revision", "instance"} {
			if a[k] == c[k] {
				t.Errorf("%s: %s does not tell the builds apart: %v", path, k, a[k])
			}
		}
	}
	// One server reports one identity on both probes.
	if h, r := probe(t, first, "/healthz"), probe(t, first, "/readyz"); h["instance"] != r["instance"] || h["started"] != r["started"] {
		t.Errorf("/healthz %v and /readyz %v of one server differ", h, r)
	}
}

// TestDocReportsVersion: the interface document's info.version is the
// build's version, under the API's root and under The Events Calendar's
// (TEC_COMPAT), and /healthz reports the same; without an identity given,
// that is config.Version, the release CHANGELOG.md names.
func TestDocReportsVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	tests := []struct {
		name string
		id   api.Identity
		want string
	}{
		{"this build", api.Identity{}, config.Version},
		{"a build linked with another version", api.Identity{Version: "0.31.0-rc.1", Instance: "release-instance"}, "0.31.0-rc.1"},
	}
	for _, tc := range tests {
		a, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Identity: tc.id})
		if err != nil {
			t.Fatal(err)
		}
		if got := probe(t, a, "/healthz")["version"]; got != tc.want {
			t.Errorf("%s: /healthz version = %v, want %q", tc.name, got, tc.want)
		}
		for _, path := range []string{"/calendar/events/v1/doc", "/wp-json/tribe/events/v1/doc"} {
			info, _ := probe(t, a, path)["info"].(map[string]any)
			if got := info["version"]; got != tc.want {
				t.Errorf("%s: GET %s info.version = %v, want %q", tc.name, path, got, tc.want)
			}
		}
	}
}
