package apidocs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/apierr"
)

// newTestApp serves the page for the OpenAPI document at documentPath;
// its error handler writes an apierr.Error's status and code, as the
// service's does (with the whole envelope).
func newTestApp(t *testing.T, documentPath string) *fiber.App {
	t.Helper()
	f := fiber.New(fiber.Config{DisableStartupMessage: true, ErrorHandler: func(c *fiber.Ctx, err error) error {
		var e *apierr.Error
		if !errors.As(err, &e) {
			return c.Status(500).SendString(err.Error())
		}
		return c.Status(e.Status).JSON(fiber.Map{"code": e.Code})
	}})
	New(documentPath).Register(f)
	return f
}

// get sends a GET with headers (name, value pairs) and reads the body.
func get(t *testing.T, f *fiber.App, target string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := f.Test(req, -1)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", target, err)
	}
	return res, body
}

// references are the page's href and src values.
var references = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// referenced returns every address the page refers to, resolved against
// the page's own address pageURL, data: URIs left out.
func referenced(t *testing.T, page []byte, pageURL string) []string {
	t.Helper()
	base, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range references.FindAllSubmatch(page, -1) {
		ref := string(m[1])
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		u, err := url.Parse(ref)
		if err != nil {
			t.Fatalf("the page refers to %q: %v", ref, err)
		}
		if u.IsAbs() || strings.HasPrefix(ref, "/") {
			t.Errorf("the page refers to %q: not relative to the page, so wrong behind a path prefix", ref)
		}
		out = append(out, base.ResolveReference(u).Path)
	}
	return out
}

