package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync"
)

// WebhookSender sends test pings (sync.Webhooks).
type WebhookSender interface {
	Ping(ctx context.Context, hook *repository.Webhook) repository.DeliveryAttempt
}

// Webhook admin limits.
const (
	maxWebhooks            = 100
	maxWebhookDescription  = 500
	defaultDeliveryListLen = 50
	maxDeliveryListLen     = 200
)

// webhookWriteArgs declares the body of POST/PATCH /admin/webhooks.
func (s *Server) webhookWriteArgs(create bool) []arg {
	return []arg{
		{Name: "url", Type: tString, Required: create, Format: "uri", Check: s.checkWebhookURL,
			Desc: "Endpoint URL (http or https; private addresses need WEBHOOK_ALLOW_PRIVATE=true)."},
		{Name: "events", Type: tArray, Items: tString, Check: checkWebhookEvents,
			Desc: "Message types to send (" + strings.Join(sync.WebhookEventTypes, ", ") + "), or * for all; default *."},
		{Name: "secret", Type: tString, Check: checkWebhookSecret,
			Desc: "Signing secret (whsec_ and at least 24 base64-encoded bytes); generated when omitted on create."},
		{Name: "description", Type: tString, Check: maxLength(maxWebhookDescription), Desc: "A note for admins."},
		{Name: "active", Type: tBoolean, Desc: "false disables the endpoint; true re-enables it and clears its failure record."},
	}
}

func maxLength(n int) func(*request, any) string {
	return func(_ *request, v any) string {
		if s, _ := asString(v); len(s) > n {
			return "Must be at most " + strconv.Itoa(n) + " bytes long."
		}
		return ""
	}
}

func (s *Server) checkWebhookURL(_ *request, v any) string {
	u, _ := asString(v)
	if err := sync.CheckWebhookURL(strings.TrimSpace(u), s.cfg.WebhookAllowPrivate); err != nil {
		return strings.TrimPrefix(err.Error(), "webhook: ")
	}
	return ""
}

func checkWebhookEvents(_ *request, v any) string {
	var types []string
	for _, it := range asList(v) {
		t, _ := asString(it)
		types = append(types, t)
	}
	if err := sync.CheckWebhookEvents(types); err != nil {
		return err.Error()
	}
	return ""
}

func checkWebhookSecret(_ *request, v any) string {
	sec, _ := asString(v)
	if err := sync.CheckWebhookSecret(sec); err != nil {
		return err.Error()
	}
	return ""
}

// renderWebhook is an endpoint as the admin API shows it; the secret only
// when asked (on create, or when it was just set).
func renderWebhook(w *repository.Webhook, withSecret bool) *obj {
	o := newObj().set("id", w.ID).set("url", w.URL).set("description", w.Description).
		set("events", w.Events).set("active", w.Active)
	if w.DisabledReason != "" {
		o.set("disabled_reason", w.DisabledReason)
	}
	if !w.FailingSince.IsZero() {
		o.set("failing_since", w.FailingSince.UTC().Format(timeRFC3339))
	}
	o.set("created", w.Created.UTC().Format(timeRFC3339)).set("updated", w.Updated.UTC().Format(timeRFC3339))
	if withSecret {
		o.set("secret", w.Secret)
	}
	return o
}

const timeRFC3339 = "2006-01-02T15:04:05Z07:00"

// loadWebhook reads the :id endpoint for an admin.
func (r *request) loadWebhook() (*repository.Webhook, error) {
	if err := r.requireAdmin(); err != nil {
		return nil, err
	}
	id, _ := asInt(r.bag.values["id"])
	w, err := r.s.store.GetWebhook(r.ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return nil, newError(404, "webhook_not_found", "No webhook has this ID.")
	}
	return w, err
}

// listWebhooks serves GET /admin/webhooks.
func (s *Server) listWebhooks(r *request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	hooks, err := s.store.ListWebhooks(r.ctx)
	if err != nil {
		return err
	}
	items := make([]any, 0, len(hooks))
	for _, w := range hooks {
		items = append(items, renderWebhook(w, false))
	}
	return sendJSON(r.c, 200, newObj().set("webhooks", items))
}

// createWebhook serves POST /admin/webhooks: 201 with the secret, shown
// this once.
func (s *Server) createWebhook(r *request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	hooks, err := s.store.ListWebhooks(r.ctx)
	if err != nil {
		return err
	}
	if len(hooks) >= maxWebhooks {
		return newError(400, "webhook_limit", "At most "+strconv.Itoa(maxWebhooks)+" webhooks can be registered.")
	}
	now := s.now().UTC()
	w := &repository.Webhook{Events: []string{"*"}, Secret: sync.NewWebhookSecret(), Active: true, Created: now, Updated: now}
	applyWebhookFields(r.bag, w)
	if err := s.store.CreateWebhook(r.ctx, w); err != nil {
		return err
	}
	return sendJSON(r.c, 201, renderWebhook(w, true))
}

// applyWebhookFields copies the sent fields onto w.
func applyWebhookFields(b *bag, w *repository.Webhook) {
	if b.has("url") {
		w.URL = strings.TrimSpace(b.str("url"))
	}
	if v, ok := b.get("events"); ok {
		var evs []string
		for _, it := range asList(v) {
			t, _ := asString(it)
			if !slices.Contains(evs, t) {
				evs = append(evs, t)
			}
		}
		w.Events = evs
	}
	if b.has("secret") {
		w.Secret = b.str("secret")
	}
	if b.has("description") {
		w.Description = b.str("description")
	}
	if v, ok := b.get("active"); ok {
		active, _ := asBool(v)
		if active && !w.Active {
			w.DisabledReason, w.FailingSince = "", time.Time{}
		}
		if !active && w.Active {
			w.DisabledReason = "disabled by an admin"
		}
		w.Active = active
	}
}

