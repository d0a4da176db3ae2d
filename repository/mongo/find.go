package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// findOne decodes the document of coll matching filter into a new T and
// passes it to fix (nil: none), which normalises what BSON gave back
// (times to UTC). No document is repository.ErrNotFound; another error
// says "mongo: what: …".
func findOne[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, what string, fix func(*T)) (*T, error) {
	var v T
	err := coll.FindOne(ctx, filter).Decode(&v)
	switch {
	case isNoDocuments(err):
		return nil, repository.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("mongo: %s: %w", what, err)
	}
	if fix != nil {
		fix(&v)
	}
	return &v, nil
}

// findAll decodes the documents of coll matching filter, in the order
// opts sets, appending them to out (nil, or an empty slice where the
// caller answers an empty list as one), and passes each to fix (nil:
// none). An error says "mongo: what: …".
func findAll[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, opts *options.FindOptionsBuilder, what string, out []*T, fix func(*T)) ([]*T, error) {
	cur, err := coll.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("mongo: %s: %w", what, err)
	}
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("mongo: %s: %w", what, err)
	}
	if fix != nil {
		for _, v := range out {
			fix(v)
		}
	}
	return out, nil
}
