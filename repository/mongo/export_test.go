package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// DeletePostDocumentForTest removes the post document only, leaving its
// slug reservations and marks behind, as a writer that died would.
func DeletePostDocumentForTest(ctx context.Context, s *Store, id int64) error {
	_, err := s.posts.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	return err
}
