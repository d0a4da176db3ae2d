package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/calendar/eventcal/app/apidocs"
)

// rawGet sends a GET (or HEAD) to the env's app without the API's response
// checks: the page is not an API route.
func rawGet(t *testing.T, e *env, method, target string) (*http.Response, []byte) {
	t.Helper()
	return rawSend(t, e, httptest.NewRequest(method, target, nil))
}

// rawSend sends req to the env's app without the API's response checks
// and returns the response with its body read.
func rawSend(t *testing.T, e *env, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// pageRefs are the page's href, src and data-openapi values.
var pageRefs = regexp.MustCompile(`(?:href|src|data-openapi)="([^"]*)"`)

// TestDocsPage: GET /docs serves the reference page under its policy, and
// every address on it, resolved from /docs as a browser does, is served
// with its type: the viewer's files and the interface document of the API
// root, whatever REST_ROOT, API_NAMESPACE and TEC_COMPAT say.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		settings []string
		// document is the interface document the page must show.
		document string
	}{
		{"defaults", nil, root + "/doc"},
		{"REST_ROOT and API_NAMESPACE", []string{"REST_ROOT", "/api", "API_NAMESPACE", "cal/v2"}, "/api/cal/v2/doc"},
		// TEC_COMPAT serves the API at two roots: the page shows APIRoot's
		// document, whose servers name both.
		{"TEC_COMPAT", []string{"TEC_COMPAT", "true"}, root + "/doc"},
		{"API root at The Events Calendar's", []string{"TEC_COMPAT", "true", "REST_ROOT", "/wp-json", "API_NAMESPACE", "tribe/events/v1"},
			"/wp-json/tribe/events/v1/doc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.settings...)
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				res, _ := rawGet(t, e, method, "/docs")
				if res.StatusCode != 200 {
					t.Fatalf("%s /docs: status %d", method, res.StatusCode)
				}
				if got := res.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
					t.Errorf("%s /docs: Content-Type %q", method, got)
				}
				if got := res.Header.Get("Content-Security-Policy"); got != apidocs.ContentSecurityPolicy {
					t.Errorf("%s /docs: Content-Security-Policy %q", method, got)
				}
			}
			_, page := rawGet(t, e, http.MethodGet, "/docs")
			base, _ := url.Parse("http://example.test/docs")
			var sawDocument bool
			for _, m := range pageRefs.FindAllSubmatch(page, -1) {
				ref := string(m[1])
				if strings.HasPrefix(ref, "data:") {
					continue
				}
				u, err := url.Parse(ref)
				if err != nil || u.IsAbs() || strings.HasPrefix(ref, "/") {
					t.Errorf("the page refers to %q: not an address relative to the page", ref)
					continue
				}
				p := base.ResolveReference(u).Path
				res, body := rawGet(t, e, http.MethodGet, p)
				if res.StatusCode != 200 {
					t.Errorf("GET %s (%q on the page): status %d", p, ref, res.StatusCode)
					continue
				}
				ct := res.Header.Get("Content-Type")
				switch {
				case p == tc.document:
					sawDocument = true
					var doc struct {
						OpenAPI string `json:"openapi"`
						Paths   map[string]any
					}
					if err := json.Unmarshal(body, &doc); err != nil || doc.OpenAPI == "" || doc.Paths["/events"] == nil {
						t.Errorf("GET %s: not the interface document (%v): %.200s", p, err, body)
					}
					if !strings.HasPrefix(ct, "application/json") {
						t.Errorf("GET %s: Content-Type %q", p, ct)
					}
				case strings.HasSuffix(p, ".js"):
					if ct != "text/javascript; charset=utf-8" {
						t.Errorf("GET %s: Content-Type %q", p, ct)
					}
				case strings.HasSuffix(p, ".css"):
					if ct != "text/css; charset=utf-8" {
						t.Errorf("GET %s: Content-Type %q", p, ct)
					}
				default:
					t.Errorf("the page refers to %s, neither the document %s nor a script or stylesheet", p, tc.document)
				}
			}
			if !sawDocument {
				t.Errorf("the page does not name the document %s:\n%s", tc.document, page)
			}
		})
	}
}

// TestDocsPageLeavesTheAPIItsRoot: with the API root at /docs, the API
// keeps the path (its namespace index answers there) and the start-up log
// says why the page is missing.
func TestDocsPageLeavesTheAPIItsRoot(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := newEnvWith(t, t.TempDir(), envOptions{log: &log}, "API_NAMESPACE", "docs")
	res, body := rawGet(t, e, http.MethodGet, "/docs")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
		!bytes.Contains(body, []byte(`"namespace":"docs"`)) {
		t.Errorf("GET /docs: %d %s %.200s, want the namespace index", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if !strings.Contains(log.String(), "the API reference page is not served") {
		t.Errorf("no warning in the log:\n%s", log.String())
	}
}
