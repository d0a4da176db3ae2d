package repository

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Webhooks: admins register endpoints; the sync worker turns the index
// marks every write records (in the same write) into change messages, and
// the lease holder delivers them. See package sync/webhooks.

// Webhook is a registered endpoint.
type Webhook struct {
	ID  int64  `json:"id" bson:"_id"`
	URL string `json:"url" bson:"url"`
	// Description is the admin's note.
	Description string `json:"description" bson:"description"`
	// Events are the message types the endpoint receives ("event.created",
	// ...); "*" receives every type.
	Events []string `json:"events" bson:"events"`
	// Secret signs the messages (Standard Webhooks "whsec_" + base64).
	Secret string `json:"-" bson:"secret"`
	// Active is false once disabled, by an admin or after failing for a day.
	Active bool `json:"active" bson:"active"`
	// DisabledReason says why an inactive endpoint was disabled.
	DisabledReason string `json:"disabled_reason,omitempty" bson:"disabled_reason,omitempty"`
	// FailingSince is the first failed attempt since the last success (zero
	// while healthy).
	FailingSince time.Time `json:"failing_since,omitzero" bson:"failing_since,omitempty"`
	Created      time.Time `json:"created" bson:"created"`
	Updated      time.Time `json:"updated" bson:"updated"`
	// Revision guards updates (read-modify-write).
	Revision int64 `json:"-" bson:"revision"`
}

// Wants reports whether the endpoint receives messages of type typ.
func (w *Webhook) Wants(typ string) bool {
	for _, e := range w.Events {
		if e == "*" || e == typ {
			return true
		}
	}
	return false
}

// ItemKey names a record or a label (the key of an index mark).
type ItemKey struct {
	Kind MarkKind `json:"kind" bson:"kind"`
	ID   int64    `json:"id" bson:"id"`
}

// String is "record:12" or "label:3".
func (k ItemKey) String() string { return string(k.Kind) + ":" + strconv.FormatInt(k.ID, 10) }

