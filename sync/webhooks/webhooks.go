package webhooks

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/lease"
)

// A Dispatcher turns writes into signed HTTP messages to the endpoints
// admins registered (Standard Webhooks, https://www.standardwebhooks.com).
//
// Delivery is driven from the store, like indexing. Every write records an
// index mark in the same write; before the indexing worker indexes a batch,
// Observe (its indexing.ChangeObserver) compares each marked item with the
// state its last message reported (repository.ItemState) and queues one message per change and endpoint:
// "<resource>.created" for a new item, ".trashed" when its status became
// trash, ".deleted" when it is gone, ".updated" for any other new revision.
// The states and the queued deliveries are stored before the marks are
// cleared, so a change survives a crash at any point, and a batch retried
// after a crash queues the same message IDs again, which the store skips.
// Changes to one item that reach the worker in one batch (writes a few
// milliseconds apart) are reported as one message with the latest state.
// Marks that only ask for a reindex (an event whose venue changed) carry no
// new revision and send nothing.
//
// Only the process holding the lease runs the worker and Run. Each
// attempt runs under a claim of its delivery in the store, so that even
// two deliverers (a former leader that has not noticed its loss yet, and
// the new one) never attempt one message at once, and only the claim's
// holder records the result; an attempt whose claim expired (its process
// crashed or paused) is made again by whoever claims the delivery next,
// under the same message ID (webhook-id), as Standard Webhooks allows.
//
// Run sends due deliveries, retries failures with exponential backoff and
// jitter for RetryFor (24 hours), keeps each endpoint's messages about one
// item in order, and disables an endpoint that has failed for DisableAfter
// (a day).
//
// Endpoints are isolated from each other: each has its own line in the
// store (ClaimDeliveries) and its own goroutine in Run, with at most
// EndpointConcurrency attempts in flight, so an endpoint that hangs,
// fails or redirects (redirects are not followed: a 3xx is a failed
// attempt) delays only its own messages. Concurrency bounds the attempts
// of all endpoints together.
type Dispatcher struct {
	Store repository.Store
	// Render renders items as the API shows them to an admin.
	Render ItemRenderer
	Log    *slog.Logger
	// AllowPrivate lets endpoints resolve to private, loopback and
	// link-local addresses (WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
	// MaxResponse is how much of a response body is read (default 64 KiB).
	MaxResponse int64
	// RetryFor is how long a message is retried (default 24 h);
	// DisableAfter how long an endpoint may fail before it is disabled
	// (default 24 h).
	RetryFor, DisableAfter time.Duration
	// FirstRetry is the wait before the first retry (default 5 s); each
	// further wait doubles, up to MaxRetryWait (default 1 h).
	FirstRetry, MaxRetryWait time.Duration
	// PollInterval is how often Run looks for due deliveries (default 1 s);
	// Observe wakes it at once.
	PollInterval time.Duration
	// Concurrency bounds the attempts in flight overall (default
	// DefaultConcurrency, 32) and EndpointConcurrency those to one endpoint
	// (default DefaultEndpointConcurrency, 2), each about another item.
	Concurrency, EndpointConcurrency int
	// Lease, when set, is checked (lease.CheckFence) right before Observe
	// records states and queues messages, so that a former leader that
	// paused past its lease does not record stale states over the new
	// leader's.
	Lease lease.Lease
	// Grace is how long an attempt in flight may still take, and record
	// its result, once Run's context ended (the lease was lost or the
	// service stops); default 5 s, at most Timeout. An attempt cut off
	// after it records nothing: its claim expires and the message is sent
	// again, with the same message ID.
	Grace time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	once    sync.Once
	wake    chan struct{}
	slots   chan struct{}
	client  *httpClient
	metrics *webhookMetrics
}

