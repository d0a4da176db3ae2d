package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/config"
)

// keyServer answers the two key routes EnsureServiceKey uses, as
// Meilisearch does for a master key: no key yet, then a created one.
func keyServer(t *testing.T, requests *atomic.Int64) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	apiError := func(w http.ResponseWriter, status int, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"message": code, "code": code, "type": "invalid_request", "link": ""})
	}
	mux.HandleFunc("GET /keys/{uid}", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer master-key-0123456789" {
			apiError(w, 403, "invalid_api_key")
			return
		}
		apiError(w, 404, "api_key_not_found")
	})
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		body["key"] = "scoped-key-of-" + body["uid"].(string)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(body)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestMeiliKey: meili-key refuses a short master key before asking
// Meilisearch anything, and otherwise writes the scoped key to a file
// (mode 0600) that MEILI_API_KEY_FILE then hands to the service.
func TestMeiliKey(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	srv := keyServer(t, &requests)
	dir := t.TempDir()
	out := filepath.Join(dir, "meili-api-key")
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantStderr string
		wantCalls  bool
	}{
		{"short master key", map[string]string{"MEILI_URL": srv.URL, "MEILI_MASTER_KEY": "12345"}, []string{"--out", out}, exitUsage, "MEILI_MASTER_KEY is 5 bytes; Meilisearch needs at least 16", false},
		{"no master key", map[string]string{"MEILI_URL": srv.URL}, []string{"--out", out}, exitUsage, "MEILI_MASTER_KEY is 0 bytes", false},
		{"no url", map[string]string{"MEILI_MASTER_KEY": "master-key-0123456789"}, []string{"--out", out}, exitUsage, "set MEILI_URL", false},
		{"no --out", map[string]string{"MEILI_URL": srv.URL, "MEILI_MASTER_KEY": "master-key-0123456789"}, nil, exitUsage, "--out is required", false},
		{"wrong master key", map[string]string{"MEILI_URL": srv.URL, "MEILI_MASTER_KEY": "another-master-key-0123"}, []string{"--out", out}, exitFailure, "invalid_api_key", true},
		{"created", map[string]string{"MEILI_URL": srv.URL, "MEILI_MASTER_KEY": "master-key-0123456789"}, []string{"--out", out}, exitOK, "MEILI_API_KEY_FILE", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := requests.Load()
			r := runCLI(t, tc.env, append([]string{"meili-key"}, tc.args...)...)
			if r.code != tc.wantCode || !strings.Contains(r.stderr, tc.wantStderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.wantCode, tc.wantStderr)
			}
			if called := requests.Load() > before; called != tc.wantCalls {
				t.Errorf("asked Meilisearch: %v, want %v", called, tc.wantCalls)
			}
			if _, err := os.Stat(out); (err == nil) != (tc.wantCode == exitOK) {
				t.Errorf("key file after exit %d: %v", r.code, err)
			}
		})
	}
	info, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", info.Mode().Perm())
	}
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"MEILI_URL": srv.URL, "MEILI_API_KEY_FILE": out}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.MeiliAPIKey, "scoped-key-of-") || cfg.MeiliMasterKey != "" {
		t.Errorf("service config: API key %q, master key %q", cfg.MeiliAPIKey, cfg.MeiliMasterKey)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
