package calendar

import (
	"context"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/repository"
)

// The categories and tags of event writes. Naming a term that does not
// exist creates it only for actors who may manage terms of that taxonomy
// (categories: author and up; tags: editor and up); others get 403
// rest_cannot_create and nothing is written.

// termRef is one resolved category or tag item: an existing term's ID, or
// the name of a term to create.
type termRef struct {
	id   int64
	name string
}

// lookupTerms resolves term items without writing: ID items must be
// existing terms of tax (unknown ones are dropped), looked up in one
// batch; other items are looked up by slug, then name, in the command's
// language and the default one (indexed look-ups). A name found nowhere
// becomes a termRef to create, which needs the right to manage terms of
// tax: 403 otherwise.
func (o *op) lookupTerms(tax repository.LabelKind, items []LabelItem) ([]termRef, error) {
	var ids []int64
	for _, it := range items {
		if it.IsID {
			ids = append(ids, it.ID)
		}
	}
	found, err := o.s.store.GetLabels(o.ctx, ids)
	if err != nil {
		return nil, err
	}
	refs := []termRef{}
	newNames := map[string]bool{}
	for _, it := range items {
		if it.IsID {
			if t := found[it.ID]; t != nil && t.Taxonomy == tax {
				refs = append(refs, termRef{id: it.ID})
			}
			continue
		}
		name := strings.TrimSpace(it.Name)
		if name == "" {
			continue
		}
		t, err := o.findTerm(tax, name)
		if err != nil {
			return nil, err
		}
		if t != nil {
			refs = append(refs, termRef{id: t.ID})
			continue
		}
		if !access.CanManageLabels(o.user, tax) {
			// Refused at the first unknown name: a command naming
			// thousands of new terms costs one look-up, not thousands.
			return nil, errCannotCreateTerm(tax)
		}
		if key := strings.ToLower(name); !newNames[key] {
			newNames[key] = true
			refs = append(refs, termRef{name: name})
		}
	}
	return refs, nil
}

// errCannotCreateTerm is the 403 for naming a new term without the right
// to create terms of tax.
func errCannotCreateTerm(tax repository.LabelKind) error {
	coll := "categories"
	if tax == repository.LabelTag {
		coll = "tags"
	}
	return apierr.New(403, "rest_cannot_create", "Sorry, you are not allowed to create terms in this taxonomy; use existing "+coll+".")
}

// createTerms turns refs into term IDs, creating the named terms. Each
// creation looks the name up again under the name's lock: a parallel
// write may have created it since lookupTerms.
func (o *op) createTerms(tax repository.LabelKind, refs []termRef, made *[]madeRecord) ([]int64, error) {
	ids := []int64{}
	for _, ref := range refs {
		id := ref.id
		if ref.name != "" {
			err := o.s.store.Exclusive(o.ctx, NameLockKey("term:"+string(tax), o.lang, ref.name), func(context.Context) error {
				t, err := o.findTerm(tax, ref.name)
				if err != nil {
					return err
				}
				if t == nil {
					t = &repository.Label{Taxonomy: tax}
					t.Name.Set(o.lang, ref.name)
					t.Slug.Set(o.lang, repository.Slugify(ref.name))
					if err := o.s.store.CreateLabel(o.ctx, t); err != nil {
						return err
					}
					*made = append(*made, madeRecord{term: t.ID, tax: tax})
				}
				id = t.ID
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		if !contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// findTerm finds a term by slug or name in the command's or the default
// language.
func (o *op) findTerm(tax repository.LabelKind, s string) (*repository.Label, error) {
	langs := []string{o.lang}
	if o.lang != o.s.cfg.DefaultLanguage {
		langs = append(langs, o.s.cfg.DefaultLanguage)
	}
	for _, l := range langs {
		ts, err := o.s.store.FindLabels(o.ctx, repository.LabelQuery{Taxonomy: tax, Slug: s, SlugLang: l})
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			return ts[0], nil
		}
		ts, err = o.s.store.FindLabels(o.ctx, repository.LabelQuery{Taxonomy: tax, Name: s, NameLang: l})
		if err != nil {
			return nil, err
		}
		if len(ts) > 0 {
			return ts[0], nil
		}
	}
	return nil, nil
}

// LookupLabel finds a category or tag by slug, then name, in lang and then
// the default language (nil when none has it): how event writes and event
// list filters resolve a term named by its slug or name.
func (s *Service) LookupLabel(ctx context.Context, tax repository.LabelKind, lang, ref string) (*repository.Label, error) {
	return s.with(ctx, nil, lang).findTerm(tax, ref)
}
