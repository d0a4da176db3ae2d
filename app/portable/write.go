package portable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// writer is pass 2: it reads the file again and writes its lines in
// order, a batch of lines of one type at a time.
type writer struct {
	st    repository.Store
	opts  LoadOptions
	loads *calendar.Loads
	plan  *plan
	rep   *LoadReport
	// delivered are the message IDs each endpoint of the target has
	// (read once per endpoint).
	delivered map[int64]map[string]bool
}

// item is one line of pass 2: its number and item.
type item struct {
	line int
	body json.RawMessage
}

// run reads the file and writes every batch.
func (w *writer) run(ctx context.Context, file io.Reader) error {
	lr := &lineReader{r: bufio.NewReaderSize(file, 1<<20)}
	if _, err := lr.next(); err != nil { // the header
		return fmt.Errorf("load: the file changed since it was checked: %w", err)
	}
	var batch []item
	batchType := ""
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.write(ctx, batchType, batch)
		batch = batch[:0]
		return err
	}
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		typ, body, err := envelope(line)
		if err != nil {
			return fmt.Errorf("load: the file changed since it was checked: %w", &LineError{Line: lr.n, Err: err})
		}
		if typ != batchType || len(batch) >= w.opts.batch {
			if err := flush(); err != nil {
				return err
			}
			batchType = typ
		}
		if typ == TypeEnd {
			break
		}
		batch = append(batch, item{lr.n, slices.Clone(body)})
	}
	return flush()
}

// decodeAll decodes a batch's items into values of type T.
func decodeAll[T any](items []item) ([]*T, error) {
	out := make([]*T, len(items))
	for i, it := range items {
		var v T
		if err := decodeStrict(it.body, &v); err != nil {
			return nil, fmt.Errorf("load: the file changed since it was checked: %w", &LineError{Line: it.line, Err: err})
		}
		out[i] = &v
	}
	return out, nil
}

// write writes a batch of lines of one type.
func (w *writer) write(ctx context.Context, typ string, items []item) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tally := w.rep.Types[typ]
	switch typ {
	case TypeSequences:
		return w.sequences(ctx, items, tally)
	case TypeUser:
		return each(items, func(u *repository.User) error { return count(tally)(w.loads.User(ctx, u)) })
	case TypeToken:
		return each(items, func(t *repository.Token) error { return count(tally)(w.loads.Token(ctx, t)) })
	case TypeLabel:
		return w.labels(ctx, items, tally)
	case TypeRecord:
		return w.records(ctx, items, tally)
	case TypeItemState:
		// Written with the items created (records, labels); the others
		// keep the target's states.
		return nil
	case TypeWebhook:
		return each(items, func(h *Webhook) error {
			hook := h.Webhook
			hook.Secret, hook.Revision = h.Secret, h.Revision
			return count(tally)(w.loads.Webhook(ctx, &hook))
		})
	case TypeDelivery:
		return w.deliveries(ctx, items, tally)
	case TypeSource:
		return each(items, func(s *Source) error {
			src := s.Source
			src.Revision = s.Revision
			return count(tally)(w.loads.Source(ctx, &src))
		})
	case TypeSourceRun:
		return each(items, func(r *repository.SourceRun) error { return count(tally)(w.loads.SourceRun(ctx, r)) })
	}
	return fmt.Errorf("load: a %s line in pass 2", typ)
}

// count returns a function that counts an outcome in tally, or returns
// the write's error.
func count(tally *Tally) func(calendar.Outcome, error) error {
	return func(o calendar.Outcome, err error) error {
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		switch o {
		case calendar.Created:
			tally.Created++
		case calendar.Replaced:
			tally.Replaced++
		default:
			tally.Unchanged++
		}
		return nil
	}
}

