//go:build unix

package api_test

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
)

// chromiumBinaries are the names Debian's and other distributions'
// Chromium go by.
var chromiumBinaries = []string{"chromium", "chromium-browser"}

// renderedOperation is what Swagger UI renders for "list events": the
// operation's summary line with its path and a link to its operationId.
// None of it is in the page as served: it comes from the interface
// document, fetched and rendered by the viewer.
var renderedOperation = []*regexp.Regexp{
	regexp.MustCompile(`class="opblock-summary-path" data-path="/events"`),
	regexp.MustCompile(`href="#/[^/"]+/getEvents"`),
	regexp.MustCompile(`>List and search events\.<`),
}

// TestDocsPageRendersInChromium loads /docs in headless Chromium from a
// real listener and finds the "list events" operation in the rendered
// DOM. It fails when the viewer does not render (a script refused by the
// Content-Security-Policy, a file that is not served) and when the browser
// reports any policy violation or uncaught script error, styles included.
// It skips when no Chromium is installed (.ci/run installs Debian's).
func TestDocsPageRendersInChromium(t *testing.T) {
	t.Parallel()
	var browser string
	for _, name := range chromiumBinaries {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skipf("no Chromium in PATH (looked for %s): the reference page is not loaded in a browser; "+
			"install it with apt-get install chromium", strings.Join(chromiumBinaries, ", "))
	}
	e := newEnv(t)
	pageURL := "http://" + serveLoopback(t, e) + "/docs"

	// A busy machine may not finish loading and rendering within one
	// run's virtual time: try again with more, until the test's deadline.
	// A violation or a script error ends the test at once.
	deadline := testdeadline.Of(t)
	budget := 20 * time.Second
	for attempt := 1; ; attempt++ {
		dom, console := dumpDOM(t, browser, pageURL, budget, deadline)
		for _, line := range console {
			if l := strings.ToLower(line); strings.Contains(l, "content security policy") || strings.Contains(l, "uncaught") {
				t.Fatalf("the browser reports: %s\nconsole:\n%s", line, strings.Join(console, "\n"))
			}
		}
		missing := ""
		for _, re := range renderedOperation {
			if !re.Match(dom) {
				missing = re.String()
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) || attempt == 5 {
			t.Fatalf("after %d runs of %s, the rendered page has no %s: the viewer did not render the document.\n"+
				"console:\n%s\nDOM (%d bytes):\n%.3000s", attempt, browser, missing, strings.Join(console, "\n"), len(dom), dom)
		}
		t.Logf("run %d: no %s in the DOM yet; again with %s of virtual time", attempt, missing, 2*budget)
		budget *= 2
	}
}

// consoleLine is how Chromium logs the page's console messages to stderr
// (--enable-logging=stderr).
var consoleLine = regexp.MustCompile(`:CONSOLE(?::\d+)?\] (.*)`)

// dumpDOM runs headless Chromium on pageURL and returns the DOM it dumps
// after budget of virtual time, and the page's console messages. Chromium
// runs in its own process group with a fresh profile, and the group is
// killed if it is still running at the deadline.
func dumpDOM(t *testing.T, browser, pageURL string, budget time.Duration, deadline time.Time) (dom []byte, console []string) {
	t.Helper()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-extensions", "--disable-sync", "--disable-background-networking",
		"--disable-component-update", "--disable-crash-reporter",
		"--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0",
		"--virtual-time-budget="+strconv.FormatInt(budget.Milliseconds(), 10),
		"--dump-dom", pageURL)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Chromium's helpers may hold the pipes a little after it exits.
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", browser, err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := consoleLine.FindStringSubmatch(line); m != nil {
			console = append(console, m[1])
		}
	}
	return stdout.Bytes(), console
}
