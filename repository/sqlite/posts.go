package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/calendar/eventcal/repository"
)

// errConflict means another write changed the record since it was read.
var errConflict = errors.New("sqlite: concurrent update")

// postTable is the post document table. Empty link lists get a non-nil value
// (normalizePost), so that callers can tell "none" from "absent" the same
// way for every record.
var postTable = (&docTable[repository.Record]{
	name:       "post",
	updateName: "UpdatePost",
	scopeName:  "kind",
	fields: func(p *repository.Record) docFields {
		return docFields{id: &p.ID, revision: &p.Revision, slug: &p.Slug, scope: string(p.Kind), folded: p.Title}
	},
	normalize:  normalizePost,
	writeRow:   writePostRow,
	writeLinks: writePostLinks,
	mark:       repository.MarkPost,
}).queries(docSchema{
	table: "posts", owner: "post_id", scope: "kind",
	slugs: "post_slugs", folds: "post_titles", fold: "title_fold",
	others: []string{"post_links"},
})

func normalizePost(p *repository.Record) {
	if e := p.Event; e != nil {
		for _, l := range []*[]int64{&e.Categories, &e.Tags, &e.Venues, &e.Organizers} {
			if *l == nil {
				*l = []int64{}
			}
		}
	}
}

// CreateRecord assigns p.ID from the post sequence (unless set), makes its
// slugs unique, stores it with an index mark and updates p in place.
func (s *recordStore) CreateRecord(ctx context.Context, p *repository.Record) error {
	return postTable.create(ctx, s.conn, p)
}

