package calendar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/htmlpolicy"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// LabelsDeps are what the categories and tags service uses.
type LabelsDeps struct {
	Store repository.Store
	// Count returns how many published events use a term, as a response
	// shows it (the renderer's cached count). Delete reads it before the
	// term goes; nil counts 0.
	Count func(ctx context.Context, t *repository.Label) (int, error)
	// Changed is told the IDs of the terms a write created, changed or
	// deleted (the renderer's term counts forget them); may be nil.
	Changed func(ids ...int64)
}

// Labels creates, updates, deletes and reads categories and tags. Every
// write takes a TermInput the caller decoded once, checks all of it (the
// field rules, the parent, the caller's permission, the record it
// addresses, a duplicate name) and only then writes, once: a refused
// command leaves the store as it was. It is safe for concurrent use.
type Labels struct {
	store   repository.Store
	count   func(ctx context.Context, t *repository.Label) (int, error)
	changed func(ids ...int64)
}

// NewLabels returns the service; Store must be set.
func NewLabels(d LabelsDeps) *Labels {
	return &Labels{store: d.Store, count: d.Count, changed: d.Changed}
}

// LabelInput is a create or (partial) update of a category or tag: a nil
// field was not sent and is left as it is. Text is in the command's
// language, as the caller received it (the service trims the name and
// applies the HTML policy of the writer's role).
type LabelInput struct {
	// Name is required on create.
	Name *string
	// Description may hold HTML (filtered as an event description).
	Description *string
	// Slug is normalised; one that normalises to nothing is ignored (the
	// slug then comes from the name). It is made unique by the store.
	Slug *string
	// Parent is the parent category's ID, 0 for none; categories only.
	Parent *int64
	// Import is set by an importer (the system: by nil or Operator):
	// see LabelImport.
	Import *LabelImport
}

// LabelImport is what an importer adds to a label command. A create
// makes the label under ID; an update replaces the label's text in every
// language by the command's (the source is the label's truth) and keeps
// its ID and revision. Either way the slug is kept as sent (the importer
// chose it; the store still makes it unique) and Origin stamps the label.
// Every other rule of the command holds: the field bounds, the parent
// (a category that exists, no cycle), a duplicate name on create.
type LabelImport struct {
	// ID is the label's ID: from 1 to repository.MaxExplicitID.
	ID     int64
	Origin *repository.Origin
}

// termNoun is the word of a taxonomy in messages and error codes.
func termNoun(tax repository.LabelKind) string {
	if tax == repository.LabelTag {
		return "tag"
	}
	return "category"
}

// Get returns the term id of tax; a term of the other taxonomy, or none,
// is 404 (rest-category-not-found, rest-tag-not-found).
func (s *Labels) Get(ctx context.Context, tax repository.LabelKind, id int64) (*repository.Label, error) {
	t, err := s.store.GetLabel(ctx, id)
	if errors.Is(err, repository.ErrNotFound) || (err == nil && t.Taxonomy != tax) {
		return nil, apierr.NotFound(termNoun(tax), id)
	}
	return t, err
}

// Create makes a category or tag from in, written by by in lang (by nil
// or Operator is the system: no permission check, no HTML policy). In order it
// refuses: the fields (400 rest_missing_callback_param or
// rest_invalid_param naming every problem, the parent looked up), a
// caller who may not manage the taxonomy's terms (401/403), and, under
// the name's lock, a term of that name with that parent (400 term_exists
// with its term_id); then it creates the term. Parallel creates of one
// name make one term; the others get term_exists. An import (in.Import,
// from the system only: 403 otherwise) is checked alike and keeps its ID,
// slug and origin (LabelImport).
func (s *Labels) Create(ctx context.Context, by *repository.User, lang string, tax repository.LabelKind, in *LabelInput) (*repository.Label, error) {
	if err := s.checkFields(ctx, tax, in, true); err != nil {
		return nil, err
	}
	if err := mayImport(by, in); err != nil {
		return nil, err
	}
	if err := mayManage(by, tax); err != nil {
		return nil, err
	}
	in = filtered(by, in)
	name := strings.TrimSpace(*in.Name)
	var parent int64
	if in.Parent != nil {
		parent = *in.Parent
	}
	t := &repository.Label{Taxonomy: tax}
	if in.Import != nil {
		t.ID = in.Import.ID
	}
	err := s.store.Exclusive(ctx, termLockKey(tax, lang, name), func(context.Context) error {
		dups, err := s.store.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax, Name: name, NameLang: lang, Parent: parent, HasParent: true})
		if err != nil {
			return err
		}
		if len(dups) > 0 {
			return apierr.New(400, "term_exists", "A term with the name provided already exists with this parent.").With("term_id", dups[0].ID)
		}
		applyTermInput(in, lang, t)
		return s.store.CreateLabel(ctx, t)
	})
	if err != nil {
		return nil, err
	}
	s.changedTerms(t.ID)
	return t, nil
}

