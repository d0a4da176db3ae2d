package handlers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/repository"
)

// The account admin routes (issue 7, finding 9): users listed, given
// another role or disabled; tokens listed, created (with a name and an
// optional expiry) and revoked. All need an admin. Tokens are shown by
// their public ID (the first 16 hex digits of the stored hash); the secret
// is returned once, by the create call.

// maxTokenLifetime bounds expires_in (ten years).
const maxTokenLifetime = 10 * 365 * 24 * time.Hour

// maxTokenName bounds a token's name.
const maxTokenName = 100

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
	if len(s) > maxTokenName {
		return fmt.Sprintf("Must be at most %d bytes long.", maxTokenName)
	}
	return ""
}

// checkExpiresIn accepts 60 seconds to maxTokenLifetime.
func checkExpiresIn(_ *Request, v any) string {
	n, ok := input.AsInt(v)
	if !ok || n < 60 || n > int64(maxTokenLifetime/time.Second) {
		return fmt.Sprintf("Must be from 60 to %d seconds.", int64(maxTokenLifetime/time.Second))
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
// disabled flag. It takes effect on the user's next request, on every
// replica (authentication reads the store each time).
func (h *accounts) updateUser(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
	u, err := h.store.GetUser(r.ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return apierr.New(404, "rest_user_invalid_id", "Invalid user ID.")
	}
	if err != nil {
		return err
	}
	if v, ok := r.bag.Get("role"); ok {
		name, _ := input.AsString(v)
		u.Role, _ = repository.ParseRole(name)
	}
	if v, ok := r.bag.Get("disabled"); ok {
		u.Disabled, _ = input.AsBool(v)
	}
	if err := h.store.UpdateUser(r.ctx, u); err != nil {
		if errors.Is(err, repository.ErrNotFound) {
			return apierr.New(404, "rest_user_invalid_id", "Invalid user ID.")
		}
		return err
	}
	if u.Login == "admin" {
		// The ADMIN_TOKEN user is cached with the admin role; it keeps
		// working whatever is stored (the token is configuration).
		if h.adminChanged != nil {
			h.adminChanged()
		}
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
// secret, shown only this once.
func (h *accounts) createToken(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	uid, _ := input.AsInt(r.bag.Values["user"])
	if _, err := h.store.GetUser(r.ctx, uid); errors.Is(err, repository.ErrNotFound) {
		return apierr.InvalidValue("user", fmt.Sprintf("There is no user with ID %d.", uid), r.bag.Values["user"])
	} else if err != nil {
		return err
	}
	secret, err := repository.NewTokenSecret()
	if err != nil {
		return err
	}
	now := h.now().UTC().Truncate(time.Second)
	t := &repository.Token{Hash: repository.HashToken(secret), UserID: uid, Created: now}
	if v, ok := r.bag.Get("name"); ok {
		name, _ := input.AsString(v)
		t.Name = strings.TrimSpace(name)
	}
	if v, ok := r.bag.Get("expires_in"); ok {
		n, _ := input.AsInt(v)
		t.Expires = now.Add(time.Duration(n) * time.Second)
	}
	if err := h.store.CreateToken(r.ctx, t); err != nil {
		return err
	}
	return present.SendJSON(r.c, 201, present.NewToken(t).WithSecret(secret))
}

// revokeToken serves DELETE /admin/tokens/:token: the token stops working
// at once, on every replica.
func (h *accounts) revokeToken(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	id := strings.ToLower(r.c.Params("token"))
	err := h.store.RevokeToken(r.ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return apierr.New(404, "rest_token_invalid_id", "No token has that ID.")
	}
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("revoked", true).Set("id", strings.Clone(id)))
}

// accounts serves the admin routes for users and tokens.
type accounts struct {
	store repository.Store
	now   func() time.Time
	// adminChanged is told that the stored "admin" user changed.
	adminChanged func()
}
