package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/internal/testkit"
	"github.com/calendar/eventcal/sync/internal/testkit/storekit"
	"github.com/calendar/eventcal/sync/lease"
)

// idReceiver is a test endpoint that records the webhook-id of every
// request in arrival order; answer decides each request's status (the
// nth request, from 1) and may block.
type idReceiver struct {
	srv    *httptest.Server
	answer func(n int) int

	mu  sync.Mutex
	ids []string
}

func newIDReceiver(t *testing.T, answer func(n int) int) *idReceiver {
	rc := &idReceiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.ids = append(rc.ids, r.Header.Get("webhook-id"))
		n := len(rc.ids)
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(n))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// received returns the webhook-ids received so far.
func (rc *idReceiver) received() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...)
}

// claimsFixture is a store with one endpoint at rc and the messages msgs
// queued for it, each about its own item, created and due at t0.
func claimsFixture(t *testing.T, rc *idReceiver, t0 time.Time, msgs ...string) (repository.Store, *repository.Webhook) {
	t.Helper()
	ctx := t.Context()
	st := storekit.OpenStore(t, t.TempDir())
	w := &repository.Webhook{URL: rc.srv.URL, Events: []string{"*"}, Secret: NewSecret(), Active: true}
	if err := st.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	var ds []*repository.Delivery
	for i, m := range msgs {
		ds = append(ds, &repository.Delivery{ID: m, WebhookID: w.ID, Item: "post:" + string(rune('1'+i)), Type: "event.updated",
			Payload: []byte(`{"id":"` + m + `"}`), Created: t0, Status: repository.DeliveryPending, NextAttempt: t0})
	}
	if err := st.RecordChanges(ctx, nil, nil, ds); err != nil {
		t.Fatal(err)
	}
	return st, w
}

// deliverer returns a Dispatcher over st whose clock reads *now.
func deliverer(t *testing.T, st repository.Store, now func() time.Time) *Dispatcher {
	h := &Dispatcher{Store: st, Log: testkit.Quiet, AllowPrivate: true, Timeout: testdeadline.Timeout(t), Now: now, EndpointConcurrency: 2}
	h.init()
	return h
}

// storedDelivery returns the stored delivery msg of endpoint w.
func storedDelivery(t *testing.T, st repository.Store, w int64, msg string) *repository.Delivery {
	t.Helper()
	log, err := st.ListDeliveries(t.Context(), w, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range log {
		if d.ID == msg {
			return d
		}
	}
	t.Fatalf("no delivery %s", msg)
	return nil
}

// TestWebhookDeliverersRace: a second deliverer on the same store while
// the first one's attempts are in flight sends none of the messages the
// first one claimed; every message reaches the endpoint once.
func TestWebhookDeliverersRace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	release := make(chan struct{})
	rc := newIDReceiver(t, func(n int) int {
		if n <= 2 {
			<-release // the first deliverer's first round waits
		}
		return http.StatusOK
	})
	t0 := time.Now().UTC()
	msgs := []string{"msg_a", "msg_b", "msg_c", "msg_d"}
	st, _ := claimsFixture(t, rc, t0, msgs...)
	clock := func() time.Time { return t0 }
	a, b := deliverer(t, st, clock), deliverer(t, st, clock)
	aDone := make(chan int)
	go func() {
		n, err := a.DeliverDue(ctx)
		if err != nil {
			t.Error(err)
		}
		aDone <- n
	}()
	testkit.Eventually(t, "the first deliverer's attempts are in flight", func() bool { return len(rc.received()) == 2 })
	n, err := b.DeliverDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the second deliverer tried %d messages claimed by the first", n)
	}
	close(release)
	if n := <-aDone; n != len(msgs) {
		t.Errorf("the first deliverer tried %d, want %d", n, len(msgs))
	}
	seen := map[string]int{}
	for _, id := range rc.received() {
		seen[id]++
	}
	for _, m := range msgs {
		if seen[m] != 1 {
			t.Errorf("%s received %d times, want once", m, seen[m])
		}
	}
	if n, _, err := st.DeliveryQueue(ctx); err != nil || n != 0 {
		t.Errorf("%d still pending (%v)", n, err)
	}
}

