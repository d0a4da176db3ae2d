package sync

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/calendar/eventcal/repository"
)

// Delivery limits.
const (
	// deliveryBatch is how many due deliveries one pass takes.
	deliveryBatch = 32
	// deliveryConcurrency is how many deliveries are sent at once (each to
	// a different endpoint or item).
	deliveryConcurrency = 4
	// disabledPause is how long a message to a disabled endpoint waits
	// before it is looked at again.
	disabledPause = time.Minute
	// keepDeliveries is how long finished deliveries stay in the log.
	keepDeliveries = 7 * 24 * time.Hour
	// maxURLLength bounds an endpoint URL.
	maxURLLength = 2048
)

// ErrBlockedAddress means an endpoint URL points to (or resolved to) an
// address webhooks may not reach.
var ErrBlockedAddress = errors.New("webhook: private, loopback and link-local addresses are not allowed (WEBHOOK_ALLOW_PRIVATE)")

// blockedPrefixes are ranges besides private, loopback, link-local,
// multicast and unspecified addresses that no endpoint should be in:
// "this network", carrier-grade NAT, IETF protocol assignments, benchmark
// and documentation ranges, and IPv4-mapped/NAT64 forms of them.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32", "64:ff9b::/96", "2001:db8::/32"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// blockedAddr reports whether a is an address endpoints may not use.
func blockedAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// CheckWebhookURL validates an endpoint URL: absolute http or https, with a
// host, at most 2,048 bytes, and (unless allowPrivate) not a blocked IP
// literal or "localhost". Host names are checked again, after resolution,
// on every connection.
func CheckWebhookURL(raw string, allowPrivate bool) error {
	if len(raw) > maxURLLength {
		return fmt.Errorf("webhook: URL longer than %d bytes", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("webhook: URL does not parse")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("webhook: URL must use http or https")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("webhook: URL has no host")
	}
	if allowPrivate {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && blockedAddr(a) {
		return ErrBlockedAddress
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return ErrBlockedAddress
	}
	return nil
}

// minSecretBytes is the shortest signing key accepted.
const minSecretBytes = 24

// CheckWebhookEvents validates the message types of an endpoint: at least
// one, each one of WebhookEventTypes or "*".
func CheckWebhookEvents(types []string) error {
	if len(types) == 0 {
		return errors.New("names no message type")
	}
	for _, t := range types {
		if t != "*" && !slices.Contains(WebhookEventTypes, t) {
			return fmt.Errorf("unknown message type %q", t)
		}
	}
	return nil
}

// CheckWebhookSecret validates a signing secret: "whsec_" and at least 24
// base64-encoded bytes, as Standard Webhooks libraries expect.
func CheckWebhookSecret(secret string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < minSecretBytes {
		return fmt.Errorf("must be whsec_ followed by at least %d base64-encoded bytes", minSecretBytes)
	}
	return nil
}

// httpClient sends deliveries: no proxy, no redirects, every connection's
// resolved address checked.
type httpClient struct{ *http.Client }

func newHTTPClient(timeout time.Duration, allowPrivate bool) *httpClient {
	dialer := &net.Dialer{Timeout: min(timeout, 5*time.Second)}
	if !allowPrivate {
		// Control runs after name resolution, for the address actually
		// dialled, so a name that resolves to an internal host (or
		// changes to one after the URL was checked) is refused.
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			a, err := netip.ParseAddr(host)
			if err != nil || blockedAddr(a) {
				return ErrBlockedAddress
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    min(timeout, 5*time.Second),
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 16 << 10,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	return &httpClient{&http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// send posts one signed message and returns the status answered.
func (h *Webhooks) send(ctx context.Context, hook *repository.Webhook, msgID string, payload []byte, at time.Time) (int, error) {
	if err := CheckWebhookURL(hook.URL, h.AllowPrivate); err != nil {
		return 0, err
	}
	wh, err := standardwebhooks.NewWebhook(hook.Secret)
	if err != nil {
		return 0, fmt.Errorf("webhook: bad secret: %w", err)
	}
	sig, err := wh.Sign(msgID, at, payload)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "eventcal-webhooks/1")
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	// Read (a bounded part of) the answer so the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(res.Body, h.MaxResponse))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return res.StatusCode, fmt.Errorf("status %d", res.StatusCode)
	}
	return res.StatusCode, nil
}

// Run sends due deliveries until ctx ends, and prunes the log daily. Only
// the lease holder runs it.
func (h *Webhooks) Run(ctx context.Context) {
	h.init()
	var lastPrune time.Time
	for {
		n, err := h.DeliverDue(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.Log.Warn("webhook deliveries failed", "err", err)
		}
		if now := h.Now(); now.Sub(lastPrune) > 24*time.Hour {
			if err := h.Store.PruneDeliveries(ctx, now.Add(-keepDeliveries)); err != nil {
				h.Log.Warn("webhook log pruning failed", "err", err)
			} else {
				lastPrune = now
			}
		}
		if n >= deliveryBatch {
			continue
		}
		t := time.NewTimer(h.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-h.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// DeliverDue sends the deliveries due now (one batch) and returns how many
// it tried.
func (h *Webhooks) DeliverDue(ctx context.Context) (int, error) {
	h.init()
	due, err := h.Store.DueDeliveries(ctx, h.Now(), deliveryBatch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	hooks, err := h.Store.ListWebhooks(ctx)
	if err != nil {
		return 0, err
	}
	byID := map[int64]*repository.Webhook{}
	for _, w := range hooks {
		byID[w.ID] = w
	}
	var wg gosync.WaitGroup
	sem := make(chan struct{}, deliveryConcurrency)
	errs := make(chan error, len(due))
	for _, d := range due {
		hook := byID[d.WebhookID]
		if hook == nil {
			continue // deleted meanwhile, with its deliveries
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := h.attempt(ctx, hook, d); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return len(due), errors.Join(collect(errs)...)
}

func collect(ch <-chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

// attempt tries one delivery and records the outcome on it and on its
// endpoint's health.
func (h *Webhooks) attempt(ctx context.Context, hook *repository.Webhook, d *repository.Delivery) error {
	start := h.Now()
	if !hook.Active {
		d.NextAttempt = start.Add(disabledPause)
		return h.Store.SaveDelivery(ctx, d)
	}
	code, sendErr := h.send(ctx, hook, d.ID, d.Payload, start)
	end := h.Now()
	a := repository.DeliveryAttempt{At: start.UTC(), Code: code, DurationMs: end.Sub(start).Milliseconds()}
	if sendErr != nil {
		a.Error = truncate(sendErr.Error(), 300)
	}
	d.Attempts++
	d.Log = append(d.Log, a)
	if len(d.Log) > repository.MaxAttemptLog {
		d.Log = d.Log[len(d.Log)-repository.MaxAttemptLog:]
	}
	outcome := "delivered"
	switch {
	case sendErr == nil:
		d.Status = repository.DeliveryDelivered
	case end.Sub(d.Created) >= h.RetryFor:
		d.Status, outcome = repository.DeliveryFailed, "failed"
	default:
		d.NextAttempt, outcome = end.Add(h.retryWait(d.Attempts)), "retry"
	}
	h.metrics.deliveries.WithLabelValues(outcome).Inc()
	if err := h.Store.SaveDelivery(ctx, d); err != nil {
		return err
	}
	if outcome != "delivered" {
		h.Log.Warn("webhook delivery failed", "webhook", hook.ID, "message", d.ID, "type", d.Type,
			"attempt", d.Attempts, "code", code, "err", a.Error, "outcome", outcome)
	}
	return h.recordHealth(ctx, hook, sendErr, end)
}

// recordHealth keeps an endpoint's FailingSince, and disables an endpoint
// that has failed without a success for DisableAfter.
func (h *Webhooks) recordHealth(ctx context.Context, hook *repository.Webhook, sendErr error, now time.Time) error {
	if sendErr == nil && hook.FailingSince.IsZero() {
		return nil
	}
	if sendErr != nil && !hook.FailingSince.IsZero() && now.Sub(hook.FailingSince) < h.DisableAfter {
		return nil
	}
	_, err := h.Store.UpdateWebhook(ctx, hook.ID, func(w *repository.Webhook) error {
		switch {
		case sendErr == nil:
			w.FailingSince = time.Time{}
		case w.FailingSince.IsZero():
			w.FailingSince = now
		case now.Sub(w.FailingSince) >= h.DisableAfter && w.Active:
			w.Active = false
			w.DisabledReason = "disabled after failing for " + h.DisableAfter.String() + " (last error: " + truncate(sendErr.Error(), 200) + ")"
			h.Log.Warn("webhook disabled", "webhook", w.ID, "url", w.URL, "reason", w.DisabledReason)
		}
		w.Updated = now
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return nil
	}
	return err
}

// retryWait is the pause after the nth failed attempt: FirstRetry doubling
// up to MaxRetryWait, with ±25% jitter so that endpoints coming back up are
// not hit by every retry at once.
func (h *Webhooks) retryWait(attempts int) time.Duration {
	d := h.FirstRetry << min(attempts-1, 30)
	if d <= 0 || d > h.MaxRetryWait {
		d = h.MaxRetryWait
	}
	return d*3/4 + rand.N(d/2+1)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Ping sends a "webhook.ping" message to the endpoint at once (outside the
// queue) and returns the attempt.
func (h *Webhooks) Ping(ctx context.Context, hook *repository.Webhook) repository.DeliveryAttempt {
	h.init()
	start := h.Now()
	id := "msg_ping_" + strconv.FormatInt(start.UnixNano(), 36)
	body := fmt.Appendf(nil, `{"id":%q,"type":"webhook.ping","occurred_at":%q,"item":{"id":%d}}`,
		id, start.UTC().Format(time.RFC3339Nano), hook.ID)
	code, err := h.send(ctx, hook, id, body, start)
	a := repository.DeliveryAttempt{At: start.UTC(), Code: code, DurationMs: h.Now().Sub(start).Milliseconds()}
	if err != nil {
		a.Error = truncate(err.Error(), 300)
	}
	return a
}

// webhookMetrics are the webhook figures (a prometheus.Collector):
//
//	eventcal_webhook_deliveries_total{outcome}              counter  attempts by outcome: delivered, retry, failed
//	eventcal_webhook_queue_depth                            gauge    pending deliveries, read on scrape
//	eventcal_webhook_oldest_pending_age_seconds             gauge    age of the oldest pending delivery (0 when none)
type webhookMetrics struct {
	h          *Webhooks
	deliveries *prometheus.CounterVec
	depth      *prometheus.Desc
	oldest     *prometheus.Desc
}

func webhookMetricsFor(h *Webhooks) *webhookMetrics {
	m := &webhookMetrics{h: h,
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "eventcal_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome (delivered, retry, failed)."}, []string{"outcome"}),
		depth:  prometheus.NewDesc("eventcal_webhook_queue_depth", "Webhook deliveries waiting to be sent.", nil, nil),
		oldest: prometheus.NewDesc("eventcal_webhook_oldest_pending_age_seconds", "Age of the oldest pending webhook delivery (0 when none).", nil, nil),
	}
	for _, o := range []string{"delivered", "retry", "failed"} {
		m.deliveries.WithLabelValues(o)
	}
	return m
}

// Metrics returns the webhook metrics, to register on a registry.
func (h *Webhooks) Metrics() prometheus.Collector {
	h.init()
	return h.metrics
}

// Describe implements prometheus.Collector.
func (m *webhookMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.deliveries.Describe(ch)
	ch <- m.depth
	ch <- m.oldest
}

// Collect implements prometheus.Collector; the queue figures are read from
// the store on each scrape.
func (m *webhookMetrics) Collect(ch chan<- prometheus.Metric) {
	m.deliveries.Collect(ch)
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	n, oldest, err := m.h.Store.DeliveryQueue(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(m.depth, err)
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(m.h.Now().Sub(oldest), 0).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(m.depth, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(m.oldest, prometheus.GaugeValue, age)
}
