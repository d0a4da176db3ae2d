package api_test

import (
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/config/testdeadline"
)

// metricOf reads one series from a Metrics registry (0 when absent).
func metricOf(t *testing.T, m *api.Metrics, series string) float64 {
	t.Helper()
	res, err := m.App().Test(httptest.NewRequest("GET", "/metrics", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	v, _ := metricValue(string(b), series)
	return v
}

// TestPromptClientServedAmongTricklers (issue 30, finding 6): with
// MAX_CONNECTIONS at 64 and connections from seventeen addresses
// (127.0.1.1 to 127.0.1.17, eight each at most) that send their request's
// headers a byte at a time and never finish them, redialling whenever
// they are closed, a client sending whole requests promptly from another
// address is served: each of its connections takes the place of a
// trickling one (the address holding the most goes first), and none is
// refused. Before, the slots were first come, first served: at the limit
// every new connection was refused with 503 until a trickler gave up.
// Nothing here is timed: the trickling pace only keeps the slots full.
func TestPromptClientServedAmongTricklers(t *testing.T) {
	const slots, addresses, perAddress, prompt = 64, 17, 8, 15
	e := newEnv(t, "MAX_CONNECTIONS", fmt.Sprint(slots), "MAX_CONNECTIONS_PER_ADDRESS", fmt.Sprint(perAddress), "HEADER_TIMEOUT", "1m")
	metrics := api.NewMetrics(nil, nil)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := metrics.Listener(raw, e.cfg)
	done := make(chan error, 1)
	go func() { done <- e.app.Listener(ln) }()
	stop := make(chan struct{})
	var tricklers sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		tricklers.Wait()
		_ = e.app.ShutdownWithTimeout(5 * time.Second)
		<-done
	})
	addr := raw.Addr().String()
	limited := ln.(*connlimit.Listener)

	// The tricklers: each keeps one connection open from its address,
	// sending one more header byte a tick, and dials again once closed.
	for a := 1; a <= addresses; a++ {
		from := &net.TCPAddr{IP: net.ParseIP(fmt.Sprintf("127.0.1.%d", a))}
		for range perAddress {
			tricklers.Add(1)
			go func() {
				defer tricklers.Done()
				d := net.Dialer{LocalAddr: from}
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				var c net.Conn
				defer func() {
					if c != nil {
						c.Close()
					}
				}()
				for {
					if c == nil {
						if nc, err := d.Dial("tcp", addr); err == nil {
							c = nc
							_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
							if err != nil {
								c.Close()
								c = nil
							}
						}
					} else if _, err := io.WriteString(c, "a"); err != nil {
						c.Close()
						c = nil
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
		}
	}
	deadline := testdeadline.Of(t)
	for limited.Total() < slots {
		if time.Now().After(deadline) {
			t.Fatalf("the tricklers hold %d of %d slots", limited.Total(), slots)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := 0
	for a := 1; a <= addresses; a++ {
		held += limited.Open(netip.AddrFrom4([4]byte{127, 0, 1, byte(a)}))
	}
	t.Logf("the tricklers hold %d of %d slots", held, slots)

	// The prompt client: whole requests, one connection each.
	statuses := map[string]int{}
	for range prompt {
		statuses[promptRequest(t, addr)]++
	}
	t.Logf("prompt client: %v; closed to make room: new %v, sending %v, idle %v; refused %v", statuses,
		metricOf(t, metrics, `eventcal_http_connections_closed_total{state="new"}`),
		metricOf(t, metrics, `eventcal_http_connections_closed_total{state="sending"}`),
		metricOf(t, metrics, `eventcal_http_connections_closed_total{state="idle"}`),
		metricOf(t, metrics, "eventcal_http_connections_refused_total"))
	if statuses["200"] < prompt-1 || statuses["503"] > 0 {
		t.Errorf("prompt client: %v; want at least %d of %d answered 200, none 503", statuses, prompt-1, prompt)
	}
	if limited.Total() > slots {
		t.Errorf("%d connections open, bound %d", limited.Total(), slots)
	}
}

// promptRequest sends one whole request on a new connection from
// 127.0.0.1 and returns the status, or what went wrong.
func promptRequest(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(testdeadline.Of(t))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return "write: " + err.Error()
	}
	b, err := io.ReadAll(c)
	line, _, _ := strings.Cut(string(b), "\r\n")
	if f := strings.Fields(line); len(f) >= 2 {
		return f[1]
	}
	return fmt.Sprintf("no answer (%v)", err)
}
