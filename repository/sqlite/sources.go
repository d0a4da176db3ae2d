package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/calendar/eventcal/repository"
)

// Calendar sources (repository.SourceStore) are stored as JSON documents,
// as the webhook endpoints are:
//
//   - sources: one row per source (id, rev, doc); IDs come from the
//     "source" counter, so a deleted source's ID is never handed out
//     again;
//   - source_runs: one row per run (id, source_id, doc), IDs from the
//     "source_run" counter (increasing: the newest run has the highest
//     ID), with an index on (source_id, id) for a source's runs newest
//     first and their pruning;
//   - the events a source imported are found through posts_by_source, an
//     expression index on json_extract(doc, '$.source.id') of posts
//     (partial: only records with a source link are in it). SQLite keeps
//     an expression index in step with every write of the row, so every
//     path that writes a record's document (CreateRecord, UpdateRecord,
//     DeleteRecord, UnlinkRecord, label deletes, imports) keeps it
//     current without knowing about it; SourceItems reads it in RecordID
//     order and touches only that source's rows.

// sourceItemsQuery is SourceItems' query. Its WHERE names the indexed
// expression exactly as posts_by_source declares it, which is what lets
// the planner use the index (TestSourceItemsPlan).
const sourceItemsQuery = `SELECT id, status, json_extract(doc, '$.source') FROM posts
	WHERE json_extract(doc, '$.source.id') = ? ORDER BY id`

// listRunsQuery is ListSourceRuns' query: newest first from
// source_runs_by_source (TestSourceItemsPlan).
const listRunsQuery = `SELECT id, doc FROM source_runs WHERE source_id = ? ORDER BY id DESC LIMIT ?`

// sourceStore is repository.SourceStore.
type sourceStore struct{ *conn }

// storedSource is the JSON document of a source: the API type leaves the
// run claim out of JSON; the store keeps it.
type storedSource struct {
	repository.Source
	RunClaim      string    `json:"run_claim,omitempty"`
	RunClaimUntil time.Time `json:"run_claim_until,omitzero"`
}

func sourceDoc(s *repository.Source) ([]byte, error) {
	b, err := json.Marshal(storedSource{Source: *s, RunClaim: s.RunClaim, RunClaimUntil: s.RunClaimUntil})
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode source %d: %w", s.ID, err)
	}
	return b, nil
}

func scanSource(row interface{ Scan(...any) error }) (*repository.Source, error) {
	var id, rev int64
	var doc []byte
	if err := row.Scan(&id, &rev, &doc); err != nil {
		return nil, notFound(err)
	}
	var ss storedSource
	if err := json.Unmarshal(doc, &ss); err != nil {
		return nil, fmt.Errorf("sqlite: source %d: %w", id, err)
	}
	src := ss.Source
	src.ID, src.Revision = id, rev
	src.RunClaim, src.RunClaimUntil = ss.RunClaim, ss.RunClaimUntil
	return &src, nil
}

// CreateSource assigns s.ID from the source counter (unless set: an
// explicit ID must be free and moves the counter past it) and stores s at
// revision 1, or at its own revision above 0 with an explicit ID.
func (s *sourceStore) CreateSource(ctx context.Context, src *repository.Source) error {
	c := *src
	if c.ID == 0 || c.Revision <= 0 {
		c.Revision = 1
	}
	err := s.write(ctx, func(tx *writeTx) error {
		if err := tx.assign("source", `SELECT 1 FROM sources WHERE id = ?`, &c.ID); err != nil {
			return err
		}
		doc, err := sourceDoc(&c)
		if err != nil {
			return err
		}
		_, err = tx.exec(`INSERT INTO sources(id, rev, doc) VALUES (?, ?, ?)`, c.ID, c.Revision, doc)
		return err
	})
	if err != nil {
		return err
	}
	*src = c
	return nil
}

// GetSource returns the source or repository.ErrNotFound.
func (s *sourceStore) GetSource(ctx context.Context, id int64) (*repository.Source, error) {
	return scanSource(s.queryRow(ctx, `SELECT id, rev, doc FROM sources WHERE id = ?`, id))
}

