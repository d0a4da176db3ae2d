package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/calendar/eventcal/repository"
)

// The ID sequences of repository.PortableStore are documents of the
// counters collection. A counter's value is the last value it handed out
// (nextSeq) or was moved past (raiseSeq, by an explicit ID); deletes never
// lower it, so it also counts the deleted items' IDs. A counter never
// drawn from has no document: its value is 0.

// seqCounters maps each name of repository.SequenceNames to its counter.
var seqCounters = map[string]string{
	repository.SeqRecords:    seqPost,
	repository.SeqLabels:     seqTerm,
	repository.SeqUsers:      seqUser,
	repository.SeqWebhooks:   seqWebhook,
	repository.SeqSources:    seqSource,
	repository.SeqSourceRuns: seqSourceRun,
}

// maxRaiseAttempts bounds how often RaiseSequences raises one counter
// again after reading it back below the value asked for.
const maxRaiseAttempts = 10

// counterValues returns the value of each of the counters named (0 for
// one without a document), read with one find.
func (s *Store) counterValues(ctx context.Context, names []string) (map[string]int64, error) {
	cur, err := s.counters.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: names}}}})
	if err != nil {
		return nil, err
	}
	var docs []struct {
		Name  string `bson:"_id"`
		Value int64  `bson:"value"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(names))
	for _, d := range docs {
		out[d.Name] = d.Value
	}
	return out, nil
}

// Sequences returns the value of every sequence of
// repository.SequenceNames (0 for one never used).
func (s *Store) Sequences(ctx context.Context) (map[string]int64, error) {
	names := make([]string, 0, len(repository.SequenceNames))
	for _, name := range repository.SequenceNames {
		names = append(names, seqCounters[name])
	}
	values, err := s.counterValues(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("mongo: sequences: %w", err)
	}
	out := make(map[string]int64, len(repository.SequenceNames))
	for _, name := range repository.SequenceNames {
		out[name] = values[seqCounters[name]]
	}
	return out, nil
}

// RaiseSequences moves each named sequence up to at least its value
// ($max). Every name and value is checked before anything is written.
// The sequences are raised one after the other (no transactions): a
// failure midway leaves the ones before it raised, which is harmless, as
// raising again is. Each counter is read back after the raise and raised
// again while it reads below the value: on FerretDB v1, whose updates are
// a read and a write, a draw running at the same time may write back the
// lower value it read.
func (s *Store) RaiseSequences(ctx context.Context, values map[string]int64) error {
	if err := repository.CheckSequenceValues(values); err != nil {
		return fmt.Errorf("mongo: %w", err)
	}
	for _, name := range repository.SequenceNames {
		v, ok := values[name]
		if !ok || v == 0 {
			continue
		}
		if err := s.raiseCounter(ctx, seqCounters[name], v); err != nil {
			return err
		}
	}
	return nil
}

// raiseCounter raises the counter to at least v and checks that it stays
// there.
func (s *Store) raiseCounter(ctx context.Context, counter string, v int64) error {
	for range maxRaiseAttempts {
		if err := s.raiseSeq(ctx, counter, v); err != nil {
			return err
		}
		got, err := s.counterValues(ctx, []string{counter})
		if err != nil {
			return fmt.Errorf("mongo: read sequence %s: %w", counter, err)
		}
		if got[counter] >= v {
			return nil
		}
	}
	return fmt.Errorf("mongo: raise sequence %s to %d: still below it after %d attempts", counter, v, maxRaiseAttempts)
}
