package mongo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// Webhook collections:
//
//	webhooks            endpoints (repository.Webhook, _id = ID)
//	webhook_items       the state each item was last reported in (_id = "post:12")
//	webhook_deliveries  the delivery queue and log (_id = "<webhook ID>:<message ID>")
//
// Only the lease holder's sync worker writes webhook_items and queues
// deliveries, so their writes never race. Deliverers claim a delivery
// before each attempt (ClaimDeliveries: a compare-and-set of its claim
// token, under the delivery's lock on FerretDB), and only the claim's
// holder saves the result, so even two deliverers never attempt one
// message at once. RecordChanges is not one
// transaction (FerretDB v1 has none): it queues the deliveries first, under
// _ids derived from the message, then records the states, so a crash in
// between makes the next try queue the same deliveries again, which the
// unique _id turns into no-ops.
const (
	collWebhooks   = "webhooks"
	collItemStates = "webhook_items"
	collDeliveries = "webhook_deliveries"
	seqWebhook     = "webhook"
	seqDelivery    = "delivery"
)

// webhookStore is repository.WebhookStore: the endpoints, the item states
// and the delivery queue.
type webhookStore struct{ *conn }

// CreateWebhook assigns w.ID from the webhook sequence (unless set: an
// explicit ID moves the sequence past it, and one an endpoint holds fails
// the insert with repository.ErrDuplicate) and stores w at revision 1, or
// at its own revision above 0 with an explicit ID.
func (s *webhookStore) CreateWebhook(ctx context.Context, w *repository.Webhook) error {
	c := *w
	if c.ID == 0 || c.Revision <= 0 {
		c.Revision = 1
	}
	if err := s.assignID(ctx, seqWebhook, &c.ID); err != nil {
		return err
	}
	c.Created, c.Updated = storedTime(c.Created), storedTime(c.Updated)
	if _, err := s.db.Collection(collWebhooks).InsertOne(ctx, &c); err != nil {
		return fmt.Errorf("mongo: create webhook: %w", asDuplicate(err))
	}
	*w = c
	return nil
}

// GetWebhook returns the endpoint or repository.ErrNotFound.
func (s *webhookStore) GetWebhook(ctx context.Context, id int64) (*repository.Webhook, error) {
	return findOne(ctx, s.db.Collection(collWebhooks), bson.D{{Key: "_id", Value: id}}, fmt.Sprintf("webhook %d", id), fixWebhookTimes)
}

// fixWebhookTimes normalises an endpoint read from the database.
func fixWebhookTimes(w *repository.Webhook) {
	w.Created, w.Updated = w.Created.UTC(), w.Updated.UTC()
	if !w.FailingSince.IsZero() {
		w.FailingSince = w.FailingSince.UTC()
	}
}

// ListWebhooks returns every endpoint by ID.
func (s *webhookStore) ListWebhooks(ctx context.Context) ([]*repository.Webhook, error) {
	return findAll(ctx, s.db.Collection(collWebhooks), bson.D{}, options.Find().SetSort(asc("_id")), "webhooks", nil, fixWebhookTimes)
}

// UpdateWebhook reads the endpoint, applies fn and replaces it if its
// revision is unchanged, starting over otherwise. (On FerretDB v1 the
// revision check is not atomic; endpoints are changed rarely, by admins and
// by the one delivering process.)
func (s *webhookStore) UpdateWebhook(ctx context.Context, id int64, fn func(w *repository.Webhook) error) (*repository.Webhook, error) {
	for attempt := 0; ; attempt++ {
		w, err := s.GetWebhook(ctx, id)
		if err != nil {
			return nil, err
		}
		rev := w.Revision
		if err := fn(w); err != nil {
			return nil, err
		}
		w.ID, w.Revision = id, rev+1
		w.Created, w.Updated = storedTime(w.Created), storedTime(w.Updated)
		if !w.FailingSince.IsZero() {
			w.FailingSince = storedTime(w.FailingSince)
		}
		res, err := s.db.Collection(collWebhooks).ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "revision", Value: rev}}, w)
		if err != nil {
			return nil, fmt.Errorf("mongo: update webhook %d: %w", id, asDuplicate(err))
		}
		if res.MatchedCount == 1 {
			return w, nil
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, err
		}
	}
}

