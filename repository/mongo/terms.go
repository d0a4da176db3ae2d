package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/calendar/eventcal/repository"
)

// labelStore is the label part of repository.Store (categories and tags;
// the terms collection). It reaches the records through recordStore, to
// remove a deleted label from the events.
type labelStore struct {
	*conn
	recordStore
}

// termOps adapts the shared write path to terms.
func (s *labelStore) termOps() itemOps[repository.Label] {
	return itemOps[repository.Label]{
		scope:   repository.MarkTerm,
		seq:     seqTerm,
		coll:    s.terms,
		id:      func(t *repository.Label) *int64 { return &t.ID },
		rev:     func(t *repository.Label) *int64 { return &t.Revision },
		slugs:   func(t *repository.Label) *repository.Text { return &t.Slug },
		space:   func(t *repository.Label) slugSpace { return s.termSlugs(t.Taxonomy) },
		prepare: func(t *repository.Label) { t.NameKeys = termNameKeys(t.Name) },
		fix:     func(t *repository.Label) { t.NameKeys = nil },
		pin: func(t, old *repository.Label) {
			t.ID, t.Taxonomy = old.ID, old.Taxonomy
		},
	}
}

// CreateLabel assigns t.ID (when 0), makes its slugs unique for its taxonomy,
// stores it and records an index mark. t is updated in place.
func (s *labelStore) CreateLabel(ctx context.Context, t *repository.Label) error {
	defer func() { t.NameKeys = nil }()
	return createItem(ctx, s.conn, s.termOps(), t)
}

