package mongo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// markDoc is a document of index_marks; _id is itemKey(kind, id).
type markDoc struct {
	Key                  string `bson:"_id"`
	repository.IndexMark `bson:",inline"`
}

// markWriter records the index marks of a write (before and after it).
type markWriter struct{ *conn }

// markBefore records a mark for the item before it is written and returns
// its seq. The caller holds the item's lock.
func (s *markWriter) markBefore(ctx context.Context, kind repository.MarkKind, id int64) (int64, error) {
	seq, err := s.nextSeq(ctx, seqMark, 1)
	if err != nil {
		return 0, err
	}
	return s.putMark(ctx, kind, id, seq)
}

// markAfter renews the mark once the write landed, with a seq above the
// one markBefore recorded (see the package documentation for why). It is
// best effort: the write has happened and the first mark still stands.
func (s *markWriter) markAfter(ctx context.Context, kind repository.MarkKind, id, before int64) {
	cctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	s.putMark(cctx, kind, id, before+1)
}

// putMark sets the item's mark to seq, or to one more than its current seq
// when that is not lower: the seq of one item must grow with every write
// even where the counter is not atomic (FerretDB v1). The caller holds the
// item's lock, so the read of the old seq and the fix-up cannot interleave
// with another writer or with ClearMarks.
func (s *markWriter) putMark(ctx context.Context, kind repository.MarkKind, id, seq int64) (int64, error) {
	key := itemKey(kind, id)
	// A write starts the item afresh: the failures of the previous
	// content are forgotten (FailMark).
	set := func(seq int64) bson.D {
		return bson.D{{Key: "$set", Value: bson.D{
			{Key: "kind", Value: kind}, {Key: "id", Value: id}, {Key: "seq", Value: seq}, {Key: "at", Value: now()},
		}}, {Key: "$unset", Value: bson.D{
			{Key: "attempts", Value: ""}, {Key: "error", Value: ""}, {Key: "next", Value: ""},
		}}}
	}
	var old markDoc
	err := s.marks.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: key}}, set(seq),
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before),
	).Decode(&old)
	switch {
	case isNoDocuments(err):
		return seq, nil // upserted
	case err != nil:
		return 0, fmt.Errorf("mongo: mark %s: %w", key, err)
	case old.Seq < seq:
		return seq, nil
	}
	seq = old.Seq + 1
	if _, err := s.marks.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, set(seq)); err != nil {
		return 0, fmt.Errorf("mongo: mark %s: %w", key, err)
	}
	return seq, nil
}

// markQueue is the index-mark part of repository.Store: listing, failing
// and clearing the marks the sync worker works through.
type markQueue struct{ *conn }

// PendingMarks returns up to limit marks (all of them when limit <= 0),
// oldest first: by the time the mark was recorded, then by seq.
func (s *markQueue) PendingMarks(ctx context.Context, limit int) ([]repository.IndexMark, error) {
	return s.findMarks(ctx, bson.D{}, pendingMarksOptions(limit))
}

// pendingMarksOptions returns the find options of PendingMarks: sorted by
// pendingMarksSort, the keys of a declared index, and limited to limit
// when limit > 0.
func pendingMarksOptions(limit int) *options.FindOptionsBuilder {
	opts := options.Find().SetSort(pendingMarksSort)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return opts
}

