package app

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
)

// TestServedConnectionShare: the service as started bounds the
// connections per client address (MAX_CONNECTIONS_PER_ADDRESS) on its API
// listener, and counts the refusals in the /metrics it serves.
func TestServedConnectionShare(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATA_DIR": t.TempDir(), "LISTEN_ADDR": "127.0.0.1:0", "ADMIN_TOKEN": "ops-token",
		"DRAIN_DELAY": "0", "MAX_CONNECTIONS_PER_ADDRESS": "2", "HEADER_TIMEOUT": "1m"}
	addr, _ := startServing(t, env)
	// get sends one request on c and returns the status and body.
	get := func(c net.Conn, path, token string) (int, string) {
		t.Helper()
		_ = c.SetDeadline(testdeadline.Of(t))
		auth := ""
		if token != "" {
			auth = "Authorization: Bearer " + token + "\r\n"
		}
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path, auth); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	dialFrom := func(ip string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	for i := range 2 {
		if st, _ := get(dialFrom("127.0.0.1"), "/healthz", ""); st != 200 {
			t.Fatalf("connection %d within the share: %d", i+1, st)
		}
	}
	over := dialFrom("127.0.0.1")
	_ = over.SetReadDeadline(testdeadline.Of(t))
	res, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil {
		t.Fatalf("connection over the share: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 429 || !strings.Contains(string(b), `"code":"rest_too_many_connections"`) {
		t.Fatalf("connection over the share: %d %s", res.StatusCode, b)
	}
	st, metrics := get(dialFrom("127.0.0.2"), "/metrics", "ops-token")
	if st != 200 || !strings.Contains(metrics, "\neventcal_http_connections_refused_total 1\n") {
		t.Errorf("metrics from another address: %d, refusals line missing:\n%s", st, metrics)
	}
}
