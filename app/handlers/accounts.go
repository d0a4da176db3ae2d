package handlers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// The account admin routes (issue 7, finding 9): users listed, given
// another role or disabled; tokens listed, created (with a name and an
// optional expiry) and revoked. All need an admin. Tokens are shown by
// their public ID (the first 16 hex digits of the stored hash); the secret
// is returned once, by the create call.

// userArgs declares the body of POST /admin/users/:id.
func (h *accounts) userArgs() []Arg {
	roles := make([]string, len(repository.Roles))
	for i, r := range repository.Roles {
		roles[i] = string(r)
	}
	return []Arg{
		{Name: "role", Type: tString, Enum: roles, Desc: "The user's new role."},
		{Name: "disabled", Type: tBoolean, Desc: "true refuses every token of the user at once; false enables it again."},
	}
}

// tokenListArgs declares the query of GET /admin/tokens.
func (h *accounts) tokenListArgs() []Arg {
	return []Arg{{Name: "user", Type: tInteger, Check: positiveInt, Desc: "Only the tokens of this user ID."}}
}

// tokenCreateArgs declares the body of POST /admin/tokens.
func (h *accounts) tokenCreateArgs() []Arg {
	return []Arg{
		{Name: "user", Type: tInteger, Required: true, Check: positiveInt, Desc: "ID of the user the token authenticates."},
		{Name: "name", Type: tString, Check: checkTokenName, Desc: "What the token is for (at most 100 bytes)."},
		{Name: "expires_in", Type: tInteger, Check: checkExpiresIn, Desc: "Lifetime in seconds (60 to ten years); absent: no expiry."},
	}
}

// checkTokenName bounds a token name.
func checkTokenName(_ *Request, v any) string {
	s, _ := input.AsString(v)
	if len(s) > calendar.MaxTokenName {
		return fmt.Sprintf("Must be at most %d bytes long.", calendar.MaxTokenName)
	}
	return ""
}

// checkExpiresIn accepts calendar.MinTokenLifetime to
// calendar.MaxTokenLifetime, in seconds.
func checkExpiresIn(_ *Request, v any) string {
	lo, hi := int64(calendar.MinTokenLifetime/time.Second), int64(calendar.MaxTokenLifetime/time.Second)
	if n, ok := input.AsInt(v); !ok || n < lo || n > hi {
		return fmt.Sprintf("Must be from %d to %d seconds.", lo, hi)
	}
	return ""
}

// listUsers serves GET /admin/users.
func (h *accounts) listUsers(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	users, err := h.store.ListUsers(r.ctx)
	if err != nil {
		return err
	}
	out := make([]any, len(users))
	for i, u := range users {
		out[i] = present.NewUser(u)
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("users", out))
}

// updateUser serves POST/PUT/PATCH /admin/users/:id: a new role and/or the
// disabled flag (calendar.Accounts.UpdateUser).
func (h *accounts) updateUser(r *Request) error {
	id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
	in := &calendar.UserInput{}
	if v, ok := r.bag.Get("role"); ok {
		name, _ := input.AsString(v)
		role, _ := repository.ParseRole(name)
		in.Role = &role
	}
	if v, ok := r.bag.Get("disabled"); ok {
		d, _ := input.AsBool(v)
		in.Disabled = &d
	}
	u, err := h.svc().UpdateUser(r.ctx, r.user, id, in)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewUser(u))
}

// listTokens serves GET /admin/tokens.
func (h *accounts) listTokens(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	var user int64
	if v, ok := r.bag.Get("user"); ok {
		user, _ = input.AsInt(v)
	}
	tokens, err := h.store.ListTokens(r.ctx, user)
	if err != nil {
		return err
	}
	out := make([]any, len(tokens))
	for i, t := range tokens {
		out[i] = present.NewToken(t)
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("tokens", out))
}

// createToken serves POST /admin/tokens: 201 with the token and its
// secret, shown only this once (calendar.Accounts.CreateToken).
func (h *accounts) createToken(r *Request) error {
	in := &calendar.TokenInput{UserSent: r.bag.Values["user"]}
	in.User, _ = input.AsInt(r.bag.Values["user"])
	if v, ok := r.bag.Get("name"); ok {
		name, _ := input.AsString(v)
		in.Name = &name
	}
	if v, ok := r.bag.Get("expires_in"); ok {
		n, _ := input.AsInt(v)
		d := time.Duration(n) * time.Second
		in.Lifetime = &d
	}
	t, secret, err := h.svc().CreateToken(r.ctx, r.user, in)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 201, present.NewToken(t).WithSecret(secret))
}

// revokeToken serves DELETE /admin/tokens/:token: the token stops working
// at once, on every replica (calendar.Accounts.RevokeToken).
func (h *accounts) revokeToken(r *Request) error {
	id, err := h.svc().RevokeToken(r.ctx, r.user, r.c.Params("token"))
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("revoked", true).Set("id", strings.Clone(id)))
}

// accounts serves the admin routes for users and tokens; the writes go
// through the calendar's accounts service (svc).
type accounts struct {
	store repository.Store
	now   func() time.Time
	// adminChanged is told that the stored "admin" user changed.
	adminChanged func()
}

// svc returns the accounts service over the handlers' store and clock.
func (h *accounts) svc() *calendar.Accounts {
	return calendar.NewAccounts(calendar.AccountsDeps{Store: h.store, Now: h.now, AdminChanged: h.adminChanged})
}
