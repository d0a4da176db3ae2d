package app

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/config"
)

// Listener returns ln bounded to cfg.MaxConnectionsPerAddress open
// connections per client address (MAX_CONNECTIONS_PER_ADDRESS; connections
// from TRUSTED_PROXIES are not bounded). Serve the app on it: a connection
// over the share is answered 429 rest_too_many_connections and closed
// before the server reads from it, and counted in
// eventcal_http_connections_refused_total.
func (m *Metrics) Listener(ln net.Listener, cfg *config.Config) net.Listener {
	return connlimit.New(ln, connlimit.Options{
		PerAddress: cfg.MaxConnectionsPerAddress,
		Trusted:    cfg.TrustedProxies,
		Answer:     tooManyConnections(cfg.MaxConnectionsPerAddress),
		Refused:    m.m.connectionsRefused.Inc,
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
