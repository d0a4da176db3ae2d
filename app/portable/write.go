package portable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/calendar/eventcal/repository"
)

// writer is pass 2: it reads the file again and writes its lines in
// order, a batch of lines of one type at a time.
type writer struct {
	st   repository.Store
	opts LoadOptions
	plan *plan
	rep  *LoadReport
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
		return each(items, func(u *repository.User) error { return w.user(ctx, u, tally) })
	case TypeToken:
		return each(items, func(t *repository.Token) error { return w.token(ctx, t, tally) })
	case TypeLabel:
		return w.labels(ctx, items, tally)
	case TypeRecord:
		return w.records(ctx, items, tally)
	case TypeItemState:
		// Written with the items created (records, labels); the others
		// keep the target's states.
		return nil
	case TypeWebhook:
		return each(items, func(h *Webhook) error { return w.webhook(ctx, h, tally) })
	case TypeDelivery:
		return w.deliveries(ctx, items, tally)
	case TypeSource:
		return each(items, func(s *Source) error { return w.source(ctx, s, tally) })
	case TypeSourceRun:
		return each(items, func(r *repository.SourceRun) error { return w.run1(ctx, r, tally) })
	}
	return fmt.Errorf("load: a %s line in pass 2", typ)
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

func (w *writer) user(ctx context.Context, u *repository.User, tally *Tally) error {
	cur, err := w.st.GetUser(ctx, u.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		c := *u
		if err := w.st.CreateUser(ctx, &c); err != nil {
			return fmt.Errorf("load: user %d: %w", u.ID, err)
		}
		tally.Created++
	case err != nil:
		return fmt.Errorf("load: user %d: %w", u.ID, err)
	case same(normUser(cur), normUser(u)):
		tally.Unchanged++
	default:
		if err := w.st.UpdateUser(ctx, u); err != nil {
			return fmt.Errorf("load: user %d: %w", u.ID, err)
		}
		tally.Replaced++
	}
	return nil
}

func normUser(u *repository.User) *repository.User {
	c := *u
	c.Created = sec(c.Created)
	if c.Origin != nil {
		o := *c.Origin
		o.Modified = sec(o.Modified)
		c.Origin = &o
	}
	return &c
}

func (w *writer) token(ctx context.Context, t *repository.Token, tally *Tally) error {
	cur, err := w.st.TokenByHash(ctx, t.Hash)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		if err := w.st.CreateToken(ctx, t); err != nil {
			return fmt.Errorf("load: token %s: %w", t.ID(), err)
		}
		tally.Created++
	case err != nil:
		return fmt.Errorf("load: token %s: %w", t.ID(), err)
	case same(normToken(cur), normToken(t)):
		tally.Unchanged++
	default:
		// The store keeps a token as created (its use aside): replace it.
		if err := w.st.RevokeToken(ctx, t.ID()); err != nil && !errors.Is(err, repository.ErrNotFound) {
			return fmt.Errorf("load: token %s: %w", t.ID(), err)
		}
		if err := w.st.CreateToken(ctx, t); err != nil {
			return fmt.Errorf("load: token %s: %w", t.ID(), err)
		}
		tally.Replaced++
	}
	return nil
}

