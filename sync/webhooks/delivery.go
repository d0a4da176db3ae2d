package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/metric"
	"github.com/calendar/eventcal/config/netguard"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/internal/scrape"
)

// Delivery limits.
const (
	// endpointBatch is how many due deliveries of one endpoint one pass
	// takes.
	endpointBatch = 16
	// DefaultConcurrency bounds the attempts in flight overall and
	// DefaultEndpointConcurrency those to one endpoint (Dispatcher).
	DefaultConcurrency, DefaultEndpointConcurrency = 32, 2
	// keepDeliveries is how long finished deliveries stay in the log.
	keepDeliveries = 7 * 24 * time.Hour
	// maxURLLength bounds an endpoint URL.
	maxURLLength = 2048
)

// ErrBlockedAddress means an endpoint URL points to (or resolved to) an
// address webhooks may not reach.
var ErrBlockedAddress = errors.New("webhook: private, loopback and link-local addresses are not allowed (WEBHOOK_ALLOW_PRIVATE)")

// blockedAddr reports whether a is an address endpoints may not use
// (the rules of package netguard).
func blockedAddr(a netip.Addr) bool { return netguard.Blocked(a) }

// CheckURL validates an endpoint URL: absolute http or https, with a
// host, at most 2,048 bytes, and (unless allowPrivate) not a blocked IP
// literal or "localhost". Host names are checked again, after resolution,
// on every connection.
func CheckURL(raw string, allowPrivate bool) error {
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
	if netguard.HostBlocked(host) {
		return ErrBlockedAddress
	}
	return nil
}

// minSecretBytes is the shortest signing key accepted.
const minSecretBytes = 24

// CheckEvents validates the message types of an endpoint: at least
// one, each one of EventTypes or "*".
func CheckEvents(types []string) error {
	if len(types) == 0 {
		return errors.New("names no message type")
	}
	for _, t := range types {
		if t != "*" && !slices.Contains(EventTypes, t) {
			return fmt.Errorf("unknown message type %q", t)
		}
	}
	return nil
}

// CheckSecret validates a signing secret: "whsec_" and at least 24
// base64-encoded bytes, as Standard Webhooks libraries expect.
func CheckSecret(secret string) error {
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
	// The dialer applies the address rules to the address each connection
	// actually goes to, after name resolution, so a name that resolves to
	// an internal host (or changes to one after the URL was checked) is
	// refused.
	dialer := &netguard.Dialer{AllowPrivate: allowPrivate, Timeout: min(timeout, 5*time.Second), Refuse: ErrBlockedAddress}
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
func (h *Dispatcher) send(ctx context.Context, hook *repository.Webhook, msgID string, payload []byte, at time.Time) (int, error) {
	if err := CheckURL(hook.URL, h.AllowPrivate); err != nil {
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
	req.Header.Set("User-Agent", config.UserAgent("webhooks"))
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
//
// Every active endpoint has its own line (see Dispatcher): Run starts one
// goroutine per endpoint with due deliveries, which sends them, at most
// EndpointConcurrency at a time, until none is due, and then ends. All of
// them share Concurrency attempts in flight. A slow, failing or
// redirecting endpoint thus only delays its own messages: the others
// never wait for its attempts (at most EndpointConcurrency of the
// Concurrency slots). Run looks for due deliveries every PollInterval and
// whenever Observe queues new ones, and returns once every attempt in
// flight has ended.
func (h *Dispatcher) Run(ctx context.Context) {
	h.init()
	var (
		wg sync.WaitGroup
		// busy marks the endpoints whose goroutine runs; again those a
		// pass found busy, to look at once more when it ends (their
		// goroutine may have looked before the new messages came).
		busy      = map[int64]bool{}
		again     = map[int64]bool{}
		finished  = make(chan int64)
		lastPrune time.Time
	)
	defer wg.Wait()
	start := func(id int64, hook *repository.Webhook) {
		busy[id] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.runEndpoint(ctx, id, hook)
			select {
			case finished <- id:
			case <-ctx.Done():
			}
		}()
	}
	for {
		hooks, err := h.Store.ListWebhooks(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.Log.Warn("webhook deliveries failed", "err", err)
		}
		for _, hook := range hooks {
			switch {
			case !hook.Active:
				// Its messages wait, pending, until it is enabled again.
			case busy[hook.ID]:
				again[hook.ID] = true
			default:
				start(hook.ID, hook)
			}
		}
		if now := h.Now(); now.Sub(lastPrune) > 24*time.Hour {
			if err := h.Store.PruneDeliveries(ctx, now.Add(-keepDeliveries)); err != nil {
				h.Log.Warn("webhook log pruning failed", "err", err)
			} else {
				lastPrune = now
			}
		}
		if !h.waitForWork(ctx, finished, busy, again, start) {
			return
		}
	}
}

// waitForWork waits until Run should look at every endpoint again
// (PollInterval passed, or Observe queued messages): true, or ctx ended:
// false. Meanwhile it notes the endpoint goroutines that end, and starts
// one again when a pass asked for it.
func (h *Dispatcher) waitForWork(ctx context.Context, finished <-chan int64, busy, again map[int64]bool,
	start func(int64, *repository.Webhook)) bool {
	t := time.NewTimer(h.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-h.wake:
			return true
		case <-t.C:
			return true
		case id := <-finished:
			delete(busy, id)
			if again[id] {
				delete(again, id)
				start(id, nil) // read again: it may have been disabled meanwhile
			}
		}
	}
}

// runEndpoint sends one endpoint's due deliveries, a batch at a time,
// until none is due, the endpoint is disabled or gone, or an error (left
// to the next pass, PollInterval later, so that a failing store is not
// hammered). The first batch goes by hook as the pass just read it (nil:
// read it); every further one reads the endpoint again (an attempt may
// have disabled it).
func (h *Dispatcher) runEndpoint(ctx context.Context, id int64, hook *repository.Webhook) {
	var err error
	for ctx.Err() == nil {
		if hook == nil {
			hook, err = h.Store.GetWebhook(ctx, id)
		}
		if errors.Is(err, repository.ErrNotFound) || err == nil && !hook.Active {
			return
		}
		if err == nil {
			var n int
			n, err = h.deliverEndpoint(ctx, hook)
			if n == 0 && err == nil {
				return
			}
			hook = nil
		}
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Warn("webhook deliveries failed", "webhook", id, "err", err)
			}
			return
		}
	}
}

