package api_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
)

// Issue 30, finding 5: what a body costs is what is read of it, whatever
// its framing, and bodies held open count against memory for every role.

// sendBody writes one request on c: head (request line and headers,
// without the blank line), then body framed as framing says:
// "length" (Content-Length), "chunked" in chunks of chunk bytes, and with
// end false the chunked body's last chunk is never sent (a stalled body).
func sendBody(c net.Conn, head, framing string, body []byte, chunk int, end bool) error {
	w := bufio.NewWriter(c)
	if framing == "length" {
		fmt.Fprintf(w, "%sContent-Length: %d\r\n\r\n", head, len(body))
		w.Write(body)
		return w.Flush()
	}
	fmt.Fprintf(w, "%sTransfer-Encoding: chunked\r\n\r\n", head)
	for len(body) > 0 {
		n := min(chunk, len(body))
		fmt.Fprintf(w, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	if end {
		io.WriteString(w, "0\r\n\r\n")
	}
	return w.Flush()
}

// venueBody is a JSON venue whose description makes the body size bytes.
func venueBody(name string, size int) []byte {
	b := fmt.Sprintf(`{"venue":%q,"description":"`, name)
	return []byte(b + strings.Repeat("d", size-len(b)-2) + `"}`)
}

// metric reads one series from the env's /metrics (0 when absent).
func (e *env) metric(series string) float64 {
	e.t.Helper()
	v, _ := metricValue(e.scrape(), series)
	return v
}

// TestChunkedBodyChargedLikeContentLength (issue 30, finding 5): an
// author's write costs 1 + its body's length / 32 KiB tokens whether the
// body comes with Content-Length or chunked, in one chunk or many (a
// chunked body cost 1 token before, whatever its length). The tokens are
// read from eventcal_write_rate_tokens_total, the write rate's own count.
func TestChunkedBodyChargedLikeContentLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WRITE_RATE", "0.0001", "WRITE_BURST", "1000")
	addr := serveLoopback(t, e)
	head := fmt.Sprintf("POST %s/venues HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n", root, e.tokens["author"])
	const tokens = "eventcal_write_rate_tokens_total"
	for _, size := range []int{100, 40_000, 65_536, 198_000} {
		want := float64(1 + size/(32<<10))
		for _, tt := range []struct {
			framing string
			chunk   int
		}{
			{"length", 0},
			{"chunked", 1 << 20},
			{"chunked", 5000},
			{"chunked", 333},
		} {
			name := fmt.Sprintf("%d bytes, %s by %d", size, tt.framing, tt.chunk)
			t.Run(name, func(t *testing.T) {
				before := e.metric(tokens)
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				go sendBody(c, head, tt.framing, venueBody(name, size), tt.chunk, true)
				res, body := readResponse(t, c)
				if res.StatusCode != 201 {
					t.Fatalf("%d %.300s", res.StatusCode, body)
				}
				if got := e.metric(tokens) - before; got != want {
					t.Errorf("charged %v tokens, want %v (1 + %d / 32 KiB)", got, want, size)
				}
			})
		}
	}
}

// TestChunkedBodyAgainstTheBucket (issue 30, finding 5): what a chunked
// body costs comes out of the bucket as it is read. With a burst of 8, a
// 198,000-byte chunked body after one small write empties the bucket
// (the next write is 429, and was 201 when a chunked body cost 1); with a
// burst of 4, the same body is refused with 429 while it arrives (it was
// 201), and is not stored; the tokens it took for the bytes read stay
// taken.
func TestChunkedBodyAgainstTheBucket(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		burst string
		// status of the chunked write, then of a small write after it
		chunked, after int
	}{
		{"the bucket pays for it", "8", 201, 429},
		{"the bucket runs out while it arrives", "4", 429, 429},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "WRITE_RATE", "0.0001", "WRITE_BURST", tt.burst)
			addr := serveLoopback(t, e)
			e.must(201, "POST", "venues", "author", map[string]any{"venue": "Small"})
			head := fmt.Sprintf("POST %s/venues HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n", root, e.tokens["author"])
			limited := e.metric("eventcal_write_rate_limited_total")
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go sendBody(c, head, "chunked", venueBody("Chunked hall", 198_000), 4096, true)
			// A refusal closes the connection with the body's rest unread:
			// the client may see the 429 or only the reset, so the refusal
			// is read from the counter and the store.
			_ = c.SetReadDeadline(testdeadline.Of(t))
			status := 0
			if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				status = res.StatusCode
				b, _ := io.ReadAll(res.Body)
				if status == 429 && (!strings.Contains(string(b), `"code":"rest_too_many_requests"`) || res.Header.Get("Retry-After") == "") {
					t.Errorf("refusal: %s (Retry-After %q)", b, res.Header.Get("Retry-After"))
				}
				res.Body.Close()
			}
			refused := e.metric("eventcal_write_rate_limited_total") - limited
			e.flush()
			stored := strings.Contains(e.must(200, "GET", "venues?search=Chunked", "admin", nil).raw, "Chunked hall")
			switch tt.chunked {
			case 201:
				if status != 201 || !stored || refused != 0 {
					t.Fatalf("chunked write: status %d, stored %v, refused %v", status, stored, refused)
				}
			case 429:
				if (status != 0 && status != 429) || stored || refused != 1 {
					t.Fatalf("chunked write: status %d, stored %v, refused %v; want refused and not stored", status, stored, refused)
				}
			}
			if r := e.do("POST", "venues", "author", map[string]any{"venue": "After"}); r.status != tt.after {
				t.Fatalf("write after the chunked one: %d %s, want %d", r.status, r.raw, tt.after)
			}
		})
	}
}

