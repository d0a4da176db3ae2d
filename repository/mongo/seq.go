package mongo

import (
	"context"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// maxDraws bounds how many values nextID draws before giving up; more than a
// handful only happens when something keeps claiming the same values. A
// store's own bound (conn.maxDraws, WithMaxDrawsForTest) replaces it.
const maxDraws = 100

// draws returns the store's bound on the values one new ID may draw:
// conn.maxDraws when set, else maxDraws.
func (s *sequencer) draws() int {
	if s.maxDraws > 0 {
		return s.maxDraws
	}
	return maxDraws
}

// sequencer draws IDs from the counters collection and claims them in
// id_claims.
type sequencer struct{ *conn }

// nextSeq adds n to the counter name and returns the new value, creating
// the counter on first use. On MongoDB the $inc is atomic, so concurrent
// callers get distinct values; FerretDB v1 may hand out a value twice, which
// the callers that need distinct values detect (see nextID).
func (s *sequencer) nextSeq(ctx context.Context, name string, n int64) (int64, error) {
	opts := options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)
	var out struct {
		Value int64 `bson:"value"`
	}
	var err error
	for attempt := range 5 {
		err = s.counters.FindOneAndUpdate(ctx,
			bson.D{{Key: "_id", Value: name}},
			bson.D{{Key: "$inc", Value: bson.D{{Key: "value", Value: n}}}},
			opts,
		).Decode(&out)
		if err == nil {
			return out.Value, nil
		}
		// Two first-ever upserts may race to insert the counter; the
		// loser sees a duplicate key and simply tries again.
		if !mongo.IsDuplicateKeyError(err) {
			break
		}
		if err := sleep(ctx, backoff(attempt)); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("mongo: sequence %s: %w", name, err)
}

// nextID draws a new ID from sequence seq and claims it in id_claims, so an
// ID is handed out once even when the counter is not atomic (FerretDB v1).
// The claims also keep IDs from being reused after a delete.
func (s *sequencer) nextID(ctx context.Context, seq string) (int64, error) {
	for range s.draws() {
		id, err := s.nextSeq(ctx, seq, 1)
		if err != nil {
			return 0, err
		}
		if id > repository.MaxID || id <= 0 {
			// The counter passed the range (explicit IDs cannot move it
			// there; see assignID): refuse rather than hand out an ID
			// JSON clients cannot read exactly.
			return 0, fmt.Errorf("mongo: sequence %s has reached %d: %w", seq, repository.MaxID, repository.ErrIDRange)
		}
		ok, err := s.claimID(ctx, seq, id)
		if err != nil {
			return 0, err
		}
		if ok {
			return id, nil
		}
	}
	return 0, fmt.Errorf("mongo: sequence %s: no free ID after %d draws", seq, s.draws())
}

// claimID records that id of sequence seq is in use. It returns false when
// the ID was claimed before (drawn or given explicitly by someone else).
func (s *sequencer) claimID(ctx context.Context, seq string, id int64) (bool, error) {
	if id <= 0 {
		return false, fmt.Errorf("mongo: invalid %s ID %d", seq, id)
	}
	_, err := s.claims.InsertOne(ctx, bson.D{{Key: "_id", Value: seq + ":" + strconv.FormatInt(id, 10)}})
	switch {
	case err == nil:
		return true, nil
	case mongo.IsDuplicateKeyError(err):
		return false, nil
	default:
		return false, fmt.Errorf("mongo: claim %s ID %d: %w", seq, id, err)
	}
}

// assignID gives a new record its ID: the next one of seq when *id is 0,
// otherwise the caller's explicit ID, which moves the sequence past it.
func (s *sequencer) assignID(ctx context.Context, seq string, id *int64) error {
	if *id < 0 || *id > repository.MaxExplicitID {
		return fmt.Errorf("mongo: %s ID %d is outside 1..%d: %w", seq, *id, repository.MaxExplicitID, repository.ErrIDRange)
	}
	if *id == 0 {
		n, err := s.nextID(ctx, seq)
		if err != nil {
			return err
		}
		*id = n
		return nil
	}
	if _, err := s.claimID(ctx, seq, *id); err != nil {
		return err
	}
	// An explicit ID already claimed is taken again: a claim without a
	// record is left by a create that died midway (or a deleted record),
	// and an import that was killed must be able to finish. An ID a
	// record holds is still refused: the insert fails with ErrDuplicate.
	return s.raiseSeq(ctx, seq, *id) // explicitids.go
}
