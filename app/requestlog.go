package app

import (
	"log/slog"
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

	if chainErr := next(); chainErr != nil {
		if err := c.App().ErrorHandler(c, chainErr); err != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	closeIfBodyUnread(c)

	elapsed := time.Since(start)
	method, route, status := methodLabel(c.Method()), m.routeLabel(c), c.Response().StatusCode()
	m.observe(method, route, status, elapsed.Seconds())
	s.log.LogAttrs(c.UserContext(), slog.LevelInfo, "request",
		slog.String("method", method),
		slog.String("route", route),
		slog.String("path", path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("request_id", id),
	)
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