// ItemRenderer renders items as the API shows them to an admin (app).
type ItemRenderer interface {
	RenderRecord(ctx context.Context, p *repository.Record) (json.RawMessage, error)
	RenderLabel(ctx context.Context, t *repository.Label) (json.RawMessage, error)
}

// EventTypes lists every message type an endpoint can subscribe to.
var EventTypes = func() []string {
	var out []string
	for _, r := range []string{"event", "venue", "organizer", "category", "tag"} {
		for _, a := range []string{"created", "updated", "trashed", "deleted"} {
			if a == "trashed" && (r == "category" || r == "tag") {
				continue // terms are deleted, never trashed
			}
			out = append(out, r+"."+a)
		}
	}
	return out
}()

func (h *Dispatcher) init() {
	h.once.Do(func() {
		h.wake = make(chan struct{}, 1)
		if h.Log == nil {
			h.Log = slog.Default()
		}
		if h.Now == nil {
			h.Now = time.Now
		}
		def := func(d *time.Duration, v time.Duration) {
			if *d <= 0 {
				*d = v
			}
		}
		def(&h.Timeout, 10*time.Second)
		def(&h.RetryFor, 24*time.Hour)
		def(&h.DisableAfter, 24*time.Hour)
		def(&h.FirstRetry, 5*time.Second)
		def(&h.MaxRetryWait, time.Hour)
		def(&h.PollInterval, time.Second)
		def(&h.Grace, min(5*time.Second, h.Timeout))
		if h.Concurrency <= 0 {
			h.Concurrency = DefaultConcurrency
		}
		if h.EndpointConcurrency <= 0 {
			h.EndpointConcurrency = DefaultEndpointConcurrency
		}
		h.slots = make(chan struct{}, h.Concurrency)
		if h.MaxResponse <= 0 {
			h.MaxResponse = 64 << 10
		}
		h.client = newHTTPClient(h.Timeout, h.AllowPrivate)
		h.metrics = webhookMetricsFor(h)
	})
}

// NewSecret returns a new signing secret in the Standard Webhooks
// form: "whsec_" and 32 random bytes in base64.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// change is one message about one item.
type change struct {
	key      repository.ItemKey
	resource string
	action   string
	// previous is the status before the change, when it changed.
	previous string
	at       time.Time
	post     *repository.Record
	term     *repository.Label
	revision int64
}