// each decodes a batch and calls fn on every item.
func each[T any](items []item, fn func(v *T) error) error {
	vs, err := decodeAll[T](items)
	if err != nil {
		return err
	}
	for _, v := range vs {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// sequences raises the target's sequences to the file's before any item
// is written, so that no write of the target's meanwhile draws an ID the
// file holds.
func (w *writer) sequences(ctx context.Context, items []item, tally *Tally) error {
	cur, err := w.st.Sequences(ctx)
	if err != nil {
		return fmt.Errorf("load: sequences: %w", err)
	}
	raise := false
	for name, v := range w.plan.seqs {
		if cur[name] < v {
			raise = true
		}
	}
	if !raise {
		tally.Unchanged++
		return nil
	}
	if err := w.st.RaiseSequences(ctx, w.plan.seqs); err != nil {
		return fmt.Errorf("load: raise the sequences: %w", err)
	}
	tally.Replaced++
	return nil
}

// states records, before the items are created, the item states the file
// holds for them: the webhook messages then see nothing new in them.
func (w *writer) states(ctx context.Context, keys []repository.ItemKey) error {
	var states []repository.ItemState
	for _, k := range keys {
		if s, ok := w.plan.states[k]; ok {
			states = append(states, s)
		}
	}
	if len(states) == 0 {
		return nil
	}
	if err := w.st.RecordChanges(ctx, states, nil, nil); err != nil {
		return fmt.Errorf("load: item states: %w", err)
	}
	w.rep.Types[TypeItemState].Created += int64(len(states))
	return nil
}

func (w *writer) labels(ctx context.Context, items []item, tally *Tally) error {
	ls, err := decodeAll[repository.Label](items)
	if err != nil {
		return err
	}
	ids := make([]int64, len(ls))
	for i, t := range ls {
		ids[i] = t.ID
	}
	stored, err := w.st.GetLabels(ctx, ids)
	if err != nil {
		return fmt.Errorf("load: labels: %w", err)
	}
	var created []repository.ItemKey
	for _, t := range ls {
		if stored[t.ID] == nil {
			created = append(created, repository.ItemKey{Kind: repository.MarkTerm, ID: t.ID})
		} else if _, ok := w.plan.states[repository.ItemKey{Kind: repository.MarkTerm, ID: t.ID}]; ok {
			w.rep.Types[TypeItemState].Unchanged++
		}
	}
	if err := w.states(ctx, created); err != nil {
		return err
	}
	for _, t := range ls {
		cur := stored[t.ID]
		if cur != nil && calendar.SameLabel(cur, t) {
			tally.Unchanged++
			continue
		}
		if _, err := w.opts.Labels.Load(ctx, t, cur != nil); err != nil {
			return fmt.Errorf("load: %s %d: %w", t.Taxonomy, t.ID, err)
		}
		if cur == nil {
			tally.Created++
		} else {
			tally.Replaced++
		}
	}
	return nil
}

func (w *writer) records(ctx context.Context, items []item, tally *Tally) error {
	rs, err := decodeAll[repository.Record](items)
	if err != nil {
		return err
	}
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	stored, err := w.st.GetRecords(ctx, ids)
	if err != nil {
		return fmt.Errorf("load: records: %w", err)
	}
	var created []repository.ItemKey
	for _, r := range rs {
		if stored[r.ID] == nil {
			created = append(created, repository.ItemKey{Kind: repository.MarkPost, ID: r.ID})
		} else if _, ok := w.plan.states[repository.ItemKey{Kind: repository.MarkPost, ID: r.ID}]; ok {
			w.rep.Types[TypeItemState].Unchanged++
		}
	}
	if err := w.states(ctx, created); err != nil {
		return err
	}
	for _, r := range rs {
		cur := stored[r.ID]
		if cur != nil && calendar.SameRecord(cur, r) {
			tally.Unchanged++
			continue
		}
		if _, err := w.opts.Calendar.Import(ctx, r, cur != nil); err != nil {
			return fmt.Errorf("load: %s %d: %w", r.Kind, r.ID, err)
		}
		if cur == nil {
			tally.Created++
		} else {
			tally.Replaced++
		}
	}
	return nil
}

func (w *writer) deliveries(ctx context.Context, items []item, tally *Tally) error {
	ds, err := decodeAll[Delivery](items)
	if err != nil {
		return err
	}
	var queue []*repository.Delivery
	for _, d := range ds {
		have, ok := w.delivered[d.WebhookID]
		if !ok {
			list, err := w.st.ListDeliveries(ctx, d.WebhookID, maxDeliveries)
			if err != nil {
				return fmt.Errorf("load: deliveries of webhook %d: %w", d.WebhookID, err)
			}
			have = make(map[string]bool, len(list))
			for _, x := range list {
				have[x.ID] = true
			}
			w.delivered[d.WebhookID] = have
		}
		if have[d.ID] {
			tally.Unchanged++
			continue
		}
		q := d.Delivery
		q.Payload, q.Seq, q.Claim, q.ClaimUntil = d.Payload, 0, "", time.Time{}
		queue = append(queue, &q)
		have[d.ID] = true
	}
	if len(queue) == 0 {
		return nil
	}
	if err := w.st.RecordChanges(ctx, nil, nil, queue); err != nil {
		return fmt.Errorf("load: deliveries: %w", err)
	}
	tally.Created += int64(len(queue))
	return nil
}
