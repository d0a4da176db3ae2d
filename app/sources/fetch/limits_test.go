package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// allocated returns the bytes the process allocated while fn ran. The
// tests that use it do not run in parallel, so what it counts is the
// fetch (and its local server).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// serveBytes writes n bytes of 'x' in 32 KiB pieces, until n or a failed
// write, and counts what it wrote in written.
func serveBytes(w io.Writer, n int64, written *atomic.Int64) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for left := n; left > 0; {
		k, err := w.Write(chunk[:min(left, int64(len(chunk)))])
		written.Add(int64(k))
		left -= int64(k)
		if err != nil {
			return
		}
	}
}

// TestGetTooLarge: a 50 MB body stops at MaxBytes with reason too_large,
// whether its Content-Length announces it (refused before reading) or
// not (read up to the limit, no further), and the memory the fetch
// allocates is bounded by the limit, not by the body; a body of exactly
// MaxBytes is read whole.
func TestGetTooLarge(t *testing.T) {
	const fifty = 50_000_000
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		if r.URL.Query().Get("length") == "1" {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		w.Header().Set("Content-Type", "text/calendar")
		serveBytes(w, n, &written)
	}))
	defer srv.Close()
	for _, c := range []struct {
		name     string
		maxBytes int64
		n        int64
		length   bool
		fails    bool
	}{
		{"50 MB announced, default limit", 0, fifty, true, true},
		{"50 MB chunked, default limit", 0, fifty, false, true},
		{"50 MB chunked, 1 MiB limit", 1 << 20, fifty, false, true},
		{"50 MB announced, 1 MiB limit", 1 << 20, fifty, true, true},
		{"exactly the limit, chunked", 1 << 20, 1 << 20, false, false},
		{"exactly the limit, announced", 1 << 20, 1 << 20, true, false},
		{"one byte over, chunked", 1 << 20, 1<<20 + 1, false, true},
	} {
		f := local(Options{MaxBytes: c.maxBytes})
		limit := c.maxBytes
		if limit == 0 {
			limit = DefaultMaxBytes
		}
		written.Store(0)
		var res *Result
		var err error
		alloc := allocated(func() {
			res, err = f.Get(context.Background(), fmt.Sprintf("%s/?n=%d&length=%v", srv.URL, c.n, map[bool]string{true: "1"}[c.length]), Validators{})
		})
		if !c.fails {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if int64(len(res.Body)) != c.n || int64(cap(res.Body)) > limit+1 {
				t.Errorf("%s: body of %d bytes (capacity %d), want %d", c.name, len(res.Body), cap(res.Body), c.n)
			}
			continue
		}
		wantError(t, c.name, err, ReasonTooLarge, "larger than "+showBytes(limit))
		t.Logf("%s: %v; %d bytes allocated, %d sent", c.name, err, alloc, written.Load())
		// A body whose Content-Length passes the limit is refused before
		// any of it is read: no buffer at all.
		if c.length && alloc > 512<<10 {
			t.Errorf("%s: the fetch allocated %d bytes for an announced body over the limit, want no buffer", c.name, alloc)
		}
		// The buffer grows to at most limit+1 bytes by doubling: less
		// than 3 × limit allocated in all (2 × limit live at most),
		// whatever the body's size; the transport and server add a
		// little. With the 1 MiB limit that is far below the 50 MB body.
		if bound := uint64(3*limit + 4<<20); alloc > bound {
			t.Errorf("%s: the fetch allocated %d bytes, want at most %d for a limit of %d", c.name, alloc, bound, limit)
		}
	}
}

// bombMember is one gzip member that inflates to 16 MiB of zeros (about
// 16 KiB compressed).
var bombMember = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 16 {
		zw.Write(zeros)
	}
	zw.Close()
	return b.Bytes()
})

