package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// Calendar source collections:
//
//	sources      calendar sources (repository.Source, _id = ID from the "source" sequence)
//	source_runs  their runs (repository.SourceRun, _id = ID from the "source_run" sequence)
//
// The events a source imported carry its ID in source.id (their
// repository.SourceLink); the index {source.id, id} on posts
// (sourceItemsIndex) serves SourceItems. It is declared with the other
// indexes (declaredIndexes), so Open builds it in the background on a
// store that has records already. Source IDs are drawn and claimed as
// every other ID (seq.go); run IDs are drawn from their counter and kept
// unique by the _id index (CreateSourceRun). Neither is ever handed out
// twice or reused. UpdateSource is a
// compare-and-swap on revision, under the source's item lock
// ("source:12") so that it also holds on FerretDB v1, whose replace is
// not atomic: the run claim of a source (one run at a time, across
// processes) is taken with it.
const (
	collSources    = "sources"
	collSourceRuns = "source_runs"
	seqSource      = "source"
	seqSourceRun   = "source_run"
	// lockSource is the item lock scope of a source.
	lockSource repository.MarkKind = "source"
)

// sourceStore is repository.SourceStore.
type sourceStore struct{ *conn }

func (s *sourceStore) sources() *mongo.Collection { return s.db.Collection(collSources) }
func (s *sourceStore) runs() *mongo.Collection    { return s.db.Collection(collSourceRuns) }

// prepareSource brings src into its stored form: times in UTC, whole
// seconds for the creation and change times, milliseconds (what BSON
// keeps) for the claim's lapse.
func prepareSource(src *repository.Source) {
	src.Created, src.Updated = storedTime(src.Created), storedTime(src.Updated)
	if !src.RunClaimUntil.IsZero() {
		src.RunClaimUntil = src.RunClaimUntil.UTC().Truncate(time.Millisecond)
	}
}

// fixSource normalises a source read from the database.
func fixSource(src *repository.Source) {
	src.Created, src.Updated = src.Created.UTC(), src.Updated.UTC()
	if !src.RunClaimUntil.IsZero() {
		src.RunClaimUntil = src.RunClaimUntil.UTC()
	}
}

// CreateSource assigns s.ID from the source sequence (unless set: an
// explicit ID moves the sequence past it, and one a source holds fails
// the insert with repository.ErrDuplicate) and stores s at revision 1, or
// at its own revision above 0 with an explicit ID.
func (s *sourceStore) CreateSource(ctx context.Context, src *repository.Source) error {
	c := *src
	if c.ID == 0 || c.Revision <= 0 {
		c.Revision = 1
	}
	if err := s.assignID(ctx, seqSource, &c.ID); err != nil {
		return err
	}
	prepareSource(&c)
	if _, err := s.sources().InsertOne(ctx, &c); err != nil {
		return fmt.Errorf("mongo: create source: %w", asDuplicate(err))
	}
	*src = c
	return nil
}

// GetSource returns the source or repository.ErrNotFound.
func (s *sourceStore) GetSource(ctx context.Context, id int64) (*repository.Source, error) {
	return findOne(ctx, s.sources(), bson.D{{Key: "_id", Value: id}}, fmt.Sprintf("source %d", id), fixSource)
}

// ListSources returns every source by ID.
func (s *sourceStore) ListSources(ctx context.Context) ([]*repository.Source, error) {
	return findAll(ctx, s.sources(), bson.D{}, options.Find().SetSort(asc("_id")), "sources", nil, fixSource)
}

// UpdateSource reads the source, applies fn and replaces it if its
// revision is unchanged, starting over otherwise. Each attempt holds the
// source's item lock (see the collections' comment), so fn runs under it
// and must be short.
func (s *sourceStore) UpdateSource(ctx context.Context, id int64, fn func(s *repository.Source) error) (*repository.Source, error) {
	for attempt := 0; ; attempt++ {
		src, done, err := s.updateSourceOnce(ctx, id, fn)
		if err != nil || done {
			return src, err
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return nil, fmt.Errorf("mongo: update source %d: %w", id, err)
		}
	}
}