func normToken(t *repository.Token) *repository.Token {
	c := *t
	c.Created, c.LastUsed, c.Expires = sec(c.Created), sec(c.LastUsed), sec(c.Expires)
	return &c
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
		if cur != nil && same(normLabel(cur), normLabel(t)) {
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

// normLabel is a label as compared: its revision (which a replace cannot
// keep) aside.
func normLabel(t *repository.Label) *repository.Label {
	c := *t
	c.Revision, c.NameKeys = 0, nil
	if c.Origin != nil {
		o := *c.Origin
		o.Modified = sec(o.Modified)
		c.Origin = &o
	}
	return &c
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
		if cur != nil && same(normRecord(cur), normRecord(r)) {
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

// normRecord is a record as compared: its revision aside, times in UTC,
// empty lists as the stores keep them.
func normRecord(p *repository.Record) *repository.Record {
	c := p.Clone()
	c.Revision = 0
	c.Date, c.Modified = sec(c.Date), sec(c.Modified)
	if c.Origin != nil {
		c.Origin.Modified = sec(c.Origin.Modified)
	}
	if e := c.Event; e != nil {
		e.StartUTC, e.EndUTC = sec(e.StartUTC), sec(e.EndUTC)
		for _, l := range []*[]int64{&e.Categories, &e.Tags, &e.Venues, &e.Organizers} {
			if *l == nil {
				*l = []int64{}
			}
		}
		if r := e.Recurrence; r != nil {
			for _, l := range []*[]string{&r.Rules, &r.Exclusions, &r.Additions} {
				if *l == nil {
					*l = []string{}
				}
			}
		}
	}
	return c
}

func (w *writer) webhook(ctx context.Context, h *Webhook, tally *Tally) error {
	want := h.Webhook
	want.Secret, want.Revision = h.Secret, h.Revision
	cur, err := w.st.GetWebhook(ctx, h.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		if err := w.st.CreateWebhook(ctx, &want); err != nil {
			return fmt.Errorf("load: webhook %d: %w", h.ID, err)
		}
		tally.Created++
	case err != nil:
		return fmt.Errorf("load: webhook %d: %w", h.ID, err)
	case same(normWebhook(cur), normWebhook(&want)):
		tally.Unchanged++
	default:
		if _, err := w.st.UpdateWebhook(ctx, h.ID, func(q *repository.Webhook) error {
			rev := q.Revision
			*q = want
			q.Events = slices.Clone(want.Events)
			q.Revision = rev
			return nil
		}); err != nil {
			return fmt.Errorf("load: webhook %d: %w", h.ID, err)
		}
		tally.Replaced++
	}
	return nil
}

// normWebhook is an endpoint as compared (JSON leaves the secret out:
// Webhook carries it).
func normWebhook(h *repository.Webhook) *Webhook {
	c := *h
	c.FailingSince, c.Created, c.Updated = sec(c.FailingSince), sec(c.Created), sec(c.Updated)
	return &Webhook{Webhook: c, Secret: h.Secret}
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

func (w *writer) source(ctx context.Context, s *Source, tally *Tally) error {
	want := s.Source
	want.Revision = s.Revision
	cur, err := w.st.GetSource(ctx, s.ID)
	switch {
	case errors.Is(err, repository.ErrNotFound):
		if err := w.st.CreateSource(ctx, &want); err != nil {
			return fmt.Errorf("load: source %d: %w", s.ID, err)
		}
		tally.Created++
	case err != nil:
		return fmt.Errorf("load: source %d: %w", s.ID, err)
	case same(normSource(cur), normSource(&want)):
		tally.Unchanged++
	default:
		if _, err := w.st.UpdateSource(ctx, s.ID, func(q *repository.Source) error {
			rev, claim, until := q.Revision, q.RunClaim, q.RunClaimUntil
			*q = want
			q.Categories, q.Tags = slices.Clone(want.Categories), slices.Clone(want.Tags)
			q.Revision, q.RunClaim, q.RunClaimUntil = rev, claim, until
			return nil
		}); err != nil {
			return fmt.Errorf("load: source %d: %w", s.ID, err)
		}
		tally.Replaced++
	}
	return nil
}

// normSource is a source as compared: its revision and run claim aside.
func normSource(s *repository.Source) *repository.Source {
	c := *s
	c.Revision, c.RunClaim, c.RunClaimUntil = 0, "", time.Time{}
	c.Created, c.Updated = sec(c.Created), sec(c.Updated)
	if c.Categories == nil {
		c.Categories = []int64{}
	}
	if c.Tags == nil {
		c.Tags = []int64{}
	}
	return &c
}

// run1 writes one source run.
func (w *writer) run1(ctx context.Context, r *repository.SourceRun, tally *Tally) error {
	if _, ok := w.plan.targetRuns[r.ID]; !ok {
		if err := w.st.CreateSourceRun(ctx, r); err != nil {
			return fmt.Errorf("load: source run %d: %w", r.ID, err)
		}
		w.plan.targetRuns[r.ID] = r.SourceID
		tally.Created++
		return nil
	}
	runs, err := w.st.ListSourceRuns(ctx, r.SourceID, 0)
	if err != nil {
		return fmt.Errorf("load: source run %d: %w", r.ID, err)
	}
	for _, cur := range runs {
		if cur.ID != r.ID {
			continue
		}
		if same(normRun(cur), normRun(r)) {
			tally.Unchanged++
			return nil
		}
		if err := w.st.SaveSourceRun(ctx, r); err != nil {
			return fmt.Errorf("load: source run %d: %w", r.ID, err)
		}
		tally.Replaced++
		return nil
	}
	return fmt.Errorf("load: source run %d: %w", r.ID, repository.ErrNotFound)
}

func normRun(r *repository.SourceRun) *repository.SourceRun {
	c := *r
	c.Started, c.Finished = sec(c.Started), sec(c.Finished)
	return &c
}

// sec is t as compared: in UTC, to the second. The engines keep times
// at different precisions (MongoDB to the millisecond or the second, the
// API's writes to the second), so an item is the same whatever engine
// it went through.
func sec(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// same reports whether a and b encode to the same JSON.
func same(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
