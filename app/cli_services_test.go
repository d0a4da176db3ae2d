package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestCLIRefusesAsTheAPI: the user and webhook commands go through the
// calendar's services, so what the API refuses the command line refuses,
// in the same words (each parameter's message, as data.params has it),
// with exit status 2, and nothing is written. The cases are refused by
// the API at its field checks: a URL that is not http(s), a private
// address, a description over the bound, a role that is not one.
func TestCLIRefusesAsTheAPI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := runCLI(t, map[string]string{"DATA_DIR": dir}, "user", "add", "--login", "bob", "--role", "editor", "--init"); r.code != exitOK {
		t.Fatalf("user add: %d %s", r.code, r.stderr)
	}
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token", "DRAIN_DELAY": "0"}
	addr, _ := startServing(t, env)
	api := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, "http://"+addr.String()+"/calendar/events/v1/"+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer ops-token")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode, out
	}
	state := func() string {
		_, users := api("GET", "admin/users", nil)
		_, hooks := api("GET", "admin/webhooks", nil)
		return fmt.Sprint(users, hooks)
	}
	status, hook := api("POST", "admin/webhooks", map[string]any{"url": "https://hooks.example/h"})
	if status != 201 {
		t.Fatalf("create a webhook: %d %v", status, hook)
	}
	hookID := fmt.Sprint(hook["id"])
	_, users := api("GET", "admin/users", nil)
	bobID := fmt.Sprint(users["users"].([]any)[0].(map[string]any)["id"])
	long := strings.Repeat("d", 501)
	cliEnv := map[string]string{"DATA_DIR": dir}
	for _, tc := range []struct {
		name   string
		args   []string
		method string
		path   string
		body   map[string]any
		param  string
	}{
		{"add: not http", []string{"webhook", "add", "--url", "ftp://hooks.example/h"}, "POST", "admin/webhooks", map[string]any{"url": "ftp://hooks.example/h"}, "url"},
		{"add: private address", []string{"webhook", "add", "--url", "http://10.0.0.5/h"}, "POST", "admin/webhooks", map[string]any{"url": "http://10.0.0.5/h"}, "url"},
		{"add: description too long", []string{"webhook", "add", "--url", "https://hooks.example/2", "--description", long}, "POST", "admin/webhooks",
			map[string]any{"url": "https://hooks.example/2", "description": long}, "description"},
		{"update: description too long", []string{"webhook", "update", "--id", hookID, "--description", long}, "POST", "admin/webhooks/" + hookID,
			map[string]any{"description": long}, "description"},
		{"update: not http", []string{"webhook", "update", "--id", hookID, "--url", "mailto:a@hooks.example"}, "POST", "admin/webhooks/" + hookID,
			map[string]any{"url": "mailto:a@hooks.example"}, "url"},
		{"user role: not a role", []string{"user", "role", "--login", "bob", "--role", "owner"}, "POST", "admin/users/" + bobID, map[string]any{"role": "owner"}, "role"},
		{"user add: not a role", []string{"user", "add", "--login", "carol", "--role", "owner"}, "POST", "admin/users/" + bobID, map[string]any{"role": "owner"}, "role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := state()
			status, body := api(tc.method, tc.path, tc.body)
			params, _ := body["data"].(map[string]any)["params"].(map[string]any)
			msg, _ := params[tc.param].(string)
			if status != 400 || msg == "" {
				t.Fatalf("the API answers %d %v; want a 400 naming %s", status, body, tc.param)
			}
			r := runCLI(t, cliEnv, tc.args...)
			cmd := tc.args[0] + " " + tc.args[1]
			if want := cmd + ": " + msg + "\n"; r.code != exitUsage || !strings.HasSuffix(r.stderr, want) {
				t.Errorf("the command line: exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, exitUsage, want)
			}
			if after := state(); after != before {
				t.Errorf("a refused command wrote:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