// updateSourceOnce is one attempt of UpdateSource; done is false when
// another write changed the source since it was read.
func (s *sourceStore) updateSourceOnce(ctx context.Context, id int64, fn func(s *repository.Source) error) (*repository.Source, bool, error) {
	l, err := s.lock(ctx, itemKey(lockSource, id))
	if err != nil {
		return nil, false, err
	}
	defer s.unlock(ctx, l)
	src, err := s.GetSource(ctx, id)
	if err != nil {
		return nil, false, err
	}
	rev := src.Revision
	if err := fn(src); err != nil {
		return nil, false, err
	}
	src.ID, src.Revision = id, rev+1
	prepareSource(src)
	res, err := s.sources().ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "revision", Value: rev}}, src)
	if err != nil {
		return nil, false, fmt.Errorf("mongo: update source %d: %w", id, asDuplicate(err))
	}
	if res.MatchedCount != 1 {
		return nil, false, nil
	}
	fixSource(src)
	return src, true, nil
}

// DeleteSource removes the source, then its runs. The events it imported
// keep their source link.
func (s *sourceStore) DeleteSource(ctx context.Context, id int64) error {
	return deleteWithChildren(ctx, s.sources(), id, "source", s.runs(), "source_id", "runs")
}

// prepareRun brings r into its stored form (UTC milliseconds).
func prepareRun(r *repository.SourceRun) {
	r.Started = r.Started.UTC().Truncate(time.Millisecond)
	if !r.Finished.IsZero() {
		r.Finished = r.Finished.UTC().Truncate(time.Millisecond)
	}
}

// fixRun normalises a run read from the database.
func fixRun(r *repository.SourceRun) {
	r.Started = r.Started.UTC()
	if !r.Finished.IsZero() {
		r.Finished = r.Finished.UTC()
	}
}

// CreateSourceRun assigns r.ID from the run sequence (each higher than the
// last) and stores r. A run of a source that does not exist is refused
// with repository.ErrNotFound. An explicit r.ID moves the sequence past
// it (before the insert, so that a run is never stored with the sequence
// behind it); one a run holds fails the insert with
// repository.ErrDuplicate.
func (s *sourceStore) CreateSourceRun(ctx context.Context, r *repository.SourceRun) error {
	if r.ID < 0 || r.ID > repository.MaxExplicitID {
		return fmt.Errorf("mongo: %s ID %d is outside 1..%d: %w", seqSourceRun, r.ID, repository.MaxExplicitID, repository.ErrIDRange)
	}
	if _, err := s.GetSource(ctx, r.SourceID); err != nil {
		return err
	}
	c := *r
	prepareRun(&c)
	if c.ID != 0 {
		if err := s.raiseSeq(ctx, seqSourceRun, c.ID); err != nil {
			return err
		}
		if _, err := s.runs().InsertOne(ctx, &c); err != nil {
			return fmt.Errorf("mongo: create run %d: %w", c.ID, asDuplicate(err))
		}
		*r = c
		return nil
	}
	// The run's _id is unique: a value the counter hands out twice
	// (FerretDB v1) fails the insert and is drawn again. Runs claim no
	// IDs in id_claims (there would be one claim per run ever made):
	// the counter only grows, so a pruned run's ID never comes back.
	for range s.draws() {
		id, err := s.nextSeq(ctx, seqSourceRun, 1)
		if err != nil {
			return err
		}
		if id <= 0 || id > repository.MaxID {
			return fmt.Errorf("mongo: sequence %s has reached %d: %w", seqSourceRun, repository.MaxID, repository.ErrIDRange)
		}
		c.ID = id
		_, err = s.runs().InsertOne(ctx, &c)
		if err == nil {
			*r = c
			return nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("mongo: create run: %w", err)
		}
	}
	return fmt.Errorf("mongo: sequence %s: no free ID after %d draws", seqSourceRun, s.draws())
}