// DeleteWebhook removes the endpoint and its deliveries.
func (s *webhookStore) DeleteWebhook(ctx context.Context, id int64) error {
	return deleteWithChildren(ctx, s.db.Collection(collWebhooks), id, "webhook", s.db.Collection(collDeliveries), "webhook_id", "deliveries")
}

// itemStateDoc is a document of webhook_items.
type itemStateDoc struct {
	Key                  string `bson:"_id"`
	repository.ItemState `bson:",inline"`
}

// ItemStates returns the recorded states among keys.
func (s *webhookStore) ItemStates(ctx context.Context, keys []repository.ItemKey) (map[repository.ItemKey]repository.ItemState, error) {
	out := make(map[repository.ItemKey]repository.ItemState, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	ids := make(bson.A, len(keys))
	for i, k := range keys {
		ids[i] = k.String()
	}
	cur, err := s.db.Collection(collItemStates).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, fmt.Errorf("mongo: item states: %w", err)
	}
	var docs []itemStateDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: item states: %w", err)
	}
	for _, d := range docs {
		out[d.ItemKey] = d.ItemState
	}
	return out, nil
}

// deliveryDocument is a document of webhook_deliveries.
type deliveryDocument struct {
	Key                 string `bson:"_id"`
	repository.Delivery `bson:",inline"`
}

func deliveryKey(webhookID int64, msgID string) string {
	return strconv.FormatInt(webhookID, 10) + ":" + msgID
}

// RecordChanges queues the deliveries (skipping those already queued),
// then stores the states and forgets the gone items.
func (s *webhookStore) RecordChanges(ctx context.Context, states []repository.ItemState, gone []repository.ItemKey, deliveries []*repository.Delivery) error {
	coll := s.db.Collection(collDeliveries)
	if len(deliveries) > 0 {
		last, err := s.nextSeq(ctx, seqDelivery, int64(len(deliveries)))
		if err != nil {
			return err
		}
		first := last - int64(len(deliveries)) + 1
		for i, d := range deliveries {
			doc := deliveryDocument{Key: deliveryKey(d.WebhookID, d.ID), Delivery: *d}
			doc.Seq = first + int64(i)
			doc.Created, doc.NextAttempt = storedMillis(d.Created), storedMillis(d.NextAttempt)
			if _, err := coll.InsertOne(ctx, &doc); err != nil {
				if mongo.IsDuplicateKeyError(err) {
					continue
				}
				return fmt.Errorf("mongo: queue delivery: %w", err)
			}
			d.Seq = doc.Seq
		}
	}
	states2 := s.db.Collection(collItemStates)
	for _, st := range states {
		doc := itemStateDoc{Key: st.String(), ItemState: st}
		if _, err := states2.ReplaceOne(ctx, bson.D{{Key: "_id", Value: doc.Key}}, &doc, options.Replace().SetUpsert(true)); err != nil {
			return fmt.Errorf("mongo: item state %s: %w", doc.Key, err)
		}
	}
	for _, k := range gone {
		if _, err := states2.DeleteOne(ctx, bson.D{{Key: "_id", Value: k.String()}}); err != nil {
			return fmt.Errorf("mongo: item state %s: %w", k, err)
		}
	}
	return nil
}

// storedMillis is t as BSON keeps it: UTC, whole milliseconds.
func storedMillis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func decodeDeliveries(ctx context.Context, cur *mongo.Cursor) ([]*repository.Delivery, error) {
	var docs []deliveryDocument
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: deliveries: %w", err)
	}
	out := make([]*repository.Delivery, len(docs))
	for i := range docs {
		d := docs[i].Delivery
		d.Created, d.NextAttempt = d.Created.UTC(), d.NextAttempt.UTC()
		if d.Claim != "" {
			d.ClaimUntil = d.ClaimUntil.UTC()
		} else {
			d.ClaimUntil = time.Time{}
		}
		for j := range d.Log {
			d.Log[j].At = d.Log[j].At.UTC()
		}
		out[i] = &d
	}
	return out, nil
}

