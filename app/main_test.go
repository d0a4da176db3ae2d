package app

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/lease"
)

// result is one run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs args with the environment env.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, func(k string) string { return env[k] }, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// cliStep is one command of a scripted session of the command line: run
// with env, it exits with code, its stdout holds stdout and its stderr
// stderr (substrings), and its stdout does not hold notStdout (when set).
type cliStep struct {
	name      string
	env       map[string]string
	args      []string
	code      int
	stdout    string
	stderr    string
	notStdout string
}

// runCLISteps runs steps in order and reports each that went otherwise.
func runCLISteps(t *testing.T, steps []cliStep) {
	t.Helper()
	for _, s := range steps {
		r := runCLI(t, s.env, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.stdout) || !strings.Contains(r.stderr, s.stderr) ||
			(s.notStdout != "" && strings.Contains(r.stdout, s.notStdout)) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s", s.name, r.code, r.stdout, r.stderr)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "-h", "--help", "-help"} {
		t.Run(arg, func(t *testing.T) {
			r := runCLI(t, nil, arg)
			if r.code != exitOK {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			for _, cmd := range []string{"serve", "user add --login NAME --role ROLE", "token create --login NAME", "healthcheck", "contributor, author, editor, admin"} {
				if !strings.Contains(r.stdout, cmd) {
					t.Errorf("help does not mention %q:\n%s", cmd, r.stdout)
				}
			}
			for _, o := range config.Options() {
				line := lineWith(r.stdout, "  "+o.Name+" ")
				if line == "" {
					t.Errorf("help does not list %s", o.Name)
					continue
				}
				if o.Default != "" && !strings.Contains(line, " "+o.Default+" ") {
					t.Errorf("help line %q lacks the default %q", line, o.Default)
				}
				if !strings.Contains(line, o.Description) {
					t.Errorf("help line %q lacks the description", line)
				}
				if o.Secret != strings.Contains(line, "(secret)") {
					t.Errorf("help line %q: secret marker wrong", line)
				}
			}
		})
	}
}

// lineWith returns the first line of s that contains sub, or "".
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"DATA_DIR": dir}
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantCode   int
		wantStderr []string
	}{
		{"unknown command", env, []string{"frobnicate"}, exitUsage, []string{`unknown command "frobnicate"; run 'eventcal --help' for the commands`}},
		{"unknown user command", env, []string{"user", "remove"}, exitUsage, []string{`"user remove"`}},
		{"user without command", env, []string{"user"}, exitUsage, []string{"Usage:"}},
		{"unknown token command", env, []string{"token", "burn"}, exitUsage, []string{`"token burn"`}},
		{"token without command", env, []string{"token"}, exitUsage, []string{"Usage:"}},
		{"serve extra argument", env, []string{"serve", "now"}, exitUsage, []string{`unexpected argument "now"`}},
		{"user add unknown flag", env, []string{"user", "add", "--name", "x"}, exitUsage, []string{"-name"}},
		{"user add without login", env, []string{"user", "add", "--role", "admin"}, exitUsage, []string{"--login is required"}},
		{"user add blank login", env, []string{"user", "add", "--login", "  ", "--role", "admin"}, exitUsage, []string{"--login is required"}},
		{"user add login with space", env, []string{"user", "add", "--login", "a b", "--role", "admin"}, exitUsage, []string{"spaces"}},
		{"user add long login", env, []string{"user", "add", "--login", strings.Repeat("a", 61), "--role", "admin"}, exitUsage, []string{"at most 60"}},
		{"user add without role", env, []string{"user", "add", "--login", "x"}, exitUsage, []string{"role must be one of contributor, author, editor, admin; received \"\"."}},
		{"user add bad role", env, []string{"user", "add", "--login", "x", "--role", "god"}, exitUsage, []string{`role must be one of contributor, author, editor, admin; received "god".`}},
		{"user add positional", env, []string{"user", "add", "--login", "x", "--role", "admin", "extra"}, exitUsage, []string{`unexpected argument "extra"`}},
		{"token create without login", env, []string{"token", "create"}, exitUsage, []string{"--login is required"}},
		{"invalid config", map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "nope", "TIMEZONE": "Nowhere/City"},
			[]string{"user", "add", "--login", "x", "--role", "admin"}, exitUsage,
			[]string{"invalid configuration", "invalid LISTEN_ADDR", "invalid TIMEZONE"}},
		{"invalid config serve", map[string]string{"DATA_DIR": dir, "LOG_LEVEL": "loud"}, nil, exitUsage, []string{"invalid LOG_LEVEL"}},
		{"secret not echoed", map[string]string{"MONGO_URI": "mysql://root:hunter2@db"}, []string{"token", "create", "--login", "x"}, exitUsage, []string{"invalid MONGO_URI"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, tt.args...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty: %q", r.stdout)
			}
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("stderr leaks a secret:\n%s", r.stderr)
			}
		})
	}
	// Asked-for help goes to standard output, errors to standard error; the
	// unknown command is one line.
	if r := runCLI(t, env, "frobnicate"); strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("unknown command: %q, want one line", r.stderr)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"user", "-h"}, []string{"Usage: eventcal user"}},
		{[]string{"user", "add", "-h"}, []string{"Usage: eventcal user add", "-login", "-role"}},
		{[]string{"token", "--help"}, []string{"Usage: eventcal token"}},
		{[]string{"reindex", "-h"}, []string{"Usage: eventcal reindex [--url URL] [--token T] [--direct] [--cancel]", "-cancel"}},
		{[]string{"status", "-h"}, []string{"Usage: eventcal status [--url URL] [--token T] [--direct]"}},
		{[]string{"webhook", "-h"}, []string{"Usage: eventcal webhook COMMAND"}},
	} {
		r := runCLI(t, env, tc.args...)
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", tc.args, w, r.stdout)
			}
		}
	}
	// Usage errors never touch the store.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("DATA_DIR is not empty after usage errors: %v", entries)
	}
}