// SaveSourceRun stores r over the stored run with its ID (which keeps its
// source); repository.ErrNotFound when there is none.
func (s *sourceStore) SaveSourceRun(ctx context.Context, r *repository.SourceRun) error {
	var cur struct {
		SourceID int64 `bson:"source_id"`
	}
	err := s.runs().FindOne(ctx, bson.D{{Key: "_id", Value: r.ID}},
		options.FindOne().SetProjection(bson.D{{Key: "source_id", Value: 1}})).Decode(&cur)
	if isNoDocuments(err) {
		return repository.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("mongo: run %d: %w", r.ID, err)
	}
	c := *r
	c.SourceID = cur.SourceID
	prepareRun(&c)
	res, err := s.runs().ReplaceOne(ctx, bson.D{{Key: "_id", Value: r.ID}}, &c)
	if err != nil {
		return fmt.Errorf("mongo: save run %d: %w", r.ID, err)
	}
	if res.MatchedCount == 0 {
		return repository.ErrNotFound
	}
	return nil
}

// runsIndex serves ListSourceRuns and PruneSourceRuns: one source's runs
// by equality, in ID order (read backwards for newest first).
var runsIndex = asc("source_id", "_id")

// newestRuns is the sort of a source's runs: newest (highest ID) first.
var newestRuns = bson.D{{Key: "_id", Value: -1}}

// listRunsFind returns ListSourceRuns' filter and find options.
func listRunsFind(sourceID int64, limit int) (bson.D, *options.FindOptionsBuilder) {
	opts := options.Find().SetSort(newestRuns)
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return bson.D{{Key: runsIndex[0].Key, Value: sourceID}}, opts
}

// ListSourceRuns returns up to limit runs of the source (every run when
// limit <= 0), newest first.
func (s *sourceStore) ListSourceRuns(ctx context.Context, sourceID int64, limit int) ([]*repository.SourceRun, error) {
	filter, opts := listRunsFind(sourceID, limit)
	return findAll(ctx, s.runs(), filter, opts, fmt.Sprintf("runs of source %d", sourceID), nil, fixRun)
}

// PruneSourceRuns removes the source's runs but the newest keep (every
// run when keep <= 0): it finds the oldest run to keep and deletes the
// source's runs below it.
func (s *sourceStore) PruneSourceRuns(ctx context.Context, sourceID int64, keep int) error {
	filter := bson.D{{Key: runsIndex[0].Key, Value: sourceID}}
	if keep > 0 {
		var last struct {
			ID int64 `bson:"_id"`
		}
		err := s.runs().FindOne(ctx, filter, options.FindOne().
			SetSort(newestRuns).SetSkip(int64(keep-1)).
			SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&last)
		if isNoDocuments(err) {
			return nil // keep or fewer runs
		}
		if err != nil {
			return fmt.Errorf("mongo: prune runs of source %d: %w", sourceID, err)
		}
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: last.ID}}})
	}
	if _, err := s.runs().DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("mongo: prune runs of source %d: %w", sourceID, err)
	}
	return nil
}

// sourceItemProjection is what SourceItems reads of a record.
var sourceItemProjection = bson.D{
	{Key: "_id", Value: 1}, {Key: fieldID, Value: 1}, {Key: "status", Value: 1},
	{Key: "revision", Value: 1}, {Key: "source", Value: 1},
}

// sourceItemsIndex serves SourceItems: the source's records by equality,
// in ID order.
var sourceItemsIndex = asc("source.id", fieldID)

// sourceItemsFind returns SourceItems' filter and find options (in the
// layout with the numeric ID in fieldID).
func sourceItemsFind(sourceID int64) (bson.D, *options.FindOptionsBuilder) {
	return bson.D{{Key: sourceItemsIndex[0].Key, Value: sourceID}},
		options.Find().SetSort(asc(fieldID)).SetProjection(sourceItemProjection)
}

// SourceItems returns the records of every status whose source link names
// the source, by RecordID, read through sourceItemsIndex.
func (s *sourceStore) SourceItems(ctx context.Context, sourceID int64) ([]repository.SourceItem, error) {
	filter, opts := sourceItemsFind(sourceID)
	if s.numeric() {
		opts.SetSort(asc("_id"))
	}
	ops := (&recordStore{s.conn}).postOps()
	recs, err := findItems(ctx, ops, filter, opts)
	if err != nil {
		return nil, err
	}
	var out []repository.SourceItem
	for _, p := range recs {
		if p.Source == nil {
			continue
		}
		out = append(out, repository.SourceItem{RecordID: p.ID, UID: p.Source.UID,
			RecurrenceID: p.Source.RecurrenceID, Hash: p.Source.Hash, Status: p.Status})
	}
	return out, nil
}
