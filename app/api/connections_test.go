package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/limits"
)

// serveLoopback serves the env's app on a real 127.0.0.1 listener.
func serveLoopback(t *testing.T, e *env) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.app.Listener(ln) }()
	t.Cleanup(func() {
		_ = e.app.ShutdownWithTimeout(5 * time.Second)
		<-done
	})
	return ln.Addr().String()
}

// wantHealthy fails the test unless GET /healthz on addr answers 200.
func wantHealthy(t *testing.T, addr, when string) {
	t.Helper()
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("healthz %s: %d", when, res.StatusCode)
	}
}

// goroutinesIn counts the goroutines whose stack contains fn, from the
// aggregated goroutine profile ("N @ addrs" then one "#" line per frame).
func goroutinesIn(buf *bytes.Buffer, fn string) int {
	buf.Reset()
	_ = pprof.Lookup("goroutine").WriteTo(buf, 1)
	total := 0
	for _, group := range strings.Split(buf.String(), "\n\n") {
		n, _, ok := strings.Cut(group, " @ ")
		if !ok || !strings.Contains(group, fn) {
			continue
		}
		c, _ := strconv.Atoi(strings.TrimSpace(n[strings.LastIndexByte(n, '\n')+1:]))
		total += c
	}
	return total
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHostileConnectionsBoundedMemory (issue 7, finding 2): hundreds of
// connections that announce the largest accepted body and send one byte
// of it hold a few KiB each, not the announced size: bodies are streamed,
// never preallocated from Content-Length. The bound asserted is
// hostileBudget in all for hostileConns connections (under 100 KiB each),
// against the 300 MiB that preallocating 1 MiB per connection would hold.
// The service keeps answering other clients meanwhile.
func TestHostileConnectionsBoundedMemory(t *testing.T) {
	const hostileConns = 300
	const hostileBudget = 30 << 20
	e := newEnv(t)
	addr := serveLoopback(t, e)
	var prof bytes.Buffer
	prof.Grow(1 << 20)
	const blocked = "fasthttp.appendBodyFixedSize"
	base := liveHeap()

	conns := make([]net.Conn, 0, hostileConns)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range hostileConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := fmt.Fprintf(c, "POST %s/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n{",
			root, e.tokens["editor"], limits.MaxBodyBytes); err != nil {
			t.Fatal(err)
		}
	}
	// Wait (polling, with a deadline) until the server is reading the body
	// of every hostile connection: then whatever it reserves for them is
	// reserved.
	deadline := time.Now().Add(60 * time.Second)
	for goroutinesIn(&prof, blocked) < hostileConns {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d connections reached the body read", goroutinesIn(&prof, blocked), hostileConns)
		}
		time.Sleep(20 * time.Millisecond)
	}
	grown := int64(liveHeap()) - int64(base)
	t.Logf("live heap grew by %d KiB for %d hostile connections (%d bytes each)", grown>>10, hostileConns, grown/hostileConns)
	if grown > hostileBudget {
		t.Errorf("live heap grew by %d MiB with %d hostile connections; bound %d MiB", grown>>20, hostileConns, hostileBudget>>20)
	}

	// Another client is still served.
	wantHealthy(t, addr, "during the attack")
}

// TestOversizedHeadersOnTheWire (issue 7, finding 10): headers over the
// read buffer are answered 431 in the error envelope by the real server.
func TestOversizedHeadersOnTheWire(t *testing.T) {
	e := newEnv(t)
	addr := serveLoopback(t, e)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s/events HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", root, strings.Repeat("b", 2*limits.ReadBufferBytes))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	if res.StatusCode != 431 || !strings.Contains(b.String(), `"code":"rest_request_headers_too_large"`) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), b.String())
	}
}
