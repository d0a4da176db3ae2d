package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/calendar/eventcal/repository"
)

// termTable is the term document table.
var termTable = (&docTable[repository.Label]{
	name:       "term",
	updateName: "UpdateTerm",
	scopeName:  "taxonomy",
	fields: func(t *repository.Label) docFields {
		return docFields{id: &t.ID, revision: &t.Revision, slug: &t.Slug, scope: string(t.Taxonomy), folded: t.Name}
	},
	writeRow: writeTermRow,
	mark:     repository.MarkTerm,
}).queries(docSchema{
	table: "terms", owner: "term_id", scope: "taxonomy",
	slugs: "term_slugs", folds: "term_names", fold: "name_fold",
})

// labelStore is the label part of repository.Store (categories and tags;
// the terms table).
type labelStore struct{ *conn }

// CreateLabel assigns t.ID from the term sequence (unless set), makes its
// slugs unique for its taxonomy, stores it with an index mark and updates t
// in place.
func (s *labelStore) CreateLabel(ctx context.Context, t *repository.Label) error {
	return termTable.create(ctx, s.conn, t)
}

// writeTermRow inserts or updates the row of t, whose document is doc.
func writeTermRow(w *writeTx, t *repository.Label, doc []byte, isNew bool) error {
	var err error
	if isNew {
		_, err = w.exec(`INSERT INTO terms(id, taxonomy, parent, revision, doc) VALUES (?, ?, ?, ?, ?)`,
			t.ID, string(t.Taxonomy), t.Parent, t.Revision, doc)
	} else {
		_, err = w.exec(`UPDATE terms SET parent = ?, revision = ?, doc = ? WHERE id = ?`,
			t.Parent, t.Revision, doc, t.ID)
	}
	return err
}

// GetLabel returns the term with this ID or repository.ErrNotFound.
func (s *labelStore) GetLabel(ctx context.Context, id int64) (*repository.Label, error) {
	return termTable.get(ctx, s.conn, id)
}

// GetLabels returns the terms that exist among ids, keyed by ID.
func (s *labelStore) GetLabels(ctx context.Context, ids []int64) (map[int64]*repository.Label, error) {
	return termTable.getMany(ctx, s.conn, ids)
}

// FindLabels returns the terms matching q, by ID ascending. An empty
// Taxonomy matches both taxonomies; a Name or Slug without a language
// matches it in any language.
func (s *labelStore) FindLabels(ctx context.Context, q repository.LabelQuery) ([]*repository.Label, error) {
	query, args := termQuery(q)
	rows, err := s.rdb.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return termTable.scan(rows)
}

// termQuery builds FindTerms's statement. Name and slug conditions name
// every column of their index prefix (taxonomy, language), so they are
// index look-ups, never scans (TestTermQueryPlans).
func termQuery(q repository.LabelQuery) (string, []any) {
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
			taxes = []string{string(repository.LabelCategory), string(repository.LabelTag)}
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

// UpdateLabel reads the term, applies fn and writes the result if the term
// did not change meanwhile, retrying otherwise.
func (s *labelStore) UpdateLabel(ctx context.Context, id int64, fn func(t *repository.Label) error) (*repository.Label, error) {
	return termTable.update(ctx, s.conn, id, fn)
}

// DeleteLabel removes the term, takes it off every event, moves its child
// categories up to its parent and marks everything it changed.
func (s *labelStore) DeleteLabel(ctx context.Context, id int64) error {
	return s.write(ctx, func(w *writeTx) error {
		term, err := termTable.getTx(w, id)
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
			child, err := termTable.getTx(w, cid)
			if err != nil {
				return err
			}
			child.Parent = term.Parent
			child.Revision++
			if err := termTable.put(w, child, false); err != nil {
				return err
			}
		}
		if _, err := w.exec(`DELETE FROM terms WHERE id = ?`, id); err != nil {
			return err
		}
		if err := termTable.deleteSides(w, id); err != nil {
			return err
		}
		return w.mark(repository.MarkTerm, id)
	})
}

// LabelCounts returns, for each term of the taxonomy that published events
// use, how many published events use it.
func (s *labelStore) LabelCounts(ctx context.Context, tax repository.LabelKind) (map[int64]int, error) {
	rel := "category"
	if tax == repository.LabelTag {
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
