package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/calendar/eventcal/repository"
)

// errConflict means another write changed the record since it was read.
var errConflict = errors.New("sqlite: concurrent update")

// decodePost reads a post document and gives empty link lists a non-nil
// value, so that callers can tell "none" from "absent" the same way for
// every record.
func decodePost(doc []byte) (*repository.Post, error) {
	var p repository.Post
	if err := json.Unmarshal(doc, &p); err != nil {
		return nil, fmt.Errorf("sqlite: decode post: %w", err)
	}
	normalizePost(&p)
	return &p, nil
}

func normalizePost(p *repository.Post) {
	if e := p.Event; e != nil {
		for _, l := range []*[]int64{&e.Categories, &e.Tags, &e.Venues, &e.Organizers} {
			if *l == nil {
				*l = []int64{}
			}
		}
	}
}

// CreatePost assigns p.ID from the post sequence (unless set), makes its
// slugs unique, stores it with an index mark and updates p in place.
func (s *Store) CreatePost(ctx context.Context, p *repository.Post) error {
	q := *p
	q.Slug = p.Slug.Clone()
	q.Revision = 1
	err := s.write(ctx, func(w *writeTx) error {
		if q.ID == 0 {
			id, err := w.next("post", 1)
			if err != nil {
				return err
			}
			q.ID = id
		} else {
			var one int
			err := w.queryRow(`SELECT 1 FROM posts WHERE id = ?`, q.ID).Scan(&one)
			if err == nil {
				return fmt.Errorf("sqlite: post %d exists: %w", q.ID, repository.ErrDuplicate)
			}
			if !errors.Is(err, errNoRows) {
				return notFound(err)
			}
			if err := w.reserve("post", q.ID); err != nil {
				return err
			}
		}
		return w.putPost(&q, true)
	})
	if err != nil {
		return err
	}
	normalizePost(&q)
	*p = q
	return nil
}

// putPost writes p (its row, slugs, links and title index) and marks it.
// p.Slug is replaced by the unique slugs.
func (w *writeTx) putPost(p *repository.Post, isNew bool) error {
	if !isNew {
		if _, err := w.exec(`DELETE FROM post_slugs WHERE post_id = ?`, p.ID); err != nil {
			return err
		}
		if _, err := w.exec(`DELETE FROM post_links WHERE post_id = ?`, p.ID); err != nil {
			return err
		}
		if _, err := w.exec(`DELETE FROM post_titles WHERE post_id = ?`, p.ID); err != nil {
			return err
		}
	}
	slugs, err := w.uniqueSlugs(p.Slug, func(lang, base string) (map[string]int64, error) {
		return w.slugOwners(`SELECT slug, post_id FROM post_slugs
			WHERE kind = ? AND lang = ? AND slug >= ? AND slug < ?`, string(p.Kind), lang, base)
	}, p.ID)
	if err != nil {
		return err
	}
	p.Slug = slugs
	doc, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("sqlite: encode post: %w", err)
	}
	var parent, imageURL any
	if p.Event != nil && p.Event.Parent != 0 {
		parent = p.Event.Parent
	}
	if p.Kind == repository.KindImage && p.Image != nil {
		imageURL = p.Image.URL
	}
	if isNew {
		_, err = w.exec(`INSERT INTO posts(id, kind, status, parent, image_url, revision, doc) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.ID, string(p.Kind), p.Status, parent, imageURL, p.Revision, doc)
	} else {
		_, err = w.exec(`UPDATE posts SET status = ?, parent = ?, image_url = ?, revision = ?, doc = ? WHERE id = ?`,
			p.Status, parent, imageURL, p.Revision, doc, p.ID)
	}
	if err != nil {
		return err
	}
	for _, lang := range sortedLangs(p.Slug) {
		if _, err := w.exec(`INSERT INTO post_slugs(kind, lang, slug, post_id) VALUES (?, ?, ?, ?)`,
			string(p.Kind), lang, p.Slug[lang], p.ID); err != nil {
			return err
		}
	}
	if e := p.Event; e != nil {
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
	}
	for lang, title := range p.Title {
		if title == "" {
			continue
		}
		if _, err := w.exec(`INSERT INTO post_titles(post_id, lang, title_fold) VALUES (?, ?, ?)`,
			p.ID, lang, fold(title)); err != nil {
			return err
		}
	}
	return w.mark(repository.MarkPost, p.ID)
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

// GetPost returns the post with this ID or repository.ErrNotFound.
func (s *Store) GetPost(ctx context.Context, id int64) (*repository.Post, error) {
	var doc []byte
	if err := s.queryRow(ctx, `SELECT doc FROM posts WHERE id = ?`, id).Scan(&doc); err != nil {
		return nil, notFound(err)
	}
	return decodePost(doc)
}

// GetPosts returns the posts that exist among ids, keyed by ID.
func (s *Store) GetPosts(ctx context.Context, ids []int64) (map[int64]*repository.Post, error) {
	out := make(map[int64]*repository.Post, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, `SELECT doc FROM posts WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	ps, err := scanPosts(rows)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out[p.ID] = p
	}
	return out, nil
}

