// Package fetch reads a calendar source over HTTP, as a good citizen and
// safely: a conditional GET (If-None-Match, If-Modified-Since) that
// answers "not modified" without a body, an Accept header asking for
// iCalendar first and a User-Agent naming the service; and bounds on what
// a hostile or broken source can make the service do: a time limit for
// the whole fetch (headers and body), a size limit counted on the bytes
// read after decompression (so a gzip bomb stops at it), at most
// MaxRedirects redirects and only to http or https, and the address rules
// of package config/netguard (no loopback, private, link-local or
// reserved addresses unless allowed) applied to the resolved address of
// every connection, redirects included.
//
// Every failure is an *Error whose Reason sorts it (the run records and
// metrics) and whose Message says what happened in words an editor can
// act on, without echoing the source's body.
package fetch

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/netguard"
)

// Defaults and bounds of a fetch.
const (
	// DefaultTimeout bounds a whole fetch, headers and body
	// (SOURCE_FETCH_TIMEOUT).
	DefaultTimeout = 60 * time.Second
	// DefaultMaxBytes bounds a body after decompression (SOURCE_MAX_BYTES).
	DefaultMaxBytes = 20 << 20
	// MaxRedirects is how many redirects a fetch follows.
	MaxRedirects = 5
	// Accept is the Accept header of a fetch: iCalendar, then JSON (a site
	// running The Events Calendar), then anything.
	Accept = "text/calendar, application/json;q=0.9, */*;q=0.5"
	// maxURLLength bounds a source URL.
	maxURLLength = 2048
	// maxValidator bounds an ETag or Last-Modified kept for the next
	// fetch; a longer one is not kept.
	maxValidator = 1024
	// maxStatusText bounds the server's reason phrase quoted in an error.
	maxStatusText = 60
	// lookupBudget bounds CheckURL's name resolution.
	lookupBudget = 2 * time.Second
)

// The reasons of an Error.
const (
	// ReasonStatus: the source answered an HTTP status other than 200
	// (or 304 to a conditional request).
	ReasonStatus = "status"
	// ReasonTooLarge: the body passed MaxBytes.
	ReasonTooLarge = "too_large"
	// ReasonTimeout: the fetch took longer than its Timeout.
	ReasonTimeout = "timeout"
	// ReasonTruncated: the body ended before its end (shorter than its
	// Content-Length, a connection reset, a cut chunked or gzip stream)
	// or its compressed form is damaged.
	ReasonTruncated = "truncated"
	// ReasonBlocked: the URL, or an address it resolves or redirects to,
	// is one the address rules refuse, or the URL is not one a source may
	// have.
	ReasonBlocked = "blocked"
	// ReasonRedirect: a redirect the fetch does not follow (not http or
	// https, with credentials, more than MaxRedirects).
	ReasonRedirect = "redirect"
	// ReasonNetwork: the source could not be reached (a name that does
	// not resolve, a refused connection, a TLS failure), sent a body in a
	// content encoding the fetch cannot read, or the fetch was cancelled.
	ReasonNetwork = "network"
)

// Error is a failed fetch.
type Error struct {
	// Reason sorts the failure: one of the Reason constants.
	Reason string
	// Message says what happened, for a run's error: "the source answered
	// HTTP 500 (Internal Server Error)".
	Message string
	// Status is the HTTP status answered, for ReasonStatus.
	Status int
	// Err is the underlying error, if any (errors.Is finds
	// context.Canceled in a cancelled fetch).
	Err error
}

// Error returns the Message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Validators are what a source said identifies the version of its body,
// sent back to ask for it only if it changed.
type Validators struct {
	// ETag is the ETag header answered ("" for none).
	ETag string
	// LastModified is the Last-Modified header answered ("" for none).
	LastModified string
}

