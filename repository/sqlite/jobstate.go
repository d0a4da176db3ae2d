package sqlite

import (
	"context"
	"errors"
	"fmt"
)

// GetJobState returns the value stored under key in job_state; found is
// false when there is none.
func (s *Store) GetJobState(ctx context.Context, key string) (string, bool, error) {
	var value string
	err := s.queryRow(ctx, `SELECT value FROM job_state WHERE key = ?`, key).Scan(&value)
	switch {
	case errors.Is(err, errNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("sqlite: job state %q: %w", key, err)
	}
	return value, true, nil
}

// SetJobState stores value under key in job_state, replacing any earlier
// value.
func (s *Store) SetJobState(ctx context.Context, key, value string) error {
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(`INSERT INTO job_state(key, value) VALUES (?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}
