package wpimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/calendar/eventcal/config"
)

// maxBody bounds one response body: a page of 50 events with long
// descriptions is a few MiB at most; a source that sends more is refused
// rather than read into memory.
const maxBody = 64 << 20

// errTooMuch is a response larger than maxBody.
var errTooMuch = errors.New("the source sent too much")

// ErrTooLarge is the cause (errors.Is) of an error of a response larger
// than the bound of one response.
var ErrTooLarge = errTooMuch

// causeError is an error with a message of its own and a cause.
type causeError struct {
	msg   string
	cause error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }

// StatusError is an answer of the source with an HTTP status the read
// could not use (after the retries, for 429 and 5xx).
type StatusError struct {
	// Status is the answer's HTTP status.
	Status int
	msg    string
}

func (e *StatusError) Error() string { return e.msg }

// maxRetryAfter bounds how long a Retry-After header may make the client
// wait before one retry.
const maxRetryAfter = 5 * time.Minute

// client reads the source's REST API: one request at a time, at most
// rate requests a second, retrying timeouts, 429 and 5xx with backoff.
// The credentials are sent as HTTP Basic and never appear in its errors
// or logs (its URLs carry none: Options.Source may not hold user info).
type client struct {
	root     *url.URL // the TEC namespace root
	wpRoot   *url.URL // the wp/v2 root derived from it, nil if none
	user     string
	password string
	http     *http.Client
	limiter  *rate.Limiter
	retries  int
	base     time.Duration
	logger   *slog.Logger
	// caps bound the run (requests, bytes, pages); a zero field is no
	// bound (Run always sets every one).
	caps Caps
	// redact makes the source's text safe to print.
	redact *redactor
	// hold counts bytes the run holds (importRun.hold); nil: not counted.
	holdFn func(n int64) error
	// requests counts the requests sent (retries included).
	requests int
	// bytes counts the body bytes read.
	bytes int64
	// public reads as an anonymous visitor reads a partner's calendar
	// (ReadPublic): the events list in the source's default window
	// (upcoming events), and a page without its list is an error.
	public bool
	// maxBody bounds one response body (0: maxBody).
	maxBody int64
	// urlName names the URL the caller gave, for messages ("" is
	// "--from").
	urlName string
	// userAgent is the User-Agent of every request ("": the import's,
	// eventcal-import/<version>); clientAgent leaves it to the HTTP
	// client (a source's fetcher names the service its own way).
	userAgent   string
	clientAgent bool
	// permanent reports a transport error a retry cannot mend (nil:
	// every transport error is retried).
	permanent func(error) bool
}

// sending is how a client sends, as Options and PublicOptions give it:
// zero values take the defaults they document.
type sending struct {
	http      *http.Client
	rate      float64
	retries   int
	retryBase time.Duration
	timeout   time.Duration
	logger    *slog.Logger
}

// newClient is the client of a run (Run) or a read (ReadPublic) of the
// namespace root with caps: s's zero values filled (an HTTP client with
// the timeout, DefaultTimeout when none, that follows redirects only
// within the source's origin; DefaultRate, a negative rate no limit;
// DefaultRetries, negative retries none; a first backoff wait of 1 s; a
// logger that discards).
func newClient(root *url.URL, caps Caps, s sending) *client {
	c := &client{root: root, caps: caps, http: s.http, retries: s.retries, base: s.retryBase, logger: s.logger}
	if c.http == nil {
		timeout := s.timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		c.http = &http.Client{Timeout: timeout, CheckRedirect: sameOrigin}
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case s.rate == 0:
		c.limiter = rate.NewLimiter(DefaultRate, 1)
	case s.rate < 0:
		c.limiter = rate.NewLimiter(rate.Inf, 1)
	default:
		c.limiter = rate.NewLimiter(rate.Limit(s.rate), 1)
	}
	switch {
	case s.retries == 0:
		c.retries = DefaultRetries
	case s.retries < 0:
		c.retries = 0
	}
	if c.base <= 0 {
		c.base = time.Second
	}
	return c
}

// bodyLimit is the bound of one response body.
func (c *client) bodyLimit() int64 {
	if c.maxBody > 0 {
		return c.maxBody
	}
	return maxBody
}

// givenURL names the URL the caller gave, for messages.
func (c *client) givenURL() string {
	if c.urlName != "" {
		return c.urlName
	}
	return "--from"
}

// hold counts n bytes held by the run.
func (c *client) hold(n int64) error {
	if c.holdFn == nil {
		return nil
	}
	return c.holdFn(n)
}

// response is one answer of the source.
type response struct {
	status int
	header http.Header
	body   []byte
}

// apiError is the WordPress error envelope.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// code returns the WordPress error code of the response ("" when none).
func (r *response) code() string {
	var e apiError
	if json.Unmarshal(r.body, &e) == nil {
		return e.Code
	}
	return ""
}

// describe is the status and WordPress error of a failed response, for
// messages: "HTTP 400 rest_invalid_param: Invalid parameter(s): id". The
// source's text is shown through the redactor: no credential, no control
// character, bounded.
func (c *client) describe(r *response) string {
	var e apiError
	_ = json.Unmarshal(r.body, &e)
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d", r.status)
	}
	return fmt.Sprintf("HTTP %d %s: %s", r.status, c.redact.text(e.Code), c.redact.text(e.Message))
}

var errCredentialsInURL = errors.New("--from must not hold credentials: pass them with --user and --app-password (or TEC_IMPORT_USER and TEC_IMPORT_APP_PASSWORD)")

