package calendar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// MaxTokenLifetime bounds a token's lifetime (ten years).
const MaxTokenLifetime = 10 * 365 * 24 * time.Hour

// MinTokenLifetime is the shortest lifetime a token may be given.
const MinTokenLifetime = time.Minute

// MaxTokenName bounds a token's name, in bytes.
const MaxTokenName = 100

// AccountsDeps are what the accounts service uses.
type AccountsDeps struct {
	Store repository.Store
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// AdminChanged is told that the stored "admin" user changed (the
	// composition root caches the ADMIN_TOKEN user); may be nil.
	AdminChanged func()
}

// Accounts changes users and API tokens, for admins. Each command checks
// all of its input, the caller (an admin) and the records it names, and
// only then writes, once: a refused command leaves the store as it was.
type Accounts struct {
	store        repository.Store
	now          func() time.Time
	adminChanged func()
}

// NewAccounts returns the service; Store must be set.
func NewAccounts(d AccountsDeps) *Accounts {
	a := &Accounts{store: d.Store, now: d.Now, adminChanged: d.AdminChanged}
	if a.now == nil {
		a.now = time.Now
	}
	return a
}

// Operator is the actor of the command line and of the importer: the
// person running the installation, who may do what an admin may, and
// also what only they may (an explicit user ID, an origin stamp). It is
// no stored user; pass it as by. A nil actor stays anonymous here.
var Operator = &repository.User{Login: "(operator)", Role: repository.RoleAdmin}

// MaxLogin bounds a login, in bytes (WordPress's limit on user_login).
const MaxLogin = 60

// requireAdmin refuses everyone but admins: 401 anonymous, 403 others.
func requireAdmin(by *repository.User) error {
	if !access.IsAdmin(by) {
		return access.Forbidden(by)
	}
	return nil
}

// UserInput is a change of a user: a nil field is left as it is.
type UserInput struct {
	Role     *repository.Role
	Disabled *bool
	// Email and Origin are set by an importer (by Operator only).
	Email  *string
	Origin *repository.Origin
}

// NewUserInput is a user to create.
type NewUserInput struct {
	// Login is trimmed; it must be unique (case aside, as the stores
	// compare it).
	Login string
	Role  repository.Role
	// Email is kept, never shown by the API.
	Email string
	// ID is the ID the user gets, 0 for the next free one; Origin stamps
	// an imported user. Both by Operator only (an importer).
	ID     int64
	Origin *repository.Origin
}

// CheckRole refuses a role that is not one (400 rest_invalid_param), in
// the words of the routes' enum check.
func CheckRole(role repository.Role) error {
	if slices.Contains(repository.Roles, role) {
		return nil
	}
	return apierr.InvalidValue("role", "Must be one of "+roleNames()+".", string(role))
}

// CheckLogin returns what is wrong with a login (trimmed first), or "":
// empty, over MaxLogin bytes, or holding a control character or white
// space other than a plain space (WordPress's logins may hold spaces).
func CheckLogin(login string) string {
	login = strings.TrimSpace(login)
	switch {
	case login == "":
		return "Must be a non-empty string."
	case len(login) > MaxLogin:
		return fmt.Sprintf("Must be at most %d bytes long.", MaxLogin)
	case strings.IndexFunc(login, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0:
		return "Must not contain control characters or white space other than a plain space."
	}
	return ""
}

// errLoginTaken is the refusal of a login another user has.
func errLoginTaken(login string) error {
	return apierr.New(400, "existing_user_login", fmt.Sprintf("The login %q is already taken.", login))
}

// CreateUser makes a user, by by. It refuses, in order: a login CheckLogin
// refuses, a role that is not one (400 naming each), an ID below 0 or
// above repository.MaxExplicitID, an ID or origin from anyone but
// Operator (403), a caller who is not an admin, a login or ID another
// user has (400 existing_user_login, existing_user_id).
func (a *Accounts) CreateUser(ctx context.Context, by *repository.User, in *NewUserInput) (*repository.User, error) {
	login := strings.TrimSpace(in.Login)
	var p apierr.Params
	if msg := CheckLogin(login); msg != "" {
		p.InvalidValue("login", msg, in.Login)
	}
	if !slices.Contains(repository.Roles, in.Role) {
		p.InvalidValue("role", "Must be one of "+roleNames()+".", string(in.Role))
	}
	if in.ID < 0 || in.ID > repository.MaxExplicitID {
		p.InvalidValue("id", fmt.Sprintf("Must be from 1 to %d, or 0 for the next free ID.", repository.MaxExplicitID), in.ID)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if (in.ID != 0 || in.Origin != nil) && by != Operator {
		return nil, access.Forbidden(by)
	}
	if err := requireAdmin(by); err != nil {
		return nil, err
	}
	if _, err := a.store.GetUserByLogin(ctx, login); err == nil {
		return nil, errLoginTaken(login)
	} else if !errors.Is(err, repository.ErrNotFound) {
		return nil, err
	}
	if in.ID != 0 {
		if _, err := a.store.GetUser(ctx, in.ID); err == nil {
			return nil, apierr.New(400, "existing_user_id", fmt.Sprintf("Another user has ID %d.", in.ID))
		} else if !errors.Is(err, repository.ErrNotFound) {
			return nil, err
		}
	}
	u := &repository.User{ID: in.ID, Login: login, Role: in.Role, Email: in.Email, Created: a.now().UTC(), Origin: in.Origin}
	if err := a.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, repository.ErrDuplicate) {
			return nil, errLoginTaken(login)
		}
		return nil, err
	}
	if in.ID != 0 && u.ID != in.ID {
		return nil, fmt.Errorf("calendar: user %q stored as %d, not %d", login, u.ID, in.ID)
	}
	return u, nil
}

