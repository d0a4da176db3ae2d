package api

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/config/limits"
)

// This file keeps the HTTP layer answering under hostile input: handler
// panics, unknown methods and bodies larger than the routes need. The
// numbers are in the limits package.

// errInternal is the answer to a handler panic (WordPress's fatal-error
// answer has the same code).
func errInternal() *apierr.Error {
	return apierr.New(500, "internal_server_error", "There has been a critical error on this website.")
}

// errBodyTooLarge is the 413 of a body over limits.MaxBodyBytes.
func errBodyTooLarge() *apierr.Error {
	return apierr.New(413, "rest_request_too_large", fmt.Sprintf("The request body is larger than %d bytes.", limits.MaxBodyBytes))
}

// recoverPanics turns a panic in any later handler into a logged 500 with
// the error envelope; the process keeps serving.
func (s *Server) recoverPanics(c *fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("handler panic", "panic", fmt.Sprint(v), "method", methodLabel(c.Method()),
				"path", c.Path(), "request_id", requestID(c), "stack", string(debug.Stack()))
			err = errInternal()
		}
	}()
	return c.Next()
}

// refuseLargeBodies answers 413 to a request whose announced body is over
// limits.MaxBodyBytes, on every path, before anything reads it.
func refuseLargeBodies(c *fiber.Ctx) error {
	if announcedBodyLength(&c.Request().Header) > limits.MaxBodyBytes {
		return errBodyTooLarge()
	}
	return c.Next()
}

// headerWithheldBody marks a request whose body readHeaders withheld from
// fasthttp; its value is the Content-Length the client announced (-1:
// chunked). readHeaders removes it from every request first, so a client
// cannot send it.
const headerWithheldBody = "X-Eventcal-Withheld-Body"

// readHeaders is fasthttp's HeaderReceived hook: it runs once a request's
// line and headers are in (within HEADER_TIMEOUT, the connection's read
// deadline until then), before fasthttp reads any of the body. The body
// then gets limits.ReadTimeout of its own.
//
// An anonymous write (no Authorization header) announcing more than the
// limits.BodyPrefetchBytes fasthttp would read ahead is answered from its
// headers alone: every write route refuses anonymous callers with 401
// before looking at the body (a deliberate difference from WordPress,
// which validates first: docs/decisions.md, "Writes"), and no other route
// takes a body. Its length is cleared so that fasthttp reads none of it,
// and the connection closes after the answer, so that the unread bytes are
// never parsed as a request. A smaller body is read ahead whole, which
// costs no more than the read-ahead buffer, and keeps the connection
// usable. Writes with credentials are authenticated from their headers
// before their body is read (Server.handler).
func readHeaders(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	h.Del(headerWithheldBody)
	if anonymousBodyWrite(h) {
		h.Set(headerWithheldBody, strconv.Itoa(h.ContentLength()))
		h.Del(fiber.HeaderExpect)
		h.SetContentLength(0)
		h.SetConnectionClose()
	}
	return fasthttp.RequestConfig{ReadTimeout: limits.ReadTimeout}
}

// anonymousBodyWrite reports whether h is a write without credentials
// whose body is chunked or longer than the read-ahead. A POST that may be
// a read in disguise (X-HTTP-Method-Override or _method: methodOverride)
// is not one.
func anonymousBodyWrite(h *fasthttp.RequestHeader) bool {
	if n := h.ContentLength(); n != -1 && n <= limits.BodyPrefetchBytes {
		return false
	}
	if len(h.Peek(fiber.HeaderAuthorization)) > 0 {
		return false
	}
	switch string(h.Method()) {
	case fiber.MethodPost:
		return len(h.Peek("X-HTTP-Method-Override")) == 0 && !bytes.Contains(h.RequestURI(), []byte("_method="))
	case fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete:
		return true
	}
	return false
}

// announcedBodyLength is the Content-Length the client sent (-1 for a
// chunked body, 0 for none), whether or not readHeaders withheld the body.
func announcedBodyLength(h *fasthttp.RequestHeader) int {
	if v := h.Peek(headerWithheldBody); len(v) > 0 {
		n, _ := strconv.Atoi(string(v))
		return n
	}
	return h.ContentLength()
}

// answerUnknownMethods answers methods Fiber does not route (PROPFIND...)
// with the rest_no_route envelope, logged like every request, instead of
// Fiber's text/plain 400 written before any middleware runs.
func (s *Server) answerUnknownMethods(f *fiber.App) {
	srv := f.Server()
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if knownMethod(fctx.Method()) {
			next(fctx)
			return
		}
		c := f.AcquireCtx(fctx)
		defer f.ReleaseCtx(c)
		s.observe(c, s.metrics, func() error { return apierr.NoRoute() })
	}
}

// knownMethod reports whether Fiber routes the method.
func knownMethod(m []byte) bool {
	for _, k := range fiber.DefaultMethods {
		if string(m) == k {
			return true
		}
	}
	return false
}

// localBodyRead is the c.Locals key set once bodyRead consumed the body.
const localBodyRead = "body-read"

// closeIfBodyUnread closes the connection after a request whose body was
// announced but not read (refused with 413, or a route that takes no
// body): the unread bytes must not be parsed as the next request.
func closeIfBodyUnread(c *fiber.Ctx) {
	if c.Request().Header.ContentLength() == 0 {
		return
	}
	if read, _ := c.Locals(localBodyRead).(bool); read {
		return
	}
	if c.Context().RequestBodyStream() != nil {
		c.Context().SetConnectionClose()
	}
}
