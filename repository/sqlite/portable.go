package sqlite

import (
	"context"
	"fmt"

	"github.com/calendar/eventcal/repository"
)

// The ID sequences of repository.PortableStore are rows of the counters
// table. A counter's value is the last ID it handed out or was moved past
// (reserve); deletes never lower it, so it also counts the deleted
// items' IDs.

// seqCounters maps each name of repository.SequenceNames to its row in
// counters.
var seqCounters = map[string]string{
	repository.SeqRecords:    "post",
	repository.SeqLabels:     "term",
	repository.SeqUsers:      "user",
	repository.SeqWebhooks:   "webhook",
	repository.SeqSources:    "source",
	repository.SeqSourceRuns: "source_run",
}

// Sequences returns the value of every sequence of
// repository.SequenceNames (0 for one never used), read in one query.
func (s *Store) Sequences(ctx context.Context) (map[string]int64, error) {
	rows, err := s.query(ctx, `SELECT name, value FROM counters`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sequences: %w", err)
	}
	defer rows.Close()
	byCounter := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("sqlite: sequences: %w", err)
		}
		byCounter[name] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sequences: %w", err)
	}
	out := make(map[string]int64, len(repository.SequenceNames))
	for _, name := range repository.SequenceNames {
		out[name] = byCounter[seqCounters[name]]
	}
	return out, nil
}

// RaiseSequences moves each named sequence up to at least its value, in
// one write transaction: every value is checked before anything is
// written, and either every sequence is raised or none is.
func (s *Store) RaiseSequences(ctx context.Context, values map[string]int64) error {
	if err := repository.CheckSequenceValues(values); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return s.write(ctx, func(w *writeTx) error {
		for _, name := range repository.SequenceNames {
			v, ok := values[name]
			if !ok || v == 0 {
				continue
			}
			if _, err := w.exec(`INSERT INTO counters(name, value) VALUES (?, ?)
				ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)`, seqCounters[name], v); err != nil {
				return fmt.Errorf("sqlite: raise sequence %s to %d: %w", name, v, err)
			}
		}
		return nil
	})
}
