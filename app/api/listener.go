package api

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
// from TRUSTED_PROXIES are not bounded) and cfg.MaxConnections in all
// (MAX_CONNECTIONS). Serve the app on it: a connection over its address's
// share is answered 429 rest_too_many_connections and closed before the
// server reads from it; at MAX_CONNECTIONS a new connection closes one that
// is not serving a request (app/connlimit; counted in
// eventcal_http_connections_closed_total), or, when every one is, is
// answered 503 rest_server_full and closed. Refusals are counted in
// eventcal_http_connections_refused_total. A refusal of a loopback or
// private address for its share, most likely a reverse proxy missing from
// TRUSTED_PROXIES, also logs a warning (at most once per proxyWarnEvery).
func (m *Metrics) Listener(ln net.Listener, cfg *config.Config) net.Listener {
	var warnAfter atomic.Int64
	return connlimit.New(ln, connlimit.Options{
		PerAddress: cfg.MaxConnectionsPerAddress,
		MaxOpen:    maxConnections(cfg),
		Trusted:    cfg.TrustedProxies,
		Answer:     tooManyConnections(cfg.MaxConnectionsPerAddress),
		FullAnswer: serverFull(),
		Closed:     func(state string) { m.m.connectionsClosed.WithLabelValues(state).Inc() },
		Refused: func(group netip.Addr) {
			m.m.connectionsRefused.Inc()
			if !group.IsValid() || !group.IsLoopback() && !group.IsPrivate() {
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

// serverFull is the complete response written to a connection refused
// because every connection is serving a request.
func serverFull() []byte {
	return connectionAnswer(503, "Service Unavailable", "rest_server_full",
		"The server is serving as many requests as it holds connections; try again shortly.")
}

// tooManyConnections is the complete response written to a refused
// connection: the error envelope, and Connection: close.
func tooManyConnections(perAddress int) []byte {
	return connectionAnswer(429, "Too Many Requests", "rest_too_many_connections",
		fmt.Sprintf("This address already holds %d open connections; close one and try again.", perAddress))
}

// connectionAnswer is a complete response in the error envelope, with
// Retry-After: 1 and Connection: close.
func connectionAnswer(status int, reason, code, message string) []byte {
	body, _ := json.Marshal(map[string]any{
		"code":    code,
		"message": message,
		"data":    map[string]any{"status": status},
	})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s", status, reason, len(body), body)
}