// Result is a successful fetch.
type Result struct {
	// Body is the (decompressed) body; nil when NotModified.
	Body []byte
	// ContentType is the Content-Type header answered, as sent ("text/html;
	// charset=utf-8" for a web page: telling a calendar from something
	// else is the reader's job).
	ContentType string
	// Header is the final response's header.
	Header http.Header
	// Validators are those to send next time: the answer's, or (a 304
	// without them) those sent.
	Validators Validators
	// NotModified is true when the source answered 304 Not Modified to
	// the validators sent.
	NotModified bool
	// URL is the URL finally fetched, after redirects.
	URL string
}

// Options configure a Fetcher. Zero values mean the defaults.
type Options struct {
	// Timeout bounds the whole fetch, headers and body; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds the body, counted after decompression; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// AllowPrivate turns the address rules off (SOURCES_ALLOW_PRIVATE).
	AllowPrivate bool
	// UserAgent is the User-Agent header; "" means DefaultUserAgent().
	UserAgent string
	// Transport replaces the guarded transport (tests only: the address
	// rules are then the transport's business).
	Transport http.RoundTripper
	// Resolver replaces the system resolver of the guarded transport
	// (tests of the address rules: names resolve to chosen addresses).
	Resolver netguard.Resolver
	// Connect replaces the guarded transport's connection to an address
	// the rules accepted (tests of the address rules: a public address
	// reaches a local server).
	Connect func(ctx context.Context, network, address string) (net.Conn, error)
}

// DefaultUserAgent is the User-Agent of a fetch: the service, its
// release (config.Version) and what the request is for.
func DefaultUserAgent() string {
	return "eventcal/" + config.Version + " (+calendar sources)"
}

// Fetcher fetches sources. It is safe for concurrent use and keeps
// connections to a source open between fetches.
type Fetcher struct {
	timeout      time.Duration
	maxBytes     int64
	allowPrivate bool
	userAgent    string
	transport    http.RoundTripper
}

// New returns a Fetcher with the options o.
func New(o Options) *Fetcher {
	f := &Fetcher{timeout: o.Timeout, maxBytes: o.MaxBytes, allowPrivate: o.AllowPrivate, userAgent: o.UserAgent,
		transport: o.Transport}
	if f.timeout <= 0 {
		f.timeout = DefaultTimeout
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if f.userAgent == "" {
		f.userAgent = DefaultUserAgent()
	}
	if f.transport == nil {
		d := &netguard.Dialer{AllowPrivate: o.AllowPrivate, Timeout: min(f.timeout, 30*time.Second),
			Resolver: o.Resolver, Connect: o.Connect}
		f.transport = &http.Transport{
			// No proxy: a proxy would make the connection, out of the
			// reach of the dialer's address rules.
			Proxy:                  nil,
			DialContext:            d.DialContext,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    min(f.timeout, 15*time.Second),
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConns:           32,
			MaxIdleConnsPerHost:    2,
			IdleConnTimeout:        90 * time.Second,
		}
	}
	return f
}

// hops follows one fetch's redirects, for its error messages.
type hops struct {
	// last is the URL of the latest redirect followed, nil for none.
	last *url.URL
}

// checkRedirect returns the redirect policy: at most MaxRedirects, only
// to http or https without credentials, and not to a literal address (or
// localhost name) the rules refuse; a host name is judged by the dialer.
func (f *Fetcher) checkRedirect(h *hops) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		u := req.URL
		if h != nil {
			h.last = u
		}
		shown := showURL(u)
		switch {
		case len(via) > MaxRedirects:
			return &Error{Reason: ReasonRedirect, Message: fmt.Sprintf("the source redirected more than %d times (last to %s)", MaxRedirects, shown)}
		case u.Scheme != "http" && u.Scheme != "https":
			return &Error{Reason: ReasonRedirect, Message: fmt.Sprintf("the source redirected to a URL of scheme %q; only redirects to http and https are followed", showText(u.Scheme, 16))}
		case u.User != nil:
			return &Error{Reason: ReasonRedirect, Message: "the source redirected to a URL with a user name or password, which is not followed"}
		case u.Hostname() == "":
			return &Error{Reason: ReasonRedirect, Message: "the source redirected to a URL without a host"}
		case !f.allowPrivate && netguard.HostBlocked(u.Hostname()):
			return &Error{Reason: ReasonBlocked, Message: fmt.Sprintf("the source redirected to %s, %s", shown, privateWords)}
		}
		return nil
	}
}

