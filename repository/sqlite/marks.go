package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/calendar/eventcal/repository"
)

// markColumns are the columns scanMarks reads, in its order.
const markColumns = `kind, id, seq, at, attempts, last_error, next_at`

// markQueue is the index-mark part of repository.Store.
type markQueue struct{ *conn }

// PendingMarks returns up to limit index marks, oldest first (in the order
// of the writes that recorded them), those waiting for a retry included.
// A limit of 0 or less returns them all.
func (s *markQueue) PendingMarks(ctx context.Context, limit int) ([]repository.IndexMark, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return s.scanMarks(ctx, `SELECT `+markColumns+` FROM index_marks ORDER BY seq LIMIT ?`, limit)
}

// DueMarks returns up to limit marks due at now (never failed, or whose
// next attempt is not after now), in the order of PendingMarks. It reads
// index_marks_by_seq in order; the marks waiting for a retry are skipped
// there (a mark that never failed has next_at 0).
func (s *markQueue) DueMarks(ctx context.Context, now time.Time, limit int) ([]repository.IndexMark, error) {
	if limit <= 0 {
		limit = -1
	}
	return s.scanMarks(ctx, `SELECT `+markColumns+` FROM index_marks WHERE next_at <= ? ORDER BY seq LIMIT ?`,
		now.UnixNano(), limit)
}

// FailMark records a failed attempt on m's item unless its seq changed.
func (s *markQueue) FailMark(ctx context.Context, m repository.IndexMark) error {
	var next int64
	if !m.NextAttempt.IsZero() {
		next = m.NextAttempt.UnixNano()
	}
	return s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(`UPDATE index_marks SET attempts = ?, last_error = ?, next_at = ? WHERE kind = ? AND id = ? AND seq = ?`,
			max(m.Attempts, 1), repository.TruncateMarkError(m.LastError), next, string(m.Kind), m.ID, m.Seq)
		return err
	})
}

// FailingMarks returns up to limit marks with failed attempts, soonest
// next attempt first (the partial index index_marks_failing), and their
// number.
func (s *markQueue) FailingMarks(ctx context.Context, limit int) ([]repository.IndexMark, int, error) {
	if limit <= 0 {
		limit = -1
	}
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM index_marks WHERE attempts > 0`).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("sqlite: %w", err)
	}
	marks, err := s.scanMarks(ctx, `SELECT `+markColumns+` FROM index_marks WHERE attempts > 0 ORDER BY next_at, seq LIMIT ?`, limit)
	return marks, n, err
}

// scanMarks runs a query selecting markColumns.
func (s *markQueue) scanMarks(ctx context.Context, query string, args ...any) ([]repository.IndexMark, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var out []repository.IndexMark
	for rows.Next() {
		var m repository.IndexMark
		var kind string
		var at, next int64
		if err := rows.Scan(&kind, &m.ID, &m.Seq, &at, &m.Attempts, &m.LastError, &next); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		m.Kind = repository.MarkKind(kind)
		m.At = time.Unix(0, at).UTC()
		if m.Attempts > 0 {
			m.NextAttempt = time.Unix(0, next).UTC()
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// ClearMarks removes the given marks unless their item was written again
// since they were read (their Seq changed).
func (s *markQueue) ClearMarks(ctx context.Context, marks []repository.IndexMark) error {
	if len(marks) == 0 {
		return nil
	}
	return s.write(ctx, func(w *writeTx) error {
		for _, m := range marks {
			if _, err := w.exec(`DELETE FROM index_marks WHERE kind = ? AND id = ? AND seq = ?`,
				string(m.Kind), m.ID, m.Seq); err != nil {
				return err
			}
		}
		return nil
	})
}

// MarkForIndexing records (or renews) marks for the items without changing
// them. The items need not exist: a mark for a deleted item makes the sync
// worker remove it from the index.
func (s *markQueue) MarkForIndexing(ctx context.Context, kind repository.MarkKind, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, func(w *writeTx) error { return w.mark(kind, ids...) })
}
