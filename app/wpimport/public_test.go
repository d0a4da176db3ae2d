package wpimport_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/app/wpimport/replay"
)

// TestHTMLAPILink finds the REST root a WordPress page names in its head.
func TestHTMLAPILink(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, page, want string
	}{
		{"WordPress's head", "<!DOCTYPE html>\n<html lang=\"en-US\"><head>\n<link rel='dns-prefetch' href='//s.w.org' />\n<link rel=\"https://api.w.org/\" href=\"https://example.org/wp-json/\" />\n<link rel=\"alternate\" title=\"JSON\" type=\"application/json\" href=\"https://example.org/wp-json/wp/v2/pages/2\" /></head><body></body></html>", "https://example.org/wp-json/"},
		{"href first, single quotes, no closing slash", "<head><link href='/api/' rel='https://api.w.org/'></head>", "/api/"},
		{"upper-case tag", "<HTML><HEAD><LINK REL=\"https://api.w.org/\" HREF=\"/wp-json/\"></HEAD></HTML>", "/wp-json/"},
		{"only in the body", "<html><head><title>x</title></head><body><link rel=\"https://api.w.org/\" href=\"/wp-json/\"></body></html>", ""},
		{"other links", "<head><link rel=\"stylesheet\" href=\"/s.css\"><link rel=\"https://api.w.org/\"></head>", ""},
		{"text that looks like it", "<p>&lt;link rel=\"https://api.w.org/\" href=\"/x\"&gt;</p>", ""},
		{"not HTML", "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n", ""},
	} {
		got, ok := wpimport.HTMLAPILink([]byte(c.page))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: HTMLAPILink = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
}

// TestReadPublicFindsTheRESTRootInThePage: a site whose REST root is not
// at /wp-json and whose home page names it only in its head (no Link
// header) is found from the site's address.
func TestReadPublicFindsTheRESTRootInThePage(t *testing.T) {
	t.Parallel()
	inner := replay.NewSite(t, &replay.Site{Events: []map[string]any{replay.Event(501, "One"), replay.Event(502, "Two")}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><html><head><link rel="https://api.w.org/" href="/api/"></head><body></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/api"):
			r.URL.Path = "/wp-json" + strings.TrimPrefix(r.URL.Path, "/api")
			res, err := http.Get(inner.URL + r.URL.RequestURI())
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			w.WriteHeader(res.StatusCode)
			_, _ = io.Copy(w, res.Body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	snap, err := wpimport.ReadPublic(t.Context(), wpimport.PublicOptions{Source: srv.URL, Rate: -1, RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Root != srv.URL+"/api/tribe/events/v1" || len(snap.Events) != 2 || snap.Events[0].Record.ID != 501 {
		t.Fatalf("root %s, %d events", snap.Root, len(snap.Events))
	}
}

// TestReadPublicRefusesItsURL: a source URL that is not http(s), holds
// credentials or a query is refused before anything is sent.
func TestReadPublicRefusesItsURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"ftp://example.org/", "https://user:pw@example.org/", "https://example.org/?rest_route=/tribe/events/v1", "example.org", ""} {
		_, err := wpimport.ReadPublic(t.Context(), wpimport.PublicOptions{Source: raw})
		if !errors.Is(err, wpimport.ErrSourceURL) || strings.Contains(err.Error(), "pw") {
			t.Errorf("ReadPublic(%q) = %v; want ErrSourceURL", raw, err)
		}
	}
}
