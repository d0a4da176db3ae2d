package present

import (
	"bytes"
	"time"

	"github.com/calendar/eventcal/repository"
)

// User is a user as the admin routes show it.
type User struct {
	ID       int64
	Login    string
	Role     string
	Disabled bool
	Created  string
}

func (u *User) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.int("id", u.ID)
	w.str("login", u.Login)
	w.str("role", u.Role)
	w.bool("disabled", u.Disabled)
	w.str("created", u.Created)
	return w.close()
}

// MarshalJSON writes the user.
func (u *User) MarshalJSON() ([]byte, error) { return marshal(u) }

// NewUser renders a user for the admin routes.
func NewUser(u *repository.User) *User {
	return &User{ID: u.ID, Login: u.Login, Role: string(u.Role), Disabled: u.Disabled, Created: u.Created.UTC().Format(time.RFC3339)}
}

// optionalTime renders a time, "" (written null) for the zero time.
func optionalTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Token is a token as the admin routes show it (never its hash; its
// secret only once, on create).
type Token struct {
	ID       string
	User     int64
	Name     string
	Created  string
	LastUsed string // "" is written null
	Expires  string // "" is written null
	// Secret is the token itself, set only in the answer to its creation
	// (omitted when nil).
	Secret *string
}

func (t *Token) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("id", t.ID)
	w.int("user", t.User)
	w.str("name", t.Name)
	w.str("created", t.Created)
	for _, x := range []struct{ k, v string }{{"last_used", t.LastUsed}, {"expires", t.Expires}} {
		if x.v == "" {
			w.raw(x.k, "null")
		} else {
			w.str(x.k, x.v)
		}
	}
	if t.Secret != nil {
		w.str("token", *t.Secret)
	}
	return w.close()
}

// MarshalJSON writes the token.
func (t *Token) MarshalJSON() ([]byte, error) { return marshal(t) }

// WithSecret sets the token's secret (the answer to its creation) and
// returns t.
func (t *Token) WithSecret(secret string) *Token {
	t.Secret = &secret
	return t
}

// NewToken renders a token (never its hash or secret).
func NewToken(t *repository.Token) *Token {
	return &Token{ID: t.ID(), User: t.UserID, Name: t.Name, Created: t.Created.UTC().Format(time.RFC3339),
		LastUsed: optionalTime(t.LastUsed), Expires: optionalTime(t.Expires)}
}

// Webhook is an endpoint as the admin API shows it.
type Webhook struct {
	ID             int64
	URL            string
	Description    string
	Events         []string
	Active         bool
	DisabledReason string // omitted when empty
	FailingSince   string // omitted when empty
	Created        string
	Updated        string
	// Secret is shown only when asked (on create, or when it was just
	// set); omitted when nil.
	Secret *string
}

func (h *Webhook) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.int("id", h.ID)
	w.str("url", h.URL)
	w.str("description", h.Description)
	w.strs("events", h.Events)
	w.bool("active", h.Active)
	w.strSet("disabled_reason", h.DisabledReason)
	w.strSet("failing_since", h.FailingSince)
	w.str("created", h.Created)
	w.str("updated", h.Updated)
	if h.Secret != nil {
		w.str("secret", *h.Secret)
	}
	return w.close()
}

// MarshalJSON writes the endpoint.
func (h *Webhook) MarshalJSON() ([]byte, error) { return marshal(h) }

// NewWebhook renders an endpoint; the secret only when withSecret.
func NewWebhook(w *repository.Webhook, withSecret bool) *Webhook {
	o := &Webhook{ID: w.ID, URL: w.URL, Description: w.Description, Events: w.Events, Active: w.Active,
		DisabledReason: w.DisabledReason, Created: w.Created.UTC().Format(TimeRFC3339), Updated: w.Updated.UTC().Format(TimeRFC3339)}
	if !w.FailingSince.IsZero() {
		o.FailingSince = w.FailingSince.UTC().Format(TimeRFC3339)
	}
	if withSecret {
		secret := w.Secret
		o.Secret = &secret
	}
	return o
}

// TimeRFC3339 is the layout of the admin shapes' times.
const TimeRFC3339 = "2006-01-02T15:04:05Z07:00"
