package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/config/testsupport"
)

// slowRequest is an HTTP request written up to the middle of its body, on
// its own connection: in flight from the server's point of view until
// finish writes the rest.
type slowRequest struct {
	conn net.Conn
	rest string
}

// startSlowRequest sends the headers and half the body of a POST.
func startSlowRequest(t *testing.T, addr, path, token, body string) *slowRequest {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	half := len(body) / 2
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, addr, token, len(body), body[:half])
	if err != nil {
		t.Fatal(err)
	}
	return &slowRequest{conn: conn, rest: body[half:]}
}

// finish writes the rest of the body and returns the response status.
func (r *slowRequest) finish(t *testing.T) int {
	t.Helper()
	if _, err := io.WriteString(r.conn, r.rest); err != nil {
		t.Fatalf("finish the in-flight request: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(r.conn), nil)
	if err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDrain: on SIGTERM /readyz answers 503 at once while the listener
// keeps serving for DRAIN_DELAY; then the listener closes and requests in
// flight finish; every write accepted before or during the shutdown is
// indexed once the service is back.
func TestDrain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const token = "drain-admin"
	// DRAIN_DELAY is long on purpose: the test ends the drain itself
	// (withDrainCut, as a second signal does), so a slow machine cannot
	// make the drain end before the test has looked at it.
	env := map[string]string{"DATA_DIR": dir, "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": token,
		"DRAIN_DELAY": "1h", "SHUTDOWN_TIMEOUT": "1h"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	root := cfg.APIRoot()
	client := &http.Client{Timeout: testdeadline.Timeout(t)}
	get := func(url string) (int, map[string]any) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	event := func(title string) string {
		return fmt.Sprintf(`{"status": "publish", "title": %q, "start_date": "2027-06-01 20:00:00", "end_date": "2027-06-01 23:00:00"}`, title)
	}

	var logs testsupport.SyncBuffer
	cut := make(chan struct{})
	ctx, sigterm := context.WithCancel(withDrainCut(context.Background(), cut))
	defer sigterm()
	addr, done := serveInBackground(t, ctx, cfg, &logs)
	base := "http://" + addr

	if code, body := get(base + "/readyz"); code != 200 || body["status"] != "ready" {
		t.Fatalf("/readyz before SIGTERM: %d %v", code, body)
	}
	// A write accepted before SIGTERM, and one in flight at SIGTERM.
	if code := startSlowRequest(t, addr, root+"/events", token, event("Before")).finish(t); code != 201 {
		t.Fatalf("write before SIGTERM: %d", code)
	}
	inFlight := startSlowRequest(t, addr, root+"/events", token, event("In flight at SIGTERM"))

	sigterm()
	// /readyz fails at once (as soon as serve has seen the signal)...
	deadline := testdeadline.Of(t)
	// The answer sought: 503 shutting_down, draining, the store ok. A 503
	// for the store alone (its check timed out on a busy machine, before
	// or during the drain) is asked again.
	for {
		code, body := get(base + "/readyz")
		data, _ := body["data"].(map[string]any)
		if code == 503 && body["code"] == "shutting_down" && data["draining"] == true && data["store"] == "ok" {
			break
		}
		if code != 200 && code != 503 {
			t.Fatalf("/readyz after SIGTERM: %d %v", code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 503 shutting_down with the store ok after SIGTERM: last %d %v\n%s", code, body, logs.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	// ...while the listener keeps serving: new connections, reads, writes.
	if code, _ := get(base + root + "/events"); code != 200 {
		t.Errorf("a list during the drain: %d", code)
	}
	if code := inFlight.finish(t); code != 201 {
		t.Errorf("the request in flight at SIGTERM: %d, want 201", code)
	}
	inShutdown := startSlowRequest(t, addr, root+"/events", token, event("In flight at close"))
	// A probe on a new connection proves the server has accepted (and so
	// tracks) the slow connection opened before it.
	if code, _ := get(base + "/readyz"); code != 503 {
		t.Errorf("/readyz still draining: %d", code)
	}

	close(cut) // the drain ends: the listener closes
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the listener never closed\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	// A request in flight when the listener closed still completes.
	if code := inShutdown.finish(t); code != 201 {
		t.Errorf("the request in flight when the listener closed: %d, want 201", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, logs.String())
		}
	case <-testdeadline.After(t):
		t.Fatalf("serve did not stop\n%s", logs.String())
	}
	for _, want := range []string{"msg=\"draining: ", "msg=\"drain cut short by a second signal\"", "msg=\"shutting down\"", "msg=stopped"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs.String())
		}
	}

	// Restart on the same data: every accepted write is listed.
	env["DRAIN_DELAY"] = "0"
	cfg2, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs2 testsupport.SyncBuffer
	ctx2, stop2 := context.WithCancel(context.Background())
	addr2, done2 := serveInBackground(t, ctx2, cfg2, &logs2)
	defer func() {
		stop2()
		if err := <-done2; err != nil {
			t.Errorf("restarted serve: %v", err)
		}
	}()
	base = "http://" + addr2
	want := []string{"Before", "In flight at SIGTERM", "In flight at close"}
	for {
		resp, err := client.Get(base + root + "/events?per_page=50&start_date=2027-01-01&end_date=2027-12-31")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var list struct {
			Events []struct {
				Title string `json:"title"`
			} `json:"events"`
		}
		json.Unmarshal(raw, &list)
		var titles []string
		for _, e := range list.Events {
			titles = append(titles, e.Title)
		}
		slices.Sort(titles)
		if slices.Equal(titles, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listed after the restart: %q, want %q\n%s\n%s", titles, want, raw, logs2.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}
