package app

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search/embedded"
)

// TestCommandHelp: every command answers -h and --help on standard output
// with exit 0, names its synopsis, describes every flag, and says where
// the settings come from.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args  []string
		flags []string
	}{
		{[]string{"serve"}, nil},
		{[]string{"user", "add"}, []string{"login", "role", "init"}},
		{[]string{"user", "list"}, nil},
		{[]string{"user", "role"}, []string{"login", "role"}},
		{[]string{"user", "disable"}, []string{"login"}},
		{[]string{"user", "enable"}, []string{"login"}},
		{[]string{"token", "create"}, []string{"login", "name", "expires"}},
		{[]string{"token", "list"}, []string{"login"}},
		{[]string{"token", "revoke"}, nil},
		{[]string{"healthcheck"}, []string{"url", "timeout"}},
		{[]string{"reindex"}, []string{"url", "token", "direct", "cancel"}},
		{[]string{"status"}, []string{"url", "token", "direct"}},
		{[]string{"verify"}, []string{"against", "from", "lang", "max-differences", "timeout", "concurrency"}},
		{[]string{"webhook", "add"}, []string{"url", "events", "description", "secret"}},
		{[]string{"webhook", "list"}, nil},
		{[]string{"webhook", "update"}, []string{"id", "url", "events", "description", "secret", "active"}},
		{[]string{"webhook", "delete"}, []string{"id"}},
		{[]string{"webhook", "ping"}, []string{"id"}},
		{[]string{"webhook", "deliveries"}, []string{"id", "limit"}},
		{[]string{"source", "add"}, []string{"url", "format", "name", "schedule", "status", "category", "tag", "on-removed"}},
		{[]string{"source", "list"}, nil},
		{[]string{"source", "run"}, nil},
		{[]string{"source", "runs"}, []string{"limit"}},
		{[]string{"meili-key"}, []string{"out", "wait"}},
	}
	env := map[string]string{"DATA_DIR": t.TempDir()}
	for _, tc := range tests {
		for _, help := range []string{"-h", "--help"} {
			name := strings.Join(tc.args, " ")
			t.Run(name+" "+help, func(t *testing.T) {
				r := runCLI(t, env, append(append([]string{}, tc.args...), help)...)
				if r.code != exitOK || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				if !strings.HasPrefix(r.stdout, "Usage: eventcal "+name) {
					t.Errorf("no synopsis:\n%s", r.stdout)
				}
				if !strings.Contains(r.stdout, "come from the environment; 'eventcal help' lists them") {
					t.Errorf("does not say where the settings come from:\n%s", r.stdout)
				}
				described := flagDescriptions(r.stdout)
				for _, f := range tc.flags {
					if _, ok := described[f]; !ok {
						t.Errorf("flag -%s is not listed:\n%s", f, r.stdout)
					}
				}
				for f, desc := range described {
					if len(desc) < 10 {
						t.Errorf("flag -%s has no description (%q):\n%s", f, desc, r.stdout)
					}
				}
				if len(described) != len(tc.flags) {
					t.Errorf("flags %v, want %v", described, tc.flags)
				}
			})
		}
	}
}

// flagDescriptions reads flag.PrintDefaults output: each "  -name [type]"
// line is followed by its description, indented by four spaces and a tab.
func flagDescriptions(usage string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(usage, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "  -") {
			continue
		}
		name := strings.Fields(l)[0][1:]
		out[name] = ""
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    \t") {
			out[name] = strings.TrimSpace(lines[i+1])
		}
	}
	return out
}

// TestLockedDataDir: when another process holds the search index, every
// command that opens it says so, names the DATA_DIR, and says what to do
// (the hold here is this process's own, which the lock refuses alike).
func TestLockedDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	holder, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0"}
	for _, args := range [][]string{{"status", "--direct"}, {"reindex", "--direct"}, {"serve"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runCLI(t, env, args...)
			if r.code != exitFailure {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitFailure, r.stderr)
			}
			for _, want := range []string{"locked by another process", "is another process using DATA_DIR=" + dir + "?", "set another DATA_DIR", "--url"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}

// TestHealthcheckNamesInstance: healthcheck prints which instance
// answered, so that an answer from another process on the port shows.
func TestHealthcheckNamesInstance(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok","instance":"9c1e54a0b7d3f218","pid":4711,"version":"v1.2.3","revision":"abc123","started":"2026-11-25T18:00:00Z"}`))
	}))
	defer srv.Close()
	r := runCLI(t, nil, "healthcheck", "--url", srv.URL+"/healthz")
	want := "200 OK (instance 9c1e54a0b7d3f218, pid 4711, version v1.2.3, revision abc123)"
	if r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Errorf("exit %d, stdout %q; want %q", r.code, r.stdout, want)
	}
}

// TestHelpShowsDerivedSiteURL: "eventcal help" shows SITE_URL's default
// as derived from the LISTEN_ADDR in the environment.
func TestHelpShowsDerivedSiteURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		listen, want string
	}{
		{"", "http://localhost:8080"},
		{":9000", "http://localhost:9000"},
		{"127.0.0.1:9100", "http://127.0.0.1:9100"},
	}
	for _, tt := range tests {
		t.Run(tt.listen, func(t *testing.T) {
			r := runCLI(t, map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": tt.listen}, "help")
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var line string
			for _, l := range strings.Split(r.stdout, "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "SITE_URL" {
					line = l
				}
			}
			if f := strings.Fields(line); len(f) < 2 || f[1] != tt.want {
				t.Errorf("SITE_URL line %q, want the default %s", line, tt.want)
			}
		})
	}
}
