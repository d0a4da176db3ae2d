package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/calendar/eventcal/repository"
)

// place_events keeps, for every link from an event to a venue or organizer,
// the event's status and start (Unix seconds): what the search documents of
// places need (repository.PlaceEvents). Its primary key orders the rows of
// one place by status and then start, so the latest start of each status is
// one index probe (SQLite's min/max optimization), whatever the number of
// events at the place.
//
// Triggers on posts keep it in step with every write of an event, in the
// same transaction, so no write path can forget it. They read the start
// from the JSON document, where StartUTC is written as RFC 3339 text;
// SQLite's unixepoch reads it at millisecond precision (events are stored
// with whole seconds).
var placeEventsTable = `CREATE TABLE IF NOT EXISTS place_events (
		rel       TEXT NOT NULL,     -- venue or organizer
		place_id  INTEGER NOT NULL,
		status    TEXT NOT NULL,
		start_utc INTEGER NOT NULL,  -- Unix seconds
		event_id  INTEGER NOT NULL,
		PRIMARY KEY (rel, place_id, status, start_utc, event_id)
	) WITHOUT ROWID`

// placeEventsRows selects the place_events rows of the event row named
// row: "new" in the triggers, "posts" (the whole table) for the backfill.
func placeEventsRows(row string) string {
	from := ""
	if row != "new" {
		from = row + ", "
	}
	start := `unixepoch(json_extract(` + row + `.doc, '$.event.start_utc'))`
	return `SELECT 'venue', v.value, ` + row + `.status, ` + start + `, ` + row + `.id
			FROM ` + from + `json_each(` + row + `.doc, '$.event.venues') v WHERE ` + row + `.kind = 'event' AND ` + start + ` IS NOT NULL
		UNION ALL
		SELECT 'organizer', o.value, ` + row + `.status, ` + start + `, ` + row + `.id
			FROM ` + from + `json_each(` + row + `.doc, '$.event.organizers') o WHERE ` + row + `.kind = 'event' AND ` + start + ` IS NOT NULL`
}

// aggregateSchema creates place_events, its triggers and its index; it is
// idempotent.
var aggregateSchema = []string{
	placeEventsTable,
	`CREATE INDEX IF NOT EXISTS place_events_by_event ON place_events(event_id)`,
	`CREATE TRIGGER IF NOT EXISTS place_events_insert AFTER INSERT ON posts WHEN new.kind = 'event' BEGIN
		INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) ` + placeEventsRows("new") + `;
	END`,
	`CREATE TRIGGER IF NOT EXISTS place_events_update AFTER UPDATE OF kind, status, doc ON posts BEGIN
		DELETE FROM place_events WHERE event_id = old.id;
		INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) ` + placeEventsRows("new") + `;
	END`,
	`CREATE TRIGGER IF NOT EXISTS place_events_delete AFTER DELETE ON posts BEGIN
		DELETE FROM place_events WHERE event_id = old.id;
	END`,
}

// migrateAggregates creates the aggregate tables in tx; when place_events
// is new (a database written before it existed), it fills it from the
// stored events.
func migrateAggregates(ctx context.Context, tx *sql.Tx) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'place_events'`).Scan(&n); err != nil {
		return err
	}
	for _, q := range aggregateSchema {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%w\n%s", err, q)
		}
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) `+
			placeEventsRows("posts")+` ORDER BY 1`); err != nil {
			return fmt.Errorf("fill place_events: %w", err)
		}
	}
	return nil
}

// placeEventsQuery returns, for each place ID (?2, a JSON array) and each
// status (?3), the latest start of the place's events with that status
// (NULL when none): one probe of the primary key per pair.
const placeEventsQuery = `SELECT p.value, s.value,
		(SELECT max(e.start_utc) FROM place_events e WHERE e.rel = ?1 AND e.place_id = p.value AND e.status = s.value)
	FROM json_each(?2) p, json_each(?3) s`

// PlaceEvents returns the aggregates of the events linked to each venue
// or organizer among ids, in one query.
func (s *Store) PlaceEvents(ctx context.Context, kind repository.PostKind, ids []int64) (map[int64]repository.PlaceEvents, error) {
	out := make(map[int64]repository.PlaceEvents, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, placeEventsQuery, string(kind), jsonIDs(ids), jsonStrings(repository.Statuses))
	if err != nil {
		return nil, fmt.Errorf("sqlite: place events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var status string
		var latest sql.NullInt64
		if err := rows.Scan(&id, &status, &latest); err != nil {
			return nil, fmt.Errorf("sqlite: place events: %w", err)
		}
		if !latest.Valid {
			continue
		}
		pe, ok := out[id]
		if !ok {
			pe.LatestStart = map[string]int64{}
		}
		pe.LatestStart[status] = latest.Int64
		pe.HasEvents = pe.HasEvents || repository.CountsForHasEvents(status)
		out[id] = pe
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: place events: %w", err)
	}
	return out, nil
}

// FindPostIDs returns the IDs of the posts matching q, ascending, reading
// only the index columns.
func (s *Store) FindPostIDs(ctx context.Context, q repository.PostQuery) ([]int64, error) {
	where, args := postFilter(q, true)
	query := `SELECT id FROM posts` + where + ` ORDER BY id`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	ids, err := scanIDs(rows)
	if ids == nil && err == nil {
		ids = []int64{}
	}
	return ids, err
}