// ItemState is what the webhook messages last reported of an item: its
// revision and status. A change is a difference from it.
type ItemState struct {
	ItemKey `bson:",inline"`
	// Resource is what the item is ("event", "venue", "category", ...),
	// kept so that a deleted item's message can name it.
	Resource string `json:"resource" bson:"resource"`
	Revision int64  `json:"revision" bson:"revision"`
	Status   string `json:"status" bson:"status"`
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveryAttempt is one try of a delivery.
type DeliveryAttempt struct {
	At time.Time `json:"at" bson:"at"`
	// Code is the HTTP status answered (0 when no response came).
	Code  int    `json:"code" bson:"code"`
	Error string `json:"error,omitempty" bson:"error,omitempty"`
	// DurationMs is how long the attempt took.
	DurationMs int64 `json:"duration_ms" bson:"duration_ms"`
}

// MaxAttemptLog bounds the attempts a delivery keeps (the newest).
const MaxAttemptLog = 20

// Delivery is one message to one endpoint, with its delivery log.
type Delivery struct {
	// ID is the message ID (the webhook-id header); a message sent to
	// several endpoints has one ID. (WebhookID, ID) is unique.
	ID        string `json:"id" bson:"msg_id"`
	WebhookID int64  `json:"webhook_id" bson:"webhook_id"`
	// Seq orders deliveries; the store assigns it.
	Seq int64 `json:"-" bson:"seq"`
	// Item is the item the message is about ("record:12"): an endpoint gets
	// the messages of one item in order.
	Item    string    `json:"item" bson:"item"`
	Type    string    `json:"type" bson:"type"`
	Payload []byte    `json:"-" bson:"payload"`
	Created time.Time `json:"created" bson:"created"`
	Status  string    `json:"status" bson:"status"`
	// Attempts counts tries so far; NextAttempt is when the next is due.
	Attempts    int               `json:"attempts" bson:"attempts"`
	NextAttempt time.Time         `json:"next_attempt" bson:"next_attempt"`
	Log         []DeliveryAttempt `json:"log" bson:"log"`
	// Claim is the token of the deliverer that claimed the delivery for
	// an attempt (ClaimDeliveries), empty when unclaimed; ClaimUntil is
	// when the claim expires, after which anyone may claim it again.
	Claim      string    `json:"-" bson:"claim,omitempty"`
	ClaimUntil time.Time `json:"-" bson:"claim_until,omitempty"`
}

// ErrClaimLost is returned by SaveDelivery when the delivery no longer
// holds the claim the result was attempted under: the claim expired and
// another deliverer claimed the delivery since (or the delivery is gone).
// The result is not recorded.
var ErrClaimLost = errors.New("repository: the delivery's claim was lost")

// WebhookStore is the part of Store behind webhooks.
type WebhookStore interface {
	// CreateWebhook assigns w.ID from the webhook sequence (when 0) and
	// stores w at revision 1. An explicit w.ID (a load) must not be held
	// by a stored endpoint (ErrDuplicate otherwise, nothing written), is
	// at most MaxExplicitID (ErrIDRange) and moves the sequence past it;
	// with an explicit ID a Revision above 0 is kept.
	CreateWebhook(ctx context.Context, w *Webhook) error
	// GetWebhook returns the endpoint or ErrNotFound.
	GetWebhook(ctx context.Context, id int64) (*Webhook, error)
	// ListWebhooks returns every endpoint by ID.
	ListWebhooks(ctx context.Context) ([]*Webhook, error)
	// UpdateWebhook is UpdateRecord for endpoints.
	UpdateWebhook(ctx context.Context, id int64, fn func(w *Webhook) error) (*Webhook, error)
	// DeleteWebhook removes the endpoint and its deliveries.
	DeleteWebhook(ctx context.Context, id int64) error

	// ItemStates returns the recorded states among keys.
	ItemStates(ctx context.Context, keys []ItemKey) (map[ItemKey]ItemState, error)
	// RecordChanges stores the new item states, forgets gone items and
	// queues the deliveries (assigning Seq), as one write where the engine
	// can. A delivery whose (WebhookID, ID) is already stored is skipped,
	// so recording the same changes twice queues them once.
	RecordChanges(ctx context.Context, states []ItemState, gone []ItemKey, deliveries []*Delivery) error
	// DueDeliveries returns up to limit pending deliveries due at now, by
	// Seq, leaving out any delivery behind an earlier pending one for the
	// same endpoint and item (per-item order).
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*Delivery, error)
	// DueEndpointDeliveries is DueDeliveries for one endpoint: up to limit
	// of its pending deliveries due at now, by Seq, each first in line for
	// its item. The deliverer asks for every endpoint on its own, so that
	// one endpoint's backlog never hides another endpoint's due messages.
	DueEndpointDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]*Delivery, error)
	// ClaimDeliveries claims up to limit of the endpoint's deliveries that
	// DueEndpointDeliveries would return at now, leaving out those under a
	// live claim (ClaimUntil after now): each is claimed atomically, so
	// that of several deliverers racing for a delivery exactly one gets
	// it, under a new Claim token valid until now+hold. A delivery under
	// a live claim still holds up the later messages of its item. An
	// expired claim is claimed again by whoever asks next.
	ClaimDeliveries(ctx context.Context, webhookID int64, now time.Time, hold time.Duration, limit int) ([]*Delivery, error)
	// SaveDelivery stores a delivery's status, attempts, next attempt and
	// log. For a claimed delivery (d.Claim set) it writes only while the
	// stored delivery still holds that claim, and clears the claim;
	// otherwise it changes nothing and returns ErrClaimLost.
	SaveDelivery(ctx context.Context, d *Delivery) error
	// ListDeliveries returns an endpoint's deliveries, newest first.
	ListDeliveries(ctx context.Context, webhookID int64, limit int) ([]*Delivery, error)
	// DeliveryQueue returns the number of pending deliveries and the
	// creation time of the oldest (zero when none).
	DeliveryQueue(ctx context.Context) (pending int, oldest time.Time, err error)
	// PruneDeliveries removes finished deliveries created before t.
	PruneDeliveries(ctx context.Context, before time.Time) error
}

// NewClaimToken returns a fresh random delivery claim token.
func NewClaimToken() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails
	return hex.EncodeToString(b)
}
