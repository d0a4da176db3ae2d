package api_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/config/testdeadline"
)

// Issue 19, items 1 and 2: what a client that is not authenticated, or is
// slow, can cost the server.

// readResponse reads one response from c (its deadline: the test's).
func readResponse(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(testdeadline.Of(t))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// waitClosed waits until the server closes c (a read returns EOF or an
// error other than our own deadline) and returns what was read before.
func waitClosed(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(testdeadline.Of(t))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server never closed the connection (read %q)", b)
	}
	return string(b)
}

// TestAnonymousWriteAnsweredFromHeaders: an anonymous write announcing a
// body larger than fasthttp's read-ahead is answered 401 (the usual
// envelope) from its headers alone, while the client has sent none of the
// body, and the connection is closed (the unsent body must never be read
// as a request). Announcing more than the largest body is still 413.
func TestAnonymousWriteAnsweredFromHeaders(t *testing.T) {
	e := newEnv(t)
	addr := serveLoopback(t, e)
	for _, tt := range []struct {
		name, head string
		status     int
		code       string
	}{
		{"POST announcing 1 MiB", fmt.Sprintf("POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", root, limits.MaxBodyBytes), 401, "rest_forbidden"},
		{"PUT by slug announcing 1 MiB", fmt.Sprintf("PUT %s/venues/by-slug/hall HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n", root, limits.MaxBodyBytes), 401, "rest_forbidden"},
		{"chunked POST", fmt.Sprintf("POST %s/categories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", root), 401, "rest_forbidden"},
		{"POST expecting 100-continue", fmt.Sprintf("POST %s/events HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 50000\r\n\r\n", root), 401, "rest_forbidden"},
		{"POST announcing more than the limit", fmt.Sprintf("POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", root, 4*limits.MaxBodyBytes), 413, "rest_request_too_large"},
		{"POST outside the API", "POST /elsewhere HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n", 404, "rest_no_route"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tt.head); err != nil {
				t.Fatal(err)
			}
			res, body := readResponse(t, c)
			if res.StatusCode != tt.status || !strings.Contains(body, `"code":"`+tt.code+`"`) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s %s, want %d %s", res.StatusCode, res.Header.Get("Content-Type"), body, tt.status, tt.code)
			}
			if !res.Close {
				t.Errorf("the connection is kept open after a body that was not read")
			}
			if rest := waitClosed(t, c); rest != "" {
				t.Errorf("more after the answer: %q", rest)
			}
		})
	}
}

