package mongo

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// DeletePostDocumentForTest removes the post document only, leaving its
// slug reservations and marks behind, as a writer that died would.
func DeletePostDocumentForTest(ctx context.Context, s *Store, id int64) error {
	_, err := s.posts.DeleteOne(ctx, idFilter(id))
	return err
}

// AgeSlugReservationsForTest moves the time of every slug reservation back
// past the lock lease, so that leftovers become eligible for a take-over.
func AgeSlugReservationsForTest(ctx context.Context, s *Store) error {
	_, err := s.slugs.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: s.dbNow(ctx).Add(-2 * lockLease)}}}})
	return err
}

// ShiftLocksForTest moves the time of every item lock by d (back when d
// is negative), keeping it well inside the lock lease, so that a test
// orders a lock before or after a store's opening by more than the
// clocks' estimates may disagree.
func ShiftLocksForTest(ctx context.Context, s *Store, d time.Duration) error {
	cur, err := s.locks.Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	var locks []lockDoc
	if err := cur.All(ctx, &locks); err != nil {
		return err
	}
	for _, l := range locks {
		if _, err := s.locks.UpdateOne(ctx, bson.D{{Key: "_id", Value: l.Key}}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: l.At.Add(d)}}}}); err != nil {
			return err
		}
	}
	return nil
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

// DowngradeLayoutForTest rewrites the posts and terms of s in the layout
// written before string _ids (numeric _id, no id field) and forgets the
// layout version, as a database written by the previous version is. In
// each collection, by ID, the first skip records stay converted (as an
// interrupted migration leaves the batches it finished) and the next keep
// are in both forms (as one interrupted between its insert and its
// delete leaves them).
func DowngradeLayoutForTest(ctx context.Context, s *Store, skip, keep int) error {
	for _, coll := range []*mongo.Collection{s.posts, s.terms} {
		cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: fieldID, Value: 1}}))
		if err != nil {
			return err
		}
		var raws []bson.Raw
		if err := cur.All(ctx, &raws); err != nil {
			return err
		}
		for i, raw := range raws {
			if i < skip {
				continue
			}
			id := raw.Lookup(fieldID).Int64()
			elems, err := raw.Elements()
			if err != nil {
				return err
			}
			old := bson.D{{Key: "_id", Value: id}}
			for _, e := range elems {
				if k := e.Key(); k != "_id" && k != fieldID {
					old = append(old, bson.E{Key: k, Value: e.Value()})
				}
			}
			if _, err := coll.InsertOne(ctx, old); err != nil {
				return err
			}
			if i >= skip+keep {
				if _, err := coll.DeleteOne(ctx, idFilter(id)); err != nil {
					return err
				}
			}
		}
	}
	_, err := s.meta.DeleteMany(ctx, bson.D{})
	return err
}

// MigrateForTest runs the contract of migrate.go on s as if s led the
// lease called "leader" throughout.
func MigrateForTest(ctx context.Context, s *Store) (MigrationStats, error) {
	if err := s.readLayout(ctx); err != nil || !s.numeric() {
		return MigrationStats{}, err
	}
	return s.contract(ctx, "leader", func() error { return nil })
}

// SetLayoutIntervalForTest sets how often KeepLayout beats, until the
// returned function restores it.
func SetLayoutIntervalForTest(d time.Duration) (restore func()) {
	old := layoutInterval
	layoutInterval = d
	return func() { layoutInterval = old }
}

// LayoutVersionForTest is the layout the store writes.
const LayoutVersionForTest = layoutVersion

// SetMigrateBatchForTest sets how many records a step of the migration
// converts, until the returned function restores it.
func SetMigrateBatchForTest(n int64) (restore func()) {
	old := migrateBatch
	migrateBatch = n
	return func() { migrateBatch = old }
}

// SetMaxIDLookupsForTest sets how many IDs the FerretDB plan reads with one
// look-up each, until the returned function restores it.
func SetMaxIDLookupsForTest(n int) (restore func()) {
	old := maxIDLookups
	maxIDLookups = n
	return func() { maxIDLookups = old }
}

// ClientOptionsForTest returns the driver options Open uses for uri.
func ClientOptionsForTest(uri string) *options.ClientOptions { return clientOptions(uri) }

// SetPlanForTest makes s use the aggregations (aggregate true: the plan
// for MongoDB) or the finds grouped in Go (false: the plan for FerretDB)
// in PlaceEvents and CountLabelEvents, until the returned function
// restores the plan Open chose.
func SetPlanForTest(s *Store, aggregate bool) (restore func()) {
	noMax, ferret := s.noMaxAccumulator, s.ferretDB
	s.noMaxAccumulator, s.ferretDB = !aggregate, !aggregate
	return func() { s.noMaxAccumulator, s.ferretDB = noMax, ferret }
}

// WithLocalClockForTest makes the store read its local clock from now
// (a host whose clock is skewed, or moved on by the test).
func WithLocalClockForTest(now func() time.Time) Option {
	return func(o *openOptions) { o.now = now }
}

// WithRereadTimeoutForTest bounds the re-reads that decide whether a
// failed write landed by d instead of the store's cleanup bound (10 s):
// a test whose re-reads all fail need not wait that out.
func WithRereadTimeoutForTest(d time.Duration) Option {
	return func(o *openOptions) { o.rereadTimeout = d }
}

// WithoutIndexBuildForTest makes Open skip the background build of the
// non-unique indexes (the unique ones, which writes rely on, are built as
// always). Queries answer the same without them, only by scanning: the
// conformance suite, which checks results on a fresh database per
// subtest, would otherwise build some 25 indexes for each (and keep them
// up to date on every write), while the build in the background races
// with its queries anyway. The tests of plans and indexes open without
// it.
func WithoutIndexBuildForTest() Option {
	return func(o *openOptions) { o.noIndexBuild = true }
}

// WithMaxDrawsForTest bounds the values one new ID may draw by n instead
// of maxDraws (100), so that the conformance suite's sequence tests cross
// the bound with fewer explicit IDs (mongotest.StoreOptions' ExplicitRun).
func WithMaxDrawsForTest(n int) Option {
	return func(o *openOptions) { o.maxDraws = n }
}

// TakeLockForTest takes the lock of key and keeps it, as a holder that
// died would; it reports false when another holder has it.
func TakeLockForTest(ctx context.Context, s *Store, key string) (bool, error) {
	l, err := s.tryLock(ctx, key)
	return l != nil, err
}

// LockLeaseForTest is how long a lock holds without its holder.
const LockLeaseForTest = lockLease
