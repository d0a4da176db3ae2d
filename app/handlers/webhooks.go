package handlers

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	syncwebhooks "github.com/calendar/eventcal/sync/webhooks"
)

// WebhookSender sends test pings (syncwebhooks.Dispatcher).
type WebhookSender interface {
	Ping(ctx context.Context, hook *repository.Webhook) repository.DeliveryAttempt
}

// The delivery log's page sizes.
const (
	defaultDeliveryListLen = 50
	maxDeliveryListLen     = 200
)

// webhookWriteArgs declares the body of POST/PATCH /admin/webhooks.
func (h *webhooks) webhookWriteArgs(create bool) []Arg {
	return []Arg{
		{Name: "url", Type: tString, Required: create, Format: "uri", Check: h.checkWebhookURL,
			Desc: "Endpoint URL (http or https; private addresses need WEBHOOK_ALLOW_PRIVATE=true)."},
		{Name: "events", Type: tArray, Items: tString, Check: checkWebhookEvents,
			Desc: "Message types to send (" + strings.Join(syncwebhooks.EventTypes, ", ") + "), or * for all; default *."},
		{Name: "secret", Type: tString, Check: checkWebhookSecret,
			Desc: "Signing secret (whsec_ and at least 24 base64-encoded bytes); generated when omitted on create."},
		{Name: "description", Type: tString, Check: maxLength(calendar.MaxWebhookDescription), Desc: "A note for admins."},
		{Name: "active", Type: tBoolean, Desc: "false disables the endpoint; true re-enables it and clears its failure record."},
	}
}

func maxLength(n int) func(*Request, any) string {
	return func(_ *Request, v any) string {
		if s, _ := input.AsString(v); len(s) > n {
			return "Must be at most " + strconv.Itoa(n) + " bytes long."
		}
		return ""
	}
}

func (h *webhooks) checkWebhookURL(_ *Request, v any) string {
	u, _ := input.AsString(v)
	if err := syncwebhooks.CheckURL(strings.TrimSpace(u), h.cfg.WebhookAllowPrivate); err != nil {
		return strings.TrimPrefix(err.Error(), "webhook: ")
	}
	return ""
}

func checkWebhookEvents(_ *Request, v any) string {
	if err := syncwebhooks.CheckEvents(input.AsStrings(v)); err != nil {
		return err.Error()
	}
	return ""
}

func checkWebhookSecret(_ *Request, v any) string {
	sec, _ := input.AsString(v)
	if err := syncwebhooks.CheckSecret(sec); err != nil {
		return err.Error()
	}
	return ""
}

// load reads the :id endpoint for an admin.
func (h *webhooks) load(r *Request) (*repository.Webhook, error) {
	return h.svc().Get(r.ctx, r.user, webhookID(r))
}

// webhookID is the route's :id.
func webhookID(r *Request) int64 {
	id, _ := input.AsInt(r.bag.Values["id"])
	return id
}

// webhookInput decodes the validated body of a webhook write.
func webhookInput(b *input.Bag) *calendar.WebhookInput {
	in := &calendar.WebhookInput{}
	str := func(name string) *string {
		if !b.Has(name) {
			return nil
		}
		s := b.Str(name)
		return &s
	}
	in.URL, in.Secret, in.Description = str("url"), str("secret"), str("description")
	if v, ok := b.Get("events"); ok {
		evs := input.AsStrings(v)
		in.Events = &evs
	}
	if v, ok := b.Get("active"); ok {
		active, _ := input.AsBool(v)
		in.Active = &active
	}
	return in
}

// listWebhooks serves GET /admin/webhooks.
func (h *webhooks) listWebhooks(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	hooks, err := h.store.ListWebhooks(r.ctx)
	if err != nil {
		return err
	}
	items := make([]any, 0, len(hooks))
	for _, w := range hooks {
		items = append(items, present.NewWebhook(w, false))
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("webhooks", items))
}

// createWebhook serves POST /admin/webhooks: 201 with the secret, shown
// this once.
func (h *webhooks) createWebhook(r *Request) error {
	w, err := h.svc().Create(r.ctx, r.user, webhookInput(r.bag))
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 201, present.NewWebhook(w, true))
}

// getWebhook serves GET /admin/webhooks/{id}.
func (h *webhooks) getWebhook(r *Request) error {
	w, err := h.load(r)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewWebhook(w, false))
}

// updateWebhook serves POST/PUT/PATCH /admin/webhooks/{id} (partial).
func (h *webhooks) updateWebhook(r *Request) error {
	in := webhookInput(r.bag)
	w, err := h.svc().Update(r.ctx, r.user, webhookID(r), in)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewWebhook(w, in.Secret != nil))
}