// GetLabel returns the term with this ID or ErrNotFound.
func (s *labelStore) GetLabel(ctx context.Context, id int64) (*repository.Label, error) {
	var t repository.Label
	if err := getItem(ctx, s.conn, s.termOps(), id, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// GetLabels returns the terms that exist among ids, keyed by ID.
func (s *labelStore) GetLabels(ctx context.Context, ids []int64) (map[int64]*repository.Label, error) {
	return getItems(ctx, s.conn, s.termOps(), ids)
}

// FindLabels returns the terms matching q, by ID ascending.
func (s *labelStore) FindLabels(ctx context.Context, q repository.LabelQuery) ([]*repository.Label, error) {
	f := bson.D{}
	if q.Taxonomy != "" {
		f = append(f, bson.E{Key: "taxonomy", Value: q.Taxonomy})
	}
	if len(q.IDs) > 0 {
		f = append(f, bson.E{Key: s.idField(), Value: bson.D{{Key: "$in", Value: q.IDs}}})
	}
	if q.Name != "" {
		if !validFieldName(q.NameLang) {
			return []*repository.Label{}, nil
		}
		// The indexed name_keys, not a case-insensitive regex on
		// name.<lang>, which would scan the taxonomy.
		f = append(f, bson.E{Key: "name_keys", Value: termNameKey(q.NameLang, q.Name)})
	}
	if q.Slug != "" {
		if !validFieldName(q.SlugLang) {
			return []*repository.Label{}, nil
		}
		// The slug's reservation names its owner: _id look-ups instead
		// of a scan of slug.<lang>.
		taxes := []repository.LabelKind{q.Taxonomy}
		if q.Taxonomy == "" {
			taxes = []repository.LabelKind{repository.LabelCategory, repository.LabelTag}
		}
		owners := []int64{}
		for _, tax := range taxes {
			id, err := s.slugOwner(ctx, s.termSlugs(tax), q.SlugLang, q.Slug)
			if errors.Is(err, repository.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			owners = append(owners, id)
		}
		return s.termsBySlugOwners(ctx, q, owners)
	}
	if q.HasParent {
		f = append(f, bson.E{Key: "parent", Value: q.Parent})
	}
	return findItems(ctx, s.termOps(), f, options.Find().SetSort(bson.D{{Key: s.idField(), Value: 1}}).SetBatchSize(oneReply))
}

// termsBySlugOwners answers FindTerms for a query with a slug: the owners
// of its reservations are read by ID (look-ups on FerretDB, where a filter
// on slug.<lang> decodes every term) and the query's conditions are
// checked here, the slug among them (a reservation may be a leftover).
func (s *labelStore) termsBySlugOwners(ctx context.Context, q repository.LabelQuery, owners []int64) ([]*repository.Label, error) {
	byID, err := getItems(ctx, s.conn, s.termOps(), owners)
	if err != nil {
		return nil, err
	}
	out := []*repository.Label{}
	for _, t := range byID {
		switch {
		case t.Slug[q.SlugLang] != q.Slug,
			q.Taxonomy != "" && t.Taxonomy != q.Taxonomy,
			len(q.IDs) > 0 && !slices.Contains(q.IDs, t.ID),
			q.Name != "" && !slices.Contains(termNameKeys(t.Name), termNameKey(q.NameLang, q.Name)),
			q.HasParent && t.Parent != q.Parent:
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *repository.Label) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// UpdateLabel reads the term, calls fn on it and stores the result with the
// next revision, making changed slugs unique again.
func (s *labelStore) UpdateLabel(ctx context.Context, id int64, fn func(t *repository.Label) error) (*repository.Label, error) {
	t, _, err := updateItem(ctx, s.conn, s.termOps(), id, func(t *repository.Label) (bool, error) {
		return true, fn(t)
	})
	if err != nil {
		return nil, err
	}
	t.NameKeys = nil
	return t, nil
}

// DeleteLabel removes the term permanently, removes it from every event and
// moves its child categories up to its parent, recording index marks for
// everything it changes.
//
// Without transactions the steps are ordered for repair: references are
// removed before the term (a failed call leaves the term in place, so it can
// be retried) and once more after it, for events that linked the term while
// it was being deleted.
func (s *labelStore) DeleteLabel(ctx context.Context, id int64) error {
	t, err := s.GetLabel(ctx, id)
	if err != nil {
		return err
	}
	if err := s.unlinkTerm(ctx, id); err != nil {
		return err
	}
	if err := s.reparentChildren(ctx, id, t.Parent); err != nil {
		return err
	}
	gone, err := deleteItem(ctx, s.conn, s.termOps(), id)
	if err != nil {
		return err
	}
	if err := s.unlinkTerm(ctx, id); err != nil {
		return err
	}
	return s.reparentChildren(ctx, id, gone.Parent)
}

// unlinkTerm removes term id from the categories and tags of every event.
func (s *labelStore) unlinkTerm(ctx context.Context, id int64) error {
	// Categories and tags share the term sequence: search both lists.
	filter := bson.D{
		{Key: "kind", Value: repository.KindEvent},
		{Key: "$or", Value: bson.A{
			bson.D{{Key: "event.categories", Value: id}},
			bson.D{{Key: "event.tags", Value: id}},
		}},
	}
	_, err := s.editEvents(ctx, filter, func(e *repository.EventFields) bool {
		a, b := removeID(&e.Categories, id), removeID(&e.Tags, id)
		return a || b
	})
	return err
}

// reparentChildren moves the children of term id to parent.
func (s *labelStore) reparentChildren(ctx context.Context, id, parent int64) error {
	children, err := findItems(ctx, s.termOps(), bson.D{{Key: "parent", Value: id}},
		options.Find().SetProjection(bson.D{{Key: fieldID, Value: 1}}))
	if err != nil {
		return err
	}
	for _, c := range children {
		_, _, err := updateItem(ctx, s.conn, s.termOps(), c.ID, func(t *repository.Label) (bool, error) {
			if t.Parent != id {
				return false, nil
			}
			t.Parent = parent
			return true, nil
		})
		if err != nil && !errors.Is(err, repository.ErrNotFound) {
			return err
		}
	}
	return nil
}

// LabelCounts returns, for each term of tax used by at least one published
// event, how many published events use it.
//
// The counting happens here rather than in an $unwind/$group aggregation:
// FerretDB v1 groups by a dotted path such as "$event.tags" wrongly (every
// event lands in one null group). Only the one list is fetched per event.
func (s *labelStore) LabelCounts(ctx context.Context, tax repository.LabelKind) (map[int64]int, error) {
	var field string
	switch tax {
	case repository.LabelCategory:
		field = "categories"
	case repository.LabelTag:
		field = "tags"
	default:
		return nil, fmt.Errorf("mongo: term counts: unknown taxonomy %q", tax)
	}
	cur, err := s.posts.Find(ctx,
		bson.D{{Key: "kind", Value: repository.KindEvent}, {Key: "status", Value: repository.StatusPublish}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "event." + field, Value: 1}}).SetBatchSize(oneReply),
	)
	if err != nil {
		return nil, fmt.Errorf("mongo: term counts: %w", err)
	}
	defer cur.Close(ctx)
	counts := map[int64]int{}
	for cur.Next(ctx) {
		var p repository.Record
		if err := cur.Decode(&p); err != nil {
			return nil, fmt.Errorf("mongo: term counts: %w", err)
		}
		if p.Event == nil {
			continue
		}
		ids := p.Event.Categories
		if tax == repository.LabelTag {
			ids = p.Event.Tags
		}
		seen := map[int64]bool{}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				counts[id]++
			}
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("mongo: term counts: %w", err)
	}
	// Keep only existing terms of tax (an event may still list a term that
	// is being deleted).
	if len(counts) > 0 {
		ids := make([]int64, 0, len(counts))
		for id := range counts {
			ids = append(ids, id)
		}
		terms, err := findItems(ctx, s.termOps(),
			bson.D{{Key: s.idField(), Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "taxonomy", Value: tax}},
			options.Find().SetProjection(bson.D{{Key: fieldID, Value: 1}}))
		if err != nil {
			return nil, err
		}
		exists := make(map[int64]bool, len(terms))
		for _, t := range terms {
			exists[t.ID] = true
		}
		for id := range counts {
			if !exists[id] {
				delete(counts, id)
			}
		}
	}
	return counts, nil
}

// termNameKey is the name_keys entry of name in lang: the language, a colon
// and the name with ASCII letters lower-cased (the case folding of the
// Name filter, as in the SQLite engine).
func termNameKey(lang, name string) string {
	return lang + ":" + strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// termNameKeys returns the name_keys of a term's names.
func termNameKeys(names repository.Text) []string {
	var keys []string
	for _, lang := range slices.Sorted(maps.Keys(names)) {
		if names[lang] != "" {
			keys = append(keys, termNameKey(lang, names[lang]))
		}
	}
	return keys
}

// backfillNameKeys writes name_keys into terms stored before the name
// index existed. The revision filter leaves alone a term that a writer
// changed meanwhile (its write set the keys already).
func (s *labelStore) backfillNameKeys(ctx context.Context) error {
	cur, err := s.terms.Find(ctx, bson.D{{Key: "name_keys", Value: bson.D{{Key: "$exists", Value: false}}}})
	if err != nil {
		return fmt.Errorf("mongo: backfill term names: %w", err)
	}
	defer cur.Close(ctx)
	var terms []repository.Label
	for cur.Next(ctx) {
		var t repository.Label
		if err := decodeItem(cur.Current, &t); err != nil {
			return fmt.Errorf("mongo: backfill term names: %w", err)
		}
		terms = append(terms, t)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("mongo: backfill term names: %w", err)
	}
	for _, t := range terms {
		keys := termNameKeys(t.Name)
		if keys == nil {
			keys = []string{}
		}
		if _, err := s.terms.UpdateOne(ctx, bson.D{{Key: "_id", Value: s.key(t.ID)}, {Key: "revision", Value: t.Revision}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "name_keys", Value: keys}}}}); err != nil {
			return fmt.Errorf("mongo: backfill term names: %w", err)
		}
	}
	return nil
}