// TestUsersAndTokens runs the administration commands against each store
// engine: the embedded SQLite store, and MongoDB (an embedded FerretDB, or
// the server named by TEST_MONGO_URI).
func TestUsersAndTokens(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		// DATA_DIR does not exist yet: "user add --init" creates it.
		dir := filepath.Join(t.TempDir(), "data")
		testUsersAndTokens(t, map[string]string{"DATA_DIR": dir})
		if _, err := os.Stat(filepath.Join(dir, "calendar.db")); err != nil {
			t.Errorf("no calendar.db in DATA_DIR: %v", err)
		}
	})
	t.Run("mongo", func(t *testing.T) {
		// DATA_DIR points at a file: it must not be touched with MongoDB.
		notADir := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(notADir, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		testUsersAndTokens(t, map[string]string{
			"DATA_DIR":       notADir,
			"MONGO_URI":      mongotest.Start(t),
			"MONGO_DATABASE": mongotest.Database(t),
		})
	})
}

// testUsersAndTokens runs the administration commands in sequence against
// the store env configures, then checks what they stored.
func testUsersAndTokens(t *testing.T, env map[string]string) {
	ids := map[string]string{}
	var secret string
	steps := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout *regexp.Regexp
		wantStderr string
		// keep records stdout for later steps.
		keep func(stdout string)
	}{
		{"add editor", []string{"user", "add", "--login", "alice", "--role", "editor", "--init"}, exitOK,
			regexp.MustCompile(`^[1-9][0-9]*\n$`), `Created editor "alice"`, func(s string) { ids["alice"] = strings.TrimSpace(s) }},
		{"add admin single dash, role in capitals", []string{"user", "add", "-login", "bob", "-role", "ADMIN"}, exitOK,
			regexp.MustCompile(`^[1-9][0-9]*\n$`), `Created admin "bob"`, func(s string) { ids["bob"] = strings.TrimSpace(s) }},
		{"duplicate login", []string{"user", "add", "--login", "alice", "--role", "author"}, exitFailure,
			regexp.MustCompile(`^$`), `login "alice" is already taken`, nil},
		{"token for alice", []string{"token", "create", "--login", "alice"}, exitOK,
			regexp.MustCompile(`^ecal_[0-9a-f]{64}\n$`), "shown only this once", func(s string) { secret = strings.TrimSpace(s) }},
		{"second token differs", []string{"token", "create", "--login=alice"}, exitOK,
			regexp.MustCompile(`^ecal_[0-9a-f]{64}\n$`), "", func(s string) {
				if strings.TrimSpace(s) == secret {
					t.Error("two tokens have the same secret")
				}
			}},
		{"token for unknown user", []string{"token", "create", "--login", "nobody"}, exitFailure,
			regexp.MustCompile(`^$`), `no user with login "nobody"`, nil},
	}
	for _, st := range steps {
		r := runCLI(t, env, st.args...)
		if r.code != st.wantCode {
			t.Fatalf("%s: exit %d, want %d; stderr:\n%s", st.name, r.code, st.wantCode, r.stderr)
		}
		if !st.wantStdout.MatchString(r.stdout) {
			t.Errorf("%s: stdout %q does not match %s", st.name, r.stdout, st.wantStdout)
		}
		if !strings.Contains(r.stderr, st.wantStderr) {
			t.Errorf("%s: stderr lacks %q:\n%s", st.name, st.wantStderr, r.stderr)
		}
		if st.keep != nil {
			st.keep(r.stdout)
		}
	}
	if ids["alice"] == ids["bob"] {
		t.Fatalf("alice and bob have the same ID %s", ids["alice"])
	}

	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store, err := openStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	u, err := store.UserByTokenHash(ctx, repository.HashToken(secret))
	if err != nil {
		t.Fatalf("the printed token does not authenticate: %v", err)
	}
	if u.Login != "alice" || u.Role != repository.RoleEditor || strconv.FormatInt(u.ID, 10) != ids["alice"] {
		t.Errorf("token user = %+v, want alice (editor, ID %s)", u, ids["alice"])
	}
	bob, err := store.GetUserByLogin(ctx, "bob")
	if err != nil || bob.Role != repository.RoleAdmin || strconv.FormatInt(bob.ID, 10) != ids["bob"] {
		t.Errorf("bob = %+v, %v; want admin with ID %s", bob, err, ids["bob"])
	}
	if _, err := store.UserByTokenHash(ctx, secret); err == nil {
		t.Error("the secret itself was stored instead of its hash")
	}
}

func TestHealthURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		listen  string
		want    string
		wantErr bool
	}{
		{":8080", "http://127.0.0.1:8080/healthz", false},
		{"0.0.0.0:9000", "http://127.0.0.1:9000/healthz", false},
		{"[::]:80", "http://127.0.0.1:80/healthz", false},
		{"10.1.2.3:8080", "http://10.1.2.3:8080/healthz", false},
		{"[::1]:8080", "http://[::1]:8080/healthz", false},
		{"localhost:8081", "http://localhost:8081/healthz", false},
		{"127.0.0.1:0", "", true},
	}
	for _, tt := range tests {
		got, err := healthURL(&config.Config{ListenAddr: tt.listen})
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q, error %v", tt.listen, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer healthy.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	// A port nobody listens on: bind one, then close it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
	}{
		{"healthy via LISTEN_ADDR", map[string]string{"LISTEN_ADDR": healthy.Listener.Addr().String()}, nil, exitOK},
		{"healthy via --url", nil, []string{"--url", healthy.URL + "/healthz"}, exitOK},
		{"wrong path", nil, []string{"--url", healthy.URL + "/nope"}, exitFailure},
		{"unhealthy", map[string]string{"LISTEN_ADDR": sick.Listener.Addr().String()}, nil, exitFailure},
		{"nobody listening", map[string]string{"LISTEN_ADDR": closedAddr}, nil, exitFailure},
		{"port 0", map[string]string{"LISTEN_ADDR": ":0"}, nil, exitFailure},
		{"invalid config is 1, not 2", map[string]string{"LISTEN_ADDR": "bad"}, nil, exitFailure},
		{"bad flag is 1, not 2", nil, []string{"--bogus"}, exitFailure},
		{"help", nil, []string{"-h"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.env, append([]string{"healthcheck"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", r.code, tt.wantCode, r.stdout, r.stderr)
			}
		})
	}
}

