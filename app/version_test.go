package app

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testsupport"
)

// TestVersionNamesRelease: "version" and "--version" print config.Version,
// the release this source is.
func TestVersionNamesRelease(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "version"} {
		r := runCLI(t, nil, arg)
		if want := "eventcal " + config.Version + " ("; r.code != exitOK || !strings.HasPrefix(r.stdout, want) {
			t.Errorf("%s: exit %d, stdout %q; want it to start with %q", arg, r.code, r.stdout, want)
		}
	}
}

// TestVersionFromLinker: a build given -ldflags -X for config.Version and
// api.buildRevision (as a release build or the Dockerfile does) reports
// them. It links the real binary: a renamed variable, or a constant, would
// make -X a silent no-op. Like the Dockerfile it strips the symbol table
// and DWARF (-s -w), which roughly halves the link's CPU. The binary is
// kept between runs (linkedBinary), so that go build finds it up to date
// (its build ID covers the sources and the flags, -X values included)
// when nothing changed, and links nothing.
func TestVersionFromLinker(t *testing.T) {
	t.Parallel()
	bin := linkedBinary(t)
	goTool := testsupport.GoTool(t)
	ldflags := "-s -w -X github.com/calendar/eventcal/config.Version=9.8.7-linked -X github.com/calendar/eventcal/app/api.buildRevision=0123abcd"
	if out, err := exec.Command(goTool, "build", "-ldflags", ldflags, "-o", bin, "github.com/calendar/eventcal").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if want := "eventcal 9.8.7-linked (revision 0123abcd, go"; !strings.HasPrefix(string(out), want) {
		t.Errorf("--version printed %q; want it to start with %q", out, want)
	}
}

// linkedBinary returns where TestVersionFromLinker builds its binary:
// under the user's cache directory, kept from one run to the next, one
// per checkout (two checkouts tested at once do not build over each
// other's); in the test's temporary directory when there is no cache
// directory. go build leaves a binary that is up to date as it is: a
// link costs about 2.5 CPU-seconds, the check about 0.5.
func linkedBinary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(t.TempDir(), "eventcal")
	}
	dir := filepath.Join(cache, "eventcal", "version-bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return filepath.Join(t.TempDir(), "eventcal")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(wd))
	return filepath.Join(dir, "eventcal-"+hex.EncodeToString(sum[:8]))
}

// TestRequestsNameRelease: the requests the commands send to a service
// (healthcheck, and the admin calls of status, reindex) carry
// "eventcal-cli/<version>" as their User-Agent.
func TestRequestsNameRelease(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	agents := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents[r.URL.Path] = r.Header.Get("User-Agent")
		mu.Unlock()
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	if r := runCLI(t, nil, "healthcheck", "--url", srv.URL+"/healthz"); r.code != exitOK {
		t.Fatalf("healthcheck: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "status", "--url", srv.URL, "--token", "t"); r.code != exitOK {
		t.Fatalf("status: exit %d, stderr %q", r.code, r.stderr)
	}
	want := "eventcal-cli/" + config.Version
	mu.Lock()
	defer mu.Unlock()
	for _, path := range []string{"/healthz", "/calendar/events/v1/admin/sync"} {
		if agents[path] != want {
			t.Errorf("GET %s: User-Agent %q, want %q (saw %v)", path, agents[path], want, agents)
		}
	}
}

// TestDockerfileLinksTheVersion: the image's build links VERSION (when
// given) into config.Version and REVISION into api.buildRevision, the
// variables the binary reads: -X on a name that does not exist is
// silently ignored, so a rename would otherwise go unnoticed.
func TestDockerfileLinksTheVersion(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"${VERSION:+-X github.com/calendar/eventcal/config.Version=${VERSION}}",
		"-X github.com/calendar/eventcal/app/api.buildRevision=${REVISION}",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Dockerfile's go build does not link %q", want)
		}
	}
}