// DeliverDue sends the deliveries due now, one batch per active endpoint
// (the endpoints concurrently), and returns how many it tried.
func (h *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	h.init()
	hooks, err := h.Store.ListWebhooks(ctx)
	if err != nil {
		return 0, err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		tried int
		errs  []error
	)
	for _, hook := range hooks {
		if !hook.Active {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := h.deliverEndpoint(ctx, hook)
			mu.Lock()
			defer mu.Unlock()
			tried += n
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return tried, errors.Join(errs...)
}

// deliverEndpoint claims one batch of an endpoint's due deliveries and
// sends them: each about another item (the store returns an item's first
// pending message only), at most EndpointConcurrency at a time and each
// holding one of the Concurrency slots. It returns how many it tried.
//
// The claim (repository.WebhookStore.ClaimDeliveries) makes this process
// the only one sending these deliveries until the claim expires, and only
// its holder records an attempt's result. A claimed delivery that is not
// attempted (ctx ended, the endpoint was disabled, or too little of its
// claim is left for a whole attempt) is released at once for whoever
// claims next.
func (h *Dispatcher) deliverEndpoint(ctx context.Context, hook *repository.Webhook) (int, error) {
	due, err := h.Store.ClaimDeliveries(ctx, hook.ID, h.Now(), h.claimHold(), h.claimBatch())
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	own := make(chan struct{}, h.EndpointConcurrency)
	health := newEndpointHealth(hook)
	tried := 0
	for i, d := range due {
		if !acquire(ctx, own) {
			h.release(ctx, due[i:])
			break
		}
		if !health.isActive() {
			// Disabled by an attempt of this batch: the rest waits.
			<-own
			h.release(ctx, due[i:])
			break
		}
		if !acquire(ctx, h.slots) {
			<-own
			h.release(ctx, due[i:])
			break
		}
		if h.Now().Add(h.Timeout + h.Grace).After(d.ClaimUntil) {
			// Waited too long for a slot: the claim might expire
			// during the attempt.
			<-h.slots
			<-own
			h.release(ctx, due[i:i+1])
			continue
		}
		tried++
		wg.Add(1)
		go func() {
			defer func() { <-h.slots; <-own; wg.Done() }()
			if err := h.attempt(ctx, hook, health, d); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if tried < len(due) && ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return tried, errors.Join(errs...)
}

// claimBatch is how many deliveries of one endpoint one claim takes: two
// rounds of EndpointConcurrency attempts.
func (h *Dispatcher) claimBatch() int { return min(endpointBatch, 2*h.EndpointConcurrency) }

// claimHold is how long a claim holds: the two rounds of attempts of a
// batch, a round of waiting for slots and the grace of a stopping
// attempt. A deliverer that crashed leaves its claims to expire after it.
func (h *Dispatcher) claimHold() time.Duration { return 3*h.Timeout + h.Grace }

// release gives up the claims of deliveries this process will not
// attempt, so that the next claim gets them without waiting for the
// expiry. It runs even when ctx ended (bounded by Grace); a failure only
// leaves the claims to expire.
func (h *Dispatcher) release(ctx context.Context, ds []*repository.Delivery) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.Grace)
	defer cancel()
	for _, d := range ds {
		// Saving a claimed delivery unchanged clears its claim.
		if err := h.Store.SaveDelivery(rctx, d); err != nil && !errors.Is(err, repository.ErrClaimLost) {
			h.Log.Debug("webhook claim not released", "webhook", d.WebhookID, "message", d.ID, "err", err)
		}
	}
}

// acquire takes a slot of sem, or reports false when ctx ends first.
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// graceful returns a context for an attempt started under ctx: it ends
// Grace after ctx ends (the lease was lost, or the service stops), so that
// an attempt in flight may finish and record its result rather than be
// cut off unrecorded.
func (h *Dispatcher) graceful(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(h.Grace, cancel)
		context.AfterFunc(actx, func() { t.Stop() })
	})
	return actx, func() { stop(); cancel() }
}

