package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/config"
)

// Listener returns ln bounded to cfg.MaxConnectionsPerAddress open
// connections per client address (MAX_CONNECTIONS_PER_ADDRESS; connections
// from TRUSTED_PROXIES are not bounded). Serve the app on it: a connection
// over the share is answered 429 rest_too_many_connections and closed
// before the server reads from it, and counted in
// eventcal_http_connections_refused_total. A refusal of a loopback or
// private address, most likely a reverse proxy missing from
// TRUSTED_PROXIES, also logs a warning (at most once per proxyWarnEvery).
func (m *Metrics) Listener(ln net.Listener, cfg *config.Config) net.Listener {
	var warnAfter atomic.Int64
	return connlimit.New(ln, connlimit.Options{
		PerAddress: cfg.MaxConnectionsPerAddress,
		Trusted:    cfg.TrustedProxies,
		Answer:     tooManyConnections(cfg.MaxConnectionsPerAddress),
		Refused: func(group netip.Addr) {
			m.m.connectionsRefused.Inc()
			if !group.IsLoopback() && !group.IsPrivate() {
				return
			}
			now := time.Now().UnixNano()
			next := warnAfter.Load()
			if now < next || !warnAfter.CompareAndSwap(next, now+int64(proxyWarnEvery)) {
				return
			}
			m.m.log.Warn("refused a connection from a private address over MAX_CONNECTIONS_PER_ADDRESS: "+
				"if it is a reverse proxy, set TRUSTED_PROXIES to its address (a trusted proxy's connections are not bounded, "+
				"and the clients it forwards are told apart by X-Forwarded-For)",
				slog.String("address", group.String()),
				slog.Int("max_connections_per_address", cfg.MaxConnectionsPerAddress),
				slog.String("repeats_after", proxyWarnEvery.String()))
		},
	})
}

// tooManyConnections is the complete response written to a refused
// connection: the error envelope, and Connection: close.
func tooManyConnections(perAddress int) []byte {
	body, _ := json.Marshal(map[string]any{
		"code":    "rest_too_many_connections",
		"message": fmt.Sprintf("This address already holds %d open connections; close one and try again.", perAddress),
		"data":    map[string]any{"status": 429},
	})
	return fmt.Appendf(nil, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", len(body), body)
}
