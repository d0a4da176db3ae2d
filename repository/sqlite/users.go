package sqlite

import (
	"context"
	"errors"
	"fmt"
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

// CreateUser assigns u.ID (unless set) and stores u; a taken login is
// repository.ErrDuplicate.
func (s *Store) CreateUser(ctx context.Context, u *repository.User) error {
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
		_, err = w.exec(`INSERT INTO users(id, login, role, created) VALUES (?, ?, ?, ?)`,
			id, u.Login, string(u.Role), u.Created.Format(timeText))
		return err
	})
	if err != nil {
		return err
	}
	u.ID = id
	return nil
}

func scanUser(row interface{ Scan(...any) error }) (*repository.User, error) {
	var u repository.User
	var role, created string
	if err := row.Scan(&u.ID, &u.Login, &role, &created); err != nil {
		return nil, notFound(err)
	}
	u.Role = repository.Role(role)
	var err error
	if u.Created, err = parseTime(created); err != nil {
		return nil, err
	}
	return &u, nil
}

// GetUser returns the user with this ID or repository.ErrNotFound.
func (s *Store) GetUser(ctx context.Context, id int64) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT id, login, role, created FROM users WHERE id = ?`, id))
}

// GetUserByLogin returns the user with this login or repository.ErrNotFound.
func (s *Store) GetUserByLogin(ctx context.Context, login string) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT id, login, role, created FROM users WHERE login = ?`, login))
}

// CreateToken stores a token hash for an existing user. An unknown user is
// repository.ErrNotFound, a hash already stored repository.ErrDuplicate.
func (s *Store) CreateToken(ctx context.Context, t *repository.Token) error {
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
		_, err = w.exec(`INSERT INTO tokens(hash, user_id, created) VALUES (?, ?, ?)`,
			t.Hash, t.UserID, t.Created.Format(timeText))
		return err
	})
}

// UserByTokenHash returns the user owning the token with this hash.
func (s *Store) UserByTokenHash(ctx context.Context, hash string) (*repository.User, error) {
	return scanUser(s.queryRow(ctx, `SELECT u.id, u.login, u.role, u.created
		FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash))
}
