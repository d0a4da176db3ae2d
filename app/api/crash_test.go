package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/repository/mongo/mongotest"
	"github.com/calendar/eventcal/repository/sqlite"
)

// crashChildEnv makes the test binary act as a service process that
// accepts writes but never indexes them (its sync worker "has not run yet").
const crashChildEnv = "CALENDAR_CRASH_CHILD_DATA_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(runCrashChild(dir))
	}
	testsupport.NoDNS()
	testsupport.CollectLessOften(testGCPercent)
	os.Exit(mongotest.Main(m)) // the MongoDB tests share one embedded FerretDB
}

// testGCPercent is the collector's target (GOGC) of the package's test
// binary: its parallel tests allocate much and keep little, and at the
// default 100 the collector took about a tenth of the binary's CPU; at
// 200 it takes about half as much, for a peak RSS of about 1.3-1.7 GB
// instead of 1.0 (at 400, 2.6 GB). The tests that bound memory measure
// the live heap after a collection (liveHeap) or the bytes allocated, so
// the target does not change what they see.
const testGCPercent = 200

// runCrashChild serves the API on a loopback port without a sync worker
// and prints the address; the parent kills it with SIGKILL.
func runCrashChild(dir string) int {
	env := map[string]string{"DATA_DIR": dir, "ADMIN_TOKEN": "crash-admin", "WEBHOOK_ALLOW_PRIVATE": "true"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	a, err := api.New(api.Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(ln.Addr().String())
	_ = a.Listener(ln)
	return 0
}

// startCrashChild starts a service process on dir that accepts writes but
// runs no worker, and returns it with a function that sends a request to
// its API as its admin and returns the body (failing the test on a status
// of 300 or more).
func startCrashChild(t *testing.T, dir string) (child *exec.Cmd, post func(method, path, body string) string) {
	t.Helper()
	child = exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), crashChildEnv+"="+dir)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	addrLine, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("child gave no address: %v", err)
	}
	base := "http://" + strings.TrimSpace(addrLine) + root
	client := newHTTPClient(t)
	return child, func(method, path, body string) string {
		t.Helper()
		status, out := client.send(method, base+path, "crash-admin", body)
		if status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		return out
	}
}

// TestCrashRecovery: writes are accepted by a process that is killed before
// its sync worker ran; a new process on the same DATA_DIR indexes them all.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child, post := startCrashChild(t, dir)
	const n = 40
	var ids []int64
	for i := 0; i < n; i++ {
		out := post("POST", "/events", fmt.Sprintf(`{"title":"Crash probe %d","start_date":"2026-12-%02d 10:00","end_date":"2026-12-%02d 11:00","featured":%v}`, i, 1+i%28, 1+i%28, i%2 == 0))
		ids = append(ids, jsonID(t, out))
	}
	// An update and a trash, also never indexed before the crash.
	post("PATCH", "/events/"+strconv.FormatInt(ids[1], 10), `{"featured":true}`)
	post("DELETE", "/events/"+strconv.FormatInt(ids[2], 10), "")
	if err := child.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
		t.Fatal(err)
	}
	_ = child.Wait()

	// A new process on the same DATA_DIR: its worker drains the marks.
	e := newEnvIn(t, dir)
	e.flush()
	r := e.must(200, "GET", "events?per_page=50&search=probe", "", nil)
	if got := r.num("total"); got != n-1 {
		t.Fatalf("after restart %v events listed, want %d", got, n-1)
	}
	r = e.must(200, "GET", "events?per_page=50&featured=true&search=probe", "", nil)
	if got := r.num("total"); got != n/2 {
		t.Errorf("featured after restart = %v, want %d (the update must be indexed too)", got, n/2)
	}
}

// TestWebhookCrashRecovery: a process accepts writes and is killed (kill
// -9) before any message was queued or sent; a new process on the same
// DATA_DIR delivers a message for each write.
func TestWebhookCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rc := testsupport.NewRecorder(t)
	child, post := startCrashChild(t, dir)
	post("POST", "/admin/webhooks", `{"url":"`+rc.URL+`","events":["event.created","event.trashed"]}`)
	const n = 5
	var ids []int64
	for i := range n {
		ids = append(ids, jsonID(t, post("POST", "/events", fmt.Sprintf(`{"title":"Hooked crash %d","start_date":"2027-01-%02d 10:00","end_date":"2027-01-%02d 11:00"}`, i, i+1, i+1))))
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if got := len(rc.All()); got != 0 {
		t.Fatalf("the killed process sent %d messages", got)
	}
	e := newEnvIn(t, dir, "WEBHOOK_ALLOW_PRIVATE", "true")
	e.deliver()
	e.deliver()
	got := map[string]int{}
	for _, r := range rc.All() {
		var m message
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		id, _ := m.Item["id"].(float64)
		got[m.Type+" "+strconv.FormatInt(int64(id), 10)]++
	}
	if len(got) != n || len(rc.All()) != n {
		t.Fatalf("after restart the receiver got %v, want one event.created for each of %v", got, ids)
	}
	for _, id := range ids {
		if got["event.created "+strconv.FormatInt(id, 10)] != 1 {
			t.Errorf("event %d: %d messages", id, got["event.created "+strconv.FormatInt(id, 10)])
		}
	}
}