// roleNames lists the roles, least capable first.
func roleNames() string {
	names := make([]string, len(repository.Roles))
	for i, r := range repository.Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// errNoUser is the 404 of a user route naming no user.
func errNoUser() error { return apierr.New(404, "rest_user_invalid_id", "Invalid user ID.") }

// UpdateUser gives the user id another role and/or disables or enables it,
// by by. It refuses, in order: a role that is not one (400), an e-mail or
// origin from anyone but Operator (403), a caller who is not an admin, a
// user that is not there (404). The change holds from
// the user's next request on every replica (authentication reads the
// store each time).
func (a *Accounts) UpdateUser(ctx context.Context, by *repository.User, id int64, in *UserInput) (*repository.User, error) {
	if in.Role != nil {
		if err := CheckRole(*in.Role); err != nil {
			return nil, err
		}
	}
	if (in.Email != nil || in.Origin != nil) && by != Operator {
		return nil, access.Forbidden(by)
	}
	if err := requireAdmin(by); err != nil {
		return nil, err
	}
	u, err := a.store.GetUser(ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return nil, errNoUser()
	}
	if err != nil {
		return nil, err
	}
	if in.Role != nil {
		u.Role = *in.Role
	}
	if in.Disabled != nil {
		u.Disabled = *in.Disabled
	}
	if in.Email != nil {
		u.Email = *in.Email
	}
	if in.Origin != nil {
		o := *in.Origin
		u.Origin = &o
	}
	if err := a.store.UpdateUser(ctx, u); err != nil {
		if errors.Is(err, repository.ErrNotFound) {
			return nil, errNoUser()
		}
		return nil, err
	}
	if u.Login == "admin" && a.adminChanged != nil {
		// The ADMIN_TOKEN user is cached with the admin role; it keeps
		// working whatever is stored (the token is configuration).
		a.adminChanged()
	}
	return u, nil
}

// TokenInput is a new API token.
type TokenInput struct {
	// User is the ID of the user the token authenticates.
	User int64
	// UserSent is User as the caller received it, echoed by a refusal
	// (User when nil).
	UserSent any
	// Name says what the token is for; trimmed.
	Name *string
	// Lifetime is how long the token works; nil: no expiry.
	Lifetime *time.Duration
}

// CreateToken makes an API token for a user, by by, and returns it with
// its secret (shown only this once; the store keeps its hash). It
// refuses, in order: a user ID below 1, a name over MaxTokenName bytes or
// a lifetime outside MinTokenLifetime..MaxTokenLifetime (one 400 naming
// each), a caller who is not an admin, a user that is not there (400).
func (a *Accounts) CreateToken(ctx context.Context, by *repository.User, in *TokenInput) (*repository.Token, string, error) {
	sent := in.UserSent
	if sent == nil {
		sent = in.User
	}
	var p apierr.Params
	if in.User <= 0 {
		p.InvalidValue("user", "Must be a whole number of 1 or more.", sent)
	}
	if in.Name != nil && len(*in.Name) > MaxTokenName {
		p.InvalidValue("name", fmt.Sprintf("Must be at most %d bytes long.", MaxTokenName), *in.Name)
	}
	if in.Lifetime != nil && (*in.Lifetime < MinTokenLifetime || *in.Lifetime > MaxTokenLifetime) {
		p.InvalidValue("expires_in", fmt.Sprintf("Must be from %d to %d seconds.", int64(MinTokenLifetime/time.Second), int64(MaxTokenLifetime/time.Second)),
			int64(*in.Lifetime/time.Second))
	}
	if err := p.Err(); err != nil {
		return nil, "", err
	}
	if err := requireAdmin(by); err != nil {
		return nil, "", err
	}
	if _, err := a.store.GetUser(ctx, in.User); errors.Is(err, repository.ErrNotFound) {
		return nil, "", apierr.InvalidValue("user", fmt.Sprintf("There is no user with ID %d.", in.User), sent)
	} else if err != nil {
		return nil, "", err
	}
	secret, err := repository.NewTokenSecret()
	if err != nil {
		return nil, "", err
	}
	now := a.now().UTC().Truncate(time.Second)
	t := &repository.Token{Hash: repository.HashToken(secret), UserID: in.User, Created: now}
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
	}
	if in.Lifetime != nil {
		t.Expires = now.Add(*in.Lifetime)
	}
	if err := a.store.CreateToken(ctx, t); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// RevokeToken deletes the token whose public ID is id (case aside), by by:
// it stops working at once, on every replica. It refuses a caller who is
// not an admin, then an ID no token has (404). It returns the ID as
// revoked (lower case).
func (a *Accounts) RevokeToken(ctx context.Context, by *repository.User, id string) (string, error) {
	if err := requireAdmin(by); err != nil {
		return "", err
	}
	id = strings.ToLower(id)
	err := a.store.RevokeToken(ctx, id)
	if errors.Is(err, repository.ErrNotFound) {
		return "", apierr.New(404, "rest_token_invalid_id", "No token has that ID.")
	}
	if err != nil {
		return "", err
	}
	return id, nil
}