// TestServe starts the service on a random port with each store engine,
// probes it with the healthcheck command, runs an administration command on
// the same store while it serves, then stops it as a signal would.
func TestServe(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		testServe(t, map[string]string{"DATA_DIR": t.TempDir()}, "store=sqlite")
	})
	t.Run("mongo", func(t *testing.T) {
		testServe(t, map[string]string{
			"DATA_DIR":       t.TempDir(),
			"MONGO_URI":      mongotest.Start(t),
			"MONGO_DATABASE": mongotest.Database(t),
		}, "store=mongodb")
	})
}

func testServe(t *testing.T, env map[string]string, wantEngine string) {
	env["LISTEN_ADDR"] = "127.0.0.1:0"
	env["ADMIN_TOKEN"] = "hunter2"
	env["DRAIN_DELAY"] = "0" // the drain has its own test (drain_test.go)
	srv := startService(t, env)
	addr, logs := srv.addr, srv.logs

	if r := runCLI(t, map[string]string{"LISTEN_ADDR": addr.String()}, "healthcheck"); r.code != exitOK {
		t.Fatalf("healthcheck: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, env, "user", "add", "--login", "carol", "--role", "author"); r.code != exitOK {
		t.Fatalf("user add while serving: exit %d, stderr %q", r.code, r.stderr)
	}

	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	out := logs.String()
	for _, want := range []string{"msg=starting", wantEngine, "search=bleve", "config.ADMIN_TOKEN=***", "config.LISTEN_ADDR=127.0.0.1:0", "msg=stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("logs leak a secret:\n%s", out)
	}
	// The port is released.
	if _, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		t.Error("still accepting connections after shutdown")
	}
	// The store was closed cleanly and holds carol.
	store, err := openStore(context.Background(), srv.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	if _, err := store.GetUserByLogin(context.Background(), "carol"); err != nil {
		t.Errorf("carol: %v", err)
	}
}

// TestServeListenError checks that a taken port is reported, not hidden.
func TestServeListenError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": ln.Addr().String()}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs testsupport.SyncBuffer
	err = serveUntilDone(context.Background(), cfg, cfg.NewLogger(&logs), nil)
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("serve on a taken port: %v, want a *net.OpError", err)
	}
}

// TestUnreachableStore: with MONGO_URI pointing at a closed port, the
// commands fail with one line naming the setting, the server (without
// credentials) and what failed, after the 5 s server selection timeout
// rather than the driver's 30 s.
func TestUnreachableStore(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a closed port
	env := map[string]string{"MONGO_URI": "mongodb://user:s3cret@" + addr + "/?replicaSet=none&directConnection=true", "LISTEN_ADDR": "127.0.0.1:0"}
	for _, args := range [][]string{{"user", "add", "--login", "x", "--role", "editor"}, {"serve"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel() // each waits out the selection timeout
			start := time.Now()
			r := runCLI(t, env, args...)
			took := time.Since(start)
			if r.code != exitFailure {
				t.Errorf("%v: exit %d", args, r.code)
			}
			line := strings.TrimSpace(r.stderr)
			if args[0] == "serve" {
				line = lineWith(r.stderr, "MONGO_URI")
			}
			// The driver's reason: the refused connection, or, when its
			// monitor has not tried the server yet within the selection
			// timeout (a busy machine: the topology still lists no
			// server), the selection error alone.
			reason := strings.Contains(line, "connection refused") || strings.Contains(line, "server selection error")
			if !strings.Contains(line, "MONGO_URI: mongo: no server answers at mongodb://"+addr+"/:") || !reason ||
				strings.Contains(r.stderr, "s3cret") {
				t.Errorf("%v: stderr %q", args, r.stderr)
			}
			// Generous: the point is the 5 s selection timeout, not the
			// driver's 30 s default.
			if took > 25*time.Second {
				t.Errorf("%v took %s", args, took)
			}
		})
	}
}

