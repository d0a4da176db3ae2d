package present

import (
	"time"

	"github.com/calendar/eventcal/repository"
)

// User renders a user for the admin routes.
func User(u *repository.User) *Obj {
	return NewObj().Set("id", u.ID).Set("login", u.Login).Set("role", string(u.Role)).
		Set("disabled", u.Disabled).Set("created", u.Created.UTC().Format(time.RFC3339))
}

// optionalTime renders a time, or nil for the zero time.
func optionalTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// Token renders a token (never its hash or secret).
func Token(t *repository.Token) *Obj {
	return NewObj().Set("id", t.ID()).Set("user", t.UserID).Set("name", t.Name).
		Set("created", t.Created.UTC().Format(time.RFC3339)).Set("last_used", optionalTime(t.LastUsed)).
		Set("expires", optionalTime(t.Expires))
}

// Webhook is an endpoint as the admin API shows it; the secret only
// when asked (on create, or when it was just set).
func Webhook(w *repository.Webhook, withSecret bool) *Obj {
	o := NewObj().Set("id", w.ID).Set("url", w.URL).Set("description", w.Description).
		Set("events", w.Events).Set("active", w.Active)
	if w.DisabledReason != "" {
		o.Set("disabled_reason", w.DisabledReason)
	}
	if !w.FailingSince.IsZero() {
		o.Set("failing_since", w.FailingSince.UTC().Format(TimeRFC3339))
	}
	o.Set("created", w.Created.UTC().Format(TimeRFC3339)).Set("updated", w.Updated.UTC().Format(TimeRFC3339))
	if withSecret {
		o.Set("secret", w.Secret)
	}
	return o
}

// TimeRFC3339 is the layout of the admin shapes' times.
const TimeRFC3339 = "2006-01-02T15:04:05Z07:00"