// privateWords explains a refused address.
const privateWords = "a private, loopback, link-local or reserved address, which sources may not reach (SOURCES_ALLOW_PRIVATE)"

// Get fetches rawURL, conditionally when v holds validators: a 304 answer
// gives a Result with NotModified and no body; a 200 the body and the new
// validators. Any other outcome is an *Error.
func (f *Fetcher) Get(ctx context.Context, rawURL string, v Validators) (*Result, error) {
	if _, err := parseSourceURL(rawURL, f.allowPrivate); err != nil {
		var fe *Error
		if !errors.As(err, &fe) {
			fe = &Error{Reason: ReasonBlocked, Message: err.Error(), Err: err}
		}
		return nil, fe
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &Error{Reason: ReasonBlocked, Message: "the source URL does not parse", Err: err}
	}
	req.Header.Set("Accept", Accept)
	req.Header.Set("User-Agent", f.userAgent)
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
	h := &hops{}
	client := &http.Client{Transport: f.transport, CheckRedirect: f.checkRedirect(h)}
	res, err := client.Do(req)
	if err != nil {
		return nil, f.requestError(parent, ctx, err, h)
	}
	defer res.Body.Close()
	out := &Result{ContentType: res.Header.Get("Content-Type"), Header: res.Header, URL: res.Request.URL.String(),
		Validators: answered(res.Header)}
	switch {
	case res.StatusCode == http.StatusNotModified && (v.ETag != "" || v.LastModified != ""):
		if out.Validators == (Validators{}) {
			out.Validators = v
		}
		out.NotModified = true
		return out, nil
	case res.StatusCode != http.StatusOK && res.StatusCode != http.StatusNonAuthoritativeInfo:
		return nil, statusError(res)
	}
	body, err := f.readBody(res)
	if err != nil {
		return nil, f.bodyError(parent, ctx, err, len(body), res.ContentLength)
	}
	out.Body = body
	return out, nil
}

// answered returns the validators of a response's header, leaving out
// any too long to keep.
func answered(h http.Header) Validators {
	v := Validators{ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified")}
	if len(v.ETag) > maxValidator {
		v.ETag = ""
	}
	if len(v.LastModified) > maxValidator {
		v.LastModified = ""
	}
	return v
}

// statusError describes an answer with an unexpected status, quoting at
// most a short, cleaned part of its reason phrase and nothing of its body.
func statusError(res *http.Response) *Error {
	msg := "the source answered HTTP " + strconv.Itoa(res.StatusCode)
	phrase := strings.TrimSpace(strings.TrimPrefix(res.Status, strconv.Itoa(res.StatusCode)))
	if phrase = showText(phrase, maxStatusText); phrase != "" {
		msg += " (" + phrase + ")"
	}
	return &Error{Reason: ReasonStatus, Status: res.StatusCode, Message: msg}
}

// errTooLarge marks a body that passed MaxBytes.
var errTooLarge = errors.New("too large")

// errEncoding marks a content encoding the fetch cannot read.
type errEncoding string

func (e errEncoding) Error() string { return string(e) }

// readBody reads a 200 answer's body, decompressing a gzip one (when the
// transport has not already), and stops with errTooLarge once it passes
// f.maxBytes: at most maxBytes+1 bytes are read from the decompressed
// stream and the buffer never holds more. On an error it returns what it
// read so far.
func (f *Fetcher) readBody(res *http.Response) ([]byte, error) {
	var r io.Reader = res.Body
	encoding := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding")))
	switch encoding {
	case "", "identity":
		if res.ContentLength > f.maxBytes {
			return nil, errTooLarge
		}
	case "gzip", "x-gzip":
		// Sent although not asked for (the transport decompresses what
		// it asked for itself, and removes the header).
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, errEncoding(fmt.Sprintf("the source sent its body in the content encoding %q, which is not supported (only gzip)", showText(encoding, 32)))
	}
	size := int64(64 << 10)
	if encoding == "" && res.ContentLength >= 0 {
		size = res.ContentLength + 1
	}
	buf := make([]byte, 0, min(size, f.maxBytes+1))
	for {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf))+512, f.maxBytes+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > f.maxBytes {
			return buf[:f.maxBytes], errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// requestError describes a request that got no answer: refused by the
// redirect policy or the address rules, out of time, cancelled, or not
// connected.
func (f *Fetcher) requestError(parent, ctx context.Context, err error, h *hops) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		where := "the source's host " + showText(be.Host, 100)
		if h.last != nil {
			where = "the source redirected to " + showURL(h.last) + ", whose host"
		}
		addr := be.Addr.String()
		if be.Host != "" && be.Host != addr {
			where += " resolves to " + addr + ","
		} else {
			where += " is"
		}
		return &Error{Reason: ReasonBlocked, Message: where + " " + privateWords, Err: err}
	}
	if e := f.contextError(parent, ctx, "the source did not answer within "+showDuration(f.timeout)); e != nil {
		return e
	}
	return &Error{Reason: ReasonNetwork, Message: "the source could not be reached: " + cause(err), Err: err}
}