// attempt tries one claimed delivery and records the outcome on it (while
// it still holds its claim) and on its endpoint's health. An attempt cut
// off at the end of its grace is recorded as such, due again at once; if
// even that record fails, its claim expires. Either way the delivery is
// sent again with the same message ID.
func (h *Dispatcher) attempt(ctx context.Context, hook *repository.Webhook, health *endpointHealth, d *repository.Delivery) error {
	actx, cancel := h.graceful(ctx)
	defer cancel()
	start := h.Now()
	code, sendErr := h.send(actx, hook, d.ID, d.Payload, start)
	end := h.Now()
	cutOff := sendErr != nil && actx.Err() != nil && ctx.Err() != nil
	a := repository.DeliveryAttempt{At: start.UTC(), Code: code, DurationMs: end.Sub(start).Milliseconds()}
	if sendErr != nil {
		a.Error = truncate(sendErr.Error(), 300)
	}
	if cutOff {
		a.Error = truncate("abandoned at shutdown or loss of the lease: "+sendErr.Error(), 300)
		// Record it with a last short context of its own; if even that
		// fails, the claim expires and the delivery is claimed again.
		var rcancel context.CancelFunc
		actx, rcancel = context.WithTimeout(context.WithoutCancel(ctx), h.Grace)
		defer rcancel()
	}
	d.Attempts++
	d.Log = append(d.Log, a)
	if len(d.Log) > repository.MaxAttemptLog {
		d.Log = d.Log[len(d.Log)-repository.MaxAttemptLog:]
	}
	outcome := "delivered"
	switch {
	case cutOff:
		// The endpoint may have got it: it is sent again at once, by
		// whoever delivers next, with the same message ID.
		d.NextAttempt, outcome = end, "retry"
	case sendErr == nil:
		d.Status = repository.DeliveryDelivered
	case end.Sub(d.Created) >= h.RetryFor:
		d.Status, outcome = repository.DeliveryFailed, "failed"
	default:
		d.NextAttempt, outcome = end.Add(h.retryWait(d.Attempts)), "retry"
	}
	h.metrics.deliveries.WithLabelValues(outcome).Inc()
	switch err := h.Store.SaveDelivery(actx, d); {
	case errors.Is(err, repository.ErrClaimLost):
		// Another deliverer claimed the delivery after this claim
		// expired: its record stands, this result is dropped.
		h.Log.Warn("webhook attempt result discarded: the claim was lost", "webhook", hook.ID, "message", d.ID,
			"outcome", outcome, "code", code, "claim_until", d.ClaimUntil)
	case err != nil:
		return err
	}
	if outcome != "delivered" {
		h.Log.Warn("webhook delivery failed", "webhook", hook.ID, "message", d.ID, "type", d.Type,
			"attempt", d.Attempts, "code", code, "err", a.Error, "outcome", outcome)
	}
	if cutOff {
		return nil // says nothing of the endpoint's health
	}
	return h.recordHealth(actx, health, sendErr, end)
}