// getWebhook serves GET /admin/webhooks/{id}.
func (s *Server) getWebhook(r *request) error {
	w, err := r.loadWebhook()
	if err != nil {
		return err
	}
	return sendJSON(r.c, 200, renderWebhook(w, false))
}

// updateWebhook serves POST/PUT/PATCH /admin/webhooks/{id} (partial).
func (s *Server) updateWebhook(r *request) error {
	w, err := r.loadWebhook()
	if err != nil {
		return err
	}
	w, err = s.store.UpdateWebhook(r.ctx, w.ID, func(w *repository.Webhook) error {
		applyWebhookFields(r.bag, w)
		w.Updated = s.now().UTC()
		return nil
	})
	if err != nil {
		return err
	}
	return sendJSON(r.c, 200, renderWebhook(w, r.bag.has("secret")))
}

// deleteWebhook serves DELETE /admin/webhooks/{id}.
func (s *Server) deleteWebhook(r *request) error {
	w, err := r.loadWebhook()
	if err != nil {
		return err
	}
	if err := s.store.DeleteWebhook(r.ctx, w.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
		return err
	}
	return sendJSON(r.c, 200, newObj().set("deleted", true).set("previous", renderWebhook(w, false)))
}

// pingWebhook serves POST /admin/webhooks/{id}/ping: one signed
// "webhook.ping" message, sent now, and how the endpoint answered.
func (s *Server) pingWebhook(r *request) error {
	w, err := r.loadWebhook()
	if err != nil {
		return err
	}
	if s.webhooks == nil {
		return errUnavailable("webhooks")
	}
	a := s.webhooks.Ping(r.ctx, w)
	return sendJSON(r.c, 200, newObj().set("ok", a.Error == "").set("attempt", a))
}

// webhookDeliveries serves GET /admin/webhooks/{id}/deliveries: the
// delivery log, newest first.
func (s *Server) webhookDeliveries(r *request) error {
	w, err := r.loadWebhook()
	if err != nil {
		return err
	}
	n := int64(defaultDeliveryListLen)
	if v, ok := r.bag.get("per_page"); ok {
		n, _ = asInt(v)
	}
	ds, err := s.store.ListDeliveries(r.ctx, w.ID, int(min(max(n, 1), maxDeliveryListLen)))
	if err != nil {
		return err
	}
	items := make([]any, 0, len(ds))
	for _, d := range ds {
		o := newObj().set("id", d.ID).set("type", d.Type).set("item", d.Item).set("status", d.Status).
			set("attempts", d.Attempts).set("created", d.Created.UTC().Format(timeRFC3339))
		if d.Status == repository.DeliveryPending {
			o.set("next_attempt", d.NextAttempt.UTC().Format(timeRFC3339))
		}
		log := make([]any, 0, len(d.Log))
		for _, a := range d.Log {
			log = append(log, a)
		}
		items = append(items, o.set("log", log))
	}
	return sendJSON(r.c, 200, newObj().set("deliveries", items))
}

// itemRenderer renders items for webhook messages as an admin reads them
// (in the default language, with json_ld, as GET by ID does).
type itemRenderer struct{ s *Server }

// NewItemRenderer returns the renderer webhook messages use.
func NewItemRenderer(opts Options) sync.ItemRenderer {
	// No linked-record cache: a message shows the store as it is now
	// (ttl 0 starts the cache over on every read).
	return itemRenderer{s: &Server{cfg: opts.Config, store: opts.Store, now: opts.Now,
		linkCache: linkedRecords{gen: func() int64 { return 0 }}}}
}

// webhookReader is the reader webhook messages are rendered for: an admin
// (endpoints are registered by admins and receive every change), so a
// message embeds what an admin's GET by ID embeds, decided by the same
// rule as every other output (seesLinked).
var webhookReader = &repository.User{Role: repository.RoleAdmin}

// RenderPost renders an event, venue or organizer.
func (ir itemRenderer) RenderPost(ctx context.Context, p *repository.Post) (json.RawMessage, error) {
	s := ir.s
	l, err := s.linkedFor(ctx, webhookReader, []*repository.Post{p})
	if err != nil {
		return nil, err
	}
	v := view{lang: s.cfg.DefaultLanguage, single: true}
	var o *obj
	switch p.Kind {
	case repository.KindEvent:
		o = s.renderEvent(p, l, v)
		if p.Event != nil && p.Event.Recurrence != nil {
			o.add("changed_occurrences", s.changedOccurrences(p))
		}
	case repository.KindVenue:
		o = s.renderVenue(p, l, v)
	default:
		o = s.renderOrganizer(p, l, v)
	}
	return marshalObj(o)
}

// RenderTerm renders a category or tag.
func (ir itemRenderer) RenderTerm(ctx context.Context, t *repository.Term) (json.RawMessage, error) {
	s := ir.s
	counts, err := s.counts.forTerms(ctx, s.store, map[int64]*repository.Term{t.ID: t})
	if err != nil {
		return nil, err
	}
	return marshalObj(s.renderTerm(t, counts[t.ID], s.cfg.DefaultLanguage))
}

func marshalObj(o *obj) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