// Observe queues the messages for the changes the marks stand for (see
// Dispatcher). It records the items' states even while no endpoint is
// active, so that an item's first message is always its creation.
func (h *Dispatcher) Observe(ctx context.Context, marks []repository.IndexMark) error {
	h.init()
	if len(marks) == 0 {
		return nil
	}
	hooks, err := h.Store.ListWebhooks(ctx)
	if err != nil {
		return err
	}
	var active []*repository.Webhook
	for _, w := range hooks {
		if w.Active {
			active = append(active, w)
		}
	}
	keys := make([]repository.ItemKey, len(marks))
	var postIDs, termIDs []int64
	for i, m := range marks {
		keys[i] = repository.ItemKey{Kind: m.Kind, ID: m.ID}
		if m.Kind == repository.MarkTerm {
			termIDs = append(termIDs, m.ID)
		} else {
			postIDs = append(postIDs, m.ID)
		}
	}
	posts, err := h.Store.GetRecords(ctx, postIDs)
	if err != nil {
		return err
	}
	terms, err := h.Store.GetLabels(ctx, termIDs)
	if err != nil {
		return err
	}
	states, err := h.Store.ItemStates(ctx, keys)
	if err != nil {
		return err
	}
	var (
		changes  []change
		newState []repository.ItemState
		gone     []repository.ItemKey
	)
	for i, m := range marks {
		key := keys[i]
		st, known := states[key]
		c := change{key: key, at: m.At}
		var status string
		switch {
		case m.Kind == repository.MarkTerm && terms[m.ID] != nil:
			t := terms[m.ID]
			c.term, c.revision, c.resource = t, t.Revision, termResource(t.Taxonomy)
		case m.Kind != repository.MarkTerm && posts[m.ID] != nil:
			p := posts[m.ID]
			if p.Kind == repository.KindImage {
				continue
			}
			c.post, c.revision, c.resource, status = p, p.Revision, string(p.Kind), p.Status
		default:
			if known {
				c.resource, c.action, c.previous, c.revision = st.Resource, "deleted", st.Status, st.Revision
				changes = append(changes, c)
				gone = append(gone, key)
			}
			continue
		}
		switch {
		case !known:
			// States are recorded for every write, so an unknown item is
			// new. (Items stored before the service recorded states, on
			// an upgrade, are reported as created on their next write.)
			c.action = "created"
		case st.Revision == c.revision && st.Status == status:
			// A reindex request: nothing changed.
		case status == repository.StatusTrash && st.Status != repository.StatusTrash:
			c.action, c.previous = "trashed", st.Status
		default:
			c.action = "updated"
			if st.Status != status {
				c.previous = st.Status
			}
		}
		newState = append(newState, repository.ItemState{ItemKey: key, Resource: c.resource, Revision: c.revision, Status: status})
		if c.action != "" {
			changes = append(changes, c)
		}
	}
	var deliveries []*repository.Delivery
	now := h.Now().UTC()
	for _, c := range changes {
		if len(active) == 0 {
			break
		}
		typ := c.resource + "." + c.action
		var wanted []*repository.Webhook
		for _, w := range active {
			if w.Wants(typ) {
				wanted = append(wanted, w)
			}
		}
		if len(wanted) == 0 {
			continue
		}
		id := messageID(c.key, typ, c.revision)
		payload, err := h.envelope(ctx, id, typ, c)
		if err != nil {
			return err
		}
		for _, w := range wanted {
			deliveries = append(deliveries, &repository.Delivery{ID: id, WebhookID: w.ID, Item: c.key.String(), Type: typ,
				Payload: payload, Created: now, Status: repository.DeliveryPending, NextAttempt: now})
		}
	}
	if err := lease.CheckFence(ctx, h.Lease); err != nil {
		return err
	}
	if err := h.Store.RecordChanges(ctx, newState, gone, deliveries); err != nil {
		return err
	}
	if len(deliveries) > 0 {
		h.Notify()
	}
	return nil
}

// termResource names a taxonomy in message types.
func termResource(tax repository.LabelKind) string {
	if tax == repository.LabelTag {
		return "tag"
	}
	return "category"
}

// messageID derives the message ID from what it reports, so that a batch
// observed twice (after a crash) yields the same IDs.
func messageID(key repository.ItemKey, typ string, revision int64) string {
	sum := sha256.Sum256([]byte(key.String() + "|" + typ + "|" + strconv.FormatInt(revision, 10)))
	return "msg_" + hex.EncodeToString(sum[:13])
}

// envelope is the body of a message.
type envelope struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	OccurredAt     string          `json:"occurred_at"`
	Item           json.RawMessage `json:"item"`
	PreviousStatus string          `json:"previous_status,omitempty"`
}

// envelope renders a change's message body: the item as an admin reads it
// (only its ID once deleted).
func (h *Dispatcher) envelope(ctx context.Context, id, typ string, c change) ([]byte, error) {
	e := envelope{ID: id, Type: typ, OccurredAt: c.at.UTC().Format(time.RFC3339Nano), PreviousStatus: c.previous}
	var err error
	switch {
	case c.post != nil:
		e.Item, err = h.Render.RenderRecord(ctx, c.post)
	case c.term != nil:
		e.Item, err = h.Render.RenderLabel(ctx, c.term)
	default:
		e.Item = json.RawMessage(`{"id":` + strconv.FormatInt(c.key.ID, 10) + `}`)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// Notify wakes Run; it never blocks.
func (h *Dispatcher) Notify() {
	h.init()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}
