package httpcache

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
)

// testApp serves /item/:id through c with a body of n bytes per id; renders
// counts the renders.
func testApp(c *Cache, renders *atomic.Int64, size int) *fiber.App {
	f := fiber.New()
	f.Use(func(ctx *fiber.Ctx) error {
		ctx.Set("X-Request-ID", ctx.Get("X-Request-ID"))
		return ctx.Next()
	})
	f.Use(c.Middleware())
	f.Get("/item/:id", func(ctx *fiber.Ctx) error {
		id := ctx.Params("id")
		key := "item/" + id
		if id == "nostore" {
			key = ""
		}
		return c.Serve(ctx, Request{Key: key, Private: ctx.Get("Authorization") != ""}, func() error {
			n := renders.Add(1)
			switch id {
			case "missing":
				return fiber.NewError(404, "no such item")
			case "teapot":
				return ctx.Status(418).SendString("teapot")
			}
			ctx.Set("X-Total", "7")
			ctx.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			body := fmt.Sprintf(`{"id":%q,"render":%d,"pad":%q}`, id, n, strings.Repeat("ab", size/2))
			return ctx.SendString(body)
		})
	})
	f.Get("/plain", func(ctx *fiber.Ctx) error { return ctx.SendString(strings.Repeat("plain ", 200)) })
	return f
}

type result struct {
	status int
	header http.Header
	body   []byte // decoded
	wire   int    // bytes on the wire
}