// endpointHealth is what a batch of attempts knows of its endpoint's
// health. The attempts of one batch run concurrently and record their
// outcomes one at a time through it, so that a success clears a failure
// recorded by another attempt of the batch, and a disabled endpoint gets
// no further attempt from the batch.
type endpointHealth struct {
	mu           sync.Mutex
	id           int64
	active       bool
	failingSince time.Time
}

func newEndpointHealth(hook *repository.Webhook) *endpointHealth {
	return &endpointHealth{id: hook.ID, active: hook.Active, failingSince: hook.FailingSince}
}

// isActive reports whether the endpoint was still active at the last
// outcome recorded.
func (e *endpointHealth) isActive() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active
}

// recordHealth keeps an endpoint's FailingSince, and disables an endpoint
// that has failed without a success for DisableAfter.
func (h *Dispatcher) recordHealth(ctx context.Context, health *endpointHealth, sendErr error, now time.Time) error {
	health.mu.Lock()
	defer health.mu.Unlock()
	if sendErr == nil && health.failingSince.IsZero() {
		return nil
	}
	if sendErr != nil && !health.failingSince.IsZero() && now.Sub(health.failingSince) < h.DisableAfter {
		return nil
	}
	w, err := h.Store.UpdateWebhook(ctx, health.id, func(w *repository.Webhook) error {
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
	switch {
	case errors.Is(err, repository.ErrNotFound):
		health.active = false
		return nil
	case err == nil:
		health.active, health.failingSince = w.Active, w.FailingSince
	}
	return err
}

// retryWait is the pause after the nth failed attempt: FirstRetry doubling
// up to MaxRetryWait, with ±25% jitter so that endpoints coming back up are
// not hit by every retry at once.
func (h *Dispatcher) retryWait(attempts int) time.Duration {
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
func (h *Dispatcher) Ping(ctx context.Context, hook *repository.Webhook) repository.DeliveryAttempt {
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
//	eventcal_webhook_attempts_in_flight                     gauge    attempts waiting for an answer (at most Concurrency)
type webhookMetrics struct {
	h          *Dispatcher
	deliveries *prometheus.CounterVec
	depth      *prometheus.Desc
	oldest     *prometheus.Desc
	inFlight   *prometheus.Desc
}

func webhookMetricsFor(h *Dispatcher) *webhookMetrics {
	return &webhookMetrics{h: h,
		deliveries: metric.CounterVec("eventcal_webhook_deliveries_total",
			"Webhook delivery attempts by outcome (delivered, retry, failed).", "outcome", "delivered", "retry", "failed"),
		depth:  prometheus.NewDesc("eventcal_webhook_queue_depth", "Webhook deliveries waiting to be sent.", nil, nil),
		oldest: prometheus.NewDesc("eventcal_webhook_oldest_pending_age_seconds", "Age of the oldest pending webhook delivery (0 when none).", nil, nil),
		inFlight: prometheus.NewDesc("eventcal_webhook_attempts_in_flight",
			"Webhook delivery attempts waiting for an answer (at most the overall concurrency).", nil, nil),
	}
}

// Metrics returns the webhook metrics, to register on a registry.
func (h *Dispatcher) Metrics() prometheus.Collector {
	h.init()
	return h.metrics
}

// Describe implements prometheus.Collector.
func (m *webhookMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.deliveries.Describe(ch)
	ch <- m.depth
	ch <- m.oldest
	ch <- m.inFlight
}

// Collect implements prometheus.Collector; the queue figures are read from
// the store on each scrape.
func (m *webhookMetrics) Collect(ch chan<- prometheus.Metric) {
	m.deliveries.Collect(ch)
	ch <- prometheus.MustNewConstMetric(m.inFlight, prometheus.GaugeValue, float64(len(m.h.slots)))
	ctx, cancel := context.WithTimeout(context.Background(), scrape.Timeout)
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
