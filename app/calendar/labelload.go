package calendar

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// Whole labels: a portable load (package app/portable) carries each
// category and tag whole, in every language, with its ID, parent,
// revision and origin, as the exporting store held it. The labels
// service writes it as it writes an import (LabelImport), every
// language at once.

// CheckLoaded applies the label rules to a whole label as a load
// carries it, reading nothing from the store: an ID from 1 to
// repository.MaxExplicitID, a known taxonomy, a name in at least one
// language, every language's name, description and slug within the
// API's bounds and not blank, and no parent on a tag. The parent's
// existence is checked by Load.
func CheckLoaded(t *repository.Label) error {
	if t.ID < 1 || t.ID > repository.MaxExplicitID {
		return &FieldError{Field: "id", Problem: fmt.Sprintf("must be from 1 to %d", repository.MaxExplicitID)}
	}
	switch t.Taxonomy {
	case repository.LabelCategory:
	case repository.LabelTag:
		if t.Parent != 0 {
			return &FieldError{Field: "parent", Problem: "a tag has no parent"}
		}
	default:
		return &FieldError{Field: "taxonomy", Problem: fmt.Sprintf("%q is not category or tag", t.Taxonomy)}
	}
	if t.Parent < 0 {
		return &FieldError{Field: "parent", Problem: "must be a category ID or 0"}
	}
	if t.Parent == t.ID {
		return &FieldError{Field: "parent", Problem: "a category cannot be its own parent"}
	}
	if len(t.Name) == 0 {
		return &FieldError{Field: "name", Problem: "a label has a name in at least one language"}
	}
	for _, f := range []struct {
		name string
		text repository.Text
		max  int
	}{{"name", t.Name, limits.MaxTermName}, {"description", t.Description, limits.MaxDescription}, {"slug", t.Slug, limits.MaxSlug}} {
		for lang, v := range f.text {
			if n := utf8.RuneCountInString(v); n > f.max {
				return &FieldError{Field: f.name + "." + lang, Problem: fmt.Sprintf("%d characters, at most %d", n, f.max)}
			}
			if strings.TrimSpace(v) == "" {
				return &FieldError{Field: f.name + "." + lang, Problem: "blank"}
			}
		}
	}
	return nil
}

// Load writes a whole label (CheckLoaded first) as the system: created
// under its ID keeping its revision, or with replace put in place of the
// stored label of that ID (the store's revision kept for its
// compare-and-swap). The parent must be a category the store holds (400
// rest_invalid_param) and, on replace, not the label itself or one of
// its descendants (400 rest_term_invalid). As an update of a label's
// name, a load does not refuse a name another label has. The store
// errors of a taken or vanished ID (repository.ErrDuplicate,
// repository.ErrNotFound) are returned as they are. It returns the
// label as stored.
func (s *Labels) Load(ctx context.Context, t *repository.Label, replace bool) (*repository.Label, error) {
	if err := CheckLoaded(t); err != nil {
		return nil, err
	}
	if t.Parent != 0 {
		found, err := s.store.GetLabels(ctx, []int64{t.Parent})
		if err != nil {
			return nil, err
		}
		if p, ok := found[t.Parent]; !ok || p.Taxonomy != repository.LabelCategory {
			return nil, apierr.InvalidValue("parent", fmt.Sprintf("There is no category with ID %d.", t.Parent), t.Parent)
		}
		if replace {
			if err := s.checkAncestry(ctx, t.ID, t.Parent); err != nil {
				return nil, err
			}
		}
	}
	c := cloneLabel(t)
	c.NameKeys = nil
	if !replace {
		if err := s.store.CreateLabel(ctx, c); err != nil {
			return nil, err
		}
		s.changedTerms(c.ID)
		return c, nil
	}
	stored, err := s.store.UpdateLabel(ctx, t.ID, func(q *repository.Label) error {
		if q.Taxonomy != t.Taxonomy {
			return fmt.Errorf("label %d is a %s, not a %s: %w", t.ID, q.Taxonomy, t.Taxonomy, errTaxonomyChanged)
		}
		rev := q.Revision
		*q = *cloneLabel(t)
		q.NameKeys, q.Revision = nil, rev
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.changedTerms(stored.ID)
	return stored, nil
}

// errTaxonomyChanged refuses a load that would turn a category into a
// tag or back.
var errTaxonomyChanged = errors.New("a load does not change a label's taxonomy")

// cloneLabel returns a deep copy of t.
func cloneLabel(t *repository.Label) *repository.Label {
	c := *t
	c.Name, c.Description, c.Slug = t.Name.Clone(), t.Description.Clone(), t.Slug.Clone()
	if t.Origin != nil {
		o := *t.Origin
		c.Origin = &o
	}
	return &c
}