// writePostRow inserts or updates the row of p, whose document is doc.
func writePostRow(w *writeTx, p *repository.Record, doc []byte, isNew bool) error {
	var parent, imageURL any
	if p.Event != nil && p.Event.Parent != 0 {
		parent = p.Event.Parent
	}
	if p.Kind == repository.KindImage && p.Image != nil {
		imageURL = p.Image.URL
	}
	var err error
	if isNew {
		_, err = w.exec(`INSERT INTO posts(id, kind, status, parent, image_url, revision, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.ID, string(p.Kind), p.Status, parent, imageURL, p.Revision, doc)
	} else {
		_, err = w.exec(`UPDATE posts SET status = ?, parent = ?, image_url = ?, revision = ?, doc = ? WHERE id = ?`,
			p.Status, parent, imageURL, p.Revision, doc, p.ID)
	}
	return err
}

// writePostLinks writes an event's venues, organizers, categories and tags
// to post_links.
func writePostLinks(w *writeTx, p *repository.Record) error {
	e := p.Event
	if e == nil {
		return nil
	}
	for _, l := range []struct {
		rel string
		ids []int64
	}{{"venue", e.Venues}, {"organizer", e.Organizers}, {"category", e.Categories}, {"tag", e.Tags}} {
		for _, target := range l.ids {
			if _, err := w.exec(`INSERT OR IGNORE INTO post_links(post_id, rel, target) VALUES (?, ?, ?)`,
				p.ID, l.rel, target); err != nil {
				return err
			}
		}
	}
	return nil
}

// uniqueSlugs returns the slugs to store for an item with the requested
// ones: for each language the first repository.SlugCandidate that no other
// item owns. owners returns who owns the slugs of a language that are
// candidates for a base (see slugOwners). The item's own rows are deleted before, so its current slug
// counts as free. Empty slugs are dropped.
//
// One range query per language finds base and every base-N, rather than
// one query per candidate: a hundred events called "Concert" cost the
// hundred-and-first one query, not a hundred.
func (w *writeTx) uniqueSlugs(want repository.Text, owners func(lang, base string) (map[string]int64, error), self int64) (repository.Text, error) {
	if len(want) == 0 {
		return want, nil
	}
	out := make(repository.Text, len(want))
	for _, lang := range sortedLangs(want) {
		base := want[lang]
		if base == "" {
			continue
		}
		taken, err := owners(lang, base)
		if err != nil {
			return nil, err
		}
		for n := 1; ; n++ {
			cand := repository.SlugCandidate(base, n)
			if id, ok := taken[cand]; !ok || id == self {
				out[lang] = cand
				break
			}
		}
	}
	return out, nil
}

// slugOwners reads from a slug table (post_slugs or term_slugs) the owners
// of base and of every base-N, with a range scan of the primary key: in
// byte order they all sort in [base, base+"."), as "-" is the byte just
// before ".". (The range may hold other slugs too; they are never
// candidates, so they do no harm.)
func (w *writeTx) slugOwners(query string, scope, lang, base string) (map[string]int64, error) {
	st := w.stmt(query)
	args := []any{scope, lang, base, base + "."}
	var rows *sql.Rows
	var err error
	if st != nil {
		rows, err = st.QueryContext(w.ctx, args...)
	} else {
		rows, err = w.tx.QueryContext(w.ctx, query, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: slug lookup: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var slug string
		var id int64
		if err := rows.Scan(&slug, &id); err != nil {
			return nil, fmt.Errorf("sqlite: slug lookup: %w", err)
		}
		out[slug] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: slug lookup: %w", err)
	}
	return out, nil
}

// GetRecord returns the post with this ID or repository.ErrNotFound.
func (s *recordStore) GetRecord(ctx context.Context, id int64) (*repository.Record, error) {
	return postTable.get(ctx, s.conn, id)
}

// GetRecords returns the posts that exist among ids, keyed by ID.
func (s *recordStore) GetRecords(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	return postTable.getMany(ctx, s.conn, ids)
}

// GetRecordBySlug returns the post of this kind whose slug in lang is slug.
func (s *recordStore) GetRecordBySlug(ctx context.Context, kind repository.Kind, lang, slug string) (*repository.Record, error) {
	var doc []byte
	err := s.queryRow(ctx, `SELECT p.doc FROM post_slugs s JOIN posts p ON p.id = s.post_id
		WHERE s.kind = ? AND s.lang = ? AND s.slug = ?`, string(kind), lang, slug).Scan(&doc)
	if err != nil {
		return nil, notFound(err)
	}
	return postTable.decode(doc)
}

// UpdateRecord reads the post, applies fn and writes the result if the post
// did not change meanwhile, retrying otherwise. fn runs outside any
// transaction and may run several times.
func (s *recordStore) UpdateRecord(ctx context.Context, id int64, fn func(p *repository.Record) error) (*repository.Record, error) {
	return postTable.update(ctx, s.conn, id, fn)
}

// DeleteRecord removes the post, its slugs and links, and marks it.
func (s *recordStore) DeleteRecord(ctx context.Context, id int64) error {
	return s.write(ctx, func(w *writeTx) error {
		if err := w.execSome(`DELETE FROM posts WHERE id = ?`, id); err != nil {
			return err
		}
		if err := postTable.deleteSides(w, id); err != nil {
			return err
		}
		return w.mark(repository.MarkPost, id)
	})
}

// postFilter turns q into a WHERE clause and its arguments. withPage adds
// AfterID (Limit is added by the caller).
func postFilter(q repository.RecordQuery, withPage bool) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if q.Kind != "" && q.Title != "" {
		// The title look-up drives the plan (as in termQuery): no read of
		// every post of the kind through posts_by_kind.
		add(`+kind = ?`, string(q.Kind))
	} else if q.Kind != "" {
		add(`kind = ?`, string(q.Kind))
	}
	if len(q.Statuses) > 0 {
		add(`status IN (SELECT value FROM json_each(?))`, jsonStrings(q.Statuses))
	}
	if len(q.ExcludeStatuses) > 0 {
		add(`status NOT IN (SELECT value FROM json_each(?))`, jsonStrings(q.ExcludeStatuses))
	}
	if len(q.IDs) > 0 {
		add(`id IN (SELECT value FROM json_each(?))`, jsonIDs(q.IDs))
	}
	for _, l := range []struct {
		rel string
		ids []int64
	}{{"venue", q.VenueIDs}, {"organizer", q.OrganizerIDs}, {"category", q.CategoryIDs}, {"tag", q.TagIDs}} {
		if len(l.ids) > 0 {
			add(`id IN (SELECT post_id FROM post_links WHERE rel = ? AND target IN (SELECT value FROM json_each(?)))`,
				l.rel, jsonIDs(l.ids))
		}
	}
	if q.Title != "" {
		if q.TitleLang != "" {
			add(`id IN (SELECT post_id FROM post_titles WHERE title_fold = ? AND lang = ?)`, fold(q.Title), q.TitleLang)
		} else {
			// No language: a title in any language matches.
			add(`id IN (SELECT post_id FROM post_titles WHERE title_fold = ?)`, fold(q.Title))
		}
	}
	if q.ImageURL != "" {
		add(`kind = 'image' AND image_url = ?`, q.ImageURL)
	}
	if q.Parent != 0 {
		add(`parent = ?`, q.Parent)
	}
	if withPage && q.AfterID != 0 {
		add(`id > ?`, q.AfterID)
	}
	if len(where) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// FindRecords returns the posts matching q, by ID ascending. As the contract
// says, zero-valued fields do not filter (an empty list included); a Title
// without TitleLang matches a title in any language.
func (s *recordStore) FindRecords(ctx context.Context, q repository.RecordQuery) ([]*repository.Record, error) {
	query, args := postPage(`doc`, q)
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return postTable.scan(rows)
}

// postPage selects column of the posts matching q, by ID ascending, from
// AfterID and at most Limit of them.
func postPage(column string, q repository.RecordQuery) (string, []any) {
	where, args := postFilter(q, true)
	query := `SELECT ` + column + ` FROM posts` + where + ` ORDER BY id`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	return query, args
}

// CountRecords returns how many posts match q, ignoring AfterID and Limit.
func (s *recordStore) CountRecords(ctx context.Context, q repository.RecordQuery) (int, error) {
	if n, ok, err := s.countByTerm(ctx, q); ok {
		return n, err
	}
	where, args := postFilter(q, false)
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM posts`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return n, nil
}

// UnlinkRecord removes venue or organizer id from every event that links it,
// marks those events and returns their IDs (ascending).
func (s *recordStore) UnlinkRecord(ctx context.Context, id int64) ([]int64, error) {
	var changed []int64
	err := s.write(ctx, func(w *writeTx) error {
		events, err := w.ids(`SELECT DISTINCT post_id FROM post_links
			WHERE rel IN ('venue', 'organizer') AND target = ? ORDER BY post_id`, id)
		if err != nil {
			return err
		}
		changed = events
		return w.editEvents(events, func(e *repository.EventFields) {
			e.Venues = slices.DeleteFunc(e.Venues, func(v int64) bool { return v == id })
			e.Organizers = slices.DeleteFunc(e.Organizers, func(v int64) bool { return v == id })
		})
	})
	if err != nil {
		return nil, err
	}
	return changed, nil
}

// editEvents applies edit to the event fields of each post in the
// transaction, bumping revisions and marking them.
func (w *writeTx) editEvents(ids []int64, edit func(e *repository.EventFields)) error {
	for _, id := range ids {
		p, err := postTable.getTx(w, id)
		if errors.Is(err, repository.ErrNotFound) {
			continue // a stale link; writing a live post never leaves one
		}
		if err != nil {
			return err
		}
		if p.Event == nil {
			continue
		}
		edit(p.Event)
		p.Revision++
		if err := postTable.put(w, p, false); err != nil {
			return err
		}
	}
	return nil
}
