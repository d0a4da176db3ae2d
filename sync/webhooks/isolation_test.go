package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/internal/testkit/storekit"
)

// isolationMessage is the body of the test messages.
type isolationMessage struct {
	Item string `json:"item"`
	Rev  int    `json:"rev"`
}

// receiver is a test endpoint: answer decides each request's status (it
// may block), and every request is recorded in arrival order.
type receiver struct {
	srv    *httptest.Server
	answer func(r *http.Request, m isolationMessage, attempt int) int

	mu       sync.Mutex
	got      []isolationMessage // every request, in arrival order
	ok       []isolationMessage // those answered 2xx
	attempts map[isolationMessage]int
	inFlight int
	maxIn    int
	answered int
}

func newIsolationReceiver(t *testing.T, answer func(r *http.Request, m isolationMessage, attempt int) int) *receiver {
	rc := &receiver{answer: answer, attempts: map[isolationMessage]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m isolationMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("%s: body: %v", r.URL, err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, m)
		rc.attempts[m]++
		attempt := rc.attempts[m]
		rc.inFlight++
		rc.maxIn = max(rc.maxIn, rc.inFlight)
		rc.mu.Unlock()
		code := rc.answer(r, m, attempt)
		rc.mu.Lock()
		rc.inFlight--
		rc.answered++
		if code < 300 {
			rc.ok = append(rc.ok, m)
		}
		rc.mu.Unlock()
		if code == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// snapshot returns copies of what the receiver recorded.
func (rc *receiver) snapshot() (got, ok []isolationMessage, inFlight, maxIn, answered int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got), slices.Clone(rc.ok), rc.inFlight, rc.maxIn, rc.answered
}

// inItemOrder reports whether, for every item, the revisions in ms never go
// back (a message is only sent once every earlier one about its item was
// delivered; retries repeat a revision).
func inItemOrder(ms []isolationMessage) error {
	last := map[string]int{}
	for _, m := range ms {
		if m.Rev < last[m.Item] {
			return fmt.Errorf("%s: revision %d after %d", m.Item, m.Rev, last[m.Item])
		}
		last[m.Item] = m.Rev
	}
	return nil
}

// TestWebhookIsolation: next to endpoints that hang, answer 500 or
// redirect, a healthy endpoint gets all its messages, in order per item,
// while the hanging endpoint's first attempts are still waiting for an
// answer (its timeout is far away): the check is structural, not timed.
// The hanging endpoint never has more than EndpointConcurrency attempts in
// flight; redirects are not followed; a receiver that fails each
// message's first attempt gets every message on a retry, in order; once
// the hanging endpoint answers it gets its messages too; and the endpoint
// that keeps failing is disabled after DisableAfter while the others go
// on.
func TestWebhookIsolation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := storekit.OpenStore(t, t.TempDir())

	release := make(chan struct{})
	var releaseOnce sync.Once
	answerHanging := func() { releaseOnce.Do(func() { close(release) }) }
	var redirected atomic.Int64
	hanging := newIsolationReceiver(t, func(r *http.Request, _ isolationMessage, _ int) int {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return http.StatusNoContent
	})
	failing := newIsolationReceiver(t, func(*http.Request, isolationMessage, int) int { return http.StatusInternalServerError })
	redirecting := newIsolationReceiver(t, func(r *http.Request, _ isolationMessage, _ int) int {
		if r.URL.Path == "/elsewhere" {
			redirected.Add(1)
			return http.StatusOK
		}
		return http.StatusFound
	})
	flaky := newIsolationReceiver(t, func(_ *http.Request, _ isolationMessage, attempt int) int {
		if attempt == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	healthy := newIsolationReceiver(t, func(*http.Request, isolationMessage, int) int { return http.StatusOK })
	// Released before the servers close (cleanups run last first).
	t.Cleanup(answerHanging)

	// The clock runs ahead by offset once the test moves it (to reach
	// DisableAfter without waiting for it).
	var offset atomic.Int64
	h := &Dispatcher{Store: st, Log: testkit.Quiet, AllowPrivate: true,
		Timeout:    testdeadline.Timeout(t), // the hanging attempts never time out during the test
		FirstRetry: time.Millisecond, MaxRetryWait: 200 * time.Millisecond,
		RetryFor: 1000 * time.Hour, DisableAfter: time.Hour,
		Now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}

	// The troublesome endpoints are registered, and their messages
	// queued, first: a queue read in one line would give them every slot.
	endpoints := []*receiver{hanging, failing, redirecting, flaky, healthy}
	ids := make(map[*receiver]int64)
	for _, rc := range endpoints {
		w := &repository.Webhook{URL: rc.srv.URL + "/hook", Events: []string{"*"}, Secret: NewSecret(), Active: true}
		if err := st.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		ids[rc] = w.ID
	}
	const items, revisions = 10, 3
	n := 0
	queue := func(items, revisions int, prefix string) {
		t.Helper()
		var ds []*repository.Delivery
		now := h.Now().UTC()
		for rev := 1; rev <= revisions; rev++ {
			for _, rc := range endpoints {
				for i := range items {
					item := fmt.Sprintf("%s%d", prefix, i)
					body, _ := json.Marshal(isolationMessage{Item: item, Rev: rev})
					ds = append(ds, &repository.Delivery{ID: fmt.Sprintf("msg_%s_%d", item, rev), WebhookID: ids[rc], Item: item,
						Type: "event.updated", Payload: body, Created: now, Status: repository.DeliveryPending, NextAttempt: now})
				}
			}
		}
		n += items * revisions
		if err := st.RecordChanges(ctx, nil, nil, ds); err != nil {
			t.Fatal(err)
		}
		h.Notify()
	}
	queue(items, revisions, "post:")

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})

	// The healthy endpoint gets everything while the hanging endpoint's
	// first attempts still hang.
	testkit.Eventually(t, "the healthy endpoint gets every message", func() bool {
		_, ok, _, _, _ := healthy.snapshot()
		return len(ok) == n
	})
	got, _, _, _, _ := healthy.snapshot()
	if len(got) != n {
		t.Errorf("healthy endpoint: %d requests for %d messages", len(got), n)
	}
	if err := inItemOrder(got); err != nil {
		t.Errorf("healthy endpoint: %v", err)
	}
	hungGot, _, hungIn, hungMax, hungAnswered := hanging.snapshot()
	if hungAnswered != 0 || hungIn == 0 {
		t.Fatalf("the hanging endpoint answered %d requests, %d in flight: it should still hang", hungAnswered, hungIn)
	}
	if hungMax > DefaultEndpointConcurrency || len(hungGot) > DefaultEndpointConcurrency {
		t.Errorf("the hanging endpoint had %d attempts in flight (%d requests), want at most %d", hungMax, len(hungGot), DefaultEndpointConcurrency)
	}
	if n := attemptsInFlight(t, h); n < float64(hungIn) || n > DefaultConcurrency {
		t.Errorf("eventcal_webhook_attempts_in_flight %v with %d hanging", n, hungIn)
	}

	// Retries: the flaky endpoint gets every message on its second
	// attempt, in order per item.
	testkit.Eventually(t, "the flaky endpoint gets every message on a retry", func() bool {
		_, ok, _, _, _ := flaky.snapshot()
		return len(ok) == n
	})
	fgot, fok, _, _, _ := flaky.snapshot()
	if len(fgot) != 2*n {
		t.Errorf("flaky endpoint: %d requests, want %d (each message twice)", len(fgot), 2*n)
	}
	for _, ms := range [][]isolationMessage{fgot, fok} {
		if err := inItemOrder(ms); err != nil {
			t.Errorf("flaky endpoint: %v", err)
		}
	}

	// The failing and redirecting endpoints are retried, and only ever get
	// the first message of each item; redirects are not followed.
	for name, rc := range map[string]*receiver{"failing": failing, "redirecting": redirecting} {
		testkit.Eventually(t, name+" endpoint retried", func() bool {
			got, _, _, _, _ := rc.snapshot()
			return len(got) > items
		})
		got, ok, _, _, _ := rc.snapshot()
		for _, m := range got {
			if m.Rev != 1 {
				t.Errorf("%s endpoint got %v before the first message about its item was delivered", name, m)
			}
		}
		if len(ok) != 0 {
			t.Errorf("%s endpoint: %d deliveries succeeded", name, len(ok))
		}
	}
	if n := redirected.Load(); n != 0 {
		t.Errorf("%d redirects followed", n)
	}
	log, err := st.ListDeliveries(ctx, ids[redirecting], 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range log {
		if d.Status != repository.DeliveryPending || len(d.Log) > 0 && d.Log[0].Code != http.StatusFound {
			t.Errorf("redirecting endpoint's delivery %s: %s, log %+v", d.ID, d.Status, d.Log)
		}
	}

	// The hanging endpoint answers: it gets its messages, in order.
	answerHanging()
	testkit.Eventually(t, "the hanging endpoint gets every message once it answers", func() bool {
		_, ok, _, _, _ := hanging.snapshot()
		return len(ok) == n
	})
	if _, ok, _, maxIn, _ := hanging.snapshot(); inItemOrder(ok) != nil || maxIn > DefaultEndpointConcurrency {
		t.Errorf("hanging endpoint: order %v, %d attempts in flight at most", inItemOrder(ok), maxIn)
	}

	// A day later (for the clock) the endpoint that keeps failing is
	// disabled at its next attempt; the redirecting one too. The healthy
	// one gets the new messages.
	offset.Store(int64(2 * time.Hour))
	queue(items, 1, "late:")
	for _, rc := range []*receiver{failing, redirecting} {
		testkit.Eventually(t, "the failing endpoint is disabled", func() bool {
			w, err := st.GetWebhook(ctx, ids[rc])
			return err == nil && !w.Active && w.DisabledReason != ""
		})
	}
	testkit.Eventually(t, "the healthy endpoint gets the new messages", func() bool {
		_, ok, _, _, _ := healthy.snapshot()
		return len(ok) == n
	})
	// Disabled endpoints are left alone: their messages wait, pending.
	before, _, _, _, _ := failing.snapshot()
	testkit.Eventually(t, "the flaky endpoint gets the new messages", func() bool {
		_, ok, _, _, _ := flaky.snapshot()
		return len(ok) == n
	})
	if after, _, _, _, _ := failing.snapshot(); len(after) > len(before)+DefaultEndpointConcurrency {
		t.Errorf("a disabled endpoint still gets attempts: %d, then %d", len(before), len(after))
	}
	// Every other message is delivered (the receivers count a message
	// before the deliverer records it).
	testkit.Eventually(t, "only the disabled endpoints' messages are pending", func() bool {
		pending, _, err := st.DeliveryQueue(ctx)
		return err == nil && pending == 2*n
	})
}

// TestWebhookRestartKeepsMessages: stopping Run (a lost lease, a
// shutdown) while an attempt hangs loses nothing: Run returns once the
// attempt has ended, every message is still pending, and the next Run
// delivers them all, in order per item.
func TestWebhookRestartKeepsMessages(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := storekit.OpenStore(t, t.TempDir())
	var up atomic.Bool
	rc := newIsolationReceiver(t, func(r *http.Request, _ isolationMessage, _ int) int {
		if !up.Load() {
			<-r.Context().Done() // hangs until the attempt is abandoned
			return http.StatusGatewayTimeout
		}
		return http.StatusOK
	})
	w := &repository.Webhook{URL: rc.srv.URL, Events: []string{"*"}, Secret: NewSecret(), Active: true}
	if err := st.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	var ds []*repository.Delivery
	now := time.Now().UTC()
	for rev := 1; rev <= 3; rev++ {
		for _, item := range []string{"post:1", "post:2"} {
			body, _ := json.Marshal(isolationMessage{Item: item, Rev: rev})
			ds = append(ds, &repository.Delivery{ID: fmt.Sprintf("msg_%s_%d", item, rev), WebhookID: w.ID, Item: item,
				Type: "event.updated", Payload: body, Created: now, Status: repository.DeliveryPending, NextAttempt: now})
		}
	}
	if err := st.RecordChanges(ctx, nil, nil, ds); err != nil {
		t.Fatal(err)
	}
	run := func() (stop func()) {
		// Grace short: the hanging attempts are abandoned when Run stops,
		// and the test need not wait the default 5 s for them.
		h := &Dispatcher{Store: st, Log: testkit.Quiet, AllowPrivate: true, Timeout: testdeadline.Timeout(t), FirstRetry: time.Millisecond,
			Grace: 200 * time.Millisecond}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); h.Run(runCtx) }()
		return func() {
			cancel()
			select {
			case <-done:
			case <-testdeadline.After(t):
				t.Fatal("Run did not return")
			}
		}
	}
	stop := run()
	testkit.Eventually(t, "both items' first messages are in flight", func() bool {
		_, _, inFlight, _, _ := rc.snapshot()
		return inFlight == 2
	})
	stop()
	if n, _, err := st.DeliveryQueue(ctx); err != nil || n != len(ds) {
		t.Fatalf("after the stop: %d pending (%v), want %d", n, err, len(ds))
	}
	up.Store(true)
	stop = run()
	defer stop()
	testkit.Eventually(t, "every message delivered after the restart", func() bool {
		n, _, err := st.DeliveryQueue(ctx)
		return err == nil && n == 0
	})
	_, ok, _, _, _ := rc.snapshot()
	if len(ok) != len(ds) {
		t.Errorf("%d delivered, want %d", len(ok), len(ds))
	}
	if err := inItemOrder(ok); err != nil {
		t.Error(err)
	}
}