// cause describes a network error for a message, without the service's
// own addresses (a connection's local end, the resolver's address).
func cause(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return "the name " + showText(dnsErr.Name, 100) + " does not resolve"
		}
		return "looking up " + showText(dnsErr.Name, 100) + " failed: " + showText(dnsErr.Err, 100)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return showText(opErr.Err.Error(), 200)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return showText(err.Error(), 200)
}

// contextError reports a fetch ended by its time limit (ReasonTimeout,
// with message) or by its caller (ReasonNetwork, wrapping the caller's
// error), or nil when neither.
func (f *Fetcher) contextError(parent, ctx context.Context, message string) *Error {
	switch {
	case parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded):
		return &Error{Reason: ReasonNetwork, Message: "the fetch was cancelled", Err: parent.Err()}
	case ctx.Err() != nil:
		return &Error{Reason: ReasonTimeout, Message: message, Err: ctx.Err()}
	}
	return nil
}

// bodyError describes a body that could not be read whole: too large, out
// of time, cancelled, in an unknown encoding, or cut short (after read
// bytes, of length bytes announced; -1 for unknown).
func (f *Fetcher) bodyError(parent, ctx context.Context, err error, read int, length int64) *Error {
	if errors.Is(err, errTooLarge) {
		return &Error{Reason: ReasonTooLarge, Message: "the source's body is larger than " + showBytes(f.maxBytes) + " (SOURCE_MAX_BYTES)"}
	}
	if e := f.contextError(parent, ctx, fmt.Sprintf("the source's body did not arrive within %s (%d bytes read)", showDuration(f.timeout), read)); e != nil {
		return e
	}
	var ee errEncoding
	if errors.As(err, &ee) {
		return &Error{Reason: ReasonNetwork, Message: ee.Error()}
	}
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || strings.Contains(err.Error(), "flate: corrupt input") {
		return &Error{Reason: ReasonTruncated, Message: "the source's gzip-compressed body is damaged: " + showText(err.Error(), 100), Err: err}
	}
	msg := fmt.Sprintf("the source's body ended early, after %d bytes", read)
	if length >= 0 {
		msg += fmt.Sprintf(" of %d", length)
	}
	return &Error{Reason: ReasonTruncated, Message: msg + ": " + cause(err), Err: err}
}

// Client returns an HTTP client under the same rules as Get, for readers
// that make their own requests (a site running The Events Calendar): the
// guarded transport, the redirect policy, the Timeout per request, the
// User-Agent when a request sets none, and bodies that fail with a
// too_large *Error once they pass MaxBytes.
func (f *Fetcher) Client() *http.Client {
	return &http.Client{Transport: &boundedTransport{f: f}, Timeout: f.timeout, CheckRedirect: f.checkRedirect(nil)}
}