// stalledBodies opens n connections as token's caller, each sending a
// chunked body of size bytes without its last chunk, and returns them.
func stalledBodies(t *testing.T, addr, token string, n, size int) []net.Conn {
	t.Helper()
	head := fmt.Sprintf("POST %s/venues HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n", root, token)
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
		go func() {
			_ = c.SetWriteDeadline(testdeadline.Of(t))
			_ = sendBody(c, head, "chunked", venueBody("Stalled", size), 16<<10, false)
		}()
	}
	return conns
}

// waitFor polls cond until it holds or the test's deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testdeadline.Poll(t, 10*time.Millisecond, what, cond)
}

// TestStalledBodiesBounded (issue 30, finding 5): bodies that stop before
// their end hold memory until they time out; however many an editor (whom
// the write rate does not bound) sends, they hold at most the caller's
// share (BODY_MEMORY_PER_CALLER_MIB), the rest being refused with 429, and
// all callers' together at most BODY_MEMORY_MIB, the rest refused with
// 503. Memory is the budget's own count (eventcal_request_body_bytes),
// and admitted bodies are those holding it: each 1,000,000-byte body holds
// a 1 MiB buffer once read.
func TestStalledBodiesBounded(t *testing.T) {
	t.Parallel()
	const size = 1_000_000
	const mib = 1 << 20
	t.Run("one caller's share", func(t *testing.T) {
		e := newEnv(t, "BODY_MEMORY_MIB", "16", "BODY_MEMORY_PER_CALLER_MIB", "4", "HEADER_TIMEOUT", "1m")
		addr := serveLoopback(t, e)
		const sent = 12
		stalledBodies(t, addr, e.tokens["editor"], sent, size)
		var held, refused float64
		waitFor(t, "every stalled body held or refused", func() bool {
			m := e.scrape()
			held, _ = metricValue(m, "eventcal_request_body_bytes")
			refused, _ = metricValue(m, `eventcal_request_bodies_refused_total{bound="caller"}`)
			return held == float64(mib)*(sent-refused)
		})
		admitted := int(held / mib)
		t.Logf("%d stalled bodies: %d admitted (%v bytes held), %v refused", sent, admitted, held, refused)
		if admitted < 1 || admitted > 4 || held > 4*mib {
			t.Errorf("%d admitted, %v bytes held; want 1 to 4 (4 MiB)", admitted, held)
		}
		// Another caller still writes, and the editor's own small write is
		// refused while the share is taken... unless the share has room.
		e.must(201, "POST", "venues", "author", map[string]any{"venue": "Other caller"})
		if admitted == 4 {
			r := e.do("POST", "venues", "editor", map[string]any{"venue": "Over the share"})
			if r.status != 429 || r.str("code") != "rest_too_many_bodies" || r.header.Get("Retry-After") == "" {
				t.Errorf("the editor's write over its share: %d %s", r.status, r.raw)
			}
		}
	})
	t.Run("the process's budget", func(t *testing.T) {
		e := newEnv(t, "BODY_MEMORY_MIB", "2", "BODY_MEMORY_PER_CALLER_MIB", "1", "HEADER_TIMEOUT", "1m")
		addr := serveLoopback(t, e)
		first := stalledBodies(t, addr, e.tokens["editor"], 1, size)
		waitFor(t, "the editor's body held", func() bool { return e.metric("eventcal_request_body_bytes") == mib })
		stalledBodies(t, addr, e.tokens["admin"], 1, size)
		waitFor(t, "the admin's body held", func() bool { return e.metric("eventcal_request_body_bytes") == 2*mib })
		r := e.do("POST", "venues", "author", map[string]any{"venue": "No room"})
		if r.status != 503 || r.str("code") != "rest_bodies_busy" || r.header.Get("Retry-After") != "1" {
			t.Fatalf("a write with the budget taken: %d %s (Retry-After %q)", r.status, r.raw, r.header.Get("Retry-After"))
		}
		e.flush()
		if lst := e.must(200, "GET", "venues?search=room", "admin", nil); strings.Contains(lst.raw, "No room") {
			t.Fatal("a refused write was stored")
		}
		// The editor gives up: its memory is returned, and there is room.
		first[0].Close()
		waitFor(t, "the editor's body released", func() bool { return e.metric("eventcal_request_body_bytes") == mib })
		e.must(201, "POST", "venues", "author", map[string]any{"venue": "Room again"})
		if got := e.metric(`eventcal_request_bodies_refused_total{bound="process"}`); got != 1 {
			t.Errorf("refused for the process's budget: %v, want 1", got)
		}
	})
}

// TestBodiesReleased: after many bodies of every framing, read whole,
// refused or cut off, the budget holds nothing.
func TestBodiesReleased(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "BODY_MEMORY_MIB", "4", "BODY_MEMORY_PER_CALLER_MIB", "2")
	addr := serveLoopback(t, e)
	head := fmt.Sprintf("POST %s/venues HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n", root, e.tokens["editor"])
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			framing := []string{"length", "chunked"}[i%2]
			size := []int{300, 150_000, 190_000, 1_200_000}[i%4]
			_ = c.SetDeadline(testdeadline.Of(t))
			body := venueBody(fmt.Sprint("Hall ", i), size)
			if i%3 == 0 {
				// Given up before its end.
				_ = sendBody(c, head, framing, body[:len(body)/2], 7000, false)
				return
			}
			go sendBody(c, head, framing, body, 7000, true)
			_, _ = http.ReadResponse(bufio.NewReader(c), nil)
		}()
	}
	wg.Wait()
	waitFor(t, "every body's memory returned", func() bool { return e.metric("eventcal_request_body_bytes") == 0 })
}
