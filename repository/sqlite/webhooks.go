package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository"
)

// webhookStore is repository.WebhookStore: the endpoints, the item states
// and the delivery queue.
type webhookStore struct{ *conn }

// CreateWebhook assigns w.ID from the webhook counter (unless set: an
// explicit ID must be free and moves the counter past it) and stores w at
// revision 1, or at its own revision above 0 with an explicit ID.
func (s *webhookStore) CreateWebhook(ctx context.Context, w *repository.Webhook) error {
	c := *w
	if c.ID == 0 || c.Revision <= 0 {
		c.Revision = 1
	}
	err := s.write(ctx, func(tx *writeTx) error {
		if err := tx.assign("webhook", `SELECT 1 FROM webhooks WHERE id = ?`, &c.ID); err != nil {
			return err
		}
		doc, err := json.Marshal(webhookDoc(&c))
		if err != nil {
			return err
		}
		_, err = tx.exec(`INSERT INTO webhooks(id, rev, doc) VALUES (?, ?, ?)`, c.ID, c.Revision, doc)
		return err
	})
	if err != nil {
		return err
	}
	*w = c
	return nil
}

// storedWebhook is the JSON document of an endpoint (its secret included,
// which the API type leaves out of JSON).
type storedWebhook struct {
	repository.Webhook
	Secret string `json:"secret"`
}

func webhookDoc(w *repository.Webhook) storedWebhook {
	return storedWebhook{Webhook: *w, Secret: w.Secret}
}

func scanWebhook(row interface{ Scan(...any) error }) (*repository.Webhook, error) {
	var id, rev int64
	var doc string
	if err := row.Scan(&id, &rev, &doc); err != nil {
		return nil, notFound(err)
	}
	var sw storedWebhook
	if err := json.Unmarshal([]byte(doc), &sw); err != nil {
		return nil, fmt.Errorf("sqlite: webhook %d: %w", id, err)
	}
	w := sw.Webhook
	w.ID, w.Revision, w.Secret = id, rev, sw.Secret
	return &w, nil
}

// GetWebhook returns the endpoint or repository.ErrNotFound.
func (s *webhookStore) GetWebhook(ctx context.Context, id int64) (*repository.Webhook, error) {
	return scanWebhook(s.queryRow(ctx, `SELECT id, rev, doc FROM webhooks WHERE id = ?`, id))
}

