package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// collJobState holds the periodic jobs' state, {_id: key, value}: keyed
// by the string _id, so that both the read and the upsert are look-ups
// FerretDB answers with SQL (docs/internals.md, "Keys and FerretDB").
const collJobState = "job_state"

// jobStateDoc is one value in collJobState.
type jobStateDoc struct {
	Key   string `bson:"_id"`
	Value string `bson:"value"`
}

// GetJobState returns the value stored under key; found is false when
// there is none.
func (s *Store) GetJobState(ctx context.Context, key string) (string, bool, error) {
	var d jobStateDoc
	err := s.db.Collection(collJobState).FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	switch {
	case isNoDocuments(err):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("mongo: job state %q: %w", key, err)
	}
	return d.Value, true, nil
}

// SetJobState stores value under key, replacing any earlier value. Two
// first-ever upserts of one key may race (the loser's insert fails with a
// duplicate key, on FerretDB as on MongoDB): the loser tries again, and
// its replace then finds the document.
func (s *Store) SetJobState(ctx context.Context, key, value string) error {
	coll := s.db.Collection(collJobState)
	doc := jobStateDoc{Key: key, Value: value}
	var err error
	for attempt := range 5 {
		_, err = coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: key}}, &doc, options.Replace().SetUpsert(true))
		if err == nil || !mongo.IsDuplicateKeyError(err) {
			break
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("mongo: job state %q: %w", key, err)
	}
	return nil
}