func get(t *testing.T, f *fiber.App, target string, headers ...string) result {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := f.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := result{status: res.StatusCode, header: res.Header, body: raw, wire: len(raw)}
	switch res.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		out.body, err = io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
	case "br":
		out.body, err = io.ReadAll(brotli.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestServeCachesAndReplaysHeaders(t *testing.T) {
	var renders atomic.Int64
	c := New(Options{MaxBytes: 1 << 20})
	f := testApp(c, &renders, 2000)
	first := get(t, f, "/item/1", "X-Request-ID", "one")
	second := get(t, f, "/item/1", "X-Request-ID", "two")
	if renders.Load() != 1 {
		t.Fatalf("renders = %d, want 1", renders.Load())
	}
	if !bytes.Equal(first.body, second.body) || first.status != 200 || second.status != 200 {
		t.Fatalf("hit differs: %d %s / %d %s", first.status, first.body[:40], second.status, second.body[:40])
	}
	for _, h := range []string{"X-Total", "Content-Type", "ETag", "Cache-Control"} {
		if second.header.Get(h) == "" || second.header.Get(h) != first.header.Get(h) {
			t.Errorf("%s: hit %q, miss %q", h, second.header.Get(h), first.header.Get(h))
		}
	}
	// Headers the middleware set before the render are the request's own.
	if got := second.header.Get("X-Request-ID"); got != "two" {
		t.Errorf("X-Request-ID on a hit = %q, want two", got)
	}
	if got := first.header.Get("Cache-Control"); got != "public, max-age=0, must-revalidate" {
		t.Errorf("anonymous Cache-Control = %q", got)
	}
	if got := first.header.Values("Vary"); !strings.Contains(strings.Join(got, ","), "Accept-Encoding") || !strings.Contains(strings.Join(got, ","), "Authorization") {
		t.Errorf("Vary = %q", got)
	}
	if got := get(t, f, "/item/1", "Authorization", "Bearer x").header.Get("Cache-Control"); got != "private, max-age=0, must-revalidate" {
		t.Errorf("private Cache-Control = %q", got)
	}
	if !strings.HasPrefix(first.header.Get("ETag"), `"`) || strings.HasPrefix(first.header.Get("ETag"), "W/") {
		t.Errorf("ETag %q is not a strong tag", first.header.Get("ETag"))
	}
}

func TestServeStaleness(t *testing.T) {
	var renders atomic.Int64
	now := time.Unix(1000, 0)
	var version atomic.Int64
	c := New(Options{MaxBytes: 1 << 20, TTL: time.Second, Now: func() time.Time { return now }, Version: version.Load})
	f := testApp(c, &renders, 10)
	steps := []struct {
		name    string
		before  func()
		renders int64
	}{
		{"first read renders", func() {}, 1},
		{"second read hits", func() {}, 1},
		{"Invalidate makes it stale", c.Invalidate, 2},
		{"then it is cached again", func() {}, 2},
		{"a new external version makes it stale", func() { version.Add(1) }, 3},
		{"just under the TTL hits", func() { now = now.Add(999 * time.Millisecond) }, 3},
		{"at the TTL it is stale", func() { now = now.Add(time.Millisecond) }, 4},
	}
	for _, st := range steps {
		st.before()
		get(t, f, "/item/1")
		if renders.Load() != st.renders {
			t.Fatalf("%s: renders = %d, want %d", st.name, renders.Load(), st.renders)
		}
	}
}

func TestServeDoesNotStore(t *testing.T) {
	var renders atomic.Int64
	c := New(Options{MaxBytes: 1 << 20})
	f := testApp(c, &renders, 10)
	cases := []struct {
		path   string
		status int
	}{
		{"/item/missing", 404}, // render error
		{"/item/teapot", 418},  // not 200
		{"/item/nostore", 200}, // no key
	}
	for _, tc := range cases {
		renders.Store(0)
		for i := 0; i < 2; i++ {
			r := get(t, f, tc.path)
			if r.status != tc.status {
				t.Fatalf("%s: status %d, want %d", tc.path, r.status, tc.status)
			}
		}
		if renders.Load() != 2 {
			t.Errorf("%s: renders = %d, want 2 (never stored)", tc.path, renders.Load())
		}
	}
	if c.Len() != 0 {
		t.Errorf("entries = %d, want 0", c.Len())
	}
	// With no byte budget nothing is stored, but ETags still apply.
	off := New(Options{})
	renders.Store(0)
	g := testApp(off, &renders, 10)
	a, b := get(t, g, "/item/1"), get(t, g, "/item/1")
	if renders.Load() != 2 || a.header.Get("ETag") == "" {
		t.Errorf("disabled cache: renders %d, ETag %q", renders.Load(), a.header.Get("ETag"))
	}
	if a.header.Get("ETag") == b.header.Get("ETag") {
		t.Errorf("different bodies share ETag %q", a.header.Get("ETag"))
	}
}

func TestConditionalAndCompression(t *testing.T) {
	var renders atomic.Int64
	c := New(Options{MaxBytes: 1 << 20})
	f := testApp(c, &renders, 4000)
	identity := get(t, f, "/item/1")
	etag := identity.header.Get("ETag")
	cases := []struct {
		name     string
		headers  []string
		status   int
		encoding string
	}{
		{"identity", nil, 200, ""},
		{"gzip", []string{"Accept-Encoding", "gzip"}, 200, "gzip"},
		{"brotli preferred on a tie", []string{"Accept-Encoding", "gzip, deflate, br"}, 200, "br"},
		{"q values", []string{"Accept-Encoding", "br;q=0.5, gzip;q=0.8"}, 200, "gzip"},
		{"refused coding", []string{"Accept-Encoding", "br;q=0, gzip;q=0"}, 200, ""},
		{"star", []string{"Accept-Encoding", "*"}, 200, "br"},
		{"unknown coding only", []string{"Accept-Encoding", "deflate"}, 200, ""},
		{"matching If-None-Match", []string{"If-None-Match", etag}, 304, ""},
		{"weak form matches", []string{"If-None-Match", "W/" + etag}, 304, ""},
		{"one of a list", []string{"If-None-Match", `"nope", ` + etag}, 304, ""},
		{"star matches", []string{"If-None-Match", "*"}, 304, ""},
		{"other tag", []string{"If-None-Match", `"nope"`}, 200, ""},
		{"gzip tag revalidates", []string{"If-None-Match", strings.TrimSuffix(etag, `"`) + `-gzip"`, "Accept-Encoding", "gzip"}, 304, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, f, "/item/1", tc.headers...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d", r.status, tc.status)
			}
			if got := r.header.Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
			}
			if r.status == 304 {
				if r.wire != 0 {
					t.Errorf("304 with a %d-byte body", r.wire)
				}
				if r.header.Get("ETag") == "" {
					t.Error("304 without ETag")
				}
				return
			}
			if !bytes.Equal(r.body, identity.body) {
				t.Errorf("decoded body differs from the identity body")
			}
			if tc.encoding != "" && r.wire >= len(identity.body)/2 {
				t.Errorf("%s body is %d bytes of %d", tc.encoding, r.wire, len(identity.body))
			}
			if tc.encoding != "" && r.header.Get("ETag") == etag {
				t.Errorf("encoded representation shares the identity ETag")
			}
		})
	}
	if renders.Load() != 1 {
		t.Errorf("renders = %d, want 1", renders.Load())
	}
	// Small bodies are not compressed.
	small := testApp(New(Options{MaxBytes: 1 << 20}), &renders, 10)
	if r := get(t, small, "/item/1", "Accept-Encoding", "gzip"); r.header.Get("Content-Encoding") != "" {
		t.Errorf("a small body was compressed")
	}
}

