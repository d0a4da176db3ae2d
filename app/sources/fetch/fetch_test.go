package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testsupport"
)

// local returns a Fetcher for tests against httptest servers on
// loopback: the address rules are off unless a test is about them.
func local(o Options) *Fetcher {
	o.AllowPrivate = true
	return New(o)
}

// wantError checks that err is an *Error with reason whose message holds
// every one of parts, and returns it.
func wantError(t *testing.T, name string, err error, reason string, parts ...string) *Error {
	t.Helper()
	t.Logf("%s: %v", name, err)
	var fe *Error
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v (%T), want a *fetch.Error with reason %s", name, err, err, reason)
		return nil
	}
	if fe.Reason != reason {
		t.Errorf("%s: reason %q (%s), want %q", name, fe.Reason, fe.Message, reason)
	}
	for _, p := range parts {
		if !strings.Contains(fe.Message, p) {
			t.Errorf("%s: message %q does not say %q", name, fe.Message, p)
		}
	}
	return fe
}

const calendarBody = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"

// TestGetConditional: a first fetch sends Accept and the service's
// User-Agent and no validators, and returns the body and the answer's
// validators; a second with them gets 304: NotModified, no body, the
// validators kept; a changed feed answers 200 again with new validators.
func TestGetConditional(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		version = "v1"
		seen    []http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Header.Clone())
		etag := `"` + version + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Wed, 25 Nov 2026 10:00:00 GMT")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/calendar; charset=utf-8")
		fmt.Fprint(w, calendarBody+version)
	}))
	defer srv.Close()
	f := local(Options{})
	ctx := context.Background()

	first, err := f.Get(ctx, srv.URL+"/feed.ics", Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if string(first.Body) != calendarBody+"v1" || first.NotModified || first.ContentType != "text/calendar; charset=utf-8" {
		t.Errorf("first fetch: %+v", first)
	}
	wantV := Validators{ETag: `"v1"`, LastModified: "Wed, 25 Nov 2026 10:00:00 GMT"}
	if first.Validators != wantV {
		t.Errorf("first fetch validators %+v, want %+v", first.Validators, wantV)
	}
	if first.URL != srv.URL+"/feed.ics" {
		t.Errorf("URL %q", first.URL)
	}

	second, err := f.Get(ctx, srv.URL+"/feed.ics", first.Validators)
	if err != nil {
		t.Fatal(err)
	}
	if !second.NotModified || second.Body != nil || second.Validators != wantV {
		t.Errorf("second fetch: NotModified %v, body %q, validators %+v; want a 304 with the validators", second.NotModified, second.Body, second.Validators)
	}

	mu.Lock()
	version = "v2"
	mu.Unlock()
	third, err := f.Get(ctx, srv.URL+"/feed.ics", second.Validators)
	if err != nil {
		t.Fatal(err)
	}
	if third.NotModified || string(third.Body) != calendarBody+"v2" || third.Validators.ETag != `"v2"` {
		t.Errorf("third fetch after a change: %+v", third)
	}

	mu.Lock()
	defer mu.Unlock()
	for i, h := range seen {
		if h.Get("Accept") != Accept {
			t.Errorf("request %d: Accept %q", i, h.Get("Accept"))
		}
		if ua := h.Get("User-Agent"); ua != "eventcal/"+config.Version+" (+calendar sources)" {
			t.Errorf("request %d: User-Agent %q", i, ua)
		}
	}
	if seen[0].Get("If-None-Match") != "" || seen[0].Get("If-Modified-Since") != "" {
		t.Errorf("first request sent validators: %v", seen[0])
	}
	if seen[1].Get("If-None-Match") != `"v1"` || seen[1].Get("If-Modified-Since") != "Wed, 25 Nov 2026 10:00:00 GMT" {
		t.Errorf("second request's validators: %v", seen[1])
	}
}

