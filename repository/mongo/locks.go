package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// lockLease is how long a lock holds without its holder: a lock older than
// this is taken over, as its holder must have died (every operation under a
// lock is a few round trips). Lock times are the database server's clock
// (dbNow), so that hosts whose clocks disagree agree on a lock's age.
const lockLease = 30 * time.Second

// DefaultLockWait bounds how long a write waits for a busy item's lock
// before failing, unless WithLockWait sets another bound.
const DefaultLockWait = 20 * time.Second

// lockDoc is a document of the locks collection.
type lockDoc struct {
	Key   string    `bson:"_id"`
	Token string    `bson:"token"`
	At    time.Time `bson:"at"`
	// Replica and Instance name the holding process (WithReplica; empty
	// for a store opened without it, or written by an older version).
	Replica  string `bson:"replica,omitempty"`
	Instance string `bson:"instance,omitempty"`
}

// itemLock is a held lock.
type itemLock struct {
	key, token string
}

// lockTable takes and releases the per-item write locks (the locks
// collection).
type lockTable struct{ *conn }

// lock takes the write lock of the item key ("post:12"), waiting with
// backoff while another writer holds it.
func (s *lockTable) lock(ctx context.Context, key string) (*itemLock, error) {
	lockWait := s.lockWait
	if lockWait <= 0 {
		lockWait = DefaultLockWait
	}
	deadline := time.Now().Add(lockWait)
	for attempt := 0; ; attempt++ {
		l, err := s.tryLock(ctx, key)
		if err != nil || l != nil {
			return l, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("mongo: %s is still locked by another writer after %s", key, lockWait)
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, fmt.Errorf("mongo: waiting for the lock of %s: %w", key, err)
		}
	}
}

// tryLock takes the lock of key if it is free (or its lease has expired)
// and returns nil, nil when another writer holds it.
func (s *lockTable) tryLock(ctx context.Context, key string) (*itemLock, error) {
	for range 3 {
		l := &itemLock{key: key, token: newToken()}
		_, err := s.locks.InsertOne(ctx, lockDoc{Key: key, Token: l.token, At: s.dbNow(ctx), Replica: s.replica, Instance: s.instance})
		if err == nil {
			return l, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return nil, fmt.Errorf("mongo: lock %s: %w", key, err)
		}
		var cur lockDoc
		err = s.locks.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&cur)
		switch {
		case isNoDocuments(err):
			continue // released meanwhile: try again
		case err != nil:
			return nil, fmt.Errorf("mongo: lock %s: %w", key, err)
		case s.dbNow(ctx).Sub(cur.At) < lockLease && !s.predecessors(&cur):
			return nil, nil
		}
		// The holder died (its lease passed, or it was this replica's
		// previous process): remove its lock (only that one) and retry.
		if _, err := s.locks.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "token", Value: cur.Token}}); err != nil {
			return nil, fmt.Errorf("mongo: break expired lock %s: %w", key, err)
		}
	}
	return nil, nil
}

// predecessors reports whether cur was taken by this replica's previous
// process: under this store's identity, by another instance, before this
// store opened (see WithReplica). That process is dead, so its lock need
// not wait for the lease. A lock taken since this store opened, under its
// identity by another instance, is a live duplicate's (which the lease
// refuses): it waits for the lease like any other.
func (s *lockTable) predecessors(cur *lockDoc) bool {
	return s.replica != "" && cur.Replica == s.replica && cur.Instance != "" &&
		cur.Instance != s.instance && cur.At.Before(s.openedAt)
}

// unlock releases l. It runs even when ctx is done; a failure only delays
// the next writer until the lease expires.
func (s *lockTable) unlock(ctx context.Context, l *itemLock) {
	if l == nil {
		return
	}
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	s.locks.DeleteOne(cctx, bson.D{{Key: "_id", Value: l.key}, {Key: "token", Value: l.token}})
}
