package mongo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// accountStore is the account part of repository.Store: users, tokens and
// the Exclusive lock.
type accountStore struct{ *conn }

// CreateUser assigns u.ID (when 0) and stores u. A taken login is
// ErrDuplicate (the unique index on users.login decides).
func (s *accountStore) CreateUser(ctx context.Context, u *repository.User) (err error) {
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
	if origID != 0 {
		// An explicit ID a user holds is refused before the insert: the
		// insert's duplicate key alone cannot tell the very same user
		// stored before from a lost reply of this insert (landedAs).
		if err := s.refuseStored(ctx, s.users, u.ID); err != nil {
			return fmt.Errorf("mongo: create user %q: %w", u.Login, err)
		}
	}
	doc, err := bson.Marshal(u)
	if err != nil {
		return fmt.Errorf("mongo: create user %q: %w", u.Login, err)
	}
	_, err = s.users.InsertOne(ctx, doc)
	if err != nil {
		// A lost reply (or a retry meeting its own insert): the re-read
		// tells whether this very user was stored.
		switch landed, rerr := s.landedAs(ctx, s.users, bson.D{{Key: "_id", Value: u.ID}}, doc); {
		case rerr != nil:
			return fmt.Errorf("mongo: create user %q: %w (outcome unknown: %v)", u.Login, err, rerr)
		case landed:
			err = nil
		}
	}
	switch {
	case mongo.IsDuplicateKeyError(err):
		return fmt.Errorf("mongo: create user %q: %w", u.Login, repository.ErrDuplicate)
	case err != nil:
		return fmt.Errorf("mongo: create user %q: %w", u.Login, err)
	}
	return nil
}

// GetUser returns the user with this ID or ErrNotFound.
func (s *accountStore) GetUser(ctx context.Context, id int64) (*repository.User, error) {
	return s.findUser(ctx, bson.D{{Key: "_id", Value: id}})
}

// GetUserByLogin returns the user with this login or ErrNotFound.
func (s *accountStore) GetUserByLogin(ctx context.Context, login string) (*repository.User, error) {
	return s.findUser(ctx, bson.D{{Key: "login", Value: login}})
}

// findUser returns the user matching filter or ErrNotFound.
func (s *accountStore) findUser(ctx context.Context, filter bson.D) (*repository.User, error) {
	return findOne(ctx, s.users, filter, "get user", fixUser)
}

// fixUser normalises a user read from the database.
func fixUser(u *repository.User) { u.Created = u.Created.UTC() }

// CreateToken stores a token for an existing user (ErrNotFound otherwise);
// a hash stored before is ErrDuplicate.
func (s *accountStore) CreateToken(ctx context.Context, t *repository.Token) error {
	if _, err := s.GetUser(ctx, t.UserID); err != nil {
		return err
	}
	// A stored hash is refused before the insert: the insert's duplicate
	// key alone cannot tell the very same token stored before from a
	// lost reply of this insert (landedAs).
	if err := s.refuseStored(ctx, s.tokens, t.Hash); err != nil {
		return fmt.Errorf("mongo: create token: %w", err)
	}
	t.Created = storedTime(t.Created)
	if !t.LastUsed.IsZero() {
		t.LastUsed = storedTime(t.LastUsed)
	}
	if !t.Expires.IsZero() {
		t.Expires = storedTime(t.Expires)
	}
	doc, err := bson.Marshal(t)
	if err != nil {
		return fmt.Errorf("mongo: create token: %w", err)
	}
	_, err = s.tokens.InsertOne(ctx, doc)
	if err != nil {
		// A lost reply (or a retry meeting its own insert): the re-read
		// tells whether this very token was stored.
		switch landed, rerr := s.landedAs(ctx, s.tokens, bson.D{{Key: "_id", Value: t.Hash}}, doc); {
		case rerr != nil:
			return fmt.Errorf("mongo: create token: %w (outcome unknown: %v)", err, rerr)
		case landed:
			err = nil
		}
	}
	switch {
	case mongo.IsDuplicateKeyError(err):
		return fmt.Errorf("mongo: create token: %w", repository.ErrDuplicate)
	case err != nil:
		return fmt.Errorf("mongo: create token: %w", err)
	}
	return nil
}

// refuseStored returns repository.ErrDuplicate when coll holds a document
// whose _id is id.
func (s *accountStore) refuseStored(ctx context.Context, coll *mongo.Collection, id any) error {
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	switch {
	case err == nil:
		return fmt.Errorf("%v is stored: %w", id, repository.ErrDuplicate)
	case isNoDocuments(err):
		return nil
	default:
		return err
	}
}