// dueScan bounds how many pending deliveries DueDeliveries and
// DueEndpointDeliveries read to find the due ones that are first in line.
const dueScan = 2000

// DueDeliveries returns the pending deliveries due at now that are first
// in line for their endpoint and item. The pending ones are read in Seq
// order and the line is kept in Go.
func (s *webhookStore) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*repository.Delivery, error) {
	return s.dueDeliveries(ctx, bson.D{{Key: "status", Value: repository.DeliveryPending}}, now, limit, nil)
}

// DueEndpointDeliveries returns the pending deliveries of one endpoint due
// at now that are first in line for their item; the scan of dueScan
// pending deliveries is the endpoint's own, so another endpoint's backlog
// cannot fill it.
func (s *webhookStore) DueEndpointDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]*repository.Delivery, error) {
	return s.dueDeliveries(ctx, bson.D{{Key: "status", Value: repository.DeliveryPending}, {Key: "webhook_id", Value: webhookID}}, now, limit, nil)
}

// dueDeliveries reads the pending deliveries matching filter in Seq order
// and returns up to limit of those due at now that are first in line for
// their endpoint and item and that take accepts (nil: all); a delivery
// take refuses still holds up its line.
func (s *webhookStore) dueDeliveries(ctx context.Context, filter bson.D, now time.Time, limit int, take func(*repository.Delivery) bool) ([]*repository.Delivery, error) {
	cur, err := s.db.Collection(collDeliveries).Find(ctx, filter,
		options.Find().SetSort(bson.D{{Key: "seq", Value: 1}}).SetLimit(dueScan))
	if err != nil {
		return nil, fmt.Errorf("mongo: due deliveries: %w", err)
	}
	pending, err := decodeDeliveries(ctx, cur)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*repository.Delivery
	for _, d := range pending {
		line := strconv.FormatInt(d.WebhookID, 10) + "|" + d.Item
		if seen[line] {
			continue
		}
		seen[line] = true
		if !d.NextAttempt.After(now) && (take == nil || take(d)) {
			out = append(out, d)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// ClaimDeliveries reads the endpoint's due deliveries without a live claim
// and claims each with a compare-and-set on its claim and attempt count:
// of several deliverers that read the same state, one update matches.
// FerretDB v1 updates are not atomic (see the package documentation), so
// there the compare-and-set runs under the delivery's lock.
func (s *webhookStore) ClaimDeliveries(ctx context.Context, webhookID int64, now time.Time, hold time.Duration, limit int) ([]*repository.Delivery, error) {
	due, err := s.dueDeliveries(ctx, bson.D{{Key: "status", Value: repository.DeliveryPending}, {Key: "webhook_id", Value: webhookID}}, now, dueScan,
		func(d *repository.Delivery) bool { return d.Claim == "" || !d.ClaimUntil.After(now) })
	if err != nil {
		return nil, err
	}
	until := storedMillis(now.Add(hold))
	var out []*repository.Delivery
	for _, d := range due {
		if len(out) == limit {
			break
		}
		token := repository.NewClaimToken()
		observed := bson.E{Key: "claim", Value: d.Claim}
		if d.Claim == "" {
			observed.Value = bson.D{{Key: "$exists", Value: false}}
		}
		filter := bson.D{{Key: "_id", Value: deliveryKey(d.WebhookID, d.ID)}, {Key: "status", Value: repository.DeliveryPending},
			{Key: "attempts", Value: d.Attempts}, observed}
		won, err := s.casDelivery(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "claim", Value: token}, {Key: "claim_until", Value: until}}}})
		if err != nil {
			return out, err
		}
		if won {
			d.Claim, d.ClaimUntil = token, until
			out = append(out, d)
		}
	}
	return out, nil
}