// ListWebhooks returns every endpoint by ID.
func (s *webhookStore) ListWebhooks(ctx context.Context) ([]*repository.Webhook, error) {
	rows, err := s.query(ctx, `SELECT id, rev, doc FROM webhooks ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect[*repository.Webhook](rows, nil, scanWebhook)
}

// UpdateWebhook reads the endpoint, applies fn and writes it back unless
// another write came in between (then it starts over).
func (s *webhookStore) UpdateWebhook(ctx context.Context, id int64, fn func(w *repository.Webhook) error) (*repository.Webhook, error) {
	return updateRevDoc(ctx, s.conn, "webhooks", id, s.GetWebhook,
		func(w *repository.Webhook) (*int64, *int64) { return &w.ID, &w.Revision },
		func(w *repository.Webhook) ([]byte, error) { return json.Marshal(webhookDoc(w)) }, fn)
}

// updateRevDoc is the read-modify-write of a document kept in a table of
// (id, rev, doc) rows: it reads the document (get), applies fn, and writes
// it back at the next revision only if the row still has the revision it
// read, starting over otherwise. fields names the document's ID and
// revision; encode makes the row's doc. fn runs outside any transaction;
// an error from it aborts the update.
func updateRevDoc[T any](ctx context.Context, c *conn, table string, id int64, get func(context.Context, int64) (*T, error),
	fields func(*T) (id, rev *int64), encode func(*T) ([]byte, error), fn func(*T) error) (*T, error) {
	for {
		v, err := get(ctx, id)
		if err != nil {
			return nil, err
		}
		idp, revp := fields(v)
		rev := *revp
		if err := fn(v); err != nil {
			return nil, err
		}
		*idp, *revp = id, rev+1
		doc, err := encode(v)
		if err != nil {
			return nil, err
		}
		var n int64
		err = c.write(ctx, func(tx *writeTx) error {
			res, err := tx.exec(`UPDATE `+table+` SET rev = ?, doc = ? WHERE id = ? AND rev = ?`, rev+1, doc, id, rev)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return nil, err
		}
		if n == 1 {
			return v, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// DeleteWebhook removes the endpoint and its deliveries.
func (s *webhookStore) DeleteWebhook(ctx context.Context, id int64) error {
	return s.write(ctx, func(tx *writeTx) error {
		if err := tx.execSome(`DELETE FROM webhooks WHERE id = ?`, id); err != nil {
			return err
		}
		_, err := tx.exec(`DELETE FROM webhook_deliveries WHERE webhook_id = ?`, id)
		return err
	})
}

// ItemStates returns the recorded states among keys.
func (s *webhookStore) ItemStates(ctx context.Context, keys []repository.ItemKey) (map[repository.ItemKey]repository.ItemState, error) {
	out := make(map[repository.ItemKey]repository.ItemState, len(keys))
	for start := 0; start < len(keys); start += 400 {
		chunk := keys[start:min(start+400, len(keys))]
		var q strings.Builder
		args := make([]any, 0, 2*len(chunk))
		q.WriteString(`SELECT kind, id, resource, revision, status FROM webhook_items WHERE (kind, id) IN (VALUES `)
		for i, k := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?)")
			args = append(args, string(k.Kind), k.ID)
		}
		q.WriteString(")")
		rows, err := s.rdb.QueryContext(ctx, q.String(), args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: item states: %w", err)
		}
		for rows.Next() {
			var st repository.ItemState
			var kind string
			if err := rows.Scan(&kind, &st.ID, &st.Resource, &st.Revision, &st.Status); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: item states: %w", err)
			}
			st.Kind = repository.MarkKind(kind)
			out[st.ItemKey] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: item states: %w", err)
		}
	}
	return out, nil
}

// deliveryDoc is the JSON column of a delivery: what the indexed columns
// do not hold.
type deliveryDoc struct {
	Type     string                       `json:"type"`
	Attempts int                          `json:"attempts"`
	Log      []repository.DeliveryAttempt `json:"log"`
}

// RecordChanges stores states, forgets gone items and queues deliveries in
// one transaction.
func (s *webhookStore) RecordChanges(ctx context.Context, states []repository.ItemState, gone []repository.ItemKey, deliveries []*repository.Delivery) error {
	return s.write(ctx, func(tx *writeTx) error {
		for _, st := range states {
			if _, err := tx.exec(`INSERT INTO webhook_items(kind, id, resource, revision, status) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(kind, id) DO UPDATE SET resource = excluded.resource, revision = excluded.revision, status = excluded.status`,
				string(st.Kind), st.ID, st.Resource, st.Revision, st.Status); err != nil {
				return err
			}
		}
		for _, k := range gone {
			if _, err := tx.exec(`DELETE FROM webhook_items WHERE kind = ? AND id = ?`, string(k.Kind), k.ID); err != nil {
				return err
			}
		}
		for _, d := range deliveries {
			doc, err := json.Marshal(deliveryDoc{Type: d.Type, Attempts: d.Attempts, Log: d.Log})
			if err != nil {
				return err
			}
			var seq int64
			err = tx.queryRow(`INSERT INTO webhook_deliveries(webhook_id, msg_id, item, status, next_at, created, doc, payload)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(webhook_id, msg_id) DO NOTHING RETURNING seq`,
				d.WebhookID, d.ID, d.Item, d.Status, d.NextAttempt.UnixNano(), d.Created.UnixNano(), doc, d.Payload).Scan(&seq)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				// Already queued by an earlier try of the same batch.
			case err != nil:
				return fmt.Errorf("sqlite: queue delivery: %w", err)
			default:
				d.Seq = seq
			}
		}
		return nil
	})
}

const deliveryColumns = `seq, webhook_id, msg_id, item, status, next_at, created, doc, payload, claim, claim_until`

func scanDelivery(row interface{ Scan(...any) error }) (*repository.Delivery, error) {
	var d repository.Delivery
	var next, created, claimUntil int64
	var doc string
	if err := row.Scan(&d.Seq, &d.WebhookID, &d.ID, &d.Item, &d.Status, &next, &created, &doc, &d.Payload, &d.Claim, &claimUntil); err != nil {
		return nil, notFound(err)
	}
	if d.Claim != "" {
		d.ClaimUntil = time.Unix(0, claimUntil).UTC()
	}
	var dd deliveryDoc
	if err := json.Unmarshal([]byte(doc), &dd); err != nil {
		return nil, fmt.Errorf("sqlite: delivery %d: %w", d.Seq, err)
	}
	d.Type, d.Attempts, d.Log = dd.Type, dd.Attempts, dd.Log
	d.NextAttempt, d.Created = time.Unix(0, next).UTC(), time.Unix(0, created).UTC()
	return &d, nil
}

func (s *webhookStore) deliveries(ctx context.Context, query string, args ...any) ([]*repository.Delivery, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: deliveries: %w", err)
	}
	return collect[*repository.Delivery](rows, nil, scanDelivery)
}

// DueDeliveries returns the pending deliveries due at now that are first
// in line for their endpoint and item.
func (s *webhookStore) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*repository.Delivery, error) {
	return s.deliveries(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		WHERE d.status = 'pending' AND d.next_at <= ?
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.status = 'pending'
			AND e.webhook_id = d.webhook_id AND e.item = d.item AND e.seq < d.seq)
		ORDER BY d.seq LIMIT ?`, now.UnixNano(), limit)
}

// DueEndpointDeliveries returns the pending deliveries of one endpoint due
// at now that are first in line for their item.
func (s *webhookStore) DueEndpointDeliveries(ctx context.Context, webhookID int64, now time.Time, limit int) ([]*repository.Delivery, error) {
	return s.deliveries(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		WHERE d.status = 'pending' AND d.webhook_id = ? AND d.next_at <= ?
		AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.status = 'pending'
			AND e.webhook_id = d.webhook_id AND e.item = d.item AND e.seq < d.seq)
		ORDER BY d.seq LIMIT ?`, webhookID, now.UnixNano(), limit)
}

// ClaimDeliveries claims the endpoint's due deliveries without a live
// claim, first in line for their item, in one UPDATE (a write transaction
// serialises it with every other claim, also of other processes).
func (s *webhookStore) ClaimDeliveries(ctx context.Context, webhookID int64, now time.Time, hold time.Duration, limit int) ([]*repository.Delivery, error) {
	token := repository.NewClaimToken()
	var out []*repository.Delivery
	err := s.write(ctx, func(tx *writeTx) error {
		rows, err := tx.tx.QueryContext(ctx, `UPDATE webhook_deliveries SET claim = ?, claim_until = ?
			WHERE seq IN (SELECT d.seq FROM webhook_deliveries d
				WHERE d.status = 'pending' AND d.webhook_id = ? AND d.next_at <= ? AND (d.claim = '' OR d.claim_until <= ?)
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.status = 'pending'
					AND e.webhook_id = d.webhook_id AND e.item = d.item AND e.seq < d.seq)
				ORDER BY d.seq LIMIT ?)
			RETURNING `+deliveryColumns,
			token, now.Add(hold).UnixNano(), webhookID, now.UnixNano(), now.UnixNano(), limit)
		if err != nil {
			return fmt.Errorf("sqlite: claim deliveries: %w", err)
		}
		out, err = collect[*repository.Delivery](rows, nil, scanDelivery)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *repository.Delivery) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// SaveDelivery stores a delivery's status, next attempt and log; a claimed
// one only while it still holds its claim, which it clears.
func (s *webhookStore) SaveDelivery(ctx context.Context, d *repository.Delivery) error {
	doc, err := json.Marshal(deliveryDoc{Type: d.Type, Attempts: d.Attempts, Log: d.Log})
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *writeTx) error {
		if d.Claim == "" {
			_, err := tx.exec(`UPDATE webhook_deliveries SET status = ?, next_at = ?, doc = ? WHERE webhook_id = ? AND msg_id = ?`,
				d.Status, d.NextAttempt.UnixNano(), doc, d.WebhookID, d.ID)
			return err
		}
		res, err := tx.exec(`UPDATE webhook_deliveries SET status = ?, next_at = ?, doc = ?, claim = '', claim_until = 0
			WHERE webhook_id = ? AND msg_id = ? AND claim = ?`,
			d.Status, d.NextAttempt.UnixNano(), doc, d.WebhookID, d.ID, d.Claim)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, repository.ErrClaimLost)
		}
		return nil
	})
}

// ListDeliveries returns an endpoint's deliveries, newest first.
func (s *webhookStore) ListDeliveries(ctx context.Context, webhookID int64, limit int) ([]*repository.Delivery, error) {
	return s.deliveries(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?`, webhookID, limit)
}

// DeliveryQueue counts pending deliveries and finds the oldest.
func (s *webhookStore) DeliveryQueue(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := s.queryRow(ctx, `SELECT count(*), min(created) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite: delivery queue: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, time.Unix(0, oldest.Int64).UTC(), nil
}

// PruneDeliveries removes finished deliveries created before t.
func (s *webhookStore) PruneDeliveries(ctx context.Context, before time.Time) error {
	return s.write(ctx, func(tx *writeTx) error {
		_, err := tx.exec(`DELETE FROM webhook_deliveries WHERE status != 'pending' AND created < ?`, before.UnixNano())
		return err
	})
}
