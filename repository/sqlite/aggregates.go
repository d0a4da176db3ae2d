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

// term_events keeps, for every link from an event to a category or tag,
// the event's status: counting the published events of a term (which every
// rendered event needs for its terms) then reads a narrow index range
// instead of every published post (see countByTerm). It is kept by the same
// triggers as place_events.
var termEventsTable = `CREATE TABLE IF NOT EXISTS term_events (
		rel      TEXT NOT NULL,      -- category or tag
		term_id  INTEGER NOT NULL,
		status   TEXT NOT NULL,
		event_id INTEGER NOT NULL,
		PRIMARY KEY (rel, term_id, status, event_id)
	) WITHOUT ROWID`

// termEventsRows selects the term_events rows of the event row named row
// (as placeEventsRows).
func termEventsRows(row string) string {
	from := ""
	if row != "new" {
		from = row + ", "
	}
	return `SELECT 'category', c.value, ` + row + `.status, ` + row + `.id
			FROM ` + from + `json_each(` + row + `.doc, '$.event.categories') c WHERE ` + row + `.kind = 'event'
		UNION ALL
		SELECT 'tag', g.value, ` + row + `.status, ` + row + `.id
			FROM ` + from + `json_each(` + row + `.doc, '$.event.tags') g WHERE ` + row + `.kind = 'event'`
}

// term_counts keeps the number of term_events rows of each term and
// status, by triggers on term_events, so that the counts of a whole
// taxonomy (TermCounts, which term lists and every rendered event's terms
// read) are a read of one row per term, where counting term_events grew
// with the store (a grouped count over 300,000 rows at 100,000 events).
// term_events rows are only ever inserted or deleted (a changed event
// deletes its rows and inserts them again), and an ignored INSERT OR
// IGNORE fires no AFTER INSERT trigger, so the counts follow exactly.
var termCountsTable = `CREATE TABLE IF NOT EXISTS term_counts (
		rel     TEXT NOT NULL,
		term_id INTEGER NOT NULL,
		status  TEXT NOT NULL,
		n       INTEGER NOT NULL,
		PRIMARY KEY (rel, term_id, status)
	) WITHOUT ROWID`

// account_documents keeps, per author, the sum of the Documents of their
// events (repository.EventFields.Documents, 0 counting as 1), so that
// AccountDocuments is one row read, however many events the account has.
// Triggers on posts keep it in step with every write, as place_events.
var accountDocumentsTable = `CREATE TABLE IF NOT EXISTS account_documents (
		author INTEGER PRIMARY KEY,
		n      INTEGER NOT NULL
	)`

// eventDocuments is the Documents of the event row named row, for
// account_documents.
func eventDocuments(row string) string {
	return `max(coalesce(json_extract(` + row + `.doc, '$.event.documents'), 1), 1)`
}

// eventAuthor is the author of the row named row.
func eventAuthor(row string) string { return `coalesce(json_extract(` + row + `.doc, '$.author'), 0)` }

// accountDocumentsSchema creates account_documents and its triggers.
var accountDocumentsSchema = []string{
	accountDocumentsTable,
	`CREATE TRIGGER IF NOT EXISTS account_documents_insert AFTER INSERT ON posts WHEN new.kind = 'event' BEGIN
		INSERT INTO account_documents(author, n) VALUES (` + eventAuthor("new") + `, ` + eventDocuments("new") + `)
			ON CONFLICT(author) DO UPDATE SET n = n + excluded.n;
	END`,
	`CREATE TRIGGER IF NOT EXISTS account_documents_update AFTER UPDATE OF kind, doc ON posts WHEN old.kind = 'event' OR new.kind = 'event' BEGIN
		UPDATE account_documents SET n = n - ` + eventDocuments("old") + ` WHERE old.kind = 'event' AND author = ` + eventAuthor("old") + `;
		INSERT INTO account_documents(author, n) SELECT ` + eventAuthor("new") + `, ` + eventDocuments("new") + ` WHERE new.kind = 'event'
			ON CONFLICT(author) DO UPDATE SET n = n + excluded.n;
	END`,
	`CREATE TRIGGER IF NOT EXISTS account_documents_delete AFTER DELETE ON posts WHEN old.kind = 'event' BEGIN
		UPDATE account_documents SET n = n - ` + eventDocuments("old") + ` WHERE author = ` + eventAuthor("old") + `;
	END`,
}

// accountDocumentsFill fills account_documents from the stored events.
const accountDocumentsFill = `INSERT INTO account_documents(author, n)
	SELECT ` + `coalesce(json_extract(posts.doc, '$.author'), 0)` + `, sum(max(coalesce(json_extract(posts.doc, '$.event.documents'), 1), 1))
	FROM posts WHERE kind = 'event' GROUP BY 1`

// aggregateReads answers the aggregate reads of repository.EventLinks and
// AccountDocuments.
type aggregateReads struct{ *conn }

// AccountDocuments returns the index documents of the author's events
// (repository.Store): one read of account_documents.
func (s *aggregateReads) AccountDocuments(ctx context.Context, author int64) (int, error) {
	var n int
	err := s.rdb.QueryRowContext(ctx, `SELECT coalesce((SELECT n FROM account_documents WHERE author = ?), 0)`, author).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: account documents: %w", err)
	}
	return n, nil
}

