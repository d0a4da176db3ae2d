package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/calendar/eventcal/repository"
)

func decodeTerm(doc []byte) (*repository.Term, error) {
	var t repository.Term
	if err := json.Unmarshal(doc, &t); err != nil {
		return nil, fmt.Errorf("sqlite: decode term: %w", err)
	}
	return &t, nil
}

// CreateTerm assigns t.ID from the term sequence (unless set), makes its
// slugs unique for its taxonomy, stores it with an index mark and updates t
// in place.
func (s *Store) CreateTerm(ctx context.Context, t *repository.Term) error {
	q := *t
	q.Slug = t.Slug.Clone()
	q.Revision = 1
	err := s.write(ctx, func(w *writeTx) error {
		if q.ID == 0 {
			id, err := w.next("term", 1)
			if err != nil {
				return err
			}
			q.ID = id
		} else {
			var one int
			err := w.queryRow(`SELECT 1 FROM terms WHERE id = ?`, q.ID).Scan(&one)
			if err == nil {
				return fmt.Errorf("sqlite: term %d exists: %w", q.ID, repository.ErrDuplicate)
			}
			if !errors.Is(err, errNoRows) {
				return notFound(err)
			}
			if err := w.reserve("term", q.ID); err != nil {
				return err
			}
		}
		return w.putTerm(&q, true)
	})
	if err != nil {
		return err
	}
	*t = q
	return nil
}

// putTerm writes t (row, slugs and name index) and marks it.
func (w *writeTx) putTerm(t *repository.Term, isNew bool) error {
	if !isNew {
		if _, err := w.exec(`DELETE FROM term_slugs WHERE term_id = ?`, t.ID); err != nil {
			return err
		}
		if _, err := w.exec(`DELETE FROM term_names WHERE term_id = ?`, t.ID); err != nil {
			return err
		}
	}
	slugs, err := w.uniqueSlugs(t.Slug, func(lang, base string) (map[string]int64, error) {
		return w.slugOwners(`SELECT slug, term_id FROM term_slugs
			WHERE taxonomy = ? AND lang = ? AND slug >= ? AND slug < ?`, string(t.Taxonomy), lang, base)
	}, t.ID)
	if err != nil {
		return err
	}
	t.Slug = slugs
	doc, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("sqlite: encode term: %w", err)
	}
	if isNew {
		_, err = w.exec(`INSERT INTO terms(id, taxonomy, parent, revision, doc) VALUES (?, ?, ?, ?, ?)`,
			t.ID, string(t.Taxonomy), t.Parent, t.Revision, doc)
	} else {
		_, err = w.exec(`UPDATE terms SET parent = ?, revision = ?, doc = ? WHERE id = ?`,
			t.Parent, t.Revision, doc, t.ID)
	}
	if err != nil {
		return err
	}
	for _, lang := range sortedLangs(t.Slug) {
		if _, err := w.exec(`INSERT INTO term_slugs(taxonomy, lang, slug, term_id) VALUES (?, ?, ?, ?)`,
			string(t.Taxonomy), lang, t.Slug[lang], t.ID); err != nil {
			return err
		}
	}
	for lang, name := range t.Name {
		if name == "" {
			continue
		}
		if _, err := w.exec(`INSERT INTO term_names(term_id, lang, name_fold) VALUES (?, ?, ?)`,
			t.ID, lang, fold(name)); err != nil {
			return err
		}
	}
	return w.mark(repository.MarkTerm, t.ID)
}

// GetTerm returns the term with this ID or repository.ErrNotFound.
func (s *Store) GetTerm(ctx context.Context, id int64) (*repository.Term, error) {
	var doc []byte
	if err := s.queryRow(ctx, `SELECT doc FROM terms WHERE id = ?`, id).Scan(&doc); err != nil {
		return nil, notFound(err)
	}
	return decodeTerm(doc)
}

