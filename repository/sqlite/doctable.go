package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/calendar/eventcal/repository"
)

// docTable is one kind of JSON document (posts, terms): a table of rows
// holding the document and the plain columns queries filter on, with side
// tables kept in step with it (slugs, folded titles or names, links). What
// every kind does the same way (read, scan, allocate an ID, the slug and
// folded-text side tables, the optimistic update loop) is written once in
// its methods; what differs is in its fields.
//
// The statements are built once, from the table and column names, so that
// each has one text for the statement caches.
type docTable[T any] struct {
	// name is the kind in error messages and the name of its ID counter:
	// "post" or "term".
	name string
	// updateName and scopeName are for the error of an update that changed
	// the ID or the field that scopes slugs: "UpdatePost", "kind".
	updateName, scopeName string
	// fields gives access to the fields every kind has.
	fields func(v *T) docFields
	// normalize fixes up a decoded or written document (nil: nothing to do).
	normalize func(v *T)
	// writeRow inserts (isNew) or updates the document's row.
	writeRow func(w *writeTx, v *T, doc []byte, isNew bool) error
	// writeLinks writes the kind's other side tables (nil: none), after
	// the slugs and before the folded texts.
	writeLinks func(w *writeTx, v *T) error
	// mark is the index mark kind of a write.
	mark repository.MarkKind

	getQuery, getManyQuery, existsQuery, revisionQuery string
	slugOwnersQuery, insertSlugQuery, insertFoldQuery  string
	// deleteSideQueries delete a document's rows in every side table.
	deleteSideQueries []string
}

// docFields are pointers to the fields every document kind has, and the
// values its side tables index.
type docFields struct {
	id, revision *int64
	slug         *repository.Text
	// scope is the kind or taxonomy: slugs are unique within it, and an
	// update may not change it.
	scope string
	// folded is the text indexed case-insensitively: titles, names.
	folded repository.Text
}

// docSchema names a document kind's table and side tables.
type docSchema struct {
	table string // posts
	owner string // the side tables' column naming the document: post_id
	scope string // the slug table's scope column: kind
	slugs string // post_slugs
	folds string // post_titles
	fold  string // the folded column: title_fold
	// others are further side tables keyed by owner, deleted with the
	// document and before every rewrite: post_links.
	others []string
}

// queries fills in t's statements from the schema.
func (t *docTable[T]) queries(s docSchema) *docTable[T] {
	t.getQuery = `SELECT doc FROM ` + s.table + ` WHERE id = ?`
	t.getManyQuery = `SELECT doc FROM ` + s.table + ` WHERE id IN (SELECT value FROM json_each(?))`
	t.existsQuery = `SELECT 1 FROM ` + s.table + ` WHERE id = ?`
	t.revisionQuery = `SELECT revision FROM ` + s.table + ` WHERE id = ?`
	t.slugOwnersQuery = `SELECT slug, ` + s.owner + ` FROM ` + s.slugs +
		` WHERE ` + s.scope + ` = ? AND lang = ? AND slug >= ? AND slug < ?`
	t.insertSlugQuery = `INSERT INTO ` + s.slugs + `(` + s.scope + `, lang, slug, ` + s.owner + `) VALUES (?, ?, ?, ?)`
	t.insertFoldQuery = `INSERT INTO ` + s.folds + `(` + s.owner + `, lang, ` + s.fold + `) VALUES (?, ?, ?)`
	for _, side := range append([]string{s.slugs}, append(s.others, s.folds)...) {
		t.deleteSideQueries = append(t.deleteSideQueries, `DELETE FROM `+side+` WHERE `+s.owner+` = ?`)
	}
	return t
}

// decode reads a document.
func (t *docTable[T]) decode(doc []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(doc, v); err != nil {
		return nil, fmt.Errorf("sqlite: decode %s: %w", t.name, err)
	}
	if t.normalize != nil {
		t.normalize(v)
	}
	return v, nil
}

// get returns the document with this ID or repository.ErrNotFound.
func (t *docTable[T]) get(ctx context.Context, s *conn, id int64) (*T, error) {
	var doc []byte
	if err := s.queryRow(ctx, t.getQuery, id).Scan(&doc); err != nil {
		return nil, notFound(err)
	}
	return t.decode(doc)
}

// getTx is get in a write transaction.
func (t *docTable[T]) getTx(w *writeTx, id int64) (*T, error) {
	var doc []byte
	if err := w.queryRow(t.getQuery, id).Scan(&doc); err != nil {
		return nil, notFound(err)
	}
	return t.decode(doc)
}