// ListSources returns every source by ID.
func (s *sourceStore) ListSources(ctx context.Context) ([]*repository.Source, error) {
	rows, err := s.query(ctx, `SELECT id, rev, doc FROM sources ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect[*repository.Source](rows, nil, scanSource)
}

// UpdateSource reads the source, applies fn and writes it back unless
// another write came in between (then it starts over with a fresh read).
// fn runs outside any transaction; an error from it aborts the update.
func (s *sourceStore) UpdateSource(ctx context.Context, id int64, fn func(s *repository.Source) error) (*repository.Source, error) {
	return updateRevDoc(ctx, s.conn, "sources", id, s.GetSource,
		func(src *repository.Source) (*int64, *int64) { return &src.ID, &src.Revision }, sourceDoc, fn)
}

// DeleteSource removes the source and its runs in one transaction. The
// events it imported keep their source link.
func (s *sourceStore) DeleteSource(ctx context.Context, id int64) error {
	return s.write(ctx, func(tx *writeTx) error {
		if err := tx.execSome(`DELETE FROM sources WHERE id = ?`, id); err != nil {
			return err
		}
		_, err := tx.exec(`DELETE FROM source_runs WHERE source_id = ?`, id)
		return err
	})
}

func runDoc(r *repository.SourceRun) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("sqlite: encode run %d: %w", r.ID, err)
	}
	return b, nil
}

func scanRun(row interface{ Scan(...any) error }) (*repository.SourceRun, error) {
	var id int64
	var doc []byte
	if err := row.Scan(&id, &doc); err != nil {
		return nil, notFound(err)
	}
	r := new(repository.SourceRun)
	if err := json.Unmarshal(doc, r); err != nil {
		return nil, fmt.Errorf("sqlite: run %d: %w", id, err)
	}
	r.ID = id
	return r, nil
}

// CreateSourceRun assigns r.ID from the run counter (each higher than the
// last; an explicit ID must be free and moves the counter past it) and
// stores r. A run of a source that does not exist (deleted meanwhile) is
// refused with repository.ErrNotFound and not stored.
func (s *sourceStore) CreateSourceRun(ctx context.Context, r *repository.SourceRun) error {
	c := *r
	err := s.write(ctx, func(tx *writeTx) error {
		if c.ID != 0 {
			if err := tx.reserveCheck("source_run", c.ID); err != nil {
				return err
			}
		}
		var one int
		if err := tx.queryRow(`SELECT 1 FROM sources WHERE id = ?`, c.SourceID).Scan(&one); err != nil {
			return notFound(err)
		}
		if err := tx.assign("source_run", `SELECT 1 FROM source_runs WHERE id = ?`, &c.ID); err != nil {
			return err
		}
		doc, err := runDoc(&c)
		if err != nil {
			return err
		}
		_, err = tx.exec(`INSERT INTO source_runs(id, source_id, doc) VALUES (?, ?, ?)`, c.ID, c.SourceID, doc)
		return err
	})
	if err != nil {
		return err
	}
	*r = c
	return nil
}

// SaveSourceRun stores r over the stored run with its ID (its source
// stays the one it was created for); repository.ErrNotFound when there is
// none (pruned, or its source deleted).
func (s *sourceStore) SaveSourceRun(ctx context.Context, r *repository.SourceRun) error {
	return s.write(ctx, func(tx *writeTx) error {
		var sourceID int64
		if err := tx.queryRow(`SELECT source_id FROM source_runs WHERE id = ?`, r.ID).Scan(&sourceID); err != nil {
			return notFound(err)
		}
		c := *r
		c.SourceID = sourceID
		doc, err := runDoc(&c)
		if err != nil {
			return err
		}
		return tx.execSome(`UPDATE source_runs SET doc = ? WHERE id = ?`, doc, r.ID)
	})
}

// ListSourceRuns returns up to limit runs of the source (every run when
// limit <= 0), newest first.
func (s *sourceStore) ListSourceRuns(ctx context.Context, sourceID int64, limit int) ([]*repository.SourceRun, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.query(ctx, listRunsQuery, sourceID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect[*repository.SourceRun](rows, nil, scanRun)
}

// PruneSourceRuns removes the source's runs but the newest keep (every
// run when keep <= 0).
func (s *sourceStore) PruneSourceRuns(ctx context.Context, sourceID int64, keep int) error {
	keep = max(keep, 0)
	return s.write(ctx, func(tx *writeTx) error {
		_, err := tx.exec(`DELETE FROM source_runs WHERE source_id = ? AND id NOT IN
			(SELECT id FROM source_runs WHERE source_id = ? ORDER BY id DESC LIMIT ?)`, sourceID, sourceID, keep)
		return err
	})
}

// SourceItems returns the records of every status whose source link names
// the source, by RecordID, read through posts_by_source.
func (s *sourceStore) SourceItems(ctx context.Context, sourceID int64) ([]repository.SourceItem, error) {
	rows, err := s.query(ctx, sourceItemsQuery, sourceID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return collect(rows, nil, func(row interface{ Scan(...any) error }) (repository.SourceItem, error) {
		var it repository.SourceItem
		var link []byte
		if err := row.Scan(&it.RecordID, &it.Status, &link); err != nil {
			return it, fmt.Errorf("sqlite: %w", err)
		}
		var l repository.SourceLink
		if err := json.Unmarshal(link, &l); err != nil {
			return it, fmt.Errorf("sqlite: source link of record %d: %w", it.RecordID, err)
		}
		it.UID, it.RecurrenceID, it.Hash = l.UID, l.RecurrenceID, l.Hash
		return it, nil
	})
}