// GetTerms returns the terms that exist among ids, keyed by ID.
func (s *Store) GetTerms(ctx context.Context, ids []int64) (map[int64]*repository.Term, error) {
	out := make(map[int64]*repository.Term, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, `SELECT doc FROM terms WHERE id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	ts, err := scanTerms(rows)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		out[t.ID] = t
	}
	return out, nil
}

func scanTerms(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]*repository.Term, error) {
	defer rows.Close()
	var out []*repository.Term
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		t, err := decodeTerm(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// FindTerms returns the terms matching q, by ID ascending. An empty
// Taxonomy matches both taxonomies; a Name or Slug without a language
// matches it in any language.
func (s *Store) FindTerms(ctx context.Context, q repository.TermQuery) ([]*repository.Term, error) {
	query, args := termQuery(q)
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return scanTerms(rows)
}

// termQuery builds FindTerms's statement. Name and slug conditions name
// every column of their index prefix (taxonomy, language), so they are
// index look-ups, never scans (TestTermQueryPlans).
func termQuery(q repository.TermQuery) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	// With a name or slug, the look-up drives the plan: the unary + keeps
	// SQLite from reading every term of the taxonomy (or parent) through
	// their index and filtering them by the subquery instead.
	plus := ""
	if q.Name != "" || q.Slug != "" {
		plus = "+"
	}
	if q.Taxonomy != "" {
		add(plus+`taxonomy = ?`, string(q.Taxonomy))
	}
	if len(q.IDs) > 0 {
		add(`id IN (SELECT value FROM json_each(?))`, jsonIDs(q.IDs))
	}
	if q.Name != "" {
		if q.NameLang != "" {
			add(`id IN (SELECT term_id FROM term_names WHERE name_fold = ? AND lang = ?)`, fold(q.Name), q.NameLang)
		} else {
			add(`id IN (SELECT term_id FROM term_names WHERE name_fold = ?)`, fold(q.Name))
		}
	}
	if q.Slug != "" {
		taxes := []string{string(q.Taxonomy)}
		if q.Taxonomy == "" {
			taxes = []string{string(repository.TaxCategory), string(repository.TaxTag)}
		}
		langs := ""
		if q.SlugLang != "" {
			langs = ` AND lang = ?`
		}
		var parts []string
		for _, tax := range taxes {
			parts = append(parts, `SELECT term_id FROM term_slugs WHERE taxonomy = ?`+langs+` AND slug = ?`)
			args = append(args, tax)
			if q.SlugLang != "" {
				args = append(args, q.SlugLang)
			}
			args = append(args, q.Slug)
		}
		where = append(where, `id IN (`+strings.Join(parts, ` UNION ALL `)+`)`)
	}
	if q.HasParent {
		add(plus+`parent = ?`, q.Parent)
	}
	query := `SELECT doc FROM terms`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	return query + ` ORDER BY id`, args
}

// UpdateTerm reads the term, applies fn and writes the result if the term
// did not change meanwhile, retrying otherwise.
func (s *Store) UpdateTerm(ctx context.Context, id int64, fn func(t *repository.Term) error) (*repository.Term, error) {
	for {
		t, err := s.GetTerm(ctx, id)
		if err != nil {
			return nil, err
		}
		rev, tax := t.Revision, t.Taxonomy
		if err := fn(t); err != nil {
			return nil, err
		}
		if t.ID != id || t.Taxonomy != tax {
			return nil, fmt.Errorf("sqlite: UpdateTerm(%d): fn changed the ID or taxonomy", id)
		}
		t.Revision = rev + 1
		err = s.write(ctx, func(w *writeTx) error {
			var cur int64
			if err := w.queryRow(`SELECT revision FROM terms WHERE id = ?`, id).Scan(&cur); err != nil {
				return notFound(err)
			}
			if cur != rev {
				return errConflict
			}
			return w.putTerm(t, false)
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
		return t, nil
	}
}

// DeleteTerm removes the term, takes it off every event, moves its child
// categories up to its parent and marks everything it changed.
func (s *Store) DeleteTerm(ctx context.Context, id int64) error {
	return s.write(ctx, func(w *writeTx) error {
		var doc []byte
		if err := w.queryRow(`SELECT doc FROM terms WHERE id = ?`, id).Scan(&doc); err != nil {
			return notFound(err)
		}
		term, err := decodeTerm(doc)
		if err != nil {
			return err
		}
		events, err := w.ids(`SELECT DISTINCT post_id FROM post_links
			WHERE rel IN ('category', 'tag') AND target = ? ORDER BY post_id`, id)
		if err != nil {
			return err
		}
		drop := func(v int64) bool { return v == id }
		if err := w.editEvents(events, func(e *repository.EventFields) {
			e.Categories = slices.DeleteFunc(e.Categories, drop)
			e.Tags = slices.DeleteFunc(e.Tags, drop)
		}); err != nil {
			return err
		}
		children, err := w.ids(`SELECT id FROM terms WHERE parent = ? ORDER BY id`, id)
		if err != nil {
			return err
		}
		for _, cid := range children {
			var cdoc []byte
			if err := w.queryRow(`SELECT doc FROM terms WHERE id = ?`, cid).Scan(&cdoc); err != nil {
				return notFound(err)
			}
			child, err := decodeTerm(cdoc)
			if err != nil {
				return err
			}
			child.Parent = term.Parent
			child.Revision++
			if err := w.putTerm(child, false); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`DELETE FROM terms WHERE id = ?`,
			`DELETE FROM term_slugs WHERE term_id = ?`,
			`DELETE FROM term_names WHERE term_id = ?`,
		} {
			if _, err := w.exec(q, id); err != nil {
				return err
			}
		}
		return w.mark(repository.MarkTerm, id)
	})
}

// TermCounts returns, for each term of the taxonomy that published events
// use, how many published events use it.
func (s *Store) TermCounts(ctx context.Context, tax repository.Taxonomy) (map[int64]int, error) {
	rel := "category"
	if tax == repository.TaxTag {
		rel = "tag"
	}
	// term_counts (aggregates.go) holds the counts, kept by triggers.
	rows, err := s.query(ctx, `SELECT term_id, n FROM term_counts WHERE rel = ? AND status = ? AND n > 0`,
		rel, repository.StatusPublish)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]int)
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}
