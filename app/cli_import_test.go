package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport/replay"
	"github.com/calendar/eventcal/config/testdeadline"
)

// TestImportCommand runs "import" against the replayed TEC site: the
// summary, a second run that changes nothing, the exit statuses, and no
// credential in any output.
func TestImportCommand(t *testing.T) {
	t.Parallel()
	src := replay.New(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "app-password")
	if err := os.WriteFile(pwFile, []byte(replay.AppPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{replay.AppPassword, base64.StdEncoding.EncodeToString([]byte(replay.User + ":" + replay.AppPassword))}
	noSecrets := func(t *testing.T, r result) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("a credential appears in the output:\n%s\n%s", r.stdout, r.stderr)
			}
		}
	}
	env := map[string]string{"DATA_DIR": filepath.Join(dir, "data"), "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD_FILE": pwFile}

	r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0")
	if r.code != exitFailure || !strings.Contains(r.stderr, "there is no store") || !strings.Contains(r.stderr, "run 'import --init'") {
		t.Errorf("import into a missing store: exit %d, stderr %q; want 1 and the hint 'import --init'", r.code, r.stderr)
	}
	r = runCLI(t, env, "import", "--from", src.Root(), "--rate", "0", "--init")
	noSecrets(t, r)
	if r.code != exitOK {
		t.Fatalf("import: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"event 179 0 0 0 0", "venue 19 0 0 0 0", "category 9 0 0 0 0", "password-protected events", "369, 370"} {
		if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, env, "import", "--from", src.Root(), "--rate", "0")
	noSecrets(t, r)
	if r.code != exitOK || !strings.Contains(r.stdout, "Nothing changed") {
		t.Errorf("second import: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The password as a flag, wrong: refused, and not echoed.
	wrong := map[string]string{"DATA_DIR": env["DATA_DIR"]}
	r = runCLI(t, wrong, "import", "--from", src.Root(), "--rate", "0", "--retries", "1", "--user", replay.User, "--app-password", "x"+replay.AppPassword)
	if r.code != exitFailure || !strings.Contains(r.stderr, "401") {
		t.Errorf("wrong password: exit %d, stderr %q", r.code, r.stderr)
	}
	noSecrets(t, r)
	if strings.Contains(r.stdout+r.stderr, "x"+replay.AppPassword) {
		t.Errorf("the wrong password is echoed:\n%s", r.stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no --from", []string{"import"}, env, "--from is required"},
		{"credentials in the URL", []string{"import", "--from", strings.Replace(src.Root(), "://", "://u:"+replay.AppPassword+"@", 1)}, env, "must not hold credentials"},
		{"login without password", []string{"import", "--from", src.Root(), "--user", "x"}, map[string]string{"DATA_DIR": env["DATA_DIR"]}, "give both"},
		{"unknown language", []string{"import", "--from", src.Root(), "--language", "xx"}, env, "not one of LANGUAGES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.env, tc.args...)
			if r.code == exitOK || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want a failure saying %q", r.code, r.stderr, tc.want)
			}
			noSecrets(t, r)
		})
	}
}

// TestImportWhileServing imports into the store of a running service:
// its sync worker indexes the records, and the API lists them.
func TestImportWhileServing(t *testing.T) {
	t.Parallel()
	src := replay.New(t)
	env := map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "0"}
	addr, logs := startServing(t, env)
	r := runCLI(t, map[string]string{"DATA_DIR": env["DATA_DIR"], "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD": replay.AppPassword},
		"import", "--from", src.Root(), "--rate", "0")
	if r.code != exitOK {
		t.Fatalf("import while serving: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Published events not hidden from listings: the 49 the source lists
	// anonymously.
	listURL := "http://" + addr.String() + "/calendar/events/v1/events?start_date=1971-01-01&end_date=2100-12-31&per_page=1"
	deadline := testdeadline.Of(t)
	for {
		res, err := http.Get(listURL)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Total int `json:"total"`
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if body.Total == 49 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service lists %d imported events, want 49\n%s", body.Total, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Imported records read through the API as the source showed them.
	base := "http://" + addr.String() + "/calendar/events/v1"
	for path, want := range map[string]string{
		"/events/351": `"title":"FX “Quoted” &  Title’s Test"`, // no markup in a title, as the API stores it
		"/venues/by-slug/" + url.PathEscape("fx-東京-hall"): `"venue":"FX 東京 Hall"`,
		"/events/322": `"cost":"$5 – $15"`, // with the site currency the source showed
		"/tags/46":    `"name":"2027"`,
	} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s; want %s", path, res.StatusCode, body, want)
		}
	}
}

// TestImportPasswordFlagWarns (issue 30, finding 10): the application
// password given as --app-password draws a warning on stderr that names
// the safer ways; from the environment or a file it draws none.
func TestImportPasswordFlagWarns(t *testing.T) {
	t.Parallel()
	src := replay.New(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(replay.AppPassword), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		warn bool
	}{
		{"flag", map[string]string{"DATA_DIR": data}, []string{"--user", replay.User, "--app-password", replay.AppPassword}, true},
		{"environment", map[string]string{"DATA_DIR": data, "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD": replay.AppPassword}, nil, false},
		{"file", map[string]string{"DATA_DIR": data, "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD_FILE": pwFile}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"import", "--from", src.Root(), "--rate", "0", "--init", "--dry-run"}, tc.args...)
			r := runCLI(t, tc.env, args...)
			if r.code != exitOK {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			warned := strings.Contains(r.stderr, "warning: --app-password is visible") && strings.Contains(r.stderr, "TEC_IMPORT_APP_PASSWORD_FILE")
			if warned != tc.warn {
				t.Errorf("warned %v, want %v:\n%s", warned, tc.warn, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, replay.AppPassword) {
				t.Errorf("the password is echoed:\n%s", r.stderr)
			}
		})
	}
}