// deleteWebhook serves DELETE /admin/webhooks/{id}.
func (h *webhooks) deleteWebhook(r *Request) error {
	w, err := h.svc().Delete(r.ctx, r.user, webhookID(r))
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("deleted", true).Set("previous", present.NewWebhook(w, false)))
}

// pingWebhook serves POST /admin/webhooks/{id}/ping: one signed
// "webhook.ping" message, sent now, and how the endpoint answered.
func (h *webhooks) pingWebhook(r *Request) error {
	w, err := h.load(r)
	if err != nil {
		return err
	}
	if h.sender == nil {
		return apierr.Unavailable("webhooks")
	}
	a := h.sender.Ping(r.ctx, w)
	return present.SendJSON(r.c, 200, present.NewObj().Set("ok", a.Error == "").Set("attempt", a))
}

// webhookDeliveries serves GET /admin/webhooks/{id}/deliveries: the
// delivery log, newest first.
func (h *webhooks) webhookDeliveries(r *Request) error {
	w, err := h.load(r)
	if err != nil {
		return err
	}
	n := int64(defaultDeliveryListLen)
	if v, ok := r.bag.Get("per_page"); ok {
		n, _ = input.AsInt(v)
	}
	ds, err := h.store.ListDeliveries(r.ctx, w.ID, int(min(max(n, 1), maxDeliveryListLen)))
	if err != nil {
		return err
	}
	items := make([]any, 0, len(ds))
	for _, d := range ds {
		o := present.NewObj().Set("id", d.ID).Set("type", d.Type).Set("item", d.Item).Set("status", d.Status).
			Set("attempts", d.Attempts).Set("created", d.Created.UTC().Format(present.TimeRFC3339))
		if d.Status == repository.DeliveryPending {
			o.Set("next_attempt", d.NextAttempt.UTC().Format(present.TimeRFC3339))
		}
		log := make([]any, 0, len(d.Log))
		for _, a := range d.Log {
			log = append(log, a)
		}
		items = append(items, o.Set("log", log))
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("deliveries", items))
}

// itemRenderer renders items for webhook messages as an admin reads them
// (in the default language, with json_ld, as GET by ID does).
type itemRenderer struct {
	cfg    *config.Config
	store  repository.Store
	render *present.Renderer
}

// NewItemRenderer returns the renderer webhook messages use.
func NewItemRenderer(cfg *config.Config, store repository.Store) syncwebhooks.ItemRenderer {
	// No linked-record cache: a message shows the store as it is now
	// (ttl 0 starts the cache over on every read).
	return itemRenderer{cfg: cfg, store: store, render: present.NewRenderer(cfg, store, func() int64 { return 0 }, 0, 0)}
}

// webhookReader is the reader webhook messages are rendered for: an admin
// (endpoints are registered by admins and receive every change), so a
// message embeds what an admin's GET by ID embeds, decided by the same
// rule as every other output (seesLinked).
var webhookReader = &repository.User{Role: repository.RoleAdmin}

// RenderRecord renders an event, venue or organizer.
func (ir itemRenderer) RenderRecord(ctx context.Context, p *repository.Record) (json.RawMessage, error) {
	l, err := ir.render.LinkedFor(ctx, webhookReader, []*repository.Record{p})
	if err != nil {
		return nil, err
	}
	v := present.View{Lang: ir.cfg.DefaultLanguage, Single: true}
	switch p.Kind {
	case repository.KindEvent:
		o := ir.render.Event(p, l, v)
		if p.Event != nil && p.Event.Recurrence != nil {
			o.ChangedOccurrences = ir.render.ChangedOccurrences(p, recurrenceLimits(ir.cfg, time.Now))
		}
		return o.MarshalJSON()
	case repository.KindVenue:
		return ir.render.Venue(p, l, v).MarshalJSON()
	default:
		return ir.render.Organizer(p, l, v).MarshalJSON()
	}
}

// RenderLabel renders a category or tag.
func (ir itemRenderer) RenderLabel(ctx context.Context, t *repository.Label) (json.RawMessage, error) {
	counts, err := ir.render.Counts.ForLabels(ctx, ir.store, map[int64]*repository.Label{t.ID: t})
	if err != nil {
		return nil, err
	}
	return ir.render.Label(t, counts[t.ID], ir.cfg.DefaultLanguage).MarshalJSON()
}

// webhooks serves the admin routes for webhook endpoints; the writes go
// through the calendar's webhooks service (svc).
type webhooks struct {
	cfg    *config.Config
	store  repository.Store
	sender WebhookSender
	now    func() time.Time
}

// svc returns the webhooks service over the handlers' store and clock.
func (h *webhooks) svc() *calendar.Webhooks {
	return calendar.NewWebhooks(calendar.WebhooksDeps{Store: h.store, Now: h.now, AllowPrivate: h.cfg.WebhookAllowPrivate})
}