// UserByTokenHash returns the user owning the token with this hash, or
// ErrNotFound.
func (s *accountStore) UserByTokenHash(ctx context.Context, hash string) (*repository.User, error) {
	t, err := findOne[repository.Token](ctx, s.tokens, bson.D{{Key: "_id", Value: hash}}, "get token", nil)
	if err != nil {
		return nil, err
	}
	return s.GetUser(ctx, t.UserID)
}

// ListUsers returns every user, by ID ascending.
func (s *accountStore) ListUsers(ctx context.Context) ([]*repository.User, error) {
	return findAll(ctx, s.users, bson.D{}, options.Find().SetSort(asc("_id")), "list users", []*repository.User{}, fixUser)
}

// UpdateUser stores u's role and disabled flag (one $set: both fields
// change together).
func (s *accountStore) UpdateUser(ctx context.Context, u *repository.User) error {
	res, err := s.users.UpdateOne(ctx, bson.D{{Key: "_id", Value: u.ID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "role", Value: u.Role}, {Key: "disabled", Value: u.Disabled},
			{Key: "email", Value: u.Email}, {Key: "origin", Value: u.Origin}}}})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		// A lost reply: the $set is idempotent, so a stored user with
		// these values means it landed (or changed nothing).
		var cur repository.User
		cctx, cancel := s.cleanupContext(ctx)
		rerr := s.users.FindOne(cctx, bson.D{{Key: "_id", Value: u.ID}}).Decode(&cur)
		cancel()
		if rerr == nil && cur.Role == u.Role && cur.Disabled == u.Disabled && cur.Email == u.Email && sameOrigin(cur.Origin, u.Origin) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("mongo: update user %d: %w", u.ID, asDuplicate(err))
	}
	if res.MatchedCount == 0 {
		return repository.ErrNotFound
	}
	return nil
}

// fixToken brings the stored times of t to UTC.
func fixToken(t *repository.Token) {
	t.Created = t.Created.UTC()
	if !t.LastUsed.IsZero() {
		t.LastUsed = t.LastUsed.UTC()
	}
	if !t.Expires.IsZero() {
		t.Expires = t.Expires.UTC()
	}
}

// TokenByHash returns the token with this hash or ErrNotFound.
func (s *accountStore) TokenByHash(ctx context.Context, hash string) (*repository.Token, error) {
	return findOne(ctx, s.tokens, bson.D{{Key: "_id", Value: hash}}, "get token", fixToken)
}

// ListTokens returns the tokens of one user (every user's for 0), oldest
// first.
func (s *accountStore) ListTokens(ctx context.Context, userID int64) ([]*repository.Token, error) {
	filter := bson.D{}
	if userID != 0 {
		filter = bson.D{{Key: "user_id", Value: userID}}
	}
	return findAll(ctx, s.tokens, filter, options.Find().SetSort(bson.D{{Key: "created", Value: 1}, {Key: "_id", Value: 1}}),
		"list tokens", []*repository.Token{}, fixToken)
}

// RevokeToken deletes the token whose public ID is id: a prefix range of
// _id (hex digits sort below "g").
func (s *accountStore) RevokeToken(ctx context.Context, id string) error {
	if !repository.ValidTokenID(id) {
		return repository.ErrNotFound
	}
	res, err := s.tokens.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: id}, {Key: "$lt", Value: id + "g"}}}})
	if err != nil {
		return fmt.Errorf("mongo: revoke token: %w", err)
	}
	if res.DeletedCount == 0 {
		return repository.ErrNotFound
	}
	return nil
}

// TouchToken records the last use of a token.
func (s *accountStore) TouchToken(ctx context.Context, hash string, at time.Time) error {
	_, err := s.tokens.UpdateOne(ctx, bson.D{{Key: "_id", Value: hash}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "last_used", Value: storedTime(at)}}}})
	if err != nil {
		return fmt.Errorf("mongo: touch token: %w", err)
	}
	return nil
}

// Exclusive runs fn holding the lock named key in the locks collection
// (a unique-_id insert, the same claim the item locks use), so the lock
// holds across every process sharing the database. The key is hashed into
// the lock's _id, which keeps it short whatever the caller names.
func (s *accountStore) Exclusive(ctx context.Context, key string, fn func(ctx context.Context) error) error {
	sum := sha256.Sum256([]byte(key))
	l, err := s.lock(ctx, "exclusive:"+hex.EncodeToString(sum[:16]))
	if err != nil {
		return err
	}
	defer s.unlock(ctx, l)
	return fn(ctx)
}

// sameOrigin reports whether two users' origins are equal (both nil, or
// the same values).
func sameOrigin(a, b *repository.Origin) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
