package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/calendar/eventcal/repository"
)

// CreateUser assigns u.ID (when 0) and stores u. A taken login is
// ErrDuplicate (the unique index on users.login decides).
func (s *Store) CreateUser(ctx context.Context, u *repository.User) (err error) {
	origID, origCreated := u.ID, u.Created
	defer func() {
		if err != nil {
			u.ID, u.Created = origID, origCreated
		}
	}()
	u.Created = storedTime(u.Created)
	if err := s.assignID(ctx, seqUser, &u.ID); err != nil {
		return err
	}
	_, err = s.users.InsertOne(ctx, u)
	switch {
	case mongo.IsDuplicateKeyError(err):
		return fmt.Errorf("mongo: create user %q: %w", u.Login, repository.ErrDuplicate)
	case err != nil:
		return fmt.Errorf("mongo: create user %q: %w", u.Login, err)
	}
	return nil
}

// GetUser returns the user with this ID or ErrNotFound.
func (s *Store) GetUser(ctx context.Context, id int64) (*repository.User, error) {
	return s.findUser(ctx, bson.D{{Key: "_id", Value: id}})
}

// GetUserByLogin returns the user with this login or ErrNotFound.
func (s *Store) GetUserByLogin(ctx context.Context, login string) (*repository.User, error) {
	return s.findUser(ctx, bson.D{{Key: "login", Value: login}})
}

// findUser returns the user matching filter or ErrNotFound.
func (s *Store) findUser(ctx context.Context, filter bson.D) (*repository.User, error) {
	var u repository.User
	err := s.users.FindOne(ctx, filter).Decode(&u)
	switch {
	case isNoDocuments(err):
		return nil, repository.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("mongo: get user: %w", err)
	}
	u.Created = u.Created.UTC()
	return &u, nil
}

// CreateToken stores a token for an existing user (ErrNotFound otherwise);
// a hash stored before is ErrDuplicate.
func (s *Store) CreateToken(ctx context.Context, t *repository.Token) error {
	if _, err := s.GetUser(ctx, t.UserID); err != nil {
		return err
	}
	t.Created = storedTime(t.Created)
	_, err := s.tokens.InsertOne(ctx, t)
	switch {
	case mongo.IsDuplicateKeyError(err):
		return fmt.Errorf("mongo: create token: %w", repository.ErrDuplicate)
	case err != nil:
		return fmt.Errorf("mongo: create token: %w", err)
	}
	return nil
}

// UserByTokenHash returns the user owning the token with this hash, or
// ErrNotFound.
func (s *Store) UserByTokenHash(ctx context.Context, hash string) (*repository.User, error) {
	var t repository.Token
	err := s.tokens.FindOne(ctx, bson.D{{Key: "_id", Value: hash}}).Decode(&t)
	switch {
	case isNoDocuments(err):
		return nil, repository.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("mongo: get token: %w", err)
	}
	return s.GetUser(ctx, t.UserID)
}