// TestGzipBomb: a gzip body that would inflate to 64 GiB stops at
// MaxBytes with reason too_large, whether the transport asked for gzip
// and inflates it or the server sends it unasked and the fetch inflates
// it; the memory allocated is bounded by the limit, and the server never
// got to send the whole bomb.
func TestGzipBomb(t *testing.T) {
	const members = 4096 // × 16 MiB = 64 GiB inflated, 4096 × ~16 KiB sent
	member := bombMember()
	var askedGzip atomic.Bool
	sent := make(chan int64, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var written int64
		defer func() { sent <- written }()
		askedGzip.Store(strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"))
		w.Header().Set("Content-Type", "text/calendar")
		w.Header().Set("Content-Encoding", "gzip")
		for range members {
			n, err := w.Write(member)
			written += int64(n)
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	const limit = 1 << 20
	for _, c := range []struct {
		name      string
		transport http.RoundTripper
		asked     bool
	}{
		{"transport asks for gzip", nil, true},
		{"server sends gzip unasked", &http.Transport{DisableCompression: true}, false},
	} {
		f := local(Options{MaxBytes: limit, Transport: c.transport})
		var err error
		alloc := allocated(func() {
			_, err = f.Get(context.Background(), srv.URL, Validators{})
		})
		wantError(t, c.name, err, ReasonTooLarge, "larger than 1 MiB")
		t.Logf("%s: %v; %d bytes allocated", c.name, err, alloc)
		if askedGzip.Load() != c.asked {
			t.Errorf("%s: the request asked for gzip: %v, want %v", c.name, askedGzip.Load(), c.asked)
		}
		if bound := uint64(3*limit + 4<<20); alloc > bound {
			t.Errorf("%s: the fetch allocated %d bytes, want at most %d", c.name, alloc, bound)
		}
		// The server's writes end when the client closes the connection:
		// it sends what the socket buffers hold, far from the whole bomb.
		select {
		case w := <-sent:
			t.Logf("%s: the server sent %d of the bomb's %d bytes", c.name, w, members*len(member))
			if w >= int64(members*len(member)) {
				t.Errorf("%s: the server sent the whole bomb (%d bytes)", c.name, w)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s: the server is still sending the bomb", c.name)
		}
	}
}

// TestGetGzip: a gzip body is inflated whether the transport asked for it
// or the server sent it unasked; an encoding the fetch cannot read is
// refused; a damaged or cut gzip stream is truncated.
func TestGetGzip(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(calendarBody))
	zw.Close()
	damaged := bytes.Clone(gz.Bytes())
	damaged[len(damaged)-6] ^= 0xff // the CRC
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		case "/x-gzip":
			w.Header().Set("Content-Encoding", "x-gzip")
			w.Write(gz.Bytes())
		case "/br":
			w.Header().Set("Content-Encoding", "br")
			w.Write([]byte{0x0b, 0x01, 0x80})
		case "/damaged":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(damaged)
		case "/cut":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes()[:len(gz.Bytes())/2])
		}
	}))
	defer srv.Close()
	for _, c := range []struct {
		name, path string
		transport  http.RoundTripper
		reason     string // "" for success
		want       string
	}{
		{"transport asks", "/gzip", nil, "", ""},
		{"server sends unasked", "/gzip", &http.Transport{DisableCompression: true}, "", ""},
		{"x-gzip unasked", "/x-gzip", &http.Transport{DisableCompression: true}, "", ""},
		{"brotli", "/br", nil, ReasonNetwork, `content encoding "br", which is not supported`},
		{"damaged, transport asks", "/damaged", nil, ReasonTruncated, "damaged"},
		{"damaged, unasked", "/damaged", &http.Transport{DisableCompression: true}, ReasonTruncated, "damaged"},
		{"cut, transport asks", "/cut", nil, ReasonTruncated, "ended early"},
		{"cut, unasked", "/cut", &http.Transport{DisableCompression: true}, ReasonTruncated, "ended early"},
	} {
		res, err := local(Options{Transport: c.transport}).Get(context.Background(), srv.URL+c.path, Validators{})
		if c.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if string(res.Body) != calendarBody {
				t.Errorf("%s: body %q", c.name, res.Body)
			}
			continue
		}
		wantError(t, c.name, err, c.reason, c.want)
	}
}

// TestGetTimeout: the time limit covers the whole fetch: a server that
// never answers, and one that sends its body a byte at a time forever,
// both fail with reason timeout; a fetch its caller cancels is not a
// timeout.
func TestGetTimeout(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Both give up after 500 ticks (10 s), far past the fetch's
		// limit, so that a fetch without one fails the test instead of
		// hanging it.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		switch r.URL.Path {
		case "/silent":
			if r.URL.Query().Get("hold") != "" {
				close(held)
			}
			for range 500 {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		case "/drip":
			w.Header().Set("Content-Type", "text/calendar")
			w.WriteHeader(http.StatusOK)
			for range 500 {
				if _, err := w.Write([]byte("B")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}
	}))
	defer srv.Close()
	f := local(Options{Timeout: 300 * time.Millisecond})
	_, err := f.Get(context.Background(), srv.URL+"/silent", Validators{})
	wantError(t, "silent", err, ReasonTimeout, "did not answer within 300ms")
	_, err = f.Get(context.Background(), srv.URL+"/drip", Validators{})
	wantError(t, "drip", err, ReasonTimeout, "body did not arrive within 300ms")

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the request is under way (the server holds it).
		<-held
		cancel()
	}()
	_, err = local(Options{}).Get(ctx, srv.URL+"/silent?hold=1", Validators{})
	fe := wantError(t, "cancelled", err, ReasonNetwork, "cancelled")
	if fe != nil && !errorsIsCanceled(fe) {
		t.Errorf("cancelled: %v does not wrap context.Canceled", fe)
	}
}

func errorsIsCanceled(err error) bool {
	for err != nil {
		if err == context.Canceled {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestGetTruncated: a body shorter than its Content-Length, a connection
// reset in the middle of the body, and a chunked body cut off all fail
// with reason truncated.
func TestGetTruncated(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short":
			w.Header().Set("Content-Length", "1000")
			w.Write(bytes.Repeat([]byte("x"), 500))
		case "/reset", "/chunked":
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if r.URL.Path == "/reset" {
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nContent-Length: 100000\r\n\r\n%s", strings.Repeat("x", 5000))
			} else {
				fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n%s", strings.Repeat("x", 100))
			}
			buf.Flush()
			if tc, ok := conn.(*net.TCPConn); ok && r.URL.Path == "/reset" {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		}
	}))
	defer srv.Close()
	f := local(Options{})
	for _, c := range []struct{ path, want string }{
		{"/short", "after 500 bytes of 1000"},
		{"/reset", "of 100000: read: connection reset by peer"},
		{"/chunked", "ended early"},
	} {
		_, err := f.Get(context.Background(), srv.URL+c.path, Validators{})
		wantError(t, c.path, err, ReasonTruncated, c.want)
	}
}
