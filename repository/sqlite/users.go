package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
)

// timeText is how user and token times are stored: RFC 3339 with
// nanoseconds, which keeps the instant exactly.
const timeText = time.RFC3339Nano

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeText, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("sqlite: bad stored time %q: %w", s, err)
	}
	return t, nil
}

// accountStore is the account part of repository.Store: users, tokens and
// the Exclusive lock.
type accountStore struct{ *conn }

// CreateUser assigns u.ID (unless set) and stores u; a taken login is
// repository.ErrDuplicate.
func (s *accountStore) CreateUser(ctx context.Context, u *repository.User) error {
	id := u.ID
	err := s.write(ctx, func(w *writeTx) error {
		var one int
		err := w.queryRow(`SELECT 1 FROM users WHERE login = ? OR id = ?`, u.Login, id).Scan(&one)
		if err == nil {
			return fmt.Errorf("sqlite: user %q: %w", u.Login, repository.ErrDuplicate)
		}
		if !errors.Is(err, errNoRows) {
			return notFound(err)
		}
		if id == 0 {
			if id, err = w.next("user", 1); err != nil {
				return err
			}
		} else if err := w.reserve("user", id); err != nil {
			return err
		}
		origin, err := userOrigin(u.Origin)
		if err != nil {
			return err
		}
		_, err = w.exec(`INSERT INTO users(id, login, role, created, disabled, email, origin) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, u.Login, string(u.Role), u.Created.Format(timeText), u.Disabled, u.Email, origin)
		return err
	})
	if err != nil {
		return err
	}
	u.ID = id
	return nil
}

// userColumns are the columns scanUser reads, in its order.
const userColumns = `id, login, role, created, disabled, email, origin`

func scanUser(row interface{ Scan(...any) error }) (*repository.User, error) {
	var u repository.User
	var role, created, origin string
	if err := row.Scan(&u.ID, &u.Login, &role, &created, &u.Disabled, &u.Email, &origin); err != nil {
		return nil, notFound(err)
	}
	if origin != "" {
		u.Origin = &repository.Origin{}
		if err := json.Unmarshal([]byte(origin), u.Origin); err != nil {
			return nil, fmt.Errorf("sqlite: user %d origin: %w", u.ID, err)
		}
	}
	u.Role = repository.Role(role)
	var err error
	if u.Created, err = parseTime(created); err != nil {
		return nil, err
	}
	return &u, nil
}

// GetUser returns the user with this ID or repository.ErrNotFound.
func (s *accountStore) GetUser(ctx context.Context, id int64) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
}

// GetUserByLogin returns the user with this login or repository.ErrNotFound.
func (s *accountStore) GetUserByLogin(ctx context.Context, login string) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE login = ?`, login))
}

// CreateToken stores a token hash for an existing user. An unknown user is
// repository.ErrNotFound, a hash already stored repository.ErrDuplicate.
func (s *accountStore) CreateToken(ctx context.Context, t *repository.Token) error {
	return s.write(ctx, func(w *writeTx) error {
		var one int
		if err := w.queryRow(`SELECT 1 FROM users WHERE id = ?`, t.UserID).Scan(&one); err != nil {
			return notFound(err)
		}
		err := w.queryRow(`SELECT 1 FROM tokens WHERE hash = ?`, t.Hash).Scan(&one)
		if err == nil {
			return fmt.Errorf("sqlite: token: %w", repository.ErrDuplicate)
		}
		if !errors.Is(err, errNoRows) {
			return notFound(err)
		}
		_, err = w.exec(`INSERT INTO tokens(hash, user_id, created, name, last_used, expires) VALUES (?, ?, ?, ?, ?, ?)`,
			t.Hash, t.UserID, t.Created.Format(timeText), t.Name, optTime(t.LastUsed), optTime(t.Expires))
		return err
	})
}

// UserByTokenHash returns the user owning the token with this hash.
func (s *accountStore) UserByTokenHash(ctx context.Context, hash string) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT u.id, u.login, u.role, u.created, u.disabled, u.email, u.origin
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash))
}

