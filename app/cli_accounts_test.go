package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
)

// The CLI refuses to create an empty embedded store, and says which store
// it opened (issue 7).
func TestCLIStoreChecks(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "elsewhere")
	env := map[string]string{"DATA_DIR": dir}
	for _, args := range [][]string{
		{"user", "add", "--login", "x", "--role", "admin"},
		{"token", "create", "--login", "x"},
		{"token", "list"},
		{"user", "list"},
	} {
		r := runCLI(t, env, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, "there is no store at "+filepath.Join(dir, "calendar.db")) || !strings.Contains(r.stderr, "--init") {
			t.Errorf("%v on a missing store: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a refused command created %s (%v)", dir, err)
	}
	r := runCLI(t, env, "user", "add", "--login", "x", "--role", "admin", "--init")
	if r.code != exitOK || !strings.Contains(r.stderr, "Store: SQLite "+filepath.Join(dir, "calendar.db")) {
		t.Fatalf("user add --init: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, env, "token", "create", "--login", "x")
	if r.code != exitOK || !strings.Contains(r.stderr, "Store: SQLite ") {
		t.Errorf("token create on the new store: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestRedactMongoURI pins what the CLI prints of a MongoDB URI.
func TestRedactMongoURI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"mongodb://db:27017", "mongodb://db:27017"},
		{"mongodb://user:secret@db:27017/cal?authSource=admin", "mongodb://db:27017/cal"},
		{"mongodb://u:p%40ss@h1:27017,h2,[::1]:27018/?replicaSet=rs0&tlsCertificateKeyFilePassword=x", "mongodb://h1:27017,h2,[::1]:27018"},
		{"mongodb+srv://a:b@cluster.example.org", "mongodb+srv://cluster.example.org"},
		{"mongodb://we@ird:pa@ss@host", "mongodb://host"},
		{"garbage", "(unparsable URI)"},
	} {
		if got := redactMongoURI(c.in); got != c.want {
			t.Errorf("redactMongoURI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Token and user commands (issue 7, finding 9): list, revoke, expiry,
// role changes and disabling.
func TestCLITokenAndUserCommands(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATA_DIR": t.TempDir()}
	must := func(want int, args ...string) result {
		t.Helper()
		r := runCLI(t, env, args...)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d; stderr %q", args, r.code, want, r.stderr)
		}
		return r
	}
	must(exitOK, "user", "add", "--login", "carol", "--role", "author", "--init")
	secret := strings.TrimSpace(must(exitOK, "token", "create", "--login", "carol", "--name", "laptop", "--expires", "30d").stdout)
	must(exitOK, "token", "create", "--login", "carol")
	must(exitUsage, "token", "create", "--login", "carol", "--expires", "5s")
	must(exitUsage, "token", "create", "--login", "carol", "--expires", "soon")
	list := must(exitOK, "token", "list", "--login", "carol").stdout
	id := repository.HashToken(secret)[:repository.TokenIDLength]
	line := regexp.MustCompile(`(?m)^` + id + `\s+carol\s+laptop\s+\S+\s+never\s+(\S+)$`).FindStringSubmatch(list)
	if line == nil {
		t.Fatalf("token list lacks the laptop token %s:\n%s", id, list)
	}
	exp, err := time.Parse(time.RFC3339, line[1])
	if err != nil || time.Until(exp) < 29*24*time.Hour || time.Until(exp) > 31*24*time.Hour {
		t.Errorf("expiry %q, want in 30 days", line[1])
	}
	if strings.Contains(list, secret) || strings.Contains(list, repository.HashToken(secret)) {
		t.Error("token list shows a secret or a full hash")
	}
	if n := strings.Count(list, "carol"); n != 2 {
		t.Errorf("%d tokens listed, want 2:\n%s", n, list)
	}
	must(exitUsage, "token", "revoke", "nothex")
	must(exitUsage, "token", "revoke")
	must(exitFailure, "token", "revoke", "0000000000000000")
	if r := must(exitOK, "token", "revoke", strings.ToUpper(id)); !strings.Contains(r.stderr, "Revoked token "+id) {
		t.Errorf("revoke stderr %q", r.stderr)
	}
	if strings.Contains(must(exitOK, "token", "list").stdout, id) {
		t.Error("a revoked token is still listed")
	}

	must(exitOK, "user", "role", "--login", "carol", "--role", "editor")
	must(exitUsage, "user", "role", "--login", "carol", "--role", "king")
	must(exitFailure, "user", "disable", "--login", "nobody")
	must(exitOK, "user", "disable", "--login", "carol")
	users := must(exitOK, "user", "list").stdout
	if !regexp.MustCompile(`(?m)^\d+\s+carol\s+editor\s+disabled\s`).MatchString(users) {
		t.Errorf("user list:\n%s", users)
	}
	must(exitOK, "user", "enable", "--login", "carol")

	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	store, err := openStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	u, err := store.GetUserByLogin(context.Background(), "carol")
	if err != nil || u.Role != repository.RoleEditor || u.Disabled {
		t.Errorf("carol = %+v, %v", u, err)
	}
}

// With METRICS_ADDR the service serves /metrics there without
// authentication, and not on the API listener (issue 7, finding 9).
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	// DRAIN_DELAY 0: http.Get's kept-alive connection would otherwise
	// hold the stop for the whole default drain (the drain has its own
	// test, drain_test.go).
	env := map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": "127.0.0.1:0", "METRICS_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0"}
	srv := startService(t, env)
	api, logs := srv.addr, srv.logs
	re := regexp.MustCompile(`msg="serving metrics" addr=(\S+)`)
	var m []string
	for deadline := testdeadline.Of(t); m == nil; {
		if m = re.FindStringSubmatch(logs.String()); m == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no metrics listener in the logs:\n%s", logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, body := get("http://" + m[1] + "/metrics"); st != 200 || !strings.Contains(body, "eventcal_auth_failures_total") {
		t.Errorf("metrics listener: %d %.200s", st, body)
	}
	if st, _ := get("http://" + api.String() + "/metrics"); st != 404 {
		t.Errorf("API listener /metrics: %d, want 404", st)
	}
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		t.Error("metrics listener still open after shutdown")
	}
}
