package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/config"
)

// answer is one service's answer to one request.
type answer struct {
	status int
	// ctype is the Content-Type header.
	ctype string
	// totals are the list headers compared besides the body
	// (X-WP-Total, X-WP-TotalPages and their X-TEC- twins).
	totals map[string]string
	body   []byte
	// overCap is set when the body was longer than Options.MaxBody: body
	// holds its first MaxBody bytes and is not compared.
	overCap bool
}

// comparedHeaders are the headers compared besides Content-Type: the
// list totals. Others (Date, ETag of a cache, instance and timing
// headers) legitimately differ between two services.
var comparedHeaders = []string{"X-WP-Total", "X-WP-TotalPages", "X-TEC-Total", "X-TEC-TotalPages"}

// UnreachableError is a service that could not be asked: a network
// error, a timeout, or an answer that is not this API's (a wrong URL or
// API root). Compare returns it (wrapped) and stops: a comparison with
// one side missing says nothing.
type UnreachableError struct {
	// Side is "from" or "against"; URL the request's address.
	Side, URL string
	Err       error
}

// Error says which service, where, and why.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s service at %s: %v", e.Side, e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// side is one of the two services with its settings.
type side struct {
	name string // "from" or "against"
	base string // the API root's URL, without a trailing slash
	http *http.Client
	// own is the transport of a client Compare made (nil for the
	// caller's): its idle connections are closed at the end.
	own *http.Transport
}

// close releases the idle connections of Compare's own client.
func (s *side) close() {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
}

// retryable reports whether an answer's status is worth asking again:
// the service is overloaded or restarting (429, 502, 503, 504).
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusBadGateway ||
		status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// maxRetryWait bounds how long one retry waits (a longer Retry-After is
// cut to it).
const maxRetryWait = 5 * time.Second

// get asks s for path?query as reader (token "" = anonymous), within
// opts' timeout and body cap, retrying network errors and overload
// answers (429, 502-504) opts.Retries times with a growing pause. A
// network error left after the retries is an *UnreachableError; an
// overload answer left is returned as the answer (and compared).
func (c *comparer) get(ctx context.Context, s *side, path string, query url.Values, token string) (*answer, error) {
	return c.getCapped(ctx, s, path, query, token, c.opts.MaxBody)
}

// getCapped is get with another cap on the body.
func (c *comparer) getCapped(ctx context.Context, s *side, path string, query url.Values, token string, maxBody int64) (*answer, error) {
	target := s.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		c.requests.Add(1)
		f, err := c.getOnce(ctx, s, target, token, maxBody)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil && (!retryable(f.status) || attempt >= c.opts.Retries) {
			return f.answer, nil
		}
		if err != nil {
			lastErr = err
			if attempt >= c.opts.Retries {
				return nil, &UnreachableError{Side: s.name, URL: target, Err: lastErr}
			}
		}
		wait := time.Duration(attempt+1) * c.opts.RetryPause
		if f != nil && f.retryAfter > 0 {
			wait = min(f.retryAfter, maxRetryWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// fetched is an answer with what get needs to retry it.
type fetched struct {
	*answer
	retryAfter time.Duration
}

// getOnce sends one GET.
func (c *comparer) getOnce(ctx context.Context, s *side, target, token string, maxBody int64) (*fetched, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", config.UserAgent("verify"))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	a := &answer{status: res.StatusCode, ctype: res.Header.Get("Content-Type"), body: body}
	if int64(len(body)) > maxBody {
		a.body, a.overCap = body[:maxBody], true
	}
	for _, h := range comparedHeaders {
		if v := res.Header.Get(h); v != "" {
			if a.totals == nil {
				a.totals = map[string]string{}
			}
			a.totals[h] = v
		}
	}
	f := &fetched{answer: a}
	if secs, err := strconv.Atoi(strings.TrimSpace(res.Header.Get("Retry-After"))); err == nil && secs >= 0 {
		f.retryAfter = time.Duration(secs) * time.Second
	}
	return f, nil
}

// errNotAPI is an answer to the namespace index that is not this API's.
var errNotAPI = errors.New("the namespace index is not this API's")