func TestMiddlewareOnUncachedResponses(t *testing.T) {
	var renders atomic.Int64
	f := testApp(New(Options{MaxBytes: 1 << 20}), &renders, 10)
	a := get(t, f, "/plain", "Accept-Encoding", "gzip")
	if a.status != 200 || a.header.Get("ETag") == "" || a.header.Get("Content-Encoding") != "gzip" || string(a.body) != strings.Repeat("plain ", 200) {
		t.Fatalf("plain: %d ETag %q encoding %q", a.status, a.header.Get("ETag"), a.header.Get("Content-Encoding"))
	}
	if r := get(t, f, "/plain", "Accept-Encoding", "gzip", "If-None-Match", a.header.Get("ETag")); r.status != 304 || r.wire != 0 {
		t.Errorf("revalidation: %d with %d bytes", r.status, r.wire)
	}
}

func TestByteBound(t *testing.T) {
	var renders atomic.Int64
	const bound = 64 << 10
	c := New(Options{MaxBytes: bound})
	f := testApp(c, &renders, 3000)
	for i := 0; i < 200; i++ {
		get(t, f, fmt.Sprintf("/item/%d", i), "Accept-Encoding", []string{"", "gzip", "br"}[i%3])
		if b := c.Bytes(); b > bound {
			t.Fatalf("after %d entries: %d bytes, bound %d", i+1, b, bound)
		}
	}
	if c.Len() >= 200 || c.Len() < 5 {
		t.Errorf("entries = %d: the bound should hold some, not all", c.Len())
	}
	// The most recently used entry survives; the oldest were evicted.
	renders.Store(0)
	get(t, f, "/item/199")
	get(t, f, "/item/0")
	if renders.Load() != 1 {
		t.Errorf("renders = %d, want 1 (199 cached, 0 evicted)", renders.Load())
	}
	// An entry larger than a quarter of the bound is never stored.
	big := New(Options{MaxBytes: 8 << 10})
	renders.Store(0)
	g := testApp(big, &renders, 4000)
	get(t, g, "/item/1")
	get(t, g, "/item/1")
	if renders.Load() != 2 || big.Bytes() != 0 {
		t.Errorf("oversized entry: renders %d, bytes %d", renders.Load(), big.Bytes())
	}
}

func TestNegotiate(t *testing.T) {
	cases := map[string]string{
		"":                      "",
		"gzip":                  "gzip",
		"GZIP":                  "gzip",
		"br":                    "br",
		"gzip, br":              "br",
		"gzip;q=1, br;q=0.9":    "gzip",
		"br;q=0":                "",
		"*;q=0.5, gzip;q=0.4":   "br",
		"*, br;q=0":             "gzip",
		"gzip;q=abc":            "",
		"identity":              "",
		"deflate, compress":     "",
		" gzip ; q=0.3 ,br;q=2": "gzip",
	}
	for in, want := range cases {
		if got := negotiate(in); got != want {
			t.Errorf("negotiate(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderErrorPassesThrough(t *testing.T) {
	c := New(Options{MaxBytes: 1 << 20})
	want := errors.New("boom")
	f := fiber.New(fiber.Config{ErrorHandler: func(ctx *fiber.Ctx, err error) error {
		if errors.Is(err, want) {
			return ctx.Status(503).SendString("down")
		}
		return ctx.Status(500).SendString(err.Error())
	}})
	f.Get("/", func(ctx *fiber.Ctx) error {
		return c.Serve(ctx, Request{Key: "k"}, func() error { return want })
	})
	if r := get(t, f, "/"); r.status != 503 || c.Len() != 0 {
		t.Errorf("status %d, entries %d", r.status, c.Len())
	}
}

// TestConcurrentUse runs hits, misses, lazy compression and invalidations
// from many goroutines (meant for -race) and checks the bound afterwards.
func TestConcurrentUse(t *testing.T) {
	var renders atomic.Int64
	const bound = 32 << 10
	c := New(Options{MaxBytes: bound})
	f := testApp(c, &renders, 1500)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				req := httptest.NewRequest("GET", fmt.Sprintf("/item/%d", (g+i)%15), nil)
				req.Header.Set("Accept-Encoding", []string{"", "gzip", "br"}[(g+i)%3])
				res, err := f.Test(req, -1)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("status %d", res.StatusCode)
				}
				if i%17 == 0 {
					c.Invalidate()
				}
			}
		}(g)
	}
	wg.Wait()
	if b := c.Bytes(); b > bound {
		t.Errorf("%d bytes, bound %d", b, bound)
	}
}
