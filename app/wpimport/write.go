package wpimport

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/calendar/eventcal/app/apierr"
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
	case rec.term != nil:
		var t *repository.Label
		t, err = r.writeLabel(ctx, rec)
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
	case errors.Is(err, repository.ErrDuplicate), errors.Is(err, repository.ErrNotFound), errors.As(err, new(*calendar.FieldError)),
		refusedByLabels(err):
		kr := r.rep.kind(rec.kind)
		if rec.action == actCreate {
			kr.Created--
		} else {
			kr.Updated--
		}
		var fe *calendar.FieldError
		var ae *apierr.Error
		switch {
		case errors.As(err, &fe):
			r.fail(rec.kind, rec.id, fieldErr(fe.Field, "%s", fe.Problem))
		case errors.As(err, &ae) && ae.Status != 404:
			r.fail(rec.kind, rec.id, refusal(ae))
		default:
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

// writeLabel creates or updates a category or tag through the calendar's
// labels service, as calendar.Operator, keeping the source's ID, slug and
// origin: the service checks it as it checks the API's writes (the
// bounds, the parent, a duplicate name, a parent cycle with the store's
// categories).
func (r *importRun) writeLabel(ctx context.Context, rec *record) (*repository.Label, error) {
	src, lang := rec.term, r.m.lang
	name, slug := src.Name[lang], src.Slug[lang]
	in := &calendar.LabelInput{Name: &name, Slug: &slug, Import: &calendar.LabelImport{ID: rec.id, Origin: src.Origin}}
	if d := src.Description[lang]; strings.TrimSpace(d) != "" {
		in.Description = &d
	}
	if src.Taxonomy == repository.LabelCategory {
		parent := src.Parent
		in.Parent = &parent
	}
	if rec.action == actCreate {
		return r.labels.Create(ctx, calendar.Operator, lang, src.Taxonomy, in)
	}
	return r.labels.Update(ctx, calendar.Operator, lang, src.Taxonomy, rec.id, in)
}

// refusedByLabels reports whether err is the labels service refusing a
// command (an *apierr.Error below 500): the record fails, the run goes on.
func refusedByLabels(err error) bool {
	var ae *apierr.Error
	return errors.As(err, &ae) && ae.Status < 500
}

// refusal is the record failure of a service's refusal: the first
// parameter it names and its message, or the error's message.
func refusal(ae *apierr.Error) error {
	if params, ok := ae.Data["params"].(map[string]string); ok && len(params) > 0 {
		field := slices.Sorted(maps.Keys(params))[0]
		return fieldErr(field, "%s", params[field])
	}
	field := "id"
	if ae.Code == "term_exists" {
		field = "name"
	}
	return fieldErr(field, "%s", ae.Message)
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
				tax := repository.LabelCategory
				if kind == KindTag {
					tax = repository.LabelTag
				}
				if _, _, err = r.labels.Delete(ctx, calendar.Operator, tax, id); isNotFound(err) {
					err = nil
				}
			default:
				// The calendar deletes it for good (a venue or organizer
				// unlinked from every event first).
				var cur *repository.Record
				if cur, err = r.store.GetRecord(ctx, id); err == nil {
					_, err = r.cal.Delete(ctx, calendar.Operator, cur, true)
				}
			}
			if err != nil && !isNotFound(err) {
				return fmt.Errorf("delete %s %d: %w", kind, id, err)
			}
			kr.Deleted++
		}
	}
	return nil
}

// isNotFound reports a record that is not there: the store's ErrNotFound
// or a service's 404.
func isNotFound(err error) bool {
	var ae *apierr.Error
	return errors.Is(err, repository.ErrNotFound) || (errors.As(err, &ae) && ae.Status == 404)
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