func scanPosts(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]*repository.Post, error) {
	defer rows.Close()
	var out []*repository.Post
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		p, err := decodePost(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// GetPostBySlug returns the post of this kind whose slug in lang is slug.
func (s *Store) GetPostBySlug(ctx context.Context, kind repository.PostKind, lang, slug string) (*repository.Post, error) {
	var doc []byte
	err := s.queryRow(ctx, `SELECT p.doc FROM post_slugs s JOIN posts p ON p.id = s.post_id
		WHERE s.kind = ? AND s.lang = ? AND s.slug = ?`, string(kind), lang, slug).Scan(&doc)
	if err != nil {
		return nil, notFound(err)
	}
	return decodePost(doc)
}

// UpdatePost reads the post, applies fn and writes the result if the post
// did not change meanwhile, retrying otherwise. fn runs outside any
// transaction and may run several times.
func (s *Store) UpdatePost(ctx context.Context, id int64, fn func(p *repository.Post) error) (*repository.Post, error) {
	for {
		p, err := s.GetPost(ctx, id)
		if err != nil {
			return nil, err
		}
		rev, kind := p.Revision, p.Kind
		if err := fn(p); err != nil {
			return nil, err
		}
		if p.ID != id || p.Kind != kind {
			return nil, fmt.Errorf("sqlite: UpdatePost(%d): fn changed the ID or kind", id)
		}
		p.Revision = rev + 1
		err = s.write(ctx, func(w *writeTx) error {
			var cur int64
			if err := w.queryRow(`SELECT revision FROM posts WHERE id = ?`, id).Scan(&cur); err != nil {
				return notFound(err)
			}
			if cur != rev {
				return errConflict
			}
			return w.putPost(p, false)
		})
		if errors.Is(err, errConflict) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		normalizePost(p)
		return p, nil
	}
}

// DeletePost removes the post, its slugs and links, and marks it.
func (s *Store) DeletePost(ctx context.Context, id int64) error {
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(`DELETE FROM posts WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return repository.ErrNotFound
		}
		for _, q := range []string{
			`DELETE FROM post_slugs WHERE post_id = ?`,
			`DELETE FROM post_links WHERE post_id = ?`,
			`DELETE FROM post_titles WHERE post_id = ?`,
		} {
			if _, err := w.exec(q, id); err != nil {
				return err
			}
		}
		return w.mark(repository.MarkPost, id)
	})
}

// postFilter turns q into a WHERE clause and its arguments. withPage adds
// AfterID (Limit is added by the caller).
func postFilter(q repository.PostQuery, withPage bool) (string, []any) {
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

// FindPosts returns the posts matching q, by ID ascending. As the contract
// says, zero-valued fields do not filter (an empty list included); a Title
// without TitleLang matches a title in any language.
func (s *Store) FindPosts(ctx context.Context, q repository.PostQuery) ([]*repository.Post, error) {
	where, args := postFilter(q, true)
	query := `SELECT doc FROM posts` + where + ` ORDER BY id`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return scanPosts(rows)
}

// CountPosts returns how many posts match q, ignoring AfterID and Limit.
func (s *Store) CountPosts(ctx context.Context, q repository.PostQuery) (int, error) {
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

// UnlinkPost removes venue or organizer id from every event that links it,
// marks those events and returns their IDs (ascending).
func (s *Store) UnlinkPost(ctx context.Context, id int64) ([]int64, error) {
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
		var doc []byte
		if err := w.queryRow(`SELECT doc FROM posts WHERE id = ?`, id).Scan(&doc); err != nil {
			if errors.Is(err, errNoRows) {
				continue // a stale link; putPost of a live post never leaves one
			}
			return notFound(err)
		}
		p, err := decodePost(doc)
		if err != nil {
			return err
		}
		if p.Event == nil {
			continue
		}
		edit(p.Event)
		p.Revision++
		if err := w.putPost(p, false); err != nil {
			return err
		}
	}
	return nil
}
