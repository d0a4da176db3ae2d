package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

var webhookTests = []storeTest{
	{"CRUD", testWebhookCRUD},
	{"ItemStates", testItemStates},
	{"DeliveryQueue", testDeliveryQueue},
	{"EndpointDeliveryQueue", testEndpointDeliveryQueue},
	{"ClaimsRace", testClaimsRace},
	{"ClaimLostResultDiscarded", testClaimLost},
	{"ExpiredClaimRetried", testExpiredClaim},
}

func newWebhook(t *testing.T, ctx context.Context, s repository.Store, url string) *repository.Webhook {
	t.Helper()
	w := &repository.Webhook{URL: url, Events: []string{"event.created", "*"}, Secret: "whsec_c2VjcmV0",
		Active: true, Created: baseTime, Updated: baseTime}
	if err := s.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	return w
}

func testWebhookCRUD(t *testing.T, ctx context.Context, s repository.Store) {
	a := newWebhook(t, ctx, s, "https://a.example/hook")
	b := newWebhook(t, ctx, s, "https://b.example/hook")
	if a.ID <= 0 || b.ID <= a.ID {
		t.Fatalf("IDs %d, %d: want positive and increasing", a.ID, b.ID)
	}
	got, err := s.GetWebhook(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != a.URL || got.Secret != a.Secret || !got.Active || len(got.Events) != 2 || !normTime(got.Created).Equal(normTime(baseTime)) {
		t.Errorf("read back %+v", got)
	}
	failing := baseTime.Add(time.Hour)
	up, err := s.UpdateWebhook(ctx, a.ID, func(w *repository.Webhook) error {
		w.Active, w.DisabledReason, w.FailingSince = false, "failing", failing
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetWebhook(ctx, a.ID)
	if got.Active || got.DisabledReason != "failing" || !normTime(got.FailingSince).Equal(normTime(failing)) || got.Revision != up.Revision {
		t.Errorf("after update %+v", got)
	}
	stop := errors.New("stop")
	if _, err := s.UpdateWebhook(ctx, a.ID, func(*repository.Webhook) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn error = %v", err)
	}
	list, err := s.ListWebhooks(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("list = %v, %v", list, err)
	}
	d := &repository.Delivery{ID: "msg_1", WebhookID: a.ID, Item: "post:1", Type: "event.created", Payload: []byte(`{}`),
		Created: baseTime, Status: repository.DeliveryPending, NextAttempt: baseTime}
	if err := s.RecordChanges(ctx, nil, nil, []*repository.Delivery{d}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhook(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetWebhook(ctx, a.ID); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("deleted webhook: %v", err)
	}
	if ds, _ := s.ListDeliveries(ctx, a.ID, 10); len(ds) != 0 {
		t.Errorf("deliveries of a deleted webhook remain: %d", len(ds))
	}
	if err := s.DeleteWebhook(ctx, a.ID); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := s.UpdateWebhook(ctx, a.ID, func(*repository.Webhook) error { return nil }); !errors.Is(err, repository.ErrNotFound) {
		t.Errorf("update of a deleted webhook: %v", err)
	}
}

func testItemStates(t *testing.T, ctx context.Context, s repository.Store) {
	p1 := repository.ItemKey{Kind: repository.MarkPost, ID: 1}
	t1 := repository.ItemKey{Kind: repository.MarkTerm, ID: 1}
	p2 := repository.ItemKey{Kind: repository.MarkPost, ID: 2}
	err := s.RecordChanges(ctx, []repository.ItemState{
		{ItemKey: p1, Resource: "event", Revision: 1, Status: "draft"}, {ItemKey: t1, Resource: "tag", Revision: 3}, {ItemKey: p2, Revision: 1, Status: "publish"},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RecordChanges(ctx, []repository.ItemState{{ItemKey: p1, Resource: "event", Revision: 2, Status: "publish"}}, []repository.ItemKey{p2}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ItemStates(ctx, []repository.ItemKey{p1, t1, p2, {Kind: repository.MarkPost, ID: 99}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[p1].Revision != 2 || got[p1].Status != "publish" || got[t1].Revision != 3 || got[t1].Resource != "tag" || got[p1].Resource != "event" {
		t.Errorf("states = %+v", got)
	}
	if _, ok := got[p2]; ok {
		t.Error("a gone item keeps its state")
	}
	many := make([]repository.ItemKey, 1000)
	for i := range many {
		many[i] = repository.ItemKey{Kind: repository.MarkPost, ID: int64(i + 1)}
	}
	if got, err := s.ItemStates(ctx, many); err != nil || len(got) != 1 {
		t.Errorf("1000 keys: %d states, %v", len(got), err)
	}
}

func testDeliveryQueue(t *testing.T, ctx context.Context, s repository.Store) {
	w1 := newWebhook(t, ctx, s, "https://a.example/hook").ID
	w2 := newWebhook(t, ctx, s, "https://b.example/hook").ID
	at := func(min int) time.Time { return baseTime.Add(time.Duration(min) * time.Minute) }
	d := func(w int64, msg, item string, next int) *repository.Delivery {
		return &repository.Delivery{ID: msg, WebhookID: w, Item: item, Type: "event.updated", Payload: []byte(`{"m":"` + msg + `"}`),
			Created: at(0), Status: repository.DeliveryPending, NextAttempt: at(next)}
	}
	first := []*repository.Delivery{
		d(w1, "m1", "post:1", 0), d(w1, "m2", "post:1", 0), // m2 waits behind m1
		d(w1, "m3", "post:2", 5), // not due before minute 5
		d(w2, "m1", "post:1", 0), // another endpoint: its own line
	}
	if err := s.RecordChanges(ctx, nil, nil, first); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(first); i++ {
		if first[i].Seq <= first[i-1].Seq {
			t.Fatalf("seqs not increasing: %d then %d", first[i-1].Seq, first[i].Seq)
		}
	}
	// The same messages again (a retried batch) are not queued twice.
	if err := s.RecordChanges(ctx, nil, nil, []*repository.Delivery{d(w1, "m1", "post:1", 0)}); err != nil {
		t.Fatal(err)
	}
	ids := func(ds []*repository.Delivery) []string {
		var out []string
		for _, x := range ds {
			out = append(out, x.ID+"@"+map[int64]string{w1: "w1", w2: "w2"}[x.WebhookID])
		}
		return out
	}
	due, err := s.DueDeliveries(ctx, at(1), 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(due); len(got) != 2 || got[0] != "m1@w1" || got[1] != "m1@w2" {
		t.Fatalf("due at minute 1 = %v, want [m1@w1 m1@w2]", got)
	}
	if string(due[0].Payload) != `{"m":"m1"}` || due[0].Item != "post:1" || due[0].Type != "event.updated" {
		t.Errorf("delivery read back as %+v", due[0])
	}
	n, oldest, err := s.DeliveryQueue(ctx)
	if err != nil || n != 4 || !normTime(oldest).Equal(normTime(at(0))) {
		t.Errorf("queue = %d, %v, %v; want 4 pending since minute 0", n, oldest, err)
	}
	// m1@w1 delivered: m2 is next in its line.
	m1 := due[0]
	m1.Status, m1.Attempts = repository.DeliveryDelivered, 1
	m1.Log = append(m1.Log, repository.DeliveryAttempt{At: at(1), Code: 204, DurationMs: 12})
	if err := s.SaveDelivery(ctx, m1); err != nil {
		t.Fatal(err)
	}
	// m1@w2 failed once: retried at minute 10.
	r := due[1]
	r.Attempts, r.NextAttempt = 1, at(10)
	r.Log = append(r.Log, repository.DeliveryAttempt{At: at(1), Code: 500, Error: "status 500"})
	if err := s.SaveDelivery(ctx, r); err != nil {
		t.Fatal(err)
	}
	due, _ = s.DueDeliveries(ctx, at(6), 10)
	if got := ids(due); len(got) != 2 || got[0] != "m2@w1" || got[1] != "m3@w1" {
		t.Fatalf("due at minute 6 = %v, want [m2@w1 m3@w1]", got)
	}
	if due, _ := s.DueDeliveries(ctx, at(6), 1); len(due) != 1 {
		t.Errorf("limit 1 gave %d", len(due))
	}
	log, err := s.ListDeliveries(ctx, w1, 10)
	if err != nil || len(log) != 3 || log[0].ID != "m3" || log[2].ID != "m1" {
		t.Fatalf("log of w1 = %v, %v", ids(log), err)
	}
	if l := log[2]; l.Status != repository.DeliveryDelivered || l.Attempts != 1 || len(l.Log) != 1 || l.Log[0].Code != 204 || !normTime(l.Log[0].At).Equal(normTime(at(1))) {
		t.Errorf("delivered entry = %+v", l)
	}
	w2log, _ := s.ListDeliveries(ctx, w2, 10)
	if len(w2log) != 1 {
		t.Fatalf("log of w2 has %d entries, want 1", len(w2log))
	}
	if w2log[0].Attempts != 1 || !normTime(w2log[0].NextAttempt).Equal(normTime(at(10))) || w2log[0].Log[0].Error != "status 500" {
		t.Errorf("retried entry = %+v", *w2log[0])
	}
	if err := s.PruneDeliveries(ctx, at(1)); err != nil {
		t.Fatal(err)
	}
	if log, _ := s.ListDeliveries(ctx, w1, 10); len(log) != 2 {
		t.Errorf("after prune: %d deliveries, want the 2 pending", len(log))
	}
}

// testEndpointDeliveryQueue: an endpoint's due deliveries are read on
// their own, whatever backlog another endpoint has queued before them,
// first in line per item, in Seq order, up to the limit.
func testEndpointDeliveryQueue(t *testing.T, ctx context.Context, s repository.Store) {
	busy := newWebhook(t, ctx, s, "https://busy.example/hook").ID
	quiet := newWebhook(t, ctx, s, "https://quiet.example/hook").ID
	idle := newWebhook(t, ctx, s, "https://idle.example/hook").ID
	at := func(min int) time.Time { return baseTime.Add(time.Duration(min) * time.Minute) }
	d := func(w int64, msg, item string, next int) *repository.Delivery {
		return &repository.Delivery{ID: msg, WebhookID: w, Item: item, Type: "event.updated", Payload: []byte(`{}`),
			Created: at(0), Status: repository.DeliveryPending, NextAttempt: at(next)}
	}
	// The busy endpoint's backlog comes first: 40 messages about 20 items
	// (two per item), more than any limit below.
	var queued []*repository.Delivery
	for i := range 40 {
		queued = append(queued, d(busy, fmt.Sprintf("b%02d", i), fmt.Sprintf("post:%d", i%20), 0))
	}
	queued = append(queued,
		d(quiet, "q1", "post:1", 0), d(quiet, "q2", "post:1", 0), // q2 waits behind q1
		d(quiet, "q3", "post:2", 5), // due at minute 5
		d(quiet, "q4", "post:3", 0),
	)
	if err := s.RecordChanges(ctx, nil, nil, queued); err != nil {
		t.Fatal(err)
	}
	ids := func(ds []*repository.Delivery) []string {
		var out []string
		for _, x := range ds {
			out = append(out, x.ID)
		}
		return out
	}
	tests := []struct {
		name    string
		webhook int64
		minute  int
		limit   int
		want    string
	}{
		{"behind another endpoint's backlog", quiet, 1, 10, "[q1 q4]"},
		{"a later retry becomes due", quiet, 6, 10, "[q1 q3 q4]"},
		{"the limit", quiet, 6, 2, "[q1 q3]"},
		{"the backlog: first in line per item", busy, 1, 5, "[b00 b01 b02 b03 b04]"},
		{"the backlog: every item once", busy, 1, 100, fmt.Sprint(ids(queued[:20]))},
		{"nothing queued", idle, 1, 10, "[]"},
	}
	for _, tc := range tests {
		due, err := s.DueEndpointDeliveries(ctx, tc.webhook, at(tc.minute), tc.limit)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fmt.Sprint(ids(due)); got != tc.want {
			t.Errorf("%s: due = %s, want %s", tc.name, got, tc.want)
		}
		for _, x := range due {
			if x.WebhookID != tc.webhook {
				t.Errorf("%s: %s of endpoint %d", tc.name, x.ID, x.WebhookID)
			}
		}
	}
	// q1 delivered: q2 is next in its line.
	due, _ := s.DueEndpointDeliveries(ctx, quiet, at(1), 1)
	due[0].Status = repository.DeliveryDelivered
	if err := s.SaveDelivery(ctx, due[0]); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.DueEndpointDeliveries(ctx, quiet, at(1), 10); fmt.Sprint(ids(due)) != "[q2 q4]" {
		t.Errorf("after q1: due = %v, want [q2 q4]", ids(due))
	}
}

// claimHold is how long the claims of the claim tests hold.
const claimHold = time.Minute

// queueClaimTest queues, for a new endpoint, the deliveries named msgs,
// about the items named at the same index, all due at baseTime.
func queueClaimTest(t *testing.T, ctx context.Context, s repository.Store, msgs, items []string) int64 {
	t.Helper()
	w := newWebhook(t, ctx, s, "https://claims.example/hook").ID
	var ds []*repository.Delivery
	for i, m := range msgs {
		ds = append(ds, &repository.Delivery{ID: m, WebhookID: w, Item: items[i], Type: "event.updated",
			Payload: []byte(`{"m":"` + m + `"}`), Created: baseTime, Status: repository.DeliveryPending, NextAttempt: baseTime})
	}
	if err := s.RecordChanges(ctx, nil, nil, ds); err != nil {
		t.Fatal(err)
	}
	return w
}

// testClaimsRace: deliverers racing on one store claim every delivery
// exactly once: each message is attempted once, and each result recorded.
func testClaimsRace(t *testing.T, ctx context.Context, s repository.Store) {
	const n, deliverers = 24, 4
	var msgs, items []string
	for i := range n {
		msgs = append(msgs, fmt.Sprintf("m%02d", i))
		items = append(items, fmt.Sprintf("post:%d", i%8)) // three messages per item, in line
	}
	w := queueClaimTest(t, ctx, s, msgs, items)
	var (
		mu    sync.Mutex
		sent  = map[string]int{}
		wg    sync.WaitGroup
		errs  = make(chan error, deliverers)
		start = make(chan struct{})
	)
	for range deliverers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for idle := 0; idle < 3; {
				got, err := s.ClaimDeliveries(ctx, w, baseTime, claimHold, 4)
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					// Another deliverer may hold the last claims of a
					// line: look again a few times before giving up.
					idle++
					mu.Lock()
					done := len(sent) == n
					mu.Unlock()
					if done {
						return
					}
					continue
				}
				idle = 0
				for _, d := range got {
					mu.Lock()
					sent[d.ID]++
					mu.Unlock()
					d.Status, d.Attempts = repository.DeliveryDelivered, d.Attempts+1
					d.Log = append(d.Log, repository.DeliveryAttempt{At: baseTime, Code: 204})
					if err := s.SaveDelivery(ctx, d); err != nil {
						errs <- fmt.Errorf("save %s: %w", d.ID, err)
						return
					}
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Whatever the race left (a line whose claims moved between idle
	// looks), one deliverer finishes now.
	for {
		got, err := s.ClaimDeliveries(ctx, w, baseTime, claimHold, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		for _, d := range got {
			sent[d.ID]++
			d.Status, d.Attempts = repository.DeliveryDelivered, d.Attempts+1
			if err := s.SaveDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range msgs {
		if sent[m] != 1 {
			t.Errorf("message %s attempted %d times, want once", m, sent[m])
		}
	}
	log, err := s.ListDeliveries(ctx, w, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range log {
		if d.Status != repository.DeliveryDelivered || d.Attempts != 1 || d.Claim != "" {
			t.Errorf("%s stored as %s after %d attempts, claim %q", d.ID, d.Status, d.Attempts, d.Claim)
		}
	}
}

// testClaimLost: a deliverer paused past its claim cannot overwrite the
// result of the deliverer that claimed the delivery after it; while a
// claim is live nobody else gets the delivery, nor the next message of its
// item.
func testClaimLost(t *testing.T, ctx context.Context, s repository.Store) {
	w := queueClaimTest(t, ctx, s, []string{"m1", "m2"}, []string{"post:1", "post:1"})
	a, err := s.ClaimDeliveries(ctx, w, baseTime, claimHold, 10)
	if err != nil || len(a) != 1 || a[0].ID != "m1" || a[0].Claim == "" {
		t.Fatalf("first claim = %v, %v; want m1, claimed", a, err)
	}
	if !normTime(a[0].ClaimUntil).Equal(normTime(baseTime.Add(claimHold))) {
		t.Errorf("claim until %v, want %v", a[0].ClaimUntil, baseTime.Add(claimHold))
	}
	// Live: nobody else gets m1, and m2 waits behind it.
	if got, err := s.ClaimDeliveries(ctx, w, baseTime.Add(claimHold/2), claimHold, 10); err != nil || len(got) != 0 {
		t.Fatalf("claim during a live claim = %d deliveries, %v; want none", len(got), err)
	}
	// A pauses past its claim; B claims m1 and delivers it.
	later := baseTime.Add(claimHold + time.Second)
	b, err := s.ClaimDeliveries(ctx, w, later, claimHold, 10)
	if err != nil || len(b) != 1 || b[0].ID != "m1" || b[0].Claim == a[0].Claim {
		t.Fatalf("claim after expiry = %v, %v; want m1 under a new claim", b, err)
	}
	b[0].Status, b[0].Attempts = repository.DeliveryDelivered, 1
	b[0].Log = []repository.DeliveryAttempt{{At: later, Code: 204}}
	if err := s.SaveDelivery(ctx, b[0]); err != nil {
		t.Fatal(err)
	}
	// A resumes with a failed attempt: refused, the delivered result stays.
	a[0].Status, a[0].Attempts, a[0].NextAttempt = repository.DeliveryPending, 1, later.Add(time.Hour)
	a[0].Log = []repository.DeliveryAttempt{{At: baseTime, Code: 500, Error: "status 500"}}
	if err := s.SaveDelivery(ctx, a[0]); !errors.Is(err, repository.ErrClaimLost) {
		t.Fatalf("save under a lost claim: %v, want ErrClaimLost", err)
	}
	log, err := s.ListDeliveries(ctx, w, 10)
	if err != nil || len(log) != 2 {
		t.Fatalf("log = %v, %v", log, err)
	}
	if m1 := log[1]; m1.ID != "m1" || m1.Status != repository.DeliveryDelivered || len(m1.Log) != 1 || m1.Log[0].Code != 204 {
		t.Errorf("m1 stored as %+v, want delivered with B's attempt", m1)
	}
	// B's save cleared the claim and a second save with it is refused.
	if err := s.SaveDelivery(ctx, b[0]); !errors.Is(err, repository.ErrClaimLost) {
		t.Errorf("second save under a spent claim: %v, want ErrClaimLost", err)
	}
	// m2 is next in line.
	if got, err := s.ClaimDeliveries(ctx, w, later, claimHold, 10); err != nil || len(got) != 1 || got[0].ID != "m2" {
		t.Errorf("after m1: claimed %v, %v; want m2", got, err)
	}
}

// testExpiredClaim: a deliverer that crashed mid-attempt leaves its claim;
// once it expired the delivery is claimed again, with its message ID,
// payload and attempt count as stored, and a retry saved by the new
// holder keeps them.
func testExpiredClaim(t *testing.T, ctx context.Context, s repository.Store) {
	w := queueClaimTest(t, ctx, s, []string{"m1"}, []string{"post:1"})
	first, err := s.ClaimDeliveries(ctx, w, baseTime, claimHold, 10)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim = %v, %v", first, err)
	}
	// The crash: no save. After expiry the delivery comes back.
	later := baseTime.Add(claimHold)
	again, err := s.ClaimDeliveries(ctx, w, later, claimHold, 10)
	if err != nil || len(again) != 1 {
		t.Fatalf("claim after the crash = %v, %v; want m1 again", again, err)
	}
	d := again[0]
	if d.ID != first[0].ID || string(d.Payload) != string(first[0].Payload) || d.Attempts != 0 || d.Claim == first[0].Claim {
		t.Fatalf("reclaimed %+v, want message %s with its payload, 0 attempts, a new claim", d, first[0].ID)
	}
	// A failed attempt: pending again, due later, claim cleared.
	d.Attempts, d.NextAttempt = 1, later.Add(time.Hour)
	d.Log = []repository.DeliveryAttempt{{At: later, Code: 503, Error: "status 503"}}
	if err := s.SaveDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimDeliveries(ctx, w, later.Add(30*time.Minute), claimHold, 10); len(got) != 0 {
		t.Errorf("claimed before the retry is due: %v", got)
	}
	retry, err := s.ClaimDeliveries(ctx, w, later.Add(time.Hour), claimHold, 10)
	if err != nil || len(retry) != 1 || retry[0].ID != "m1" || retry[0].Attempts != 1 {
		t.Fatalf("retry = %v, %v; want m1 after 1 attempt", retry, err)
	}
}
