package calendar

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/webhooks"
)

// Webhook endpoint limits.
const (
	// MaxWebhooks bounds the registered endpoints.
	MaxWebhooks = 100
	// MaxWebhookDescription bounds an endpoint's description, in bytes.
	MaxWebhookDescription = 500
)

// WebhooksDeps are what the webhooks service uses.
type WebhooksDeps struct {
	Store repository.Store
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// AllowPrivate accepts endpoint URLs on private addresses
	// (WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
}

// Webhooks registers, changes and removes webhook endpoints, for admins.
// Each command checks all of its input, the caller and the records it
// names, and only then writes, once: a refused command leaves the store
// as it was.
type Webhooks struct {
	store        repository.Store
	now          func() time.Time
	allowPrivate bool
}

// NewWebhooks returns the service; Store must be set.
func NewWebhooks(d WebhooksDeps) *Webhooks {
	w := &Webhooks{store: d.Store, now: d.Now, allowPrivate: d.AllowPrivate}
	if w.now == nil {
		w.now = time.Now
	}
	return w
}

// WebhookInput is a new endpoint or a (partial) change of one: a nil
// field is left as it is (on create: no secret makes one, no events
// means every type).
type WebhookInput struct {
	// URL is trimmed.
	URL *string
	// Events are message types or "*"; repeats are dropped.
	Events *[]string
	Secret *string
	// Description is a note for admins.
	Description *string
	// Active false disables the endpoint; true enables it again and
	// clears its failure record.
	Active *bool
}

// errNoWebhook is the 404 of a webhook route naming no endpoint.
func errNoWebhook() error { return apierr.New(404, "webhook_not_found", "No webhook has this ID.") }

// checkWebhookInput checks every field of in, naming each problem in one
// 400, with the messages of the routes' declared checks.
func (s *Webhooks) checkWebhookInput(in *WebhookInput, create bool) error {
	var p apierr.Params
	if create && in.URL == nil {
		p.Missing("url")
		return p.Err()
	}
	if in.URL != nil {
		if err := webhooks.CheckURL(strings.TrimSpace(*in.URL), s.allowPrivate); err != nil {
			p.InvalidValue("url", strings.TrimPrefix(err.Error(), "webhook: "), *in.URL)
		}
	}
	if in.Events != nil {
		if err := webhooks.CheckEvents(*in.Events); err != nil {
			raw := make([]any, len(*in.Events))
			for i, e := range *in.Events {
				raw[i] = e
			}
			p.InvalidValue("events", err.Error(), raw)
		}
	}
	if in.Secret != nil {
		if err := webhooks.CheckSecret(*in.Secret); err != nil {
			p.InvalidValue("secret", err.Error(), *in.Secret)
		}
	}
	if in.Description != nil && len(*in.Description) > MaxWebhookDescription {
		p.InvalidValue("description", "Must be at most "+strconv.Itoa(MaxWebhookDescription)+" bytes long.", *in.Description)
	}
	return p.Err()
}

// Get returns the endpoint id for by. It refuses a caller who is not an
// admin, then an endpoint that is not there (404 webhook_not_found).
func (s *Webhooks) Get(ctx context.Context, by *repository.User, id int64) (*repository.Webhook, error) {
	if err := requireAdmin(by); err != nil {
		return nil, err
	}
	w, err := s.store.GetWebhook(ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return nil, errNoWebhook()
	}
	return w, err
}

// Create registers an endpoint, by by, active, with a generated secret
// unless in names one. It refuses, in order: the fields (400 naming each),
// a caller who is not an admin, a registry already holding MaxWebhooks
// endpoints (400 webhook_limit).
func (s *Webhooks) Create(ctx context.Context, by *repository.User, in *WebhookInput) (*repository.Webhook, error) {
	if err := s.checkWebhookInput(in, true); err != nil {
		return nil, err
	}
	if err := requireAdmin(by); err != nil {
		return nil, err
	}
	hooks, err := s.store.ListWebhooks(ctx)
	if err != nil {
		return nil, err
	}
	if len(hooks) >= MaxWebhooks {
		return nil, apierr.New(400, "webhook_limit", "At most "+strconv.Itoa(MaxWebhooks)+" webhooks can be registered.")
	}
	now := s.now().UTC()
	w := &repository.Webhook{Events: []string{"*"}, Secret: webhooks.NewSecret(), Active: true, Created: now, Updated: now}
	applyWebhookInput(in, w)
	if err := s.store.CreateWebhook(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// Update changes the endpoint id with the fields in sets, by by. It
// refuses, in order: the fields, a caller who is not an admin, an
// endpoint that is not there (404).
func (s *Webhooks) Update(ctx context.Context, by *repository.User, id int64, in *WebhookInput) (*repository.Webhook, error) {
	if err := s.checkWebhookInput(in, false); err != nil {
		return nil, err
	}
	cur, err := s.Get(ctx, by, id)
	if err != nil {
		return nil, err
	}
	w, err := s.store.UpdateWebhook(ctx, cur.ID, func(w *repository.Webhook) error {
		applyWebhookInput(in, w)
		w.Updated = s.now().UTC()
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return nil, errNoWebhook()
	}
	return w, err
}

// Delete removes the endpoint id and its delivery log, by by, and
// returns it as it was. It refuses a caller who is not an admin, then an
// endpoint that is not there (404).
func (s *Webhooks) Delete(ctx context.Context, by *repository.User, id int64) (*repository.Webhook, error) {
	w, err := s.Get(ctx, by, id)
	if err != nil {
		return nil, err
	}
	if err := s.store.DeleteWebhook(ctx, w.ID); err != nil && !errors.Is(err, repository.ErrNotFound) {
		return nil, err
	}
	return w, nil
}

// applyWebhookInput copies the sent fields onto w.
func applyWebhookInput(in *WebhookInput, w *repository.Webhook) {
	if in.URL != nil {
		w.URL = strings.TrimSpace(*in.URL)
	}
	if in.Events != nil {
		var evs []string
		for _, t := range *in.Events {
			if !slices.Contains(evs, t) {
				evs = append(evs, t)
			}
		}
		w.Events = evs
	}
	if in.Secret != nil {
		w.Secret = *in.Secret
	}
	if in.Description != nil {
		w.Description = *in.Description
	}
	if in.Active != nil {
		active := *in.Active
		if active && !w.Active {
			w.DisabledReason, w.FailingSince = "", time.Time{}
		}
		if !active && w.Active {
			w.DisabledReason = "disabled by an admin"
		}
		w.Active = active
	}
}
