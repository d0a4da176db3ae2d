package api

import (
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

// localRequestID is the c.Locals key of the request ID (see requestID).
const localRequestID = "request-id"

// maxRequestIDLen bounds a client-sent X-Request-ID; longer ones are
// replaced, not truncated, so that a kept ID is always the client's own.
const maxRequestIDLen = 128

// observeRequests is the first middleware of the app. It gives the request
// an ID (the client's X-Request-ID when usable, else a new UUID), echoes it
// in X-Request-ID, runs the chain, lets the error handler write any error
// (so that the final status is known), then records the request: one sample
// of eventcal_http_request_duration_seconds and exactly one log line
//
//	msg=request method=GET route=/calendar/events/v1/events/:id
//	path=/calendar/events/v1/events/7 status=200 duration_ms=1.234 request_id=...
//
// route is the route pattern, never the raw path (see appMetrics.routeLabel);
// duration_ms is fractional milliseconds, as in the sync worker's lines.
func (s *Server) observeRequests(m *appMetrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		s.observe(c, m, c.Next)
		return nil
	}
}

// observe runs next as one observed request (see observeRequests). The
// HTTP-layer error paths that bypass the middleware chain (unknown
// methods, bodies and headers refused by the server) call it too, so that
// every answer has an ID, a log line and a sample.
func (s *Server) observe(c *fiber.Ctx, m *appMetrics, next func() error) {
	// The injected clock (s.now) is a calendar clock; durations use the
	// monotonic one.
	start := time.Now()
	id := sanitizeRequestID(c.Get(fiber.HeaderXRequestID))
	if id == "" {
		id = uuid.NewString()
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	// Read before the chain: rewriteLanguagePrefix changes c.Path().
	path := strings.Clone(c.Path())
	m.inFlight.Inc()
	defer m.inFlight.Dec()

	if chainErr := next(); chainErr != nil {
		if err := c.App().ErrorHandler(c, chainErr); err != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	closeIfBodyUnread(c)

	elapsed := time.Since(start)
	method, route, status := methodLabel(c.Method()), m.routeLabel(c), c.Response().StatusCode()
	m.observe(method, route, status, elapsed.Seconds())
	level := slog.LevelInfo
	if probePaths[path] {
		level = slog.LevelDebug
	}
	userID, _ := c.Locals(localUserID).(int64)
	attrs := []slog.Attr{
		slog.String("method", method),
		slog.String("route", route),
		slog.String("path", path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("request_id", id),
		slog.String("client", clientAddr(c, s.cfg.TrustedProxies)),
		slog.String("user_agent", logText(c.Get(fiber.HeaderUserAgent), maxUserAgentLog)),
		slog.Int64("user_id", userID),
	}
	if code, _ := c.Locals(localErrorCode).(string); code != "" {
		attrs = append(attrs, slog.String("code", code))
	}
	s.log.LogAttrs(c.UserContext(), level, "request", attrs...)
	s.warnUntrustedProxy(c)
}

// localErrorCode is the c.Locals key of the API error code of an error
// response (its envelope's "code"), which the request line logs.
const localErrorCode = "error-code"

// proxyWarnEvery is how often at most the untrusted-proxy warning is
// logged (see warnUntrustedProxy).
const proxyWarnEvery = time.Hour

// warnUntrustedProxy logs a warning, at most once per proxyWarnEvery, when
// a request carries X-Forwarded-For, Forwarded or X-Real-IP from a peer
// that is not in TRUSTED_PROXIES: the service is most likely behind a
// reverse proxy it does not know, so every client is counted as the proxy
// (one share of MAX_CONNECTIONS_PER_ADDRESS for all of them, which then
// answers 429) and logged with the proxy's address.
func (s *Server) warnUntrustedProxy(c *fiber.Ctx) {
	header := ""
	for _, h := range []string{fiber.HeaderXForwardedFor, "Forwarded", "X-Real-IP"} {
		if len(c.Request().Header.Peek(h)) > 0 {
			header = h
			break
		}
	}
	if header == "" {
		return
	}
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if isTrusted(peer, s.cfg.TrustedProxies) {
		return
	}
	now := s.now().UnixNano()
	next := s.proxyWarnAfter.Load()
	if now < next || !s.proxyWarnAfter.CompareAndSwap(next, now+int64(proxyWarnEvery)) {
		return
	}
	s.log.Warn("a request came through a proxy that is not trusted: running behind a reverse proxy? "+
		"Set TRUSTED_PROXIES to its address, or every client counts as the proxy: they share one "+
		"MAX_CONNECTIONS_PER_ADDRESS share (429 once it is full) and are logged with its address",
		slog.String("peer", peer.String()),
		slog.String("header", header),
		slog.Int("max_connections_per_address", s.cfg.MaxConnectionsPerAddress),
		slog.String("repeats_after", proxyWarnEvery.String()))
}

// probePaths are the health and metrics routes: probes call them every
// few seconds, so their request lines are logged at debug level.
var probePaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// localUserID is the c.Locals key of the authenticated caller's ID (0 for
// anonymous requests), for the request log.
const localUserID = "user-id"

// maxUserAgentLog bounds the user agent written to a log line.
const maxUserAgentLog = 256

// logText copies s for a log line: at most n bytes, control characters
// replaced, so a client cannot forge or flood log lines.
func logText(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
}

// clientAddr is the client's address: the connection's peer, or, when the
// peer is a trusted proxy, the last address in X-Forwarded-For that is not
// itself a trusted proxy (the right-most untrusted hop: addresses left of
// it were written by the client and cannot be believed).
func clientAddr(c *fiber.Ctx, trusted []netip.Prefix) string {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer.String()
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if a = a.Unmap(); !isTrusted(a, trusted) {
			return a.String()
		}
	}
	return peer.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// requestID returns the ID observeRequests gave the request ("" outside it),
// for log lines about the request (the error handler's).
func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// sanitizeRequestID returns a copy of a client-sent request ID when it is
// 1 to maxRequestIDLen printable ASCII characters without spaces, else "".
// Anything else (control characters, spaces, non-ASCII) is replaced by a
// new ID rather than echoed into response headers and log lines.
func sanitizeRequestID(id string) string {
	if id == "" || len(id) > maxRequestIDLen {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return ""
		}
	}
	// c.Get aliases request memory; the ID outlives the handler chain.
	return strings.Clone(id)
}