// attemptsInFlight reads eventcal_webhook_attempts_in_flight.
func attemptsInFlight(t *testing.T, h *Dispatcher) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(h.Metrics())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "eventcal_webhook_attempts_in_flight" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no eventcal_webhook_attempts_in_flight")
	return 0
}

// TestWebhookConcurrencyBounds: with every endpoint hanging, the attempts
// in flight stop at Concurrency overall and EndpointConcurrency per
// endpoint. Each case has its own store and endpoints, so the cases run
// in parallel (each waits for Grace once its Run stops).
func TestWebhookConcurrencyBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		concurrency, perEndpoint int
		want                     int
	}{
		{"the overall bound", 3, 2, 3},
		{"the endpoint bound", 100, 2, 8},
		{"one at a time per endpoint", 100, 1, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, rcs := hangingEndpoints(t)
			// Grace short: the abandoned attempts end that long after
			// Run stops (default 5 s).
			h := &Dispatcher{Store: st, Log: testkit.Quiet, AllowPrivate: true, Timeout: testdeadline.Timeout(t),
				Concurrency: tc.concurrency, EndpointConcurrency: tc.perEndpoint, Grace: 200 * time.Millisecond}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); h.Run(runCtx) }()
			inFlight := func() (total, most int) {
				for _, rc := range rcs {
					_, _, n, _, _ := rc.snapshot()
					total, most = total+n, max(most, n)
				}
				return total, most
			}
			testkit.Eventually(t, "attempts up to the bound", func() bool {
				total, _ := inFlight()
				return total >= tc.want
			})
			if total, most := inFlight(); total != tc.want || most > tc.perEndpoint {
				t.Errorf("%d attempts in flight, at most %d to one endpoint; want %d, at most %d", total, most, tc.want, tc.perEndpoint)
			}
			if n := attemptsInFlight(t, h); n != float64(tc.want) {
				t.Errorf("eventcal_webhook_attempts_in_flight %v, want %d", n, tc.want)
			}
			stop()
			<-done
			testkit.Eventually(t, "the abandoned attempts end", func() bool {
				total, _ := inFlight()
				return total == 0
			})
		})
	}
}

