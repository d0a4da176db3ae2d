package webhooks

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url          string
		allowPrivate bool
		want         string // "" for accepted, else a substring of the error
	}{
		{"https://hooks.example.org/x", false, ""},
		{"http://93.184.216.34:8080/x", false, ""},
		{"http://[2606:2800:220:1:248:1893:25c8:1946]/x", false, ""},
		{"ftp://hooks.example.org/", false, "http or https"},
		{"hooks.example.org/x", false, "http or https"},
		{"https:///x", false, "no host"},
		{"http://127.0.0.1/x", false, "private"},
		{"http://127.0.0.1/x", true, ""},
		{"http://localhost:8080/", false, "private"},
		{"http://api.localhost/", false, "private"},
		{"http://LOCALHOST./", false, "private"},
		{"http://10.0.0.5/", false, "private"},
		{"http://172.16.0.1/", false, "private"},
		{"http://192.168.1.1/", false, "private"},
		{"http://169.254.169.254/latest/meta-data", false, "private"},
		{"http://100.64.0.1/", false, "private"},
		{"http://0.0.0.0/", false, "private"},
		{"http://[::1]/", false, "private"},
		{"http://[fe80::1]/", false, "private"},
		{"http://[fd00::1]/", false, "private"},
		{"http://[::ffff:10.0.0.1]/", false, "private"},
		{"http://224.0.0.1/", false, "private"},
		{"https://x.example/" + strings.Repeat("a", 2100), false, "longer"},
	}
	for _, c := range cases {
		err := CheckURL(c.url, c.allowPrivate)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.url, err, c.want)
		}
	}
}

func TestBlockedAddr(t *testing.T) {
	t.Parallel()
	for s, blocked := range map[string]bool{
		"8.8.8.8": false, "1.1.1.1": false, "2001:4860:4860::8888": false,
		"127.0.0.1": true, "127.255.0.1": true, "10.255.255.255": true, "198.18.0.1": true, "192.0.2.1": true,
		"::": true, "ff02::1": true, "64:ff9b::a00:1": true, "::ffff:127.0.0.1": true, "255.255.255.255": true,
	} {
		if got := blockedAddr(netip.MustParseAddr(s)); got != blocked {
			t.Errorf("blockedAddr(%s) = %v, want %v", s, got, blocked)
		}
	}
}

// TestDialerRefusesResolvedPrivateAddress: the check also runs on the
// address a connection actually dials, so a host name that resolves to a
// loopback address (here: "localhost" sent straight to the client,
// skipping the URL check) is refused, while the same client with
// AllowPrivate reaches it.
func TestDialerRefusesResolvedPrivateAddress(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, url := range []string{srv.URL, "http://localhost" + port} {
		_, err := newHTTPClient(5*time.Second, false).Get(url)
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("GET %s without AllowPrivate: %v, want ErrBlockedAddress", url, err)
		}
		res, err := newHTTPClient(5*time.Second, true).Get(url)
		if err != nil {
			t.Fatalf("GET %s with AllowPrivate: %v", url, err)
		}
		res.Body.Close()
	}
}

func TestRetryWait(t *testing.T) {
	t.Parallel()
	h := &Dispatcher{FirstRetry: 5 * time.Second, MaxRetryWait: time.Hour}
	for _, c := range []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 3750 * time.Millisecond, 6250 * time.Millisecond},
		{2, 7500 * time.Millisecond, 12500 * time.Millisecond},
		{5, 60 * time.Second, 100 * time.Second},
		{12, 45 * time.Minute, 75 * time.Minute},
		{64, 45 * time.Minute, 75 * time.Minute},
	} {
		for range 50 {
			if d := h.retryWait(c.attempt); d < c.min || d > c.max {
				t.Errorf("retryWait(%d) = %s, want within [%s, %s]", c.attempt, d, c.min, c.max)
			}
		}
	}
}
