package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// raiseSeq moves the counter name up to at least id (MongoDB's $max), so
// that the sequence never draws an ID a caller gave explicitly (an import
// keeping its source's IDs). Without it nextID would draw every imported
// ID once, find it claimed and draw again: after an import of IDs 1 to
// 10,000 the next create would give up after maxDraws draws.
func (s *sequencer) raiseSeq(ctx context.Context, name string, id int64) error {
	var err error
	for attempt := range 5 {
		_, err = s.counters.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: name}},
			bson.D{{Key: "$max", Value: bson.D{{Key: "value", Value: id}}}},
			options.UpdateOne().SetUpsert(true),
		)
		if err == nil || !mongo.IsDuplicateKeyError(err) {
			break
		}
		// Two first-ever upserts raced (see nextSeq): try again.
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("mongo: raise sequence %s to %d: %w", name, id, err)
	}
	return nil
}