// optTime stores an optional time: "" for the zero time.
func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeText)
}

// parseOptTime reads what optTime stored.
func parseOptTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime(s)
}

// ListUsers returns every user, by ID ascending.
func (s *accountStore) ListUsers(ctx context.Context) ([]*repository.User, error) {
	rows, err := s.query(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect(rows, []*repository.User{}, scanUser)
}

// UpdateUser stores u's role, disabled flag, e-mail and origin.
func (s *accountStore) UpdateUser(ctx context.Context, u *repository.User) error {
	return s.write(ctx, func(w *writeTx) error {
		origin, err := userOrigin(u.Origin)
		if err != nil {
			return err
		}
		return w.execSome(`UPDATE users SET role = ?, disabled = ?, email = ?, origin = ? WHERE id = ?`,
			string(u.Role), u.Disabled, u.Email, origin, u.ID)
	})
}

// tokenColumns are the columns scanToken reads, in its order.
const tokenColumns = `hash, user_id, created, name, last_used, expires`

func scanToken(row interface{ Scan(...any) error }) (*repository.Token, error) {
	var t repository.Token
	var created, last, expires string
	if err := row.Scan(&t.Hash, &t.UserID, &created, &t.Name, &last, &expires); err != nil {
		return nil, notFound(err)
	}
	var err error
	if t.Created, err = parseTime(created); err != nil {
		return nil, err
	}
	if t.LastUsed, err = parseOptTime(last); err != nil {
		return nil, err
	}
	if t.Expires, err = parseOptTime(expires); err != nil {
		return nil, err
	}
	return &t, nil
}

// TokenByHash returns the token with this hash or repository.ErrNotFound.
func (s *accountStore) TokenByHash(ctx context.Context, hash string) (*repository.Token, error) {
	return scanToken(s.queryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`, hash))
}

// ListTokens returns the tokens of one user (every user's for 0), oldest
// first.
func (s *accountStore) ListTokens(ctx context.Context, userID int64) ([]*repository.Token, error) {
	rows, err := s.query(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE ? = 0 OR user_id = ? ORDER BY created, hash`, userID, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect(rows, []*repository.Token{}, scanToken)
}

// RevokeToken deletes the token whose public ID is id (a prefix range of
// the primary key).
func (s *accountStore) RevokeToken(ctx context.Context, id string) error {
	if !repository.ValidTokenID(id) {
		return repository.ErrNotFound
	}
	return s.write(ctx, func(w *writeTx) error {
		return w.execSome(`DELETE FROM tokens WHERE hash >= ? AND hash < ?`, id, id+"g")
	})
}

// TouchToken records the last use of a token.
func (s *accountStore) TouchToken(ctx context.Context, hash string, at time.Time) error {
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(`UPDATE tokens SET last_used = ? WHERE hash = ?`, optTime(at), hash)
		return err
	})
}

// Exclusive runs fn holding the in-process lock named key. A SQLite file
// is served by one service process (the search index beside it allows no
// other), so an in-process lock serialises every API writer; the CLI never
// calls Exclusive.
func (s *accountStore) Exclusive(ctx context.Context, key string, fn func(ctx context.Context) error) error {
	unlock, err := s.exclusive.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(ctx)
}

// keyedMutex is a set of named mutexes, each existing while it is held or
// waited for.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	ch   chan struct{} // holds one token while the lock is free
	refs int
}

// lock takes the mutex named key, waiting until it is free or ctx is done,
// and returns its release function.
func (k *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedEntry{}
	}
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{ch: make(chan struct{}, 1)}
		e.ch <- struct{}{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case <-e.ch:
		return func() { e.ch <- struct{}{}; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

// userOrigin is the stored form of a user's origin: its JSON, "" for none.
func userOrigin(o *repository.Origin) (string, error) {
	if o == nil {
		return "", nil
	}
	b, err := json.Marshal(o)
	return string(b), err
}