// TestGetStatus: an answer other than 200 (or 304 to a conditional
// request) fails with reason status, naming the status and at most a
// short, cleaned reason phrase, never the body; an HTML page is returned
// with its content type (deciding it is not a calendar is the reader's
// job).
func TestGetStatus(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-BODY-TEXT"
	mux := http.NewServeMux()
	for _, code := range []int{404, 500, 503, 304, 206, 204} {
		mux.HandleFunc(fmt.Sprintf("/%d", code), func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			fmt.Fprint(w, secret)
		})
	}
	mux.HandleFunc("/html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Events</title>")
	})
	mux.HandleFunc("/hostile", func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 500 Oops\x01\x7f <b>%s</b> %s\r\nContent-Length: 16\r\n\r\n%s", strings.Repeat("x", 300), secret, secret)
		buf.Flush()
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	f := local(Options{})
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/404", 404, "the source answered HTTP 404 (Not Found)"},
		{"/500", 500, "the source answered HTTP 500 (Internal Server Error)"},
		{"/503", 503, "the source answered HTTP 503 (Service Unavailable)"},
		{"/304", 304, "the source answered HTTP 304"}, // 304 to a request without validators
		{"/206", 206, "the source answered HTTP 206"},
		{"/204", 204, "the source answered HTTP 204"},
		{"/hostile", 500, "the source answered HTTP 500 (Oops <b>xxx"},
	} {
		_, err := f.Get(context.Background(), srv.URL+c.path, Validators{})
		fe := wantError(t, c.path, err, ReasonStatus, c.want)
		if fe == nil {
			continue
		}
		if fe.Status != c.status {
			t.Errorf("%s: Status %d, want %d", c.path, fe.Status, c.status)
		}
		if strings.Contains(fe.Message, secret) || strings.ContainsAny(fe.Message, "\x01\x7f\r\n") || len(fe.Message) > 120 {
			t.Errorf("%s: message %q quotes the body, unprintable characters or too much", c.path, fe.Message)
		}
	}
	res, err := f.Get(context.Background(), srv.URL+"/html", Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ContentType != "text/html; charset=utf-8" || !strings.HasPrefix(string(res.Body), "<!doctype html>") {
		t.Errorf("HTML page: content type %q, body %q", res.ContentType, res.Body)
	}
}

// TestGetRedirects: up to MaxRedirects redirects are followed, between
// http and https too, and Result.URL is the last; more, or one to
// another scheme or with credentials, fails with reason redirect.
func TestGetRedirects(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/back" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/calendar")
		fmt.Fprint(w, calendarBody)
	}))
	defer tlsSrv.Close()
	var srvURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		switch {
		case r.URL.Path == "/feed.ics":
			w.Header().Set("Content-Type", "text/calendar")
			fmt.Fprint(w, calendarBody)
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case r.URL.Path == "/to":
			http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusMovedPermanently)
		case r.URL.Path == "/tls":
			http.Redirect(w, r, tlsSrv.URL+"/back?to="+srvURL+"/feed.ics", http.StatusFound)
		default:
			if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err != nil {
				http.NotFound(w, r)
				return
			}
			if n == 0 {
				http.Redirect(w, r, "/feed.ics", http.StatusTemporaryRedirect)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
		}
	}))
	defer srv.Close()
	srvURL = srv.URL
	// The TLS server's client trusts its certificate; it is no guarded
	// transport, which this test is not about.
	f := local(Options{Transport: tlsSrv.Client().Transport})
	for _, c := range []struct {
		name, path string
		reason     string // "" for success
		want       string // the final URL, or a part of the message
	}{
		{"one redirect", "/hop/0", "", srv.URL + "/feed.ics"},
		{"five redirects", "/hop/4", "", srv.URL + "/feed.ics"},
		{"http to https and back", "/tls", "", srv.URL + "/feed.ics"},
		{"six redirects", "/hop/5", ReasonRedirect, "more than 5"},
		{"a loop", "/loop", ReasonRedirect, "more than 5"},
		{"to file", "/to?u=file:///etc/passwd", ReasonRedirect, `scheme "file"; only redirects to http and https`},
		{"to ftp", "/to?u=ftp://ftp.example.org/feed.ics", ReasonRedirect, `scheme "ftp"`},
		{"to credentials", "/to?u=http://user:secret@" + strings.TrimPrefix(srv.URL, "http://") + "/feed.ics", ReasonRedirect, "user name or password"},
	} {
		res, err := f.Get(context.Background(), srv.URL+c.path, Validators{})
		if c.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if res.URL != c.want || string(res.Body) != calendarBody {
				t.Errorf("%s: URL %q body %q, want %q", c.name, res.URL, res.Body, c.want)
			}
			continue
		}
		fe := wantError(t, c.name, err, c.reason, c.want)
		if fe != nil && strings.Contains(fe.Message, "secret") {
			t.Errorf("%s: message %q shows the password", c.name, fe.Message)
		}
	}
}

