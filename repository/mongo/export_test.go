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

// AgeSlugReservationsForTest moves the time of every slug reservation back
// past the lock lease, so that leftovers become eligible for a take-over.
func AgeSlugReservationsForTest(ctx context.Context, s *Store) error {
	_, err := s.slugs.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: now().Add(-2 * lockLease)}}}})
	return err
}

// SlugReservationsForTest returns the number of slug reservations.
func SlugReservationsForTest(ctx context.Context, s *Store) (int64, error) {
	return s.slugs.CountDocuments(ctx, bson.D{})
}

// StripNameKeysForTest removes name_keys from every term, as terms stored
// before the name index have none.
func StripNameKeysForTest(ctx context.Context, s *Store) error {
	_, err := s.terms.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$unset", Value: bson.D{{Key: "name_keys", Value: ""}}}})
	return err
}
