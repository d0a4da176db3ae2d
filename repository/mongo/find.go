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

// deleteWithChildren deletes the document of coll whose _id is id
// (repository.ErrNotFound when there is none), then the documents of
// children whose field holds id. An error says "mongo: delete what id"
// or "mongo: delete childWhat of what id".
func deleteWithChildren(ctx context.Context, coll *mongo.Collection, id int64, what string, children *mongo.Collection, field, childWhat string) error {
	res, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("mongo: delete %s %d: %w", what, id, err)
	}
	if res.DeletedCount == 0 {
		return repository.ErrNotFound
	}
	if _, err := children.DeleteMany(ctx, bson.D{{Key: field, Value: id}}); err != nil {
		return fmt.Errorf("mongo: delete %s of %s %d: %w", childWhat, what, id, err)
	}
	return nil
}