func TestPageHeaders(t *testing.T) {
	f := newTestApp(t, "/calendar/events/v1/doc")
	for _, target := range []string{"/docs", "/DOCS"} {
		t.Run(target, func(t *testing.T) {
			res, body := get(t, f, target)
			if res.StatusCode != 200 {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			for name, want := range map[string]string{
				"Content-Type":            "text/html; charset=utf-8",
				"Content-Security-Policy": ContentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"Cache-Control":           "no-cache",
				"Referrer-Policy":         "no-referrer",
			} {
				if got := res.Header.Get(name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			if !bytes.Contains(body, []byte(`id="swagger-ui"`)) {
				t.Errorf("no Swagger UI element in the page:\n%s", body)
			}
			if bytes.Contains(body, []byte("<script>")) || bytes.Contains(body, []byte(" style=")) {
				t.Errorf("inline script or style in the page (the policy refuses them):\n%s", body)
			}
			res, _ = get(t, f, target, "If-None-Match", res.Header.Get("ETag"))
			if res.StatusCode != 304 {
				t.Errorf("revalidation with the ETag: status %d, want 304", res.StatusCode)
			}
		})
	}
}

// TestContentSecurityPolicy checks the policy's directives: nothing is
// allowed by default, scripts only from the service and never inline or
// evaluated.
func TestContentSecurityPolicy(t *testing.T) {
	directives := map[string]string{}
	for _, d := range strings.Split(ContentSecurityPolicy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if _, dup := directives[name]; dup {
			t.Errorf("directive %s twice", name)
		}
		directives[name] = value
	}
	for name, want := range map[string]string{
		"default-src":     "'none'",
		"script-src":      "'self'",
		"style-src":       "'self'",
		"img-src":         "data:",
		"connect-src":     "'self'",
		"base-uri":        "'none'",
		"frame-ancestors": "'none'",
	} {
		if got := directives[name]; got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
	for _, bad := range []string{"unsafe-eval", "unsafe-inline", "*", "http:", "https:", "blob:"} {
		if strings.Contains(ContentSecurityPolicy, bad) {
			t.Errorf("the policy allows %s: %s", bad, ContentSecurityPolicy)
		}
	}
}

func TestTrailingSlashRedirectsToThePage(t *testing.T) {
	f := newTestApp(t, "/calendar/events/v1/doc")
	res, _ := get(t, f, "/docs/")
	if res.StatusCode != http.StatusMovedPermanently {
		t.Fatalf("status %d, want 301", res.StatusCode)
	}
	loc := res.Header.Get("Location")
	for _, page := range []string{"http://example.test/docs/", "http://example.test/prefix/docs/"} {
		base, _ := url.Parse(page)
		next, err := url.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := base.ResolveReference(next).String(), strings.TrimSuffix(page, "/"); got != want {
			t.Errorf("Location %q from %s leads to %s, want %s", loc, page, got, want)
		}
	}
}

// TestReferencedAssetsAreServed loads every file the page refers to, as
// the browser would resolve it, and checks its type, caching and content.
func TestReferencedAssetsAreServed(t *testing.T) {
	f := newTestApp(t, "/calendar/events/v1/doc")
	_, page := get(t, f, "/docs")
	wantTypes := map[string]string{
		"swagger-ui.css":       "text/css; charset=utf-8",
		"page.css":             "text/css; charset=utf-8",
		"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
		"init.js":              "text/javascript; charset=utf-8",
	}
	var seen []string
	for _, p := range referenced(t, page, "http://example.test/docs") {
		if p == "/calendar/events/v1/doc" {
			continue // the API's route, not this package's (app: TestDocsPage)
		}
		name := path.Base(p)
		seen = append(seen, name)
		want, ok := wantTypes[name]
		if !ok {
			t.Errorf("the page refers to an unexpected file %s", p)
			continue
		}
		t.Run(name, func(t *testing.T) {
			res, body := get(t, f, p)
			if res.StatusCode != 200 {
				t.Fatalf("GET %s: status %d", p, res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != want {
				t.Errorf("Content-Type %q, want %q", got, want)
			}
			if got := res.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control %q", got)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			// The address names the content: its directory is the start
			// of the body's sha256.
			sum := sha256.Sum256(body)
			if dir := path.Base(path.Dir(p)); !strings.HasPrefix(hex.EncodeToString(sum[:]), dir) {
				t.Errorf("%s: the body's sha256 is %x", p, sum)
			}
			res, _ = get(t, f, p, "If-None-Match", res.Header.Get("ETag"))
			if res.StatusCode != 304 {
				t.Errorf("revalidation: status %d, want 304", res.StatusCode)
			}
		})
	}
	sort.Strings(seen)
	if want := []string{"init.js", "page.css", "swagger-ui-bundle.js", "swagger-ui.css"}; strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("the page refers to %v, want %v", seen, want)
	}
}

func TestAssetsCompressed(t *testing.T) {
	f := newTestApp(t, "/calendar/events/v1/doc")
	_, page := get(t, f, "/docs")
	var bundle string
	for _, p := range referenced(t, page, "http://example.test/docs") {
		if path.Base(p) == "swagger-ui-bundle.js" {
			bundle = p
		}
	}
	_, plain := get(t, f, bundle)
	tests := []struct {
		accept, encoding string
		decode           func(io.Reader) (io.Reader, error)
	}{
		{"", "", func(r io.Reader) (io.Reader, error) { return r, nil }},
		{"gzip", "gzip", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
		{"gzip, br", "br", func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil }},
		{"br;q=0, gzip", "gzip", func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
	}
	for _, tc := range tests {
		t.Run(tc.accept, func(t *testing.T) {
			headers := []string{"Accept-Encoding", tc.accept}
			if tc.accept == "" {
				headers = []string{"Accept-Encoding", "identity"}
			}
			res, body := get(t, f, bundle, headers...)
			if got := res.Header.Get("Content-Encoding"); got != tc.encoding {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.encoding)
			}
			if tc.encoding != "" && len(body) >= len(plain) {
				t.Errorf("%s body of %d bytes for %d", tc.encoding, len(body), len(plain))
			}
			if got := res.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary %q", got)
			}
			r, err := tc.decode(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			decoded, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(decoded, plain) {
				t.Errorf("decoded body differs from the file (%d bytes, want %d)", len(decoded), len(plain))
			}
		})
	}
}

func TestUnknownAssetsAreNoRoute(t *testing.T) {
	f := newTestApp(t, "/calendar/events/v1/doc")
	_, page := get(t, f, "/docs")
	var css string
	for _, p := range referenced(t, page, "http://example.test/docs") {
		if path.Base(p) == "swagger-ui.css" {
			css = p
		}
	}
	for _, p := range []string{
		"/docs/assets/",
		"/docs/assets/swagger-ui.css",
		"/docs/assets/0000000000000000/swagger-ui.css", // another version's address
		path.Dir(css) + "/LICENSE",                     // embedded, not served
		path.Dir(css) + "/../../page.html",
		css + "x",
	} {
		res, body := get(t, f, p)
		if res.StatusCode != 404 || !bytes.Contains(body, []byte(`"rest_no_route"`)) {
			t.Errorf("GET %s: %d %s, want 404 rest_no_route", p, res.StatusCode, body)
		}
	}
}

// TestDocumentAddressRelative: the page names the OpenAPI document
// relative to itself, so that it is found behind a path prefix too.
func TestDocumentAddressRelative(t *testing.T) {
	tests := []struct{ documentPath, pageURL, want string }{
		{"/calendar/events/v1/doc", "http://example.test/docs", "http://example.test/calendar/events/v1/doc"},
		{"/calendar/events/v1/doc", "https://example.org/prefix/docs", "https://example.org/prefix/calendar/events/v1/doc"},
		{"/wp-json/tribe/events/v1/doc", "http://example.test/docs", "http://example.test/wp-json/tribe/events/v1/doc"},
		{"/a:b/v1/doc", "http://example.test/docs", "http://example.test/a:b/v1/doc"},
	}
	attr := regexp.MustCompile(`data-openapi="([^"]*)"`)
	for _, tc := range tests {
		t.Run(tc.documentPath+" "+tc.pageURL, func(t *testing.T) {
			_, page := get(t, newTestApp(t, tc.documentPath), "/docs")
			m := attr.FindSubmatch(page)
			if m == nil {
				t.Fatalf("no data-openapi in the page:\n%s", page)
			}
			base, _ := url.Parse(tc.pageURL)
			ref, err := url.Parse(string(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			if got := base.ResolveReference(ref).String(); got != tc.want {
				t.Errorf("data-openapi %q resolves to %s, want %s", m[1], got, tc.want)
			}
		})
	}
}

// pinRow is a row of the table of files in assets/README.md.
var pinRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([0-9a-f]{64})` \\|$")

// TestVendoredAssetsMatchPins checks the embedded files against the pinned
// sha256 values, and the pins against assets/README.md.
func TestVendoredAssetsMatchPins(t *testing.T) {
	files, err := fs.ReadDir(vendored, "assets")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(pinned) {
		t.Errorf("%d files embedded, %d pinned", len(files), len(pinned))
	}
	for _, e := range files {
		body, err := fs.ReadFile(vendored, "assets/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); got != pinned[e.Name()] {
			t.Errorf("assets/%s: sha256 %s, pinned %q", e.Name(), got, pinned[e.Name()])
		}
	}
	readme, err := os.ReadFile("assets/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := pinRow.FindAllSubmatch(readme, -1)
	listed := map[string]string{}
	for _, r := range rows {
		listed[string(r[1])] = string(r[2])
	}
	if len(listed) != len(pinned) {
		t.Errorf("assets/README.md lists %d files, %d are pinned", len(listed), len(pinned))
	}
	for name, sum := range pinned {
		if listed[name] != sum {
			t.Errorf("assets/README.md gives %s the sha256 %q, pinned %s", name, listed[name], sum)
		}
	}
	for _, want := range []string{ViewerPackage, "Version | " + ViewerVersion, "Apache-2.0"} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("assets/README.md does not name %q", want)
		}
	}
}