// TestWebhookPausedDelivererCannotOverwrite: a deliverer whose attempt
// outlives its claim (it paused) cannot overwrite the result recorded by
// the deliverer that claimed the delivery after the expiry; both requests
// carry the same message ID.
func TestWebhookPausedDelivererCannotOverwrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	release := make(chan struct{})
	rc := newIDReceiver(t, func(n int) int {
		if n == 1 {
			<-release // the paused deliverer's attempt
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	t0 := time.Now().UTC()
	st, w := claimsFixture(t, rc, t0, "msg_1")
	a := deliverer(t, st, func() time.Time { return t0 })
	later := t0.Add(a.claimHold() + time.Second) // past a's claim
	b := deliverer(t, st, func() time.Time { return later })
	aDone := make(chan error)
	go func() {
		_, err := a.DeliverDue(ctx)
		aDone <- err
	}()
	testkit.Eventually(t, "the first attempt is in flight", func() bool { return len(rc.received()) == 1 })
	if n, err := b.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("the second deliverer tried %d (%v), want the expired claim's message", n, err)
	}
	close(release)
	if err := <-aDone; err != nil {
		t.Fatalf("the paused deliverer: %v", err)
	}
	d := storedDelivery(t, st, w.ID, "msg_1")
	if d.Status != repository.DeliveryDelivered || d.Attempts != 1 || len(d.Log) != 1 || d.Log[0].Code != http.StatusNoContent {
		t.Errorf("stored %s after %d attempts, log %+v; want delivered by the second deliverer", d.Status, d.Attempts, d.Log)
	}
	if ids := rc.received(); len(ids) != 2 || ids[0] != "msg_1" || ids[1] != "msg_1" {
		t.Errorf("webhook-ids %v, want msg_1 twice", ids)
	}
}

// TestWebhookCrashedAttemptRetriedWithSameID: a deliverer that claimed a
// delivery and died leaves it to its claim's expiry; then the next
// deliverer sends it, and every retry, under the message's ID.
func TestWebhookCrashedAttemptRetriedWithSameID(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rc := newIDReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	t0 := time.Now().UTC()
	st, w := claimsFixture(t, rc, t0, "msg_1")
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	set := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	h := deliverer(t, st, clock)
	// The crashed deliverer: it claimed and never recorded anything.
	if got, err := st.ClaimDeliveries(ctx, w.ID, t0, h.claimHold(), 10); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", got, err)
	}
	set(t0.Add(h.claimHold() / 2))
	if n, err := h.DeliverDue(ctx); err != nil || n != 0 {
		t.Fatalf("during the dead claim: tried %d (%v), want none", n, err)
	}
	set(t0.Add(h.claimHold()))
	if n, err := h.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("after the claim expired: tried %d (%v), want 1", n, err)
	}
	d := storedDelivery(t, st, w.ID, "msg_1")
	if d.Status != repository.DeliveryPending || d.Attempts != 1 || d.Claim != "" {
		t.Fatalf("after a 503: %s, %d attempts, claim %q", d.Status, d.Attempts, d.Claim)
	}
	set(d.NextAttempt)
	if n, err := h.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("the retry: tried %d (%v), want 1", n, err)
	}
	if d := storedDelivery(t, st, w.ID, "msg_1"); d.Status != repository.DeliveryDelivered || d.Attempts != 2 {
		t.Errorf("after the retry: %s, %d attempts", d.Status, d.Attempts)
	}
	if ids := rc.received(); len(ids) != 2 || ids[0] != "msg_1" || ids[1] != "msg_1" {
		t.Errorf("webhook-ids %v, want msg_1 for the attempt and its retry", ids)
	}
}

// TestWebhookShutdownGrace: an attempt in flight when Run's context ends
// (shutdown, lost lease) may still finish within Grace, and its result is
// recorded: the message is not sent again.
func TestWebhookShutdownGrace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	release := make(chan struct{})
	rc := newIDReceiver(t, func(int) int {
		<-release
		return http.StatusOK
	})
	t0 := time.Now().UTC()
	st, w := claimsFixture(t, rc, t0, "msg_1")
	h := deliverer(t, st, func() time.Time { return t0 })
	h.Grace = testdeadline.Timeout(t) // the test decides when the attempt ends
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.Run(runCtx) }()
	testkit.Eventually(t, "the attempt is in flight", func() bool { return len(rc.received()) == 1 })
	cancel()
	close(release)
	select {
	case <-done:
	case <-testdeadline.After(t):
		t.Fatal("Run did not return")
	}
	if d := storedDelivery(t, st, w.ID, "msg_1"); d.Status != repository.DeliveryDelivered || d.Attempts != 1 || d.Claim != "" {
		t.Errorf("after the shutdown: %s, %d attempts, claim %q; want delivered", d.Status, d.Attempts, d.Claim)
	}
}

// plainRenderer renders every item as {"id": ID}.
type plainRenderer struct{}

func (plainRenderer) RenderRecord(_ context.Context, p *repository.Record) (json.RawMessage, error) {
	return json.Marshal(map[string]int64{"id": p.ID})
}

func (plainRenderer) RenderLabel(_ context.Context, t *repository.Label) (json.RawMessage, error) {
	return json.Marshal(map[string]int64{"id": t.ID})
}

// TestWebhookOutboxFenced: a former leader that paused past its lease
// (its clock says it still leads; the store says another process took
// over) records no item state and queues no message; the holder does.
func TestWebhookOutboxFenced(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := storekit.OpenStore(t, t.TempDir())
	w := &repository.Webhook{URL: "https://hooks.example/in", Events: []string{"*"}, Secret: NewSecret(), Active: true}
	if err := store.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	p := testkit.Post(t, store, repository.KindEvent, "fenced", repository.StatusPublish, time.Now().UTC())
	marks, err := store.PendingMarks(ctx, 100)
	if err != nil || len(marks) == 0 {
		t.Fatalf("marks: %v, %v", marks, err)
	}
	key := repository.ItemKey{Kind: repository.MarkPost, ID: p.ID}
	tests := []struct {
		name     string
		lease    lease.Lease
		wantErr  bool
		wantMsgs int
	}{
		{"paused former leader", testkit.PausedLease{}, true, 0},
		{"holder", lease.Held(), false, 1},
	}
	for _, tc := range tests {
		h := &Dispatcher{Store: store, Log: testkit.Quiet, Render: plainRenderer{}, Lease: tc.lease}
		err := h.Observe(ctx, marks)
		if gotErr := errors.Is(err, lease.ErrNotLeader); gotErr != tc.wantErr {
			t.Errorf("%s: Observe = %v, want lease.ErrNotLeader %v", tc.name, err, tc.wantErr)
		}
		n, _, err := store.DeliveryQueue(ctx)
		if err != nil || n != tc.wantMsgs {
			t.Errorf("%s: %d queued (%v), want %d", tc.name, n, err, tc.wantMsgs)
		}
		states, err := store.ItemStates(ctx, []repository.ItemKey{key})
		if err != nil || len(states) != tc.wantMsgs {
			t.Errorf("%s: %d item states (%v), want %d", tc.name, len(states), err, tc.wantMsgs)
		}
	}
}