// TestWritesDecidedFromHeaders: through api.Test, the caller decides
// before the body: anonymous and unknown-token writes get today's 401
// envelopes whatever the body, method overrides still read their body,
// authorized writes with bodies past the read-ahead still work, and a
// client cannot forge the header that marks a withheld body.
func TestWritesDecidedFromHeaders(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("d", 3*limits.BodyPrefetchBytes)
	for _, tt := range []struct {
		name, method, target, token, ct, body string
		header                                map[string]string
		status                                int
		want                                  string
	}{
		{"anonymous JSON past the read-ahead", "POST", "events", "", "application/json", `{"title":"` + big + `"}`, nil, 401, `"code":"rest_forbidden"`},
		{"anonymous small JSON", "POST", "events", "", "application/json", `{"title":"Small"}`, nil, 401, `"code":"rest_forbidden"`},
		{"anonymous malformed JSON", "POST", "events", "", "application/json", `{"title":` + big, nil, 401, `"code":"rest_forbidden"`},
		{"anonymous PATCH", "PATCH", "events/1", "", "application/x-www-form-urlencoded", "title=" + big, nil, 401, `"code":"rest_forbidden"`},
		{"anonymous DELETE with a body", "DELETE", "venues/1", "", "application/json", `{"force":"` + big + `"}`, nil, 401, `"code":"rest_forbidden"`},
		{"unknown token past the read-ahead", "POST", "events", "not-a-token", "application/json", `{"title":"` + big + `"}`, nil, 401, `"code":"rest_invalid_token"`},
		{"malformed authorization", "POST", "events", "", "application/json", `{"title":"` + big + `"}`, map[string]string{"Authorization": "Basic abc"}, 401, `"code":"rest_invalid_authorization"`},
		{"anonymous over the limit", "POST", "events", "", "application/json", strings.Repeat("a", 2*limits.MaxBodyBytes), nil, 413, `"code":"rest_request_too_large"`},
		{"anonymous read by X-HTTP-Method-Override", "POST", "categories", "", "application/x-www-form-urlencoded", "hide_empty=0&pad=" + big, map[string]string{"X-HTTP-Method-Override": "GET"}, 200, `"categories":[`},
		{"anonymous read by _method", "POST", "categories?_method=GET", "", "application/x-www-form-urlencoded", "hide_empty=0&pad=" + big, nil, 200, `"categories":[`},
		{"editor JSON past the read-ahead", "POST", "events", "editor", "application/json", `{"title":"Long","description":"` + big + `","start_date":"2026-12-01","end_date":"2026-12-01"}`, nil, 201, big},
		{"editor form past the read-ahead", "POST", "venues", "editor", "application/x-www-form-urlencoded", "venue=Form+hall&description=" + big, nil, 201, big},
		{"forged withheld-body header", "POST", "categories", "editor", "application/json", `{"name":"Forged"}`, map[string]string{"X-Eventcal-Withheld-Body": "99999999"}, 201, `"name":"Forged"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, root+"/"+tt.target, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.ct)
			if tt.token != "" {
				tok := e.tokens[tt.token]
				if tok == "" {
					tok = tt.token
				}
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			res, b := rawSend(t, e, req)
			if res.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
				t.Fatalf("%d %.300s, want %d with %.60s", res.StatusCode, b, tt.status, tt.want)
			}
		})
	}
}

// TestSlowAnonymousBodiesBoundedMemory (issue 19, item 1): hundreds of
// connections announcing the largest body without usable credentials cost
// the server a few KiB each while they are open (1.8 MB each before: the
// body was read whole before the 401), and the memory returns once they
// close. Three kinds are open at once: anonymous and unknown-token
// clients sending all of the body but its last byte (answered 401 at
// once), and unknown-token clients stalled after 100 bytes of it (held by
// the server in its read-ahead, at most limits.BodyPrefetchBytes, until
// the body deadline). The live heap after a collection, while they are
// open, is compared with the heap before; the bound, 64 KiB a connection,
// is generous against what is measured (about 16 KiB).
func TestSlowAnonymousBodiesBoundedMemory(t *testing.T) {
	const perKind = 100
	const perConnBudget = 64 << 10
	e := newEnv(t)
	addr := serveLoopback(t, e)
	body := bytes.Repeat([]byte("a"), limits.MaxBodyBytes-1)
	body[0] = '{'
	head := func(auth string) string {
		return fmt.Sprintf("POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", root, auth, limits.MaxBodyBytes)
	}
	kinds := []struct {
		name, head string
		send       []byte
		answered   bool
	}{
		{"anonymous, all but the last byte", head(""), body, true},
		{"unknown token, all but the last byte", head("Authorization: Bearer unknown-token\r\n"), body, true},
		{"unknown token, stalled", head("Authorization: Bearer unknown-token\r\n"), body[:100], false},
	}
	var prof bytes.Buffer
	prof.Grow(1 << 20)
	const inReadAhead = "fasthttp.appendBodyFixedSize"
	base := liveHeap()

	var open []net.Conn
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	var sent, answered sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	for _, k := range kinds {
		for range perKind {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, c)
			sent.Add(1)
			go func() {
				defer sent.Done()
				// The write ends when it is all in the kernel's buffers or
				// when the server closes.
				_ = c.SetWriteDeadline(testdeadline.Of(t))
				if _, err := io.WriteString(c, k.head); err == nil {
					_, _ = c.Write(k.send)
				}
			}()
			if !k.answered {
				continue
			}
			answered.Add(1)
			go func() {
				defer answered.Done()
				_ = c.SetReadDeadline(testdeadline.Of(t))
				status := "closed without an answer"
				if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					status = res.Status
					res.Body.Close()
				}
				_, _ = io.Copy(io.Discard, c)
				mu.Lock()
				statuses[k.name+": "+status]++
				mu.Unlock()
			}()
		}
	}
	// Wait until the clients that sent their body were answered (before
	// the change, the server kept reading each body and answered nothing)
	// and the stalled ones are held in the read-ahead.
	answered.Wait()
	sent.Wait()
	deadline := testdeadline.Of(t)
	for goroutinesIn(&prof, inReadAhead) < perKind {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d stalled connections reached the read-ahead", goroutinesIn(&prof, inReadAhead), perKind)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("answers: %v", statuses)
	for _, k := range kinds[:2] {
		if n := statuses[k.name+": 401 Unauthorized"]; n != perKind {
			t.Errorf("%s: %d of %d answered 401 (%v)", k.name, n, perKind, statuses)
		}
	}
	conns := int64(len(open))
	grown := int64(liveHeap()) - int64(base)
	t.Logf("live heap grew by %d KiB with %d connections open (%d bytes each)", grown>>10, conns, grown/conns)
	if grown > conns*perConnBudget {
		t.Errorf("live heap grew by %d KiB for %d connections (%d bytes each); bound %d bytes each", grown>>10, conns, grown/conns, perConnBudget)
	}

	for _, c := range open {
		c.Close()
	}
	open = nil
	// Memory returns: the connections end, pooled buffers go within two
	// collections.
	for {
		left := int64(liveHeap()) - int64(base)
		if left < 4<<20 && goroutinesIn(&prof, inReadAhead) == 0 {
			t.Logf("after the connections closed, live heap is %d KiB above the start", left>>10)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live heap still %d KiB above the start after the connections closed", left>>10)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The service still answers.
	wantHealthy(t, addr, "after the connections closed")
}

// TestRefusingACostlyAnonymousBody (issue 19, item 1): a 1 MiB body of
// 80,000 keys sent in full with an unknown token is refused with 401
// without being read or parsed: the server allocates a small fraction of
// what reading it alone would (io.ReadAll of 1 MiB allocates about 2 MiB;
// decoding the keys tens of MiB). Counted in allocated bytes, not time.
func TestRefusingACostlyAnonymousBody(t *testing.T) {
	e := newEnv(t)
	addr := serveLoopback(t, e)
	var body bytes.Buffer
	body.WriteByte('{')
	for i := 0; body.Len() < limits.MaxBodyBytes-32; i++ {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `"k%d":1`, i)
	}
	body.WriteByte('}')
	for _, tt := range []struct{ name, auth string }{
		{"anonymous", ""},
		{"unknown token", "Authorization: Bearer unknown-token\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := []byte(fmt.Sprintf("POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s", root, tt.auth, body.Len(), body.Bytes()))
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			go func() { _, _ = c.Write(req) }()
			res, b := readResponse(t, c)
			waitClosed(t, c)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d, %d KiB allocated in the process while refusing", tt.name, res.StatusCode, alloc>>10)
			if res.StatusCode != 401 {
				t.Fatalf("%d %s", res.StatusCode, b)
			}
			if alloc > 1<<20 {
				t.Errorf("refusing the body allocated %d KiB; bound 1024 KiB", alloc>>10)
			}
		})
	}
}

// TestHeaderDeadline (issue 19, item 2): a connection trickling header
// lines is closed once HEADER_TIMEOUT has passed, however steadily it
// sends; a request whose headers are in keeps its own (longer) deadline
// for the body, so a body still arriving after the header deadline is
// served.
func TestHeaderDeadline(t *testing.T) {
	e := newEnv(t, "HEADER_TIMEOUT", "300ms")
	addr := serveLoopback(t, e)

	// B: an editor's request with its headers in and half its body sent.
	body := `{"name":"Slow body"}`
	b, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fmt.Fprintf(b, "POST %s/categories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		root, e.tokens["editor"], len(body), body[:5])

	// A: trickles one header line every 20 ms and never ends its headers.
	a, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	stop := make(chan struct{})
	trickled := make(chan int, 1)
	go func() {
		n := 0
		defer func() { trickled <- n }()
		if _, err := io.WriteString(a, "GET "+root+"/events HTTP/1.1\r\nHost: x\r\n"); err != nil {
			return
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := fmt.Fprintf(a, "X-Line-%d: slow\r\n", n); err != nil {
				return
			}
			n++
		}
	}()
	got := waitClosed(t, a)
	close(stop)
	t.Logf("closed after %d header lines; the server wrote %q", <-trickled, got)
	if got != "" && !strings.Contains(got, "408") {
		t.Errorf("a connection closed for its headers' deadline answered %q", got)
	}

	// B is past the header deadline (A, dialled after B's headers, has
	// been cut off by it): its body is still read.
	if _, err := io.WriteString(b, body[5:]); err != nil {
		t.Fatal(err)
	}
	res, rb := readResponse(t, b)
	if res.StatusCode != 201 || !strings.Contains(rb, `"name":"Slow body"`) {
		t.Errorf("body sent after the header deadline: %d %s", res.StatusCode, rb)
	}
}

// TestConnectionShare (issue 19, item 2): one client address holds at
// most MAX_CONNECTIONS_PER_ADDRESS connections; the next is answered 429
// in the error envelope and closed, and counted in
// eventcal_http_connections_refused_total, while another address is still
// served and the address gets a connection again once one of its own
// closes. Connections from a trusted proxy are not bounded. Refusing a
// loopback address (a reverse proxy missing from TRUSTED_PROXIES, most
// likely) logs one warning naming TRUSTED_PROXIES.
func TestConnectionShare(t *testing.T) {
	const share = 4
	for _, tt := range []struct {
		name    string
		trusted string
		refused bool
	}{
		{"direct clients", "", true},
		{"a trusted proxy", "127.0.0.1", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "MAX_CONNECTIONS_PER_ADDRESS", fmt.Sprint(share), "HEADER_TIMEOUT", "1m", "TRUSTED_PROXIES", tt.trusted)
			logs := &logBuffer{}
			metrics := api.NewMetrics(slog.New(slog.NewJSONHandler(logs, nil)), nil)
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := metrics.Listener(raw, e.cfg)
			done := make(chan error, 1)
			go func() { done <- e.app.Listener(ln) }()
			t.Cleanup(func() {
				_ = e.app.ShutdownWithTimeout(5 * time.Second)
				<-done
			})
			addr := raw.Addr().String()
			dialFrom := func(ip string) net.Conn {
				t.Helper()
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			healthz := func(c net.Conn) int {
				t.Helper()
				io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
				res, _ := readResponse(t, c)
				return res.StatusCode
			}

			held := make([]net.Conn, share)
			for i := range held {
				held[i] = dialFrom("127.0.0.1")
				if st := healthz(held[i]); st != 200 {
					t.Fatalf("connection %d within the share: %d", i+1, st)
				}
			}
			over := dialFrom("127.0.0.1")
			if tt.refused {
				_ = over.SetReadDeadline(testdeadline.Of(t))
				res, err := http.ReadResponse(bufio.NewReader(over), nil)
				if err != nil {
					t.Fatalf("connection over the share: %v", err)
				}
				rb, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 429 || !strings.Contains(string(rb), `"code":"rest_too_many_connections"`) || !res.Close {
					t.Fatalf("connection over the share: %d %s close=%v", res.StatusCode, rb, res.Close)
				}
				waitClosed(t, over)
				// A second refusal: counted, but not warned about again.
				again := dialFrom("127.0.0.1")
				_ = again.SetReadDeadline(testdeadline.Of(t))
				if res, err := http.ReadResponse(bufio.NewReader(again), nil); err != nil || res.StatusCode != 429 {
					t.Fatalf("second connection over the share: %v %v", res, err)
				}
			} else if st := healthz(over); st != 200 {
				t.Fatalf("connection from a trusted proxy over the share: %d", st)
			}
			if st := healthz(dialFrom("127.0.0.2")); st != 200 {
				t.Errorf("another address during the refusal: %d", st)
			}
			if got := refusedCount(t, metrics); got != map[bool]string{true: "2", false: "0"}[tt.refused] {
				t.Errorf("eventcal_http_connections_refused_total = %s", got)
			}
			// The accept loop served 127.0.0.2 after the refusal: its
			// warning is written.
			warnings := logs.warnings(t)
			if tt.refused != (len(warnings) == 1) || len(warnings) > 1 {
				t.Errorf("%d warnings: %v", len(warnings), warnings)
			}
			if len(warnings) == 1 {
				if msg, _ := warnings[0]["msg"].(string); !containsAll(msg, "TRUSTED_PROXIES", "MAX_CONNECTIONS_PER_ADDRESS") || warnings[0]["address"] != "127.0.0.1" {
					t.Errorf("warning %v", warnings[0])
				}
			}
			if !tt.refused {
				return
			}

			// One of the address's connections closes: it gets one back.
			held[0].Close()
			limited := ln.(*connlimit.Listener)
			deadline := testdeadline.Of(t)
			for limited.Open(netipLoopback) >= share {
				if time.Now().After(deadline) {
					t.Fatal("the closed connection's share was never released")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if st := healthz(dialFrom("127.0.0.1")); st != 200 {
				t.Errorf("after one closed: %d", st)
			}
		})
	}
}

// refusedCount scrapes eventcal_http_connections_refused_total.
func refusedCount(t *testing.T, m *api.Metrics) string {
	t.Helper()
	res, err := m.App().Test(httptest.NewRequest("GET", "/metrics", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "eventcal_http_connections_refused_total "); ok {
			return v
		}
	}
	t.Fatalf("no eventcal_http_connections_refused_total in\n%s", b)
	return ""
}

// netipLoopback is the address the share tests dial from.
var netipLoopback = netip.MustParseAddr("127.0.0.1")
