package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/config/netguard"
	"github.com/calendar/eventcal/config/testsupport"
)

// publicAddr is the address "calendar.example" resolves to in these
// tests: a public one, which the Connect hook sends to the local server.
const publicAddr = "93.184.216.34"

// guarded returns a Fetcher with the address rules on (unless
// allowPrivate), resolving names through a fake resolver, and connecting
// every accepted address to srv, so that no real network is needed; the
// addresses it was asked to connect to are recorded.
func guarded(srv *httptest.Server, allowPrivate bool) (*Fetcher, func() []string) {
	var (
		mu      sync.Mutex
		dialled []string
	)
	f := New(Options{AllowPrivate: allowPrivate, Resolver: testsupport.StaticResolver{
		"calendar.example": {publicAddr},
		"rebound.example":  {"127.0.0.1"},
		"localhost":        {"127.0.0.1"},
		"internal.example": {"10.0.0.5"},
		"metadata.example": {"169.254.169.254", "fd00::1"},
		"dual.example":     {"::1", publicAddr},
	}, Connect: func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, address)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}})
	return f, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(dialled)
	}
}

// TestAddressRules: with the rules on, a source URL, a name that
// resolves to a loopback or private address (checked at dial time, so a
// name that resolved elsewhere when the source was saved is refused too),
// and every redirect hop to a private address (literal, or a name
// resolving to one) are refused with reason blocked, saying why; no
// connection is made to a refused address. With SOURCES_ALLOW_PRIVATE the
// same fetches go through.
func TestAddressRules(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/calendar")
		io.WriteString(w, calendarBody)
	}))
	defer srv.Close()
	for _, c := range []struct {
		name, url string
		want      string // "" for success, else a part of the blocked message
		dialled   []string
	}{
		{"a public name", "http://calendar.example/feed.ics", "", []string{publicAddr + ":80"}},
		{"a name resolving to loopback, at dial", "http://rebound.example/feed.ics",
			"host rebound.example resolves to 127.0.0.1, a private, loopback, link-local or reserved address", nil},
		{"a name resolving to a private address", "http://internal.example:8080/feed.ics", "resolves to 10.0.0.5", nil},
		{"a name resolving to link-local and ULA", "http://metadata.example/", "resolves to 169.254.169.254", nil},
		{"a name with a loopback and a public address", "http://dual.example/feed.ics", "", []string{publicAddr + ":80"}},
		{"a literal loopback address", "http://127.0.0.1:8080/feed.ics", "host 127.0.0.1 is a private", nil},
		{"localhost", "http://localhost/feed.ics", "host localhost is a private", nil},
		{"redirect to 127.0.0.1", "http://calendar.example/?to=http://127.0.0.1/feed.ics",
			"redirected to http://127.0.0.1/feed.ics, a private", []string{publicAddr + ":80"}},
		{"redirect to 10.x", "http://calendar.example/?to=http://10.1.2.3/feed.ics",
			"redirected to http://10.1.2.3/feed.ics, a private", []string{publicAddr + ":80"}},
		{"redirect to a mapped metadata address", "http://calendar.example/?to=http://[::ffff:169.254.169.254]/",
			"redirected to http://[::ffff:169.254.169.254]/, a private", []string{publicAddr + ":80"}},
		{"redirect to a name resolving to 10.x", "http://calendar.example/?to=http://internal.example/feed.ics",
			"redirected to http://internal.example/feed.ics, whose host resolves to 10.0.0.5", []string{publicAddr + ":80"}},
		{"redirect to a public name", "http://calendar.example/?to=http://calendar.example:8080/feed.ics", "",
			[]string{publicAddr + ":80", publicAddr + ":8080"}},
	} {
		f, dialled := guarded(srv, false)
		res, err := f.Get(context.Background(), c.url, Validators{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if string(res.Body) != calendarBody {
				t.Errorf("%s: body %q", c.name, res.Body)
			}
		} else {
			wantError(t, c.name, err, ReasonBlocked, c.want, "SOURCES_ALLOW_PRIVATE")
		}
		if got := dialled(); !slices.Equal(got, c.dialled) {
			t.Errorf("%s: connected to %v, want %v", c.name, got, c.dialled)
		}

		// With private addresses allowed, every one of them is fetched.
		f, _ = guarded(srv, true)
		if _, err := f.Get(context.Background(), c.url, Validators{}); err != nil {
			t.Errorf("%s, private allowed: %v", c.name, err)
		}
	}
}

// TestAddressRulesRealDialer: without test hooks the guarded transport
// refuses a local server (on loopback) unless private addresses are
// allowed.
func TestAddressRulesRealDialer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, calendarBody)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	_, err := New(Options{}).Get(context.Background(), srv.URL, Validators{})
	wantError(t, "loopback literal", err, ReasonBlocked, "127.0.0.1")
	if _, err := New(Options{AllowPrivate: true}).Get(context.Background(), srv.URL, Validators{}); err != nil {
		t.Errorf("with AllowPrivate: %v", err)
	}
	// A name resolving to loopback, sent past the URL check to the
	// transport (as a redirect would be): refused by the dialer.
	req, _ := http.NewRequest(http.MethodGet, "http://localhost"+port, nil)
	_, err = New(Options{}).transport.RoundTrip(req)
	if !errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("localhost through the guarded transport: %v, want netguard.ErrBlocked", err)
	}
}

// TestClient: the client for other readers keeps the rules: a redirect
// to a private address is refused, a body stops at MaxBytes, and a
// request without a User-Agent gets the service's.
func TestClient(t *testing.T) {
	t.Parallel()
	var ua sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.URL.Path, r.Header.Get("User-Agent"))
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, "http://10.0.0.1/wp-json/", http.StatusFound)
		case "/big":
			w.Write(make([]byte, 3000))
		default:
			io.WriteString(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()
	f, _ := guarded(srv, false)
	f.maxBytes = 2048
	client := f.Client()

	_, err := client.Get("http://calendar.example/away")
	wantError(t, "redirect to 10.0.0.1", err, ReasonBlocked, "redirected to http://10.0.0.1/wp-json/")

	res, err := client.Get("http://calendar.example/big")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	wantError(t, "big body", err, ReasonTooLarge, "larger than 2 KiB")
	if len(b) != 2048 {
		t.Errorf("big body: read %d bytes, want 2048", len(b))
	}

	req, _ := http.NewRequest(http.MethodGet, "http://calendar.example/own", nil)
	req.Header.Set("User-Agent", "eventcal-import/test")
	for _, r := range []*http.Request{req, must(http.NewRequest(http.MethodGet, "http://calendar.example/none", nil))} {
		res, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if got, _ := ua.Load("/own"); got != "eventcal-import/test" {
		t.Errorf("a request's own User-Agent became %q", got)
	}
	if got, _ := ua.Load("/none"); got != DefaultUserAgent() {
		t.Errorf("a request without User-Agent sent %q, want %q", got, DefaultUserAgent())
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