// TestHelpShowsCurrentValues: --help shows what each setting is set to in
// this environment, secrets masked; and --version names the build.
func TestHelpShowsCurrentValues(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LISTEN_ADDR": ":9999", "ADMIN_TOKEN": "hunter2-token", "LOG_LEVEL": "debug"}
	r := runCLI(t, env, "--help")
	if r.code != exitOK || strings.Contains(r.stdout, "hunter2") {
		t.Fatalf("exit %d; the secret leaks: %v", r.code, strings.Contains(r.stdout, "hunter2"))
	}
	for name, want := range map[string]string{"LISTEN_ADDR": " :9999 ", "ADMIN_TOKEN": " *** ", "LOG_LEVEL": " debug ", "DATA_DIR": " - "} {
		if line := lineWith(r.stdout, "  "+name+" "); !strings.Contains(line, want) {
			t.Errorf("%s line %q lacks %q", name, line, want)
		}
	}
	for _, arg := range []string{"--version", "version"} {
		r := runCLI(t, nil, arg)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "eventcal ") || !strings.Contains(r.stdout, "go1.") {
			t.Errorf("%s: exit %d, stdout %q", arg, r.code, r.stdout)
		}
	}
}

// startServing runs the service with the settings in env until the test
// ends, and returns the API listener's address and the service's log.
func startServing(t *testing.T, env map[string]string) (net.Addr, *testsupport.SyncBuffer) {
	t.Helper()
	s := startService(t, env)
	return s.addr, s.logs
}

// service is a service a test runs (startService).
type service struct {
	cfg     *config.Config
	addr    net.Addr
	logs    *testsupport.SyncBuffer
	cancel  context.CancelFunc
	stopped chan struct{}
	err     error // what serveUntilDone returned, once stopped is closed
}

// serveInBackground runs serveUntilDone(ctx, cfg), logging to logs, and
// returns its address once it listens, with the channel its result comes
// on. The test fails if it ends or does not listen first.
func serveInBackground(t *testing.T, ctx context.Context, cfg *config.Config, logs *testsupport.SyncBuffer) (string, <-chan error) {
	t.Helper()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- serveUntilDone(ctx, cfg, cfg.NewLogger(logs), func(a net.Addr) { addrc <- a }) }()
	select {
	case a := <-addrc:
		return a.String(), done
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, logs.String())
	case <-testdeadline.After(t):
		t.Fatalf("never listened\n%s", logs.String())
	}
	return "", nil
}

// serveOn runs serve(ctx, cfg) on an open store, engine and lease,
// logging to logs, and returns once it listens: its address, and the
// channel (buffered) its result comes on. The test fails if it ends or
// does not listen first.
func serveOn(t *testing.T, ctx context.Context, cfg *config.Config, store repository.Store, engine search.Engine, ls lease.Lease, logs *testsupport.SyncBuffer) (net.Addr, chan error) {
	t.Helper()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, cfg.NewLogger(logs), store, engine, ls, func(a net.Addr) { addrc <- a })
	}()
	select {
	case a := <-addrc:
		return a, done
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, logs.String())
	case <-testdeadline.After(t):
		t.Fatalf("never listened\n%s", logs.String())
	}
	return nil, nil
}

// eventually polls cond until it holds; the test fails at its deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testdeadline.Poll(t, 20*time.Millisecond, what, cond)
}

// startService runs the service with the settings in env until stop is
// called or the test ends, and returns once it listens.
func startService(t *testing.T, env map[string]string) *service {
	t.Helper()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	s := &service{cfg: cfg, logs: &testsupport.SyncBuffer{}, stopped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	addrc := make(chan net.Addr, 1)
	go func() {
		s.err = serveUntilDone(ctx, cfg, cfg.NewLogger(s.logs), func(a net.Addr) { addrc <- a })
		close(s.stopped)
	}()
	t.Cleanup(func() { cancel(); <-s.stopped })
	select {
	case s.addr = <-addrc:
		return s
	case <-s.stopped:
		t.Fatalf("serve ended before listening: %v\n%s", s.err, s.logs.String())
	case <-testdeadline.After(t):
		t.Fatalf("never listened\n%s", s.logs.String())
	}
	return nil
}

// stop stops the service and returns what serveUntilDone returned.
func (s *service) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case <-s.stopped:
		return s.err
	case <-testdeadline.After(t):
		t.Fatalf("serve did not stop\n%s", s.logs.String())
		return nil
	}
}
