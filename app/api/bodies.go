package api

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// This file reads request bodies: as they arrive, within the memory the
// process and each caller may hold (BODY_MEMORY_MIB,
// BODY_MEMORY_PER_CALLER_MIB), and charging writes to the write rate for
// the bytes actually read (writeCharge), before anything parses them.

// bodyGrain is the smallest step by which a body's buffer grows (and is
// charged to the memory budget), for bodies whose length is not announced
// or is larger.
const bodyGrain = 32 << 10

// bodyRetryAfter is the Retry-After, in seconds, of a body refused for
// memory: bodies in flight end within limits.ReadTimeout, most much sooner.
const bodyRetryAfter = 1

// bodyBudget bounds the bytes of request bodies the process holds at once,
// in all and per caller, so that slow or stalled bodies cannot take the
// process's memory whatever the caller's role (editors and admins, whom
// the write rate does not bound, included). A body holds its buffer's
// capacity from the moment it is grown until its request is answered.
type bodyBudget struct {
	total, perCaller int64
	// inUse is eventcal_request_body_bytes; refused counts refusals by
	// bound (eventcal_request_bodies_refused_total).
	inUseGauge prometheus.Gauge
	refused    *prometheus.CounterVec

	mu      sync.Mutex
	inUse   int64
	callers map[string]int64
}

// newBodyBudget returns the budget of total bytes, perCaller of them for
// one caller, or nil (no bound) when total is 0. The metrics may be nil.
func newBodyBudget(total, perCaller int64, inUse prometheus.Gauge, refused *prometheus.CounterVec) *bodyBudget {
	if total <= 0 {
		return nil
	}
	if perCaller <= 0 || perCaller > total {
		perCaller = total
	}
	return &bodyBudget{total: total, perCaller: perCaller, inUseGauge: inUse, refused: refused, callers: map[string]int64{}}
}

// take reserves n bytes for caller, or reserves nothing and returns the
// error to answer: 429 rest_too_many_bodies when the caller's share would
// be passed, 503 rest_bodies_busy when the process's would.
func (b *bodyBudget) take(caller string, n int64) *apierr.Error {
	if b == nil || n <= 0 {
		return nil
	}
	b.mu.Lock()
	held := b.callers[caller]
	var bound string
	switch {
	case held+n > b.perCaller:
		bound = "caller"
	case b.inUse+n > b.total:
		bound = "process"
	default:
		b.callers[caller] = held + n
		b.inUse += n
		if b.inUseGauge != nil {
			b.inUseGauge.Set(float64(b.inUse))
		}
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	if b.refused != nil {
		b.refused.WithLabelValues(bound).Inc()
	}
	if bound == "caller" {
		return apierr.New(429, "rest_too_many_bodies",
			"This caller is already sending "+strconv.FormatInt(b.perCaller>>10, 10)+
				" KiB of request bodies, as much as one caller may at once; finish or close those requests and try again.").
			With("retry_after", bodyRetryAfter)
	}
	return apierr.New(503, "rest_bodies_busy",
		"The server is holding as many request bodies as it may at once; try again shortly.").
		With("retry_after", bodyRetryAfter)
}

// give returns n bytes of caller's.
func (b *bodyBudget) give(caller string, n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.callers[caller] -= n; b.callers[caller] <= 0 {
		delete(b.callers, caller)
	}
	b.inUse -= n
	if b.inUseGauge != nil {
		b.inUseGauge.Set(float64(b.inUse))
	}
}

// held returns the bytes reserved now, in all and by caller.
func (b *bodyBudget) held(caller string) (total, byCaller int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inUse, b.callers[caller]
}

// bodyCaller names whose share a request's body counts against: the
// account of an authenticated write, else the client's address (its /64
// for IPv6).
func bodyCaller(c *fiber.Ctx, user *repository.User, trusted []netip.Prefix) string {
	if user != nil {
		return "user:" + strconv.FormatInt(user.ID, 10)
	}
	a, err := netip.ParseAddr(clientAddr(c, trusted))
	if err == nil && a.Is6() {
		p, _ := a.Prefix(64)
		a = p.Addr()
	}
	return "addr:" + a.String()
}

// bodyRead reads one request's body within the budget and the write rate.
// Call release once the request is answered.
type bodyRead struct {
	budget *bodyBudget
	caller string
	// charge is the write's account with the write rate (nil: not
	// rate-limited).
	charge *writeCharge
	// held is the bytes reserved in budget.
	held int64
}

// read returns the request body, at most limits.MaxBodyBytes: a larger
// announced length is refused before reading, a longer chunked body once
// it passes the limit. The buffer grows as the bytes arrive (never to the
// announced length before they do), each growth reserved in the budget
// first, and the write is charged for the bytes read after each read; the
// first refusal ends the read (the connection then closes: the rest of the
// body is never read). Bodies are streamed (app.New), so nothing was
// reserved for the announced length before this point.
func (r *bodyRead) read(c *fiber.Ctx) ([]byte, error) {
	req := c.Request()
	announced := req.Header.ContentLength()
	if announced > limits.MaxBodyBytes {
		return nil, errBodyTooLarge()
	}
	var src io.Reader = c.Context().RequestBodyStream()
	if src == nil {
		// No stream: the body, if any, is in hand (a request without
		// Content-Length or chunking has none).
		body := req.Body()
		src, announced = &byteSource{b: body}, len(body)
	}
	var buf []byte
	if announced != 0 {
		for {
			if len(buf) == cap(buf) {
				if announced >= 0 && len(buf) >= announced {
					break
				}
				if len(buf) >= limits.MaxBodyBytes {
					// Full at the limit: one more byte is one too many.
					var one [1]byte
					n, err := src.Read(one[:])
					if n > 0 {
						return nil, errBodyTooLarge()
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						return nil, bodyReadError(err)
					}
					continue
				}
				target := limits.MaxBodyBytes
				if announced >= 0 {
					target = announced
				}
				grown := min(max(2*cap(buf), bodyGrain), target)
				if e := r.budget.take(r.caller, int64(grown-cap(buf))); e != nil {
					return nil, withRetryAfter(c, e)
				}
				r.held += int64(grown - cap(buf))
				next := make([]byte, len(buf), grown)
				copy(next, buf)
				buf = next
			}
			n, err := src.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if n > 0 {
				if e := r.charge.read(len(buf)); e != nil {
					return nil, withRetryAfter(c, e)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, bodyReadError(err)
			}
		}
	}
	c.Locals(localBodyRead, true)
	// The request is complete: its connection is serving it now, and is
	// not closed to make room for another (connlimit).
	connlimit.Serving(c.Context().Conn())
	return buf, nil
}

// release returns the request's bytes to the budget.
func (r *bodyRead) release() {
	r.budget.give(r.caller, r.held)
	r.held = 0
}

// bodyReadError is the answer to a body that could not be read: 408 when
// it did not arrive in time, else 400.
func bodyReadError(err error) *apierr.Error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return apierr.New(408, "rest_request_timeout", "The request body was not received in time.")
	}
	return apierr.New(400, "rest_invalid_body", "The request body could not be read.")
}

// withRetryAfter sets Retry-After from e's data.retry_after and returns e.
func withRetryAfter(c *fiber.Ctx, e *apierr.Error) *apierr.Error {
	if secs, ok := e.Data["retry_after"].(int); ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	}
	return e
}

// byteSource reads a body already in hand, ending with io.EOF.
type byteSource struct{ b []byte }

func (s *byteSource) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}