// getMany returns the documents that exist among ids, keyed by ID.
func (t *docTable[T]) getMany(ctx context.Context, s *conn, ids []int64) (map[int64]*T, error) {
	out := make(map[int64]*T, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.query(ctx, t.getManyQuery, jsonIDs(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	vs, err := t.scan(rows)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		out[*t.fields(v).id] = v
	}
	return out, nil
}

// scan decodes the rows of a query selecting doc, and closes them.
func (t *docTable[T]) scan(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]*T, error) {
	defer rows.Close()
	var out []*T
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		v, err := t.decode(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return out, nil
}

// create assigns v's ID from the kind's counter (unless set; a set ID must
// be free), stores v at revision 1 (or, with a set ID, at its own
// revision when that is above 0: a load keeps revisions) and updates it
// in place.
func (t *docTable[T]) create(ctx context.Context, s *conn, v *T) error {
	q := *v
	f := t.fields(&q)
	*f.slug = f.slug.Clone()
	if *f.id == 0 || *f.revision <= 0 {
		*f.revision = 1
	}
	if err := repository.CheckRecordSize(&q); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", t.name, err)
	}
	err := s.write(ctx, func(w *writeTx) error {
		if *f.id == 0 {
			id, err := w.next(t.name, 1)
			if err != nil {
				return err
			}
			*f.id = id
		} else {
			var one int
			err := w.queryRow(t.existsQuery, *f.id).Scan(&one)
			if err == nil {
				return fmt.Errorf("sqlite: %s %d exists: %w", t.name, *f.id, repository.ErrDuplicate)
			}
			if !errors.Is(err, errNoRows) {
				return notFound(err)
			}
			if err := w.reserve(t.name, *f.id); err != nil {
				return err
			}
		}
		return t.put(w, &q, true)
	})
	if err != nil {
		return err
	}
	if t.normalize != nil {
		t.normalize(&q)
	}
	*v = q
	return nil
}

// put writes v (its row and side tables) and marks it. v's slugs are
// replaced by the unique slugs (see uniqueSlugs).
func (t *docTable[T]) put(w *writeTx, v *T, isNew bool) error {
	f := t.fields(v)
	id := *f.id
	if !isNew {
		if err := t.deleteSides(w, id); err != nil {
			return err
		}
	}
	slugs, err := w.uniqueSlugs(*f.slug, func(lang, base string) (map[string]int64, error) {
		return w.slugOwners(t.slugOwnersQuery, f.scope, lang, base)
	}, id)
	if err != nil {
		return err
	}
	*f.slug = slugs
	doc, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sqlite: encode %s: %w", t.name, err)
	}
	if err := t.writeRow(w, v, doc, isNew); err != nil {
		return err
	}
	for _, lang := range sortedLangs(slugs) {
		if _, err := w.exec(t.insertSlugQuery, f.scope, lang, slugs[lang], id); err != nil {
			return err
		}
	}
	if t.writeLinks != nil {
		if err := t.writeLinks(w, v); err != nil {
			return err
		}
	}
	for lang, text := range f.folded {
		if text == "" {
			continue
		}
		if _, err := w.exec(t.insertFoldQuery, id, lang, fold(text)); err != nil {
			return err
		}
	}
	return w.mark(t.mark, id)
}

// deleteSides deletes the document's rows in every side table.
func (t *docTable[T]) deleteSides(w *writeTx, id int64) error {
	for _, q := range t.deleteSideQueries {
		if _, err := w.exec(q, id); err != nil {
			return err
		}
	}
	return nil
}

// update reads the document, applies fn and writes the result if the
// document did not change meanwhile, retrying otherwise. fn runs outside
// any transaction and may run several times; it may not change the ID or
// the scope (kind, taxonomy).
func (t *docTable[T]) update(ctx context.Context, s *conn, id int64, fn func(v *T) error) (*T, error) {
	for {
		v, err := t.get(ctx, s, id)
		if err != nil {
			return nil, err
		}
		before := t.fields(v)
		rev, scope := *before.revision, before.scope
		if err := fn(v); err != nil {
			return nil, err
		}
		after := t.fields(v)
		if *after.id != id || after.scope != scope {
			return nil, fmt.Errorf("sqlite: %s(%d): fn changed the ID or %s", t.updateName, id, t.scopeName)
		}
		*after.revision = rev + 1
		if err := repository.CheckRecordSize(v); err != nil {
			return nil, fmt.Errorf("sqlite: %s(%d): %w", t.updateName, id, err)
		}
		err = s.write(ctx, func(w *writeTx) error {
			var cur int64
			if err := w.queryRow(t.revisionQuery, id).Scan(&cur); err != nil {
				return notFound(err)
			}
			if cur != rev {
				return errConflict
			}
			return t.put(w, v, false)
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
		if t.normalize != nil {
			t.normalize(v)
		}
		return v, nil
	}
}
