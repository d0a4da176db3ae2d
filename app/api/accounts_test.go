package api_test

import (
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
)

// Issue 7, finding 9: tokens are created with a name and an expiry,
// listed with their last use, revoked at once (also through another
// replica); users are listed, given another role and disabled; failed
// authentications are counted.
func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	contrib := e.users["contributor"].ID
	// A second app on the same store stands for another replica.
	replica, err := api.New(api.Options{Config: e.cfg, Store: e.store, Search: e.engine, Now: e.clockNow})
	if err != nil {
		t.Fatal(err)
	}
	onReplica := func(token string) int {
		req := httptest.NewRequest("POST", root+"/venues", strings.NewReader(`{"venue":"Replica check"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := replica.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	created := e.must(201, "POST", "admin/tokens", "admin", map[string]any{"user": contrib, "name": "ci", "expires_in": 3600})
	secret, id := created.str("token"), created.str("id")
	if !strings.HasPrefix(secret, "ecal_") || len(id) != 16 || created.str("expires") != "2026-11-22T13:00:00Z" {
		t.Fatalf("created token: %s", created.raw)
	}
	tok := "token:" + secret
	e.run(t, []scenario{
		{name: "new token works", method: "POST", url: "venues", as: tok, body: map[string]any{"venue": "Token venue"}, status: 201},
		{name: "list shows name and last use", method: "GET", url: "admin/tokens?user=" + strconv.FormatInt(contrib, 10), as: "admin", status: 200,
			check: func(t *testing.T, r *resp) {
				found := false
				for _, x := range r.path("tokens").([]any) {
					m := x.(map[string]any)
					if m["id"] == id {
						found = true
						if m["name"] != "ci" || m["last_used"] != "2026-11-22T12:00:00Z" {
							t.Errorf("listed token %v", m)
						}
					}
					if _, ok := m["hash"]; ok {
						t.Error("the list shows a hash")
					}
				}
				if !found || strings.Contains(r.raw, secret) {
					t.Errorf("list: %s", r.raw)
				}
			}},
		{name: "contributor may not list", method: "GET", url: "admin/tokens", as: "contributor", status: 403},
		{name: "anonymous may not list", method: "GET", url: "admin/tokens", status: 401},
		{name: "editor may not create", method: "POST", url: "admin/tokens", as: "editor", body: map[string]any{"user": contrib}, status: 403},
		{name: "unknown user", method: "POST", url: "admin/tokens", as: "admin", body: map[string]any{"user": 9999}, status: 400},
		{name: "expiry too short", method: "POST", url: "admin/tokens", as: "admin", body: map[string]any{"user": contrib, "expires_in": 5}, status: 400},
		{name: "name too long", method: "POST", url: "admin/tokens", as: "admin", body: map[string]any{"user": contrib, "name": strings.Repeat("n", 101)}, status: 400},
		{name: "revoke unknown", method: "DELETE", url: "admin/tokens/0123456789abcdef", as: "admin", status: 404},
		{name: "revoke malformed", method: "DELETE", url: "admin/tokens/xyz", as: "admin", status: 404},
		{name: "revoke needs admin", method: "DELETE", url: "admin/tokens/" + id, as: "editor", status: 403},
	})
	if st := onReplica(secret); st != 201 {
		t.Fatalf("replica with a valid token: %d", st)
	}

	// Expiry: an hour and a minute later the token is refused.
	e.setNow(e.now.Add(61 * time.Minute))
	r := e.must(401, "POST", "venues", tok, map[string]any{"venue": "Late"})
	if !strings.Contains(r.raw, "expired") {
		t.Errorf("expired token: %s", r.raw)
	}
	e.setNow(e.now.Add(-61 * time.Minute))

	// Revocation, seen at once by the other replica.
	e.must(200, "DELETE", "admin/tokens/"+strings.ToUpper(id), "admin", nil)
	e.must(401, "POST", "venues", tok, map[string]any{"venue": "After revoke"})
	if st := onReplica(secret); st != 401 {
		t.Errorf("replica after revocation: %d, want 401", st)
	}
	e.must(404, "DELETE", "admin/tokens/"+id, "admin", nil)

	// Failed authentications are counted by reason.
	e.must(401, "GET", "events", "token:nope", nil)
	metrics := e.scrape()
	for _, want := range []string{`eventcal_auth_failures_total{reason="expired"} 1`, `eventcal_auth_failures_total{reason="unknown"} 2`,
		`eventcal_auth_failures_total{reason="disabled"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Issue 7, finding 9: users are listed, change role and are disabled.
func TestUserAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c2 := e.users["contributor2"].ID
	p := "admin/users/" + strconv.FormatInt(c2, 10)
	adminVenue := e.must(201, "POST", "venues", "admin", map[string]any{"venue": "Admin venue"}).id()
	vp := "venues/" + strconv.FormatInt(adminVenue, 10)
	e.run(t, []scenario{
		{name: "list", method: "GET", url: "admin/users", as: "admin", status: 200, contains: []string{`"login":"contributor2"`, `"role":"contributor"`}},
		{name: "list needs admin", method: "GET", url: "admin/users", as: "editor", status: 403},
		{name: "update needs admin", method: "PATCH", url: p, as: "editor", body: map[string]any{"role": "admin"}, status: 403},
		{name: "anonymous update", method: "PATCH", url: p, body: map[string]any{"role": "admin"}, status: 401},
		{name: "contributor cannot edit others", method: "PATCH", url: vp, as: "contributor2", body: map[string]any{"city": "X"}, status: 403},
		{name: "bad role", method: "PATCH", url: p, as: "admin", body: map[string]any{"role": "overlord"}, status: 400},
		{name: "unknown user", method: "PATCH", url: "admin/users/99999", as: "admin", body: map[string]any{"role": "editor"}, status: 404},
		{name: "promote", method: "PATCH", url: p, as: "admin", body: map[string]any{"role": "editor"}, status: 200, want: map[string]any{"role": "editor", "disabled": false}},
		{name: "promoted user edits others at once", method: "PATCH", url: vp, as: "contributor2", body: map[string]any{"city": "X"}, status: 200},
		{name: "disable", method: "POST", url: p, as: "admin", body: map[string]any{"disabled": true}, status: 200, want: map[string]any{"disabled": true, "role": "editor"}},
		{name: "disabled user refused", method: "GET", url: "events", as: "contributor2", status: 401, want: map[string]any{"code": "rest_user_disabled"}},
		{name: "enable", method: "PUT", url: p, as: "admin", body: map[string]any{"disabled": false}, status: 200},
		{name: "enabled again", method: "PATCH", url: vp, as: "contributor2", body: map[string]any{"city": "Y"}, status: 200},
	})
}

// Issue 7, finding 9: /metrics on the API port needs the admin token; with
// METRICS_ADDR it is served only by the separate listener's app.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(t, []scenario{
		{name: "anonymous", method: "GET", url: "/metrics", status: 401},
		{name: "editor", method: "GET", url: "/metrics", as: "editor", status: 403},
		{name: "bad token", method: "GET", url: "/metrics", as: "token:wrong", status: 401},
		{name: "ADMIN_TOKEN", method: "GET", url: "/metrics", as: "token:admin-secret", status: 200, contains: []string{"eventcal_auth_failures_total"}},
		{name: "admin user", method: "GET", url: "/metrics", as: "admin", status: 200},
		{name: "doc declares bearer on admin routes", method: "GET", url: "doc", status: 200, check: func(t *testing.T, r *resp) {
			for _, p := range []string{"paths./admin/users.get", "paths./admin/users/{id}.patch", "paths./admin/tokens.get",
				"paths./admin/tokens.post", "paths./admin/tokens/{token}.delete", "paths./admin/sync.get", "paths./admin/reindex.get"} {
				if r.path(p+".security") == nil {
					t.Errorf("%s has no security", p)
				}
			}
			if r.path("paths./admin/tokens.post.requestBody") == nil {
				t.Error("POST /admin/tokens declares no body")
			}
		}},
	})

	sep := newEnv(t, "METRICS_ADDR", "127.0.0.1:0")
	sep.must(404, "GET", "/metrics", "admin", nil)
	m := api.NewMetrics(nil, nil)
	res, err := m.App().Test(httptest.NewRequest("GET", "/metrics", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "eventcal_auth_failures_total") {
		t.Errorf("metrics app: %d %s", res.StatusCode, body)
	}
}