// TestCheckURL: what a source URL may be, and that each refusal says
// what is accepted or why.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	resolver := testsupport.StaticResolver{
		"calendar.example.org": {"93.184.216.34"},
		"intranet.example.org": {"93.184.216.34", "10.1.2.3"},
		"metadata.example.org": {"169.254.169.254"},
	}
	for _, c := range []struct {
		url          string
		allowPrivate bool
		want         string // "" for accepted, else a part of the error
	}{
		{"https://calendar.example.org/events.ics", false, ""},
		{"http://calendar.example.org:8080/events.ics?token=abc", false, ""},
		{"HTTPS://calendar.example.org/events.ics", false, ""},
		{"http://93.184.216.34/feed", false, ""},
		{"http://[2606:2800:220:1:248:1893:25c8:1946]/feed", false, ""},
		{"https://unresolvable.example.org/feed", false, ""}, // best effort: judged again at fetch time
		{"ftp://calendar.example.org/events.ics", false, "must start with http:// or https://"},
		{"webcal://calendar.example.org/events.ics", false, "write a webcal:// address with https://"},
		{"file:///etc/passwd", false, "must start with http:// or https://"},
		{"calendar.example.org/events.ics", false, "must start with http:// or https://"},
		{"https:///events.ics", false, "names no host"},
		{"http:calendar.example.org", false, "names no host"},
		{"https://user:pass@calendar.example.org/events.ics", false, "user name or password"},
		{"https://user@calendar.example.org/events.ics", false, "user name or password"},
		{"https://calendar.example.org:0/events.ics", false, "port must be a number from 1 to 65535"},
		{"https://calendar.example.org:70000/events.ics", false, "port must be a number from 1 to 65535"},
		{"https://calendar.example.org:http/events.ics", false, "port must be a number from 1 to 65535"},
		{"https://calendar.example.org/" + strings.Repeat("a", 2100), false, "longer than 2048"},
		{"http://127.0.0.1:8080/feed", false, "private, loopback, link-local or reserved"},
		{"http://localhost/feed", false, "private, loopback"},
		{"http://calendar.localhost/feed", false, "private, loopback"},
		{"http://10.0.0.5/feed", false, "private"},
		{"http://[::1]/feed", false, "private"},
		{"http://[::ffff:192.168.0.1]/feed", false, "private"},
		{"http://169.254.169.254/latest/meta-data", false, "private"},
		{"http://100.64.1.1/feed", false, "private"},
		{"http://intranet.example.org/feed", false, "resolves to 10.1.2.3"},
		{"http://metadata.example.org/feed", false, "resolves to 169.254.169.254"},
		{"http://127.0.0.1:8080/feed", true, ""},
		{"http://localhost/feed", true, ""},
		{"http://intranet.example.org/feed", true, ""},
		{"https://user:pass@localhost/feed", true, "user name or password"},
	} {
		err := checkURL(c.url, c.allowPrivate, resolver)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.url, err, c.want)
		}
	}
	// The exported form applies the same rules (literal addresses need no
	// resolution).
	if err := CheckURL("http://10.0.0.5/feed", false); err == nil {
		t.Error("CheckURL accepted a private address")
	}
	if err := CheckURL("http://10.0.0.5/feed", true); err != nil {
		t.Errorf("CheckURL with allowPrivate: %v", err)
	}
}
