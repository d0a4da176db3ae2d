package wpimport

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// write creates and updates the records, kind by kind in write order,
// categories parents first, each kind in ID order (so that a run and
// its restart assign taken slugs alike).
func (r *importRun) write(ctx context.Context) error {
	for _, kind := range kinds {
		var todo []*record
		for _, id := range sortedKeys(r.recs[kind]) {
			if rec := r.recs[kind][id]; rec.action != actNone {
				todo = append(todo, rec)
			}
		}
		if kind == KindCategory {
			slices.SortStableFunc(todo, func(a, b *record) int { return a.depth - b.depth })
		}
		if len(todo) == 0 {
			continue
		}
		r.progress.Start("write "+plural(kind), len(todo))
		for _, rec := range todo {
			if err := r.writeOne(ctx, rec); err != nil {
				r.progress.Finish()
				return err
			}
			r.progress.Add(1)
		}
		r.progress.Finish()
		r.log.Info("written", "kind", kind, "records", len(todo))
	}
	return nil
}

// writeOne creates or updates one record. A store failure stops the run
// (a restart resumes it); an ID taken meanwhile fails the record.
func (r *importRun) writeOne(ctx context.Context, rec *record) error {
	var err error
	var slugs repository.Text
	want := rec.slug(r.m.lang)
	switch {
	case rec.term != nil && rec.action == actCreate:
		t := cloneTerm(rec.term)
		err = r.store.CreateLabel(ctx, t)
		slugs = t.Slug
	case rec.term != nil:
		var t *repository.Label
		t, err = r.store.UpdateLabel(ctx, rec.id, func(t *repository.Label) error {
			rev := t.Revision
			*t = *cloneTerm(rec.term)
			t.Revision = rev
			return nil
		})
		if t != nil {
			slugs = t.Slug
		}
	default:
		var p *repository.Record
		p, err = r.cal.Import(ctx, rec.post, rec.action != actCreate)
		if p != nil {
			slugs = p.Slug
		}
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, repository.ErrDuplicate), errors.Is(err, repository.ErrNotFound), errors.As(err, new(*calendar.FieldError)):
		kr := r.rep.kind(rec.kind)
		if rec.action == actCreate {
			kr.Created--
		} else {
			kr.Updated--
		}
		var fe *calendar.FieldError
		if errors.As(err, &fe) {
			r.fail(rec.kind, rec.id, fieldErr(fe.Field, "%s", fe.Problem))
		} else {
			r.fail(rec.kind, rec.id, fieldErr("id", "another record took or removed this ID during the import: %v", err))
		}
		return nil
	default:
		return fmt.Errorf("write %s %d: %w", rec.kind, rec.id, err)
	}
	if got := slugs[r.m.lang]; want != "" && got != want {
		r.rep.warnf("%s %d: slug %s is taken by another record here; stored as %s", rec.kind, rec.id, shown(want), shown(got))
	}
	return nil
}

// slug is the record's slug in lang.
func (rec *record) slug(lang string) string {
	if rec.term != nil {
		return rec.term.Slug[lang]
	}
	return rec.post.Slug[lang]
}

// prune deletes the records that disappeared from the source, events
// first and categories last (children before parents).
func (r *importRun) prune(ctx context.Context) error {
	for i := len(kinds) - 1; i >= 0; i-- {
		kind := kinds[i]
		kr := r.rep.kind(kind)
		ids := slices.Clone(kr.Disappeared)
		if kind == KindCategory {
			slices.Reverse(ids) // children have larger IDs as a rule; DeleteTerm moves others up
		}
		for _, id := range ids {
			var err error
			switch kind {
			case KindCategory, KindTag:
				err = r.store.DeleteLabel(ctx, id)
			case KindVenue, KindOrganizer:
				if _, err = r.store.UnlinkRecord(ctx, id); err == nil {
					err = r.store.DeleteRecord(ctx, id)
				}
			default:
				err = r.store.DeleteRecord(ctx, id)
			}
			if err != nil && !errors.Is(err, repository.ErrNotFound) {
				return fmt.Errorf("delete %s %d: %w", kind, id, err)
			}
			kr.Deleted++
		}
	}
	return nil
}

func cloneTerm(t *repository.Label) *repository.Label {
	c := *t
	c.Name, c.Description, c.Slug = t.Name.Clone(), t.Description.Clone(), t.Slug.Clone()
	if t.Origin != nil {
		o := *t.Origin
		c.Origin = &o
	}
	return &c
}

func sortedKeys[V any](m map[int64]V) []int64 {
	return slices.Sorted(maps.Keys(m))
}

// plural names a kind's records in the progress display ("categories").
func plural(kind string) string {
	if kind == KindCategory {
		return "categories"
	}
	return kind + "s"
}