// hangingEndpoints returns a store with four endpoints that hang until
// the attempt is abandoned (or the test ends), five due messages each.
func hangingEndpoints(t *testing.T) (repository.Store, []*receiver) {
	t.Helper()
	ctx := t.Context()
	st := storekit.OpenStore(t, t.TempDir())
	release := make(chan struct{})
	var rcs []*receiver
	var ds []*repository.Delivery
	now := time.Now().UTC()
	for range 4 {
		rc := newIsolationReceiver(t, func(r *http.Request, _ isolationMessage, _ int) int {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return http.StatusGatewayTimeout
		})
		rcs = append(rcs, rc)
		w := &repository.Webhook{URL: rc.srv.URL, Events: []string{"*"}, Secret: NewSecret(), Active: true}
		if err := st.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			item := fmt.Sprintf("post:%d", i)
			body, _ := json.Marshal(isolationMessage{Item: item, Rev: 1})
			ds = append(ds, &repository.Delivery{ID: "msg_" + item, WebhookID: w.ID, Item: item,
				Type: "event.updated", Payload: body, Created: now, Status: repository.DeliveryPending, NextAttempt: now})
		}
	}
	t.Cleanup(func() { close(release) })
	if err := st.RecordChanges(ctx, nil, nil, ds); err != nil {
		t.Fatal(err)
	}
	return st, rcs
}