// Update changes the term id of tax with the fields in sets, written by by
// in lang. In order it refuses: the fields (as Create, none required), a
// caller who may not manage the taxonomy's terms, a term that is not
// there (404), and a parent that is the category itself or one of its
// descendants (400 rest_term_invalid); then it writes the term once. An
// import (in.Import, from the system only, naming id) replaces the
// term's text (LabelImport).
func (s *Labels) Update(ctx context.Context, by *repository.User, lang string, tax repository.LabelKind, id int64, in *LabelInput) (*repository.Label, error) {
	if err := s.checkFields(ctx, tax, in, false); err != nil {
		return nil, err
	}
	if in.Import != nil && in.Import.ID != id {
		return nil, apierr.InvalidValue("id", fmt.Sprintf("Must be %d, the ID of the category or tag updated.", id), in.Import.ID)
	}
	if err := mayImport(by, in); err != nil {
		return nil, err
	}
	if err := mayManage(by, tax); err != nil {
		return nil, err
	}
	cur, err := s.Get(ctx, tax, id)
	if err != nil {
		return nil, err
	}
	if in.Parent != nil {
		if err := s.checkAncestry(ctx, cur.ID, *in.Parent); err != nil {
			return nil, err
		}
	}
	in = filtered(by, in)
	t, err := s.store.UpdateLabel(ctx, cur.ID, func(t *repository.Label) error {
		if in.Import != nil {
			*t = repository.Label{ID: t.ID, Taxonomy: t.Taxonomy, Parent: t.Parent, Revision: t.Revision}
		}
		applyTermInput(in, lang, t)
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return nil, apierr.NotFound(termNoun(tax), cur.ID)
	}
	if err != nil {
		return nil, err
	}
	s.changedTerms(t.ID)
	return t, nil
}

// Delete removes the term id of tax permanently (events lose it, child
// categories move up to its parent), by by. It refuses a caller who may
// not manage the taxonomy's terms, then a term that is not there (404).
// It returns the term as it was and its count of published events just
// before (TermsDeps.Count).
func (s *Labels) Delete(ctx context.Context, by *repository.User, tax repository.LabelKind, id int64) (*repository.Label, int, error) {
	if err := mayManage(by, tax); err != nil {
		return nil, 0, err
	}
	t, err := s.Get(ctx, tax, id)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	if s.count != nil {
		if n, err = s.count(ctx, t); err != nil {
			return nil, 0, err
		}
	}
	if err := s.store.DeleteLabel(ctx, t.ID); errors.Is(err, repository.ErrNotFound) {
		return nil, 0, apierr.NotFound(termNoun(tax), t.ID)
	} else if err != nil {
		return nil, 0, err
	}
	s.changedTerms(t.ID)
	return t, n, nil
}

// mayManage refuses a writer who may not manage the taxonomy's terms
// (401 anonymous, 403 others); nil is the system and may.
func mayManage(by *repository.User, tax repository.LabelKind) error {
	if by != nil && !access.CanManageLabels(by, tax) {
		return access.Forbidden(by)
	}
	return nil
}

// mayImport refuses an import command from anyone but the system (nil
// or Operator): 403 (401 anonymous).
func mayImport(by *repository.User, in *LabelInput) error {
	if in.Import != nil && by != nil && by != Operator {
		return access.Forbidden(by)
	}
	return nil
}

// changedTerms tells Changed about written terms.
func (s *Labels) changedTerms(ids ...int64) {
	if s.changed != nil {
		s.changed(ids...)
	}
}

// checkFields checks the fields of in as the routes declare them, with the
// same messages: a missing name on create; a name, description or slug
// that is blank or too long; a parent on a tag; a parent that is not a
// category. Every problem is named in one error.
func (s *Labels) checkFields(ctx context.Context, tax repository.LabelKind, in *LabelInput, create bool) error {
	var p apierr.Params
	if create && in.Name == nil {
		p.Missing("name")
		return p.Err()
	}
	text := func(name string, v *string, maxLen int) {
		if v == nil {
			return
		}
		if n := utf8.RuneCountInString(*v); n > maxLen {
			p.Invalid(name, fmt.Sprintf("%s must be at most %d characters long; received %d.", name, maxLen, n))
		} else if strings.TrimSpace(*v) == "" {
			p.InvalidValue(name, "Must be a non-empty string.", *v)
		}
	}
	text("name", in.Name, limits.MaxTermName)
	text("description", in.Description, limits.MaxDescription)
	text("slug", in.Slug, limits.MaxSlug)
	if in.Import != nil {
		if id := in.Import.ID; id < 1 || id > repository.MaxExplicitID {
			p.InvalidValue("id", fmt.Sprintf("Must be from 1 to %d.", repository.MaxExplicitID), id)
		}
	}
	if in.Parent != nil {
		switch id := *in.Parent; {
		case tax != repository.LabelCategory:
			p.InvalidValue("parent", "Must be absent: only categories have a parent.", id)
		case id < 0:
			p.InvalidValue("parent", fmt.Sprintf("Must be category IDs (whole numbers of 1 or more), not slugs or names: %s is not an ID.",
				strconv.Quote(strconv.FormatInt(id, 10))), id)
		case id > 0:
			found, err := s.store.GetLabels(ctx, []int64{id})
			if err != nil {
				return err
			}
			if t, ok := found[id]; !ok || t.Taxonomy != repository.LabelCategory {
				p.InvalidValue("parent", fmt.Sprintf("There is no category with ID %d.", id), id)
			}
		}
	}
	return p.Err()
}

// maxAncestry bounds the walk up a category's parents.
const maxAncestry = 1000

// checkAncestry refuses parent when it is the category id itself or one of
// its descendants (a cycle), walking up from parent.
func (s *Labels) checkAncestry(ctx context.Context, id, parent int64) error {
	p := parent
	for seen := 0; p != 0 && seen < maxAncestry; seen++ {
		if p == id {
			return apierr.New(400, "rest_term_invalid", "A category cannot be its own ancestor.").With("params", map[string]string{"parent": fmt.Sprintf("parent %d is this category or one of its descendants; choose another category, or 0 for none.", p)})
		}
		pt, err := s.store.GetLabel(ctx, p)
		if errors.Is(err, repository.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		p = pt.Parent
	}
	return nil
}

// filtered returns in with the HTML policy of by's role applied to its
// text: the name as plain text, the description as an event description.
// Writers with unfiltered_html, and the system (nil), store text as sent.
func filtered(by *repository.User, in *LabelInput) *LabelInput {
	if by == nil || access.CanUnfilteredHTML(by) {
		return in
	}
	out := *in
	if in.Name != nil {
		s := htmlpolicy.Plain(*in.Name)
		out.Name = &s
	}
	if in.Description != nil {
		s := htmlpolicy.Rich(*in.Description)
		out.Description = &s
	}
	return &out
}

// applyTermInput writes the sent fields onto t in lang: the name trimmed,
// the slug normalised (or made from the name when the language has none;
// "term" when no language has one), the parent on categories.
func applyTermInput(in *LabelInput, lang string, t *repository.Label) {
	if in.Name != nil {
		t.Name.Set(lang, strings.TrimSpace(*in.Name))
	}
	if in.Description != nil {
		t.Description.Set(lang, *in.Description)
	}
	if in.Slug != nil {
		sl := repository.NormalizeSlug(*in.Slug)
		if in.Import != nil {
			sl = strings.TrimSpace(*in.Slug)
		}
		if sl != "" {
			t.Slug.Set(lang, sl)
		}
	}
	if t.Slug[lang] == "" && t.Name.Has(lang) {
		t.Slug.Set(lang, repository.Slugify(t.Name[lang]))
	}
	if len(t.Slug) == 0 {
		t.Slug.Set(lang, "term")
	}
	if in.Parent != nil && t.Taxonomy == repository.LabelCategory {
		t.Parent = *in.Parent
	}
	if in.Import != nil && in.Import.Origin != nil {
		o := *in.Import.Origin
		t.Origin = &o
	}
}

// termLockKey is the Store.Exclusive key of a term name in a taxonomy and
// language ("term:<taxonomy>:<lang>:<hash>"): the name case-folded and
// hashed, which keeps keys short whatever its length. An event write that
// creates a term by name takes the same key, so parallel writes naming
// one new term create one.
func termLockKey(tax repository.LabelKind, lang, name string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(name))))
	return "term:" + string(tax) + ":" + lang + ":" + hex.EncodeToString(sum[:16])
}