// CheckSource checks a --from URL as Run does, so that a command line can
// refuse it before it opens the store.
func CheckSource(raw string) error {
	_, err := parseSource(raw)
	return err
}

// parseSource checks the --from URL: http or https, no user info (the
// credentials have their own flags and must never be echoed with a URL),
// no query. It returns the root without a trailing slash.
func parseSource(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		authority, _, _ := strings.Cut(rest, "/")
		if strings.Contains(authority, "@") {
			return nil, errCredentialsInURL
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--from must be the http(s) URL of the REST namespace, such as https://example.org/wp-json/tribe/events/v1")
	}
	if u.User != nil {
		return nil, errCredentialsInURL
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("--from must be the namespace root without a query, such as https://example.org/wp-json/tribe/events/v1")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// wpRootOf derives WordPress's own REST root (.../wp-json/wp/v2) from the
// TEC namespace root (.../wp-json/tribe/events/v1), or nil when the path
// does not end in the namespace.
func wpRootOf(root *url.URL) *url.URL {
	const ns = "/tribe/events/v1"
	if !strings.HasSuffix(root.Path, ns) {
		return nil
	}
	u := *root
	u.Path = strings.TrimSuffix(root.Path, ns) + "/wp/v2"
	return &u
}

// get requests path (relative to root) with the query and returns the
// answer, whatever its status; err is a transport failure that outlived
// the retries. Statuses 429 and 5xx are retried too.
func (c *client) get(ctx context.Context, root *url.URL, path string, q url.Values) (*response, error) {
	u := *root
	u.Path = root.Path + path
	u.RawQuery = encodeQuery(q)
	var lastErr error
	for attempt := 0; ; attempt++ {
		if c.caps.Requests > 0 && c.requests >= c.caps.Requests {
			return nil, &CapError{Cap: CapRequests, Limit: int64(c.caps.Requests), Where: "the run's requests"}
		}
		if err := c.limiter.Wait(ctx); err != nil {
			return nil, err
		}
		res, err := c.once(ctx, &u)
		c.requests++
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var capErr *CapError
		if errors.As(err, &capErr) {
			return nil, capErr
		}
		wait := c.backoff(attempt)
		switch {
		case err != nil:
			lastErr = &causeError{msg: fmt.Sprintf("GET %s: %s", c.redact.text(shownURL(&u)), c.redact.text(scrub(err).Error())), cause: err}
			if c.permanent != nil && c.permanent(err) {
				return nil, lastErr
			}
		case res.status == http.StatusTooManyRequests || res.status >= 500:
			lastErr = &StatusError{Status: res.status, msg: fmt.Sprintf("GET %s: %s", c.redact.text(shownURL(&u)), c.describe(res))}
			if ra, ok := retryAfter(res.header.Get("Retry-After"), time.Now()); ok {
				wait = ra
			}
		default:
			return res, nil
		}
		if errors.Is(err, errTooMuch) {
			return nil, &causeError{msg: lastErr.Error(), cause: errTooMuch} // a retry would read it again
		}
		if attempt >= c.retries {
			return nil, fmt.Errorf("%w (gave up after %d attempts)", lastErr, attempt+1)
		}
		c.logger.Warn("source request failed; retrying", "err", lastErr.Error(), "attempt", attempt+1, "wait", wait.String())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// once sends one request.
func (c *client) once(ctx context.Context, u *url.URL) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	switch {
	case c.clientAgent:
	case c.userAgent != "":
		req.Header.Set("User-Agent", c.userAgent)
	default:
		req.Header.Set("User-Agent", config.UserAgent("import"))
	}
	if c.user != "" || c.password != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	limit := c.bodyLimit()
	body, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		if limit%(1<<20) == 0 {
			return nil, fmt.Errorf("%w: one response larger than %d MiB", errTooMuch, limit>>20)
		}
		return nil, fmt.Errorf("%w: one response larger than %d bytes", errTooMuch, limit)
	}
	c.bytes += int64(len(body))
	if c.caps.Bytes > 0 && c.bytes > c.caps.Bytes {
		return nil, &CapError{Cap: CapBytes, Limit: c.caps.Bytes, Where: "the bytes read from the source"}
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// scrub removes anything credential-like from a transport error: Go's own
// url.Error already prints the URL without a password, and our URLs carry
// none; this also hides the URL's query in case a server redirected to
// one that holds a token.
// shownURL is u as messages show it: no user information, and a
// protected event's password (the query's password) replaced.
func shownURL(u *url.URL) string {
	v := *u
	if q := v.Query(); q.Has("password") {
		q.Set("password", redacted)
		v.RawQuery = encodeQuery(q)
	}
	return v.Redacted()
}

func scrub(err error) error {
	if errors.Is(err, errTooMuch) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("timeout")
	}
	return err
}

// backoff is the wait before retry attempt+1: base doubling per attempt,
// capped at 30 s, with up to 50 % jitter.
func (c *client) backoff(attempt int) time.Duration {
	d := c.base << min(attempt, 10)
	if d > 30*time.Second || d <= 0 {
		d = 30 * time.Second
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryAfter reads a Retry-After header: seconds or an HTTP date, capped.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, false
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
		if d < 0 {
			d = 0
		}
	} else {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

// encodeQuery encodes q in a stable order with commas kept readable
// (status=publish,future,... as the source's own links show them).
func encodeQuery(q url.Values) string {
	return strings.ReplaceAll(q.Encode(), "%2C", ",")
}
