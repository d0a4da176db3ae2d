package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Layout versions of a database, kept in meta as {_id: "layout", version}.
// A database without it is at version 1 (or empty).
const (
	// layoutNumericIDs: posts and terms keyed by a numeric _id.
	layoutNumericIDs = 1
	// layoutStringIDs: posts and terms keyed by a string _id, with the
	// number in fieldID (ids.go).
	layoutStringIDs = 2
	// layoutVersion is the layout this code reads and writes.
	layoutVersion = layoutStringIDs
)

// layoutKey is the _id of the layout document in meta.
const layoutKey = "layout"

// migrateLock is the lock (in locks) held while a process migrates.
const migrateLock = "migrate:layout"

// migrateBatch is how many records one step of the migration converts:
// one find, one insert and one delete per step (a variable for the tests).
var migrateBatch int64 = 100

// layoutDoc is the layout document in meta.
type layoutDoc struct {
	Key     string `bson:"_id"`
	Version int    `bson:"version"`
}

// MigrationStats says what Open's migration did (LastMigration).
type MigrationStats struct {
	// From is the layout found (0 when the database was at the current
	// layout already and nothing ran).
	From int
	// Converted counts the posts and terms rewritten to string _ids.
	Converted int
}

// LastMigration returns what Open's migration did.
func (s *Store) LastMigration() MigrationStats { return s.migrated }

// migrate brings the database to layoutVersion. Open runs it; it costs one
// look-up when the database is current.
//
// From layoutNumericIDs it rewrites every post and term {_id: 12, ...} as
// {_id: "12", id: 12, ...}: per batch, the old records are read, their new
// form is inserted (one already there, from an interrupted run, is kept)
// and then the old ones are deleted. Interrupted anywhere, the next Open
// continues where it stopped: an old record left is converted again, a
// new one is never overwritten. One process migrates at a time, holding a
// lock it renews every batch; another that opens the database meanwhile
// waits for it (up to lockWait, then its Open fails and can be retried).
// Every process must run this version: an older one would still read and
// write numeric _ids.
func (s *Store) migrate(ctx context.Context) error {
	current := func() (int, error) {
		var d layoutDoc
		err := s.meta.FindOne(ctx, bson.D{{Key: "_id", Value: layoutKey}}).Decode(&d)
		switch {
		case isNoDocuments(err):
			return layoutNumericIDs, nil
		case err != nil:
			return 0, fmt.Errorf("mongo: read the database layout: %w", err)
		case d.Version > layoutVersion:
			return 0, fmt.Errorf("mongo: the database has layout %d, written by a newer version (this one reads %d)", d.Version, layoutVersion)
		}
		return d.Version, nil
	}
	v, err := current()
	if err != nil || v == layoutVersion {
		return err
	}
	l, err := s.lock(ctx, migrateLock)
	if err != nil {
		return fmt.Errorf("mongo: migrate the database layout: %w", err)
	}
	defer s.unlock(ctx, l)
	if v, err = current(); err != nil || v == layoutVersion {
		return err // another process migrated meanwhile
	}
	stats := MigrationStats{From: v}
	for _, coll := range []*mongo.Collection{s.posts, s.terms} {
		n, err := s.migrateIDs(ctx, coll, l)
		stats.Converted += n
		if err != nil {
			return err
		}
	}
	if _, err := s.meta.UpdateOne(ctx, bson.D{{Key: "_id", Value: layoutKey}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: layoutVersion}}}},
		options.UpdateOne().SetUpsert(true)); err != nil {
		return fmt.Errorf("mongo: record the database layout: %w", err)
	}
	s.migrated = stats
	return nil
}

// migrateIDs converts the records of coll that have a numeric _id (no
// fieldID) and returns how many it converted.
func (s *Store) migrateIDs(ctx context.Context, coll *mongo.Collection, l *itemLock) (int, error) {
	fail := func(err error) error { return fmt.Errorf("mongo: migrate %s to string _ids: %w", coll.Name(), err) }
	old := bson.D{{Key: fieldID, Value: bson.D{{Key: "$exists", Value: false}}}}
	converted := 0
	for {
		cur, err := coll.Find(ctx, old, options.Find().SetLimit(migrateBatch).SetBatchSize(int32(migrateBatch)))
		if err != nil {
			return converted, fail(err)
		}
		var raws []bson.Raw
		for cur.Next(ctx) {
			raws = append(raws, append(bson.Raw(nil), cur.Current...))
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return converted, fail(err)
		}
		if len(raws) == 0 {
			return converted, nil
		}
		docs := make([]any, len(raws))
		ids := make([]int64, len(raws))
		for i, raw := range raws {
			if docs[i], ids[i], err = stringIDForm(raw); err != nil {
				return converted, fail(err)
			}
		}
		// Unordered: a record converted by an interrupted run fails
		// alone (duplicate _id) and is kept as it is.
		if _, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil && !onlyDuplicates(err) {
			return converted, fail(err)
		}
		res, err := coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		if err != nil {
			return converted, fail(err)
		}
		if res.DeletedCount == 0 {
			return converted, fail(errors.New("no progress: the old records cannot be deleted"))
		}
		converted += int(res.DeletedCount)
		if err := s.renewLock(ctx, l); err != nil {
			return converted, fail(err)
		}
	}
}

// stringIDForm returns the record raw, stored with a numeric _id, in the
// string _id layout, and its ID.
func stringIDForm(raw bson.Raw) (bson.Raw, int64, error) {
	v, err := raw.LookupErr("_id")
	if err != nil {
		return nil, 0, errors.New("a record without _id")
	}
	id, ok := v.AsInt64OK()
	if !ok {
		return nil, 0, fmt.Errorf("a record whose _id %s is not an integer", v)
	}
	elems, err := raw.Elements()
	if err != nil {
		return nil, 0, err
	}
	idx, doc := bsoncore.AppendDocumentStart(make([]byte, 0, len(raw)+32))
	doc = bsoncore.AppendStringElement(doc, "_id", idKey(id))
	doc = bsoncore.AppendInt64Element(doc, fieldID, id)
	for _, e := range elems {
		if e.Key() != "_id" {
			doc = append(doc, e...)
		}
	}
	doc, err = bsoncore.AppendDocumentEnd(doc, idx)
	return bson.Raw(doc), id, err
}

// onlyDuplicates reports whether err is a bulk write error whose every
// error is a duplicate key.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 {
			return false
		}
	}
	return true
}

// renewLock moves the time of the held lock l to now, so that a long
// holder is not taken for dead after lockLease.
func (s *Store) renewLock(ctx context.Context, l *itemLock) error {
	res, err := s.locks.UpdateOne(ctx, bson.D{{Key: "_id", Value: l.key}, {Key: "token", Value: l.token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: now()}}}})
	switch {
	case err != nil:
		return fmt.Errorf("renew lock %s: %w", l.key, err)
	case res.MatchedCount == 0:
		return fmt.Errorf("lost lock %s", l.key)
	}
	return nil
}