// DueMarks returns up to limit marks due at now, in the order of
// PendingMarks. It first reads the keys of the marks waiting for a retry
// (next after now: a range on the declared {next} index, which holds only
// failed marks' dates), then the pending marks without those keys in the
// order of pendingMarksSort: the sort still reads that index in order
// and the exclusion is checked on its _id key, so the query reads the
// waiting marks' index entries and limit documents, never the backlog.
func (s *markQueue) DueMarks(ctx context.Context, now time.Time, limit int) ([]repository.IndexMark, error) {
	cur, err := s.marks.Find(ctx, bson.D{{Key: "next", Value: bson.D{{Key: "$gt", Value: now}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("mongo: due marks: %w", err)
	}
	var waiting []struct {
		Key string `bson:"_id"`
	}
	if err := cur.All(ctx, &waiting); err != nil {
		return nil, fmt.Errorf("mongo: due marks: %w", err)
	}
	filter := bson.D{}
	if len(waiting) > 0 {
		keys := make([]string, len(waiting))
		for i, w := range waiting {
			keys[i] = w.Key
		}
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$nin", Value: keys}}}}
	}
	return s.findMarks(ctx, filter, pendingMarksOptions(limit))
}

// findMarks decodes the marks a query finds.
func (s *markQueue) findMarks(ctx context.Context, filter bson.D, opts *options.FindOptionsBuilder) ([]repository.IndexMark, error) {
	cur, err := s.marks.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("mongo: marks: %w", err)
	}
	var docs []markDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongo: marks: %w", err)
	}
	marks := make([]repository.IndexMark, len(docs))
	for i, d := range docs {
		marks[i] = d.IndexMark
		marks[i].At = marks[i].At.UTC()
		if !marks[i].NextAttempt.IsZero() {
			marks[i].NextAttempt = marks[i].NextAttempt.UTC()
		}
	}
	return marks, nil
}

// failingMarksFilter selects the marks with failed attempts: those with a
// next attempt date (FailMark never stores one before failingEpoch), a
// range on the {next} index.
var failingMarksFilter = bson.D{{Key: "next", Value: bson.D{{Key: "$gte", Value: failingEpoch}}}}

// failingEpoch is the earliest next attempt FailMark stores.
var failingEpoch = time.Unix(0, 0).UTC()

// failingMarksSort is the order of FailingMarks: soonest next attempt
// first, by the declared {next} index.
var failingMarksSort = asc("next")

// FailMark records a failed attempt on m's item unless its seq changed.
// It holds the item's lock, so the check and the update cannot interleave
// with a write renewing the mark; both read and write by _id (see
// clearMark for FerretDB v1).
func (s *markQueue) FailMark(ctx context.Context, m repository.IndexMark) error {
	key := itemKey(m.Kind, m.ID)
	l, err := s.lock(ctx, key)
	if err != nil {
		return err
	}
	defer s.unlock(ctx, l)
	var cur markDoc
	err = s.marks.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&cur)
	switch {
	case isNoDocuments(err):
		return nil
	case err != nil:
		return fmt.Errorf("mongo: fail mark %s: %w", key, err)
	case cur.Seq != m.Seq:
		return nil
	}
	next := m.NextAttempt.UTC()
	if next.Before(failingEpoch) {
		next = failingEpoch
	}
	_, err = s.marks.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "attempts", Value: max(m.Attempts, 1)}, {Key: "error", Value: repository.TruncateMarkError(m.LastError)}, {Key: "next", Value: next},
	}}})
	if err != nil {
		return fmt.Errorf("mongo: fail mark %s: %w", key, err)
	}
	return nil
}

// FailingMarks returns up to limit marks with failed attempts, soonest
// next attempt first, and their number.
func (s *markQueue) FailingMarks(ctx context.Context, limit int) ([]repository.IndexMark, int, error) {
	n, err := s.marks.CountDocuments(ctx, failingMarksFilter)
	if err != nil {
		return nil, 0, fmt.Errorf("mongo: failing marks: %w", err)
	}
	opts := options.Find().SetSort(failingMarksSort)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	marks, err := s.findMarks(ctx, failingMarksFilter, opts)
	return marks, int(n), err
}

// ClearMarks removes each mark whose seq is still the one given. It takes
// the item's lock for the compare-and-delete (atomic on MongoDB, not on
// FerretDB v1); an item being written right now is skipped, since that
// write is renewing its mark anyway.
func (s *markQueue) ClearMarks(ctx context.Context, marks []repository.IndexMark) error {
	for _, m := range marks {
		key := itemKey(m.Kind, m.ID)
		l, err := s.tryLock(ctx, key)
		if err != nil {
			return err
		}
		if l == nil {
			continue
		}
		err = s.clearMark(ctx, key, m.Seq)
		s.unlock(ctx, l)
		if err != nil {
			return fmt.Errorf("mongo: clear mark %s: %w", key, err)
		}
	}
	return nil
}

// clearMark deletes the mark key if its seq is still seq. The caller holds
// the item's lock. On MongoDB the filter {_id, seq} is one atomic command
// using the _id index. FerretDB v1 would scan every pending mark for that
// filter (only {_id} alone is looked up), which made clearing a backlog
// quadratic: there the mark is read by _id, compared here and deleted by
// _id, which the lock makes as safe as FerretDB's own (non-atomic)
// compare-and-delete.
func (s *markQueue) clearMark(ctx context.Context, key string, seq int64) error {
	if !s.ferretDB {
		_, err := s.marks.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "seq", Value: seq}})
		return err
	}
	var cur markDoc
	err := s.marks.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&cur)
	switch {
	case isNoDocuments(err):
		return nil
	case err != nil:
		return err
	case cur.Seq != seq:
		return nil // written again since: keep it
	}
	_, err = s.marks.DeleteOne(ctx, bson.D{{Key: "_id", Value: key}})
	return err
}

// MarkForIndexing records marks for the items without changing them.
func (s *markQueue) MarkForIndexing(ctx context.Context, kind repository.MarkKind, ids []int64) error {
	if kind != repository.MarkPost && kind != repository.MarkTerm {
		return fmt.Errorf("mongo: mark for indexing: unknown mark kind %q", kind)
	}
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil
	}
	last, err := s.nextSeq(ctx, seqMark, int64(len(ids)))
	if err != nil {
		return err
	}
	first := last - int64(len(ids)) + 1
	for i, id := range ids {
		l, err := s.lock(ctx, itemKey(kind, id))
		if err != nil {
			return err
		}
		_, err = s.putMark(ctx, kind, id, first+int64(i))
		s.unlock(ctx, l)
		if err != nil {
			return err
		}
	}
	return nil
}