// casDelivery applies update to the delivery filter names (its _id first)
// if it matches, and reports whether it did. On FerretDB v1 it holds the
// delivery's lock meanwhile, which makes the check and the write one step
// among the deliverers (all of which take it).
func (s *webhookStore) casDelivery(ctx context.Context, filter, update bson.D) (bool, error) {
	if s.ferretDB {
		l, err := s.lock(ctx, "delivery:"+filter[0].Value.(string))
		if err != nil {
			return false, err
		}
		defer s.unlock(ctx, l)
	}
	res, err := s.db.Collection(collDeliveries).UpdateOne(ctx, filter, update)
	if err != nil {
		return false, fmt.Errorf("mongo: delivery: %w", err)
	}
	return res.MatchedCount == 1, nil
}

// SaveDelivery stores a delivery's status, next attempt and log; a claimed
// one only while it holds its claim, which it clears.
func (s *webhookStore) SaveDelivery(ctx context.Context, d *repository.Delivery) error {
	set := bson.D{{Key: "$set", Value: bson.D{
		{Key: "status", Value: d.Status},
		{Key: "attempts", Value: d.Attempts},
		{Key: "next_attempt", Value: storedMillis(d.NextAttempt)},
		{Key: "log", Value: d.Log},
	}}}
	filter := bson.D{{Key: "_id", Value: deliveryKey(d.WebhookID, d.ID)}}
	if d.Claim == "" {
		if _, err := s.db.Collection(collDeliveries).UpdateOne(ctx, filter, set); err != nil {
			return fmt.Errorf("mongo: save delivery: %w", err)
		}
		return nil
	}
	filter = append(filter, bson.E{Key: "claim", Value: d.Claim})
	update := append(set, bson.E{Key: "$unset", Value: bson.D{{Key: "claim", Value: ""}, {Key: "claim_until", Value: ""}}})
	won, err := s.casDelivery(ctx, filter, update)
	if err != nil {
		return fmt.Errorf("mongo: save delivery: %w", err)
	}
	if !won {
		return repository.ErrClaimLost
	}
	return nil
}

// ListDeliveries returns an endpoint's deliveries, newest first.
func (s *webhookStore) ListDeliveries(ctx context.Context, webhookID int64, limit int) ([]*repository.Delivery, error) {
	cur, err := s.db.Collection(collDeliveries).Find(ctx, bson.D{{Key: "webhook_id", Value: webhookID}},
		options.Find().SetSort(bson.D{{Key: "seq", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("mongo: deliveries: %w", err)
	}
	return decodeDeliveries(ctx, cur)
}

// DeliveryQueue counts pending deliveries and finds the oldest.
func (s *webhookStore) DeliveryQueue(ctx context.Context) (int, time.Time, error) {
	coll := s.db.Collection(collDeliveries)
	filter := bson.D{{Key: "status", Value: repository.DeliveryPending}}
	n, err := coll.CountDocuments(ctx, filter)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("mongo: delivery queue: %w", err)
	}
	if n == 0 {
		return 0, time.Time{}, nil
	}
	var d deliveryDocument
	err = coll.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "seq", Value: 1}})).Decode(&d)
	if err != nil && !isNoDocuments(err) {
		return 0, time.Time{}, fmt.Errorf("mongo: delivery queue: %w", err)
	}
	return int(n), d.Created.UTC(), nil
}

// PruneDeliveries removes finished deliveries created before t.
func (s *webhookStore) PruneDeliveries(ctx context.Context, before time.Time) error {
	_, err := s.db.Collection(collDeliveries).DeleteMany(ctx, bson.D{
		{Key: "status", Value: bson.D{{Key: "$ne", Value: repository.DeliveryPending}}},
		{Key: "created", Value: bson.D{{Key: "$lt", Value: before}}},
	})
	if err != nil {
		return fmt.Errorf("mongo: prune deliveries: %w", err)
	}
	return nil
}