// TestImportCapExitStatus (issue 30, finding 10): a run stopped by a cap
// exits 3 and names the cap and its flag; a source echoing the
// credentials in its error text shows neither them nor its escapes.
func TestImportCapExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	endless := replay.NewSite(t, &replay.Site{Endless: "categories"})
	env := map[string]string{"DATA_DIR": filepath.Join(dir, "data")}
	r := runCLI(t, env, "import", "--from", endless.Root(), "--rate", "0", "--init", "--max-pages", "3")
	if r.code != exitCap || !strings.Contains(r.stderr, "--max-pages") || !strings.Contains(r.stderr, "list categories") {
		t.Errorf("endless source: exit %d, stderr %q; want 3 naming --max-pages", r.code, r.stderr)
	}
	if n := endless.Requests(); n > 1+3 {
		t.Errorf("%d requests to the endless source, want at most 4", n)
	}

	echo := replay.NewSite(t, &replay.Site{EchoAuth: true})
	secret := "echo-me-secret-1234"
	r = runCLI(t, map[string]string{"DATA_DIR": env["DATA_DIR"], "TEC_IMPORT_USER": "u", "TEC_IMPORT_APP_PASSWORD": secret},
		"import", "--from", echo.Root(), "--rate", "0", "--retries", "0")
	if r.code != exitFailure || !strings.Contains(r.stderr, "401") {
		t.Errorf("echoing source: exit %d, stderr %q", r.code, r.stderr)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("u:" + secret))
	if out := r.stdout + r.stderr; strings.Contains(out, secret) || strings.Contains(out, b64) || strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("the output carries a credential or an escape:\n%q", out)
	}
}

// TestImportDryRunWritesNothing: a dry run without a store reads the
// source and prints what an import would do, but creates nothing on disk:
// neither DATA_DIR nor a store in it. With an existing store, it compares
// with that store and leaves its records as they were.
func TestImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	src := replay.New(t)
	for _, tc := range []struct {
		name   string
		create bool
	}{
		{"DATA_DIR missing", false},
		{"DATA_DIR empty", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := filepath.Join(t.TempDir(), "data")
			if tc.create {
				if err := os.Mkdir(dataDir, 0o750); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"DATA_DIR": dataDir, "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD": replay.AppPassword}
			r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0", "--dry-run")
			if r.code != exitOK {
				t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "event 179") {
				t.Errorf("the dry run does not say what it would import:\n%s", r.stdout)
			}
			entries, err := os.ReadDir(dataDir)
			switch {
			case !tc.create && !errors.Is(err, os.ErrNotExist):
				t.Errorf("DATA_DIR was created: %v %v", entries, err)
			case tc.create && (err != nil || len(entries) > 0):
				t.Errorf("DATA_DIR is not empty after the dry run: %v %v", entries, err)
			}
			// Without a store, an import still asks for --init.
			if r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0"); r.code != exitFailure || !strings.Contains(r.stderr, "there is no store") {
				t.Errorf("import after the dry run: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
	// With a store: the dry run reads it (nothing to change after an
	// import) and writes nothing.
	dataDir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"DATA_DIR": dataDir, "TEC_IMPORT_USER": replay.User, "TEC_IMPORT_APP_PASSWORD": replay.AppPassword}
	if r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0", "--init"); r.code != exitOK {
		t.Fatalf("import: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0", "--dry-run"); r.code != exitOK || !strings.Contains(r.stdout, "Nothing changed") {
		t.Errorf("dry run over an imported store: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestImportProgressBar: the terminal progress names each phase in plain
// English ("write categories") and shows the count and the elapsed time,
// no rate (an import's bursts made progressbar show "0 it/hr" and
// "378078 it/s").
func TestImportProgressBar(t *testing.T) {
	var out bytes.Buffer
	p := &barProgress{w: &out}
	for _, phase := range []string{"write categories", "write events"} {
		p.Start(phase, 3)
		p.Add(1)
		p.Add(2)
		p.Finish()
	}
	got := out.String()
	for _, want := range []string{"write categories", "write events", "3/3"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress output lacks %q:\n%q", want, got)
		}
	}
	for _, bad := range []string{"it/s", "it/hr", "it/min"} {
		if strings.Contains(got, bad) {
			t.Errorf("progress output shows a rate (%q):\n%q", bad, got)
		}
	}
}

// TestImportUsersCommand (issue 34): "import --users" brings the site's
// users over without passwords, and "token create --login" then gives one
// of them a credential.
func TestImportUsersCommand(t *testing.T) {
	ev := replay.Event(1101, "Ed's night")
	ev["author"] = "2"
	src := replay.NewSite(t, &replay.Site{
		Users:  []map[string]any{replay.WPUser(2, "ed", "ed@example.org", "editor")},
		Events: []map[string]any{ev},
	})
	env := map[string]string{"DATA_DIR": filepath.Join(t.TempDir(), "data"), "TEC_IMPORT_USER": "fx-admin", "TEC_IMPORT_APP_PASSWORD": "abcd EFGH 1234 ijkl MNOP 5678"}
	r := runCLI(t, env, "import", "--from", src.Root(), "--rate", "0", "--init", "--users")
	if r.code != exitOK || !strings.Contains(r.stdout, "users: 1 created") {
		t.Fatalf("import --users: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, env, "token", "create", "--login", "ed")
	if r.code != exitOK || !strings.Contains(r.stdout, "ecal_") {
		t.Fatalf("token create --login ed: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
