package app

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
)

// waitListed polls a service until its list at path (as the admin) has
// total items.
func waitListed(t *testing.T, api *apiClient, path string, total int, svc *service) {
	t.Helper()
	deadline := testdeadline.Of(t)
	for {
		var list struct {
			Total int `json:"total"`
		}
		if _, err := api.send("GET", path, nil, &list); err == nil && list.Total == total {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service never listed %d items at %s (last: %d)\n%s", total, path, list.Total, svc.logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the index
	}
}

// waitAllListed waits until a service lists the test's 4 events and its
// venue.
func waitAllListed(t *testing.T, api *apiClient, svc *service) {
	t.Helper()
	waitListed(t, api, "/events?per_page=1&start_date=2000-01-01&end_date=2100-01-01&status=publish,draft", 4, svc)
	waitListed(t, api, "/venues?per_page=1", 1, svc)
}

// TestVerifyCommand: "eventcal verify" between a service and one started
// on a restored backup of its store finds no difference (exit 0); after a
// change on the second that only an editor sees, it lists the difference
// for the editor's token from EVENTCAL_TOKEN and exits 1, never printing
// the token; an unreachable service and bad command lines exit 2.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	dirA := t.TempDir()
	if r := runCLI(t, map[string]string{"DATA_DIR": dirA}, "user", "add", "--login", "ed", "--role", "editor", "--init"); r.code != exitOK {
		t.Fatalf("user add: %d %s", r.code, r.stderr)
	}
	r := runCLI(t, map[string]string{"DATA_DIR": dirA}, "token", "create", "--login", "ed")
	if r.code != exitOK {
		t.Fatalf("token create: %d %s", r.code, r.stderr)
	}
	editorToken := strings.TrimSpace(r.stdout)
	settings := func(dir string) map[string]string {
		return map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token", "DRAIN_DELAY": "0", "LANGUAGES": "en,fr"}
	}
	svcA := startService(t, settings(dirA))
	urlA := "http://" + svcA.addr.String()
	apiA := &apiClient{base: urlA + svcA.cfg.APIRoot(), token: "ops-token", http: &http.Client{Timeout: time.Minute}}
	venue, err := apiA.create("/venues", map[string]any{"venue": "Town Hall"})
	if err != nil {
		t.Fatal(err)
	}
	var draft int64
	for i := range 4 {
		body := map[string]any{"title": fmt.Sprintf("Talk %d", i), "start_date": fmt.Sprintf("2027-03-0%d 18:00:00", i+1),
			"end_date": fmt.Sprintf("2027-03-0%d 19:00:00", i+1), "venue": venue}
		if i == 3 {
			body["status"] = "draft"
		}
		id, err := apiA.create("/events", body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := apiA.send("POST", fmt.Sprintf("/events/%d?multilang_language=fr", id), map[string]any{"title": fmt.Sprintf("Exposé %d", i)}, nil); err != nil {
			t.Fatal(err)
		}
		draft = id
	}
	waitAllListed(t, apiA, svcA)

	// The second service: a restored backup of the first's store.
	file := filepath.Join(t.TempDir(), "a.db")
	if r := runCLI(t, map[string]string{"DATA_DIR": dirA}, "backup", "--out", file); r.code != exitOK {
		t.Fatalf("backup: %d %s", r.code, r.stderr)
	}
	dirB := filepath.Join(t.TempDir(), "b")
	if r := runCLI(t, map[string]string{"DATA_DIR": dirB}, "restore", file); r.code != exitOK {
		t.Fatalf("restore: %d %s", r.code, r.stderr)
	}
	svcB := startService(t, settings(dirB))
	urlB := "http://" + svcB.addr.String()
	apiB := &apiClient{base: urlB + svcB.cfg.APIRoot(), token: "ops-token", http: &http.Client{Timeout: time.Minute}}
	waitAllListed(t, apiB, svcB)

	// --from defaults to this configuration's LISTEN_ADDR.
	env := map[string]string{"DATA_DIR": dirA, "LISTEN_ADDR": svcA.addr.String(), "LANGUAGES": "en,fr", "EVENTCAL_TOKEN": editorToken}
	r = runCLI(t, env, "verify", "--against", urlB)
	if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "No difference: ") {
		t.Fatalf("equal services: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	editor := "token " + (&repository.Token{Hash: repository.HashToken(editorToken)}).ID()
	for _, want := range []string{"2 readers", "anonymous, en: listed 3 events", "anonymous, fr: listed 3 events", editor + ", fr: listed 4 events"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the progress lacks %q:\n%s", want, r.stderr)
		}
	}

	// A change only an editor sees.
	if _, err := apiB.send("POST", fmt.Sprintf("/events/%d?multilang_language=fr", draft), map[string]any{"title": "Exposé annulé"}, nil); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, env, "verify", "--from", urlA, "--against", urlB+"/", "--lang", "fr")
	// The first differing path is the title, or the modification time
	// before it when the change fell in another second than the first
	// service's last write (the services run on the real clock).
	wantBlock := regexp.MustCompile(fmt.Sprintf(`(?m)^event %d \(%s, fr\)\n  GET /calendar/events/v1/events/%d\?multilang_language=fr\n`+
		`  (\$\.title: "Exposé 3" at from, "Exposé annulé" at against|\$\.modified: "[0-9: -]+" at from, "[0-9: -]+" at against)\n`, draft, editor, draft))
	if r.code != exitFailure || !wantBlock.MatchString(r.stdout) || !strings.Contains(r.stderr, " differences: ") {
		t.Fatalf("a difference: exit %d, want 1 and\n%s\nstdout %s\nstderr %s", r.code, wantBlock, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "(anonymous") || strings.Contains(r.stdout, ", en)") {
		t.Errorf("differences an anonymous reader, or English, cannot see:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, editorToken) {
		t.Errorf("the token is printed:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runCLI(t, env, "verify", "--from", urlA, "--against", urlB, "--max-differences", "1")
	if r.code != exitFailure || strings.Count(r.stdout, "\n  GET ") != 1 || !strings.Contains(r.stderr, "(the first 1 listed)") {
		t.Errorf("--max-differences 1: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	// Exit 2: an unreachable service, a bad command line.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"against unreachable", []string{"--against", closed}, "verify: against service at " + closed},
		{"from unreachable", []string{"--from", closed, "--against", urlB}, "verify: from service at " + closed},
		{"against missing", nil, "--against is required"},
		{"the same service", []string{"--from", urlB, "--against", urlB + "/"}, "--from and --against are both"},
		{"not a URL", []string{"--against", "new-host:8080"}, `--against: "new-host:8080" is not a service's base URL`},
		{"bad language", []string{"--against", urlB, "--lang", "en,f r"}, `--lang "en,f r": language codes`},
		{"language not served", []string{"--against", urlB, "--lang", "de"}, `language "de": the from service does not serve it (it serves en, fr)`},
		{"token on the command line", []string{"--against", urlB, "--token", editorToken}, "flag provided but not defined: -token"},
		{"positional", []string{"--against", urlB, "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, env, append([]string{"verify"}, tt.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
				t.Errorf("exit %d, want 2 and %q\nstdout %s\nstderr %s", r.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
}