// boundedTransport is the transport of Client.
type boundedTransport struct{ f *Fetcher }

// RoundTrip implements http.RoundTripper.
func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.f.userAgent)
	}
	res, err := t.f.transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Body = &boundedBody{ReadCloser: res.Body, left: t.f.maxBytes, f: t.f}
	return res, nil
}

// boundedBody fails once more than its bound is read.
type boundedBody struct {
	io.ReadCloser
	left int64
	f    *Fetcher
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &Error{Reason: ReasonTooLarge, Message: "the source's answer is larger than " + showBytes(b.f.maxBytes) + " (SOURCE_MAX_BYTES)"}
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), &Error{Reason: ReasonTooLarge, Message: "the source's answer is larger than " + showBytes(b.f.maxBytes) + " (SOURCE_MAX_BYTES)"}
	}
	return n, err
}

// CheckURL validates a source's URL when it is saved: at most 2,048
// bytes, absolute http or https, with a host, without a user name or
// password, a port (if any) from 1 to 65535, and unless allowPrivate, not
// a literal address or localhost name the address rules refuse, nor a
// name that resolves to one now (best effort: a name that does not
// resolve is accepted; every fetch judges the addresses again as it
// connects). The error says what is accepted.
func CheckURL(raw string, allowPrivate bool) error {
	return checkURL(raw, allowPrivate, net.DefaultResolver)
}

// checkURL is CheckURL with its resolver.
func checkURL(raw string, allowPrivate bool, r netguard.Resolver) error {
	u, err := parseSourceURL(raw, allowPrivate)
	if err != nil || allowPrivate {
		return err
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupBudget)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if netguard.Blocked(a) {
			return &Error{Reason: ReasonBlocked, Message: fmt.Sprintf("the URL's host %s resolves to %s, %s", showText(host, 100), a.Unmap(), privateWords)}
		}
	}
	return nil
}

// parseSourceURL checks a URL without resolving its host (CheckURL's
// rules but the lookup).
func parseSourceURL(raw string, allowPrivate bool) (*url.URL, error) {
	const accepted = "give an absolute http:// or https:// URL such as https://calendar.example.org/events.ics"
	if len(raw) > maxURLLength {
		return nil, fmt.Errorf("the URL is longer than %d bytes", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "port") {
			return nil, errors.New("the URL's port must be a number from 1 to 65535")
		}
		return nil, errors.New("the URL does not parse; " + accepted)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "webcal" || scheme == "webcals":
		return nil, errors.New("the URL must start with http:// or https://; write a webcal:// address with https:// instead")
	case scheme != "http" && scheme != "https":
		return nil, errors.New("the URL must start with http:// or https://; " + accepted)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, errors.New("the URL names no host; " + accepted)
	}
	if u.User != nil {
		return nil, errors.New("the URL must not hold a user name or password; use an address that needs no login (a token in its path or query works)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("the URL's port must be a number from 1 to 65535")
		}
	}
	if !allowPrivate && netguard.HostBlocked(u.Hostname()) {
		return nil, &Error{Reason: ReasonBlocked, Message: fmt.Sprintf("the URL's host %s is %s", showText(u.Hostname(), 100), privateWords)}
	}
	return u, nil
}

// showURL returns a URL for a message: without credentials, query or
// fragment, cleaned and at most 200 characters.
func showURL(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return showText(c.String(), 200)
}

// showText returns s for a message: control and other unprintable
// characters dropped, white space collapsed, at most n bytes (cut at a
// character, "…" appended).
func showText(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == utf8RuneError:
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if b.Len()+len(string(r)) > n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// utf8RuneError is what ranging over invalid UTF-8 yields.
const utf8RuneError = '\uFFFD'

// showBytes returns a byte count in words: "20 MiB", "512 KiB", "1000 bytes".
func showBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// showDuration returns a duration in words: "60s", "1.5s", "250ms".
func showDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
