package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestBasicAuthUnderTECCompat: with TEC_COMPAT a client written for
// WordPress's application passwords authenticates with HTTP Basic
// login:token (the token as its password) and writes under the TEC root,
// as it would with the bearer token; the wrong login, an unknown token or
// a malformed header is 401, and without TEC_COMPAT Basic is refused as
// before.
func TestBasicAuthUnderTECCompat(t *testing.T) {
	e := newEnv(t, "TEC_COMPAT", "true")
	off := newEnv(t)
	basic := func(login, password string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+password))}
	}
	grouped := func(s string) string { // as WordPress shows an application password
		var b strings.Builder
		for i, r := range s {
			if i > 0 && i%4 == 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	event := map[string]any{"title": "Basic night", "status": "draft", "start_date": "2030-03-12 20:00", "end_date": "2030-03-12 23:00"}
	for _, tc := range []struct {
		name    string
		env     *env
		headers map[string]string
		status  int
		code    string
	}{
		{"login and token", e, basic("editor", e.tokens["editor"]), http.StatusCreated, ""},
		{"login in other case", e, basic("EDITOR", e.tokens["editor"]), http.StatusCreated, ""},
		{"password in groups of four", e, basic("editor", grouped(e.tokens["editor"])), http.StatusCreated, ""},
		{"another user's login", e, basic("author", e.tokens["editor"]), http.StatusUnauthorized, "incorrect_password"},
		{"unknown login", e, basic("nobody", e.tokens["editor"]), http.StatusUnauthorized, "incorrect_password"},
		{"unknown token", e, basic("editor", "ecal_0123"), http.StatusUnauthorized, "incorrect_password"},
		{"empty password", e, basic("editor", ""), http.StatusUnauthorized, "incorrect_password"},
		{"not base64", e, map[string]string{"Authorization": "Basic !!!"}, http.StatusUnauthorized, "rest_invalid_authorization"},
		{"no colon", e, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("editor"))}, http.StatusUnauthorized, "rest_invalid_authorization"},
		{"without TEC_COMPAT", off, basic("editor", off.tokens["editor"]), http.StatusUnauthorized, "rest_invalid_authorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tecRoot + "/events"
			if tc.env == off {
				target = root + "/events"
			}
			r := tc.env.doWith("POST", target, "", event, tc.headers)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if tc.code != "" && r.str("code") != tc.code {
				t.Errorf("code %q, want %q: %s", r.str("code"), tc.code, r.raw)
			}
			if tc.status == http.StatusCreated {
				// The credential stands for the editor: the draft it wrote
				// is readable with it, and not anonymously.
				item := fmt.Sprintf("%s/events/%d", tecRoot, r.id())
				if get := tc.env.doWith("GET", item, "", nil, tc.headers); get.status != http.StatusOK {
					t.Errorf("reading the draft back with the same credential: %d %s", get.status, get.raw)
				}
				if get := tc.env.do("GET", item, "", nil); get.status != http.StatusForbidden {
					t.Errorf("reading the draft anonymously: %d, want 403", get.status)
				}
			}
		})
	}
}
