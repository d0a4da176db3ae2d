package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/calendar/eventcal/repository"
)

// PendingMarks returns up to limit index marks, oldest first (in the order
// of the writes that recorded them). A limit of 0 or less returns them all.
func (s *Store) PendingMarks(ctx context.Context, limit int) ([]repository.IndexMark, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.query(ctx, `SELECT kind, id, seq, at FROM index_marks ORDER BY seq LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	var out []repository.IndexMark
	for rows.Next() {
		var m repository.IndexMark
		var kind string
		var at int64
		if err := rows.Scan(&kind, &m.ID, &m.Seq, &at); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		m.Kind = repository.MarkKind(kind)
		m.At = time.Unix(0, at).UTC()
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// ClearMarks removes the given marks unless their item was written again
// since they were read (their Seq changed).
func (s *Store) ClearMarks(ctx context.Context, marks []repository.IndexMark) error {
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
func (s *Store) MarkForIndexing(ctx context.Context, kind repository.MarkKind, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, func(w *writeTx) error { return w.mark(kind, ids...) })
}