// aggregateSchema creates place_events, term_events and term_counts,
// their triggers and indexes; it is idempotent.
var aggregateSchema = []string{
	placeEventsTable,
	`CREATE INDEX IF NOT EXISTS place_events_by_event ON place_events(event_id)`,
	termEventsTable,
	`CREATE INDEX IF NOT EXISTS term_events_by_event ON term_events(event_id)`,
	`CREATE TRIGGER IF NOT EXISTS event_aggregates_insert AFTER INSERT ON posts WHEN new.kind = 'event' BEGIN
		INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) ` + placeEventsRows("new") + `;
		INSERT OR IGNORE INTO term_events(rel, term_id, status, event_id) ` + termEventsRows("new") + `;
	END`,
	`CREATE TRIGGER IF NOT EXISTS event_aggregates_update AFTER UPDATE OF kind, status, doc ON posts BEGIN
		DELETE FROM place_events WHERE event_id = old.id;
		DELETE FROM term_events WHERE event_id = old.id;
		INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) ` + placeEventsRows("new") + `;
		INSERT OR IGNORE INTO term_events(rel, term_id, status, event_id) ` + termEventsRows("new") + `;
	END`,
	`CREATE TRIGGER IF NOT EXISTS event_aggregates_delete AFTER DELETE ON posts BEGIN
		DELETE FROM place_events WHERE event_id = old.id;
		DELETE FROM term_events WHERE event_id = old.id;
	END`,
	termCountsTable,
	`CREATE TRIGGER IF NOT EXISTS term_counts_insert AFTER INSERT ON term_events BEGIN
		INSERT INTO term_counts(rel, term_id, status, n) VALUES (new.rel, new.term_id, new.status, 1)
			ON CONFLICT(rel, term_id, status) DO UPDATE SET n = n + 1;
	END`,
	`CREATE TRIGGER IF NOT EXISTS term_counts_delete AFTER DELETE ON term_events BEGIN
		UPDATE term_counts SET n = n - 1 WHERE rel = old.rel AND term_id = old.term_id AND status = old.status;
	END`,
}

// migrateAggregates creates the aggregate tables in tx; a table that is
// new (a database written before it existed) is filled from the stored
// events.
func migrateAggregates(ctx context.Context, tx *sql.Tx) error {
	// In this order: filling term_events fills term_counts by its
	// triggers, and term_counts is then counted again from term_events
	// (whichever of the two was missing).
	fills := map[string][]string{
		"place_events": {`INSERT OR IGNORE INTO place_events(rel, place_id, status, start_utc, event_id) ` + placeEventsRows("posts")},
		"term_events":  {`INSERT OR IGNORE INTO term_events(rel, term_id, status, event_id) ` + termEventsRows("posts")},
		"term_counts": {`DELETE FROM term_counts`,
			`INSERT INTO term_counts(rel, term_id, status, n) SELECT rel, term_id, status, count(*) FROM term_events GROUP BY rel, term_id, status`},
	}
	var missing []string
	fills["account_documents"] = []string{accountDocumentsFill}
	for _, table := range []string{"place_events", "term_events", "term_counts", "account_documents"} {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			missing = append(missing, table)
		}
	}
	for _, q := range append(aggregateSchema[:len(aggregateSchema):len(aggregateSchema)], accountDocumentsSchema...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%w\n%s", err, q)
		}
	}
	for _, table := range missing {
		for _, q := range fills[table] {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("fill %s: %w", table, err)
			}
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
func (s *aggregateReads) PlaceEvents(ctx context.Context, kind repository.Kind, ids []int64) (map[int64]repository.PlaceEvents, error) {
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

// recordStore is the record part of repository.Store (events, venues,
// organizers and images; the posts table).
type recordStore struct{ *conn }

// FindRecordIDs returns the IDs of the posts matching q, ascending, reading
// only the index columns.
func (s *recordStore) FindRecordIDs(ctx context.Context, q repository.RecordQuery) ([]int64, error) {
	query, args := postPage(`id`, q)
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

// countByTerm counts the events of some categories or of some tags
// (optionally of some statuses): of one term from term_counts (a row per
// status), of several from term_events (an index-only range count). It reports false for every other query shape, which CountPosts
// then runs on posts. Rendering an event counts the published events of
// each of its terms: on posts that count visits every published event
// (the status index), so its cost grew with the store.
func (s *recordStore) countByTerm(ctx context.Context, q repository.RecordQuery) (int, bool, error) {
	rel, ids := "category", q.CategoryIDs
	if len(q.TagIDs) > 0 {
		rel, ids = "tag", q.TagIDs
	}
	if q.Kind != repository.KindEvent || len(ids) == 0 || (len(q.CategoryIDs) > 0 && len(q.TagIDs) > 0) ||
		len(q.ExcludeStatuses) > 0 || len(q.IDs) > 0 || len(q.VenueIDs) > 0 || len(q.OrganizerIDs) > 0 ||
		q.Title != "" || q.ImageURL != "" || q.Parent != 0 {
		return 0, false, nil
	}
	// One term: its rows are one per event (the primary key, and an event
	// has one status), so term_counts holds the count per status; several
	// terms may share events, which count(DISTINCT) counts once.
	query, args := `SELECT count(DISTINCT event_id) FROM term_events WHERE rel = ? AND term_id IN (SELECT value FROM json_each(?))`,
		[]any{rel, jsonIDs(ids)}
	if len(ids) == 1 {
		query, args = `SELECT coalesce(sum(n), 0) FROM term_counts WHERE rel = ? AND term_id = ?`, []any{rel, ids[0]}
	}
	if len(q.Statuses) > 0 {
		query += ` AND status IN (SELECT value FROM json_each(?))`
		args = append(args, jsonStrings(q.Statuses))
	}
	var n int
	if err := s.queryRow(ctx, query, args...).Scan(&n); err != nil {
		return 0, true, fmt.Errorf("sqlite: %w", err)
	}
	return n, true, nil
}
