package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// terms serves the routes of one taxonomy (categories or tags).
type terms struct {
	tax        repository.Taxonomy
	res        string // "category", "tag"
	collection string // "categories", "tags"
	cfg        *config.Config
	store      repository.Store
	render     *present.Renderer
}

// termTypes returns the handlers of categories and of tags.
func (s *API) termTypes() (cat, tag *terms) {
	return &terms{tax: repository.TaxCategory, res: "category", collection: "categories", cfg: s.cfg, store: s.store, render: s.render},
		&terms{tax: repository.TaxTag, res: "tag", collection: "tags", cfg: s.cfg, store: s.store, render: s.render}
}

// readArgs declares the parameters of a single term read or delete.
func (tt *terms) readArgs() []Arg { return nil }

// listArgs declares the parameters of GET /categories and /tags.
func (tt *terms) listArgs() []Arg {
	args := []Arg{
		{Name: "page", Type: tInteger, Default: "1", Check: positiveInt, Desc: "Page to return."},
		{Name: "per_page", Type: tInteger, Default: "8", Check: positiveInt, Desc: "Terms per page (at most 50)."},
		{Name: "search", Type: tString, Check: nonEmptyString, Desc: "Terms whose name or slug contains the string.", MaxLen: limits.MaxQueryText},
		{Name: "exclude", Type: tArray, Items: tInteger, Check: tt.existingTerms(), Desc: "Term IDs to leave out.", MaxItems: limits.MaxListItems},
		{Name: "include", Type: tArray, Items: tInteger, Check: tt.existingTerms(), Desc: "Only these term IDs.", MaxItems: limits.MaxListItems},
		{Name: "order", Type: tString, Check: nonEmptyString, Desc: "asc or desc (anything else means desc); default asc."},
		{Name: "orderby", Type: tString, Check: nonEmptyString, Desc: "name (default), id, slug, count, parent, description, include, term_group, none."},
		{Name: "hide_empty", Type: tBoolean, Default: "1", Desc: "Hide terms that no published event uses."},
		{Name: "post", Type: tInteger, Check: existingEvent, Desc: "Terms of this event."},
		{Name: "event", Type: tInteger, Check: existingEvent, Desc: "Alias of post; wins when both are sent."},
		{Name: "slug", Type: tString, Check: nonEmptyString, Desc: "Terms with exactly this slug.", MaxLen: limits.MaxQueryText},
		{Name: "offset", Type: tInteger, Check: nonNegativeInt, Desc: "Skip this many terms (WordPress's offset; wins over page)."},
	}
	if tt.tax == repository.TaxCategory {
		args = append(args, Arg{Name: "parent", Type: tInteger, Check: tt.existingTerms(), Desc: "Children of this category."})
	}
	return args
}

// existingTerms checks that every ID in a list is a term of the taxonomy.
func (tt *terms) existingTerms() func(r *Request, v any) string {
	return func(r *Request, v any) string {
		return existingIDs(r, v, tt.res, tt.store.GetTerms, func(t *repository.Term) bool { return t.Taxonomy == tt.tax })
	}
}

// existingEvent checks that the value is the ID of an event (any status).
func existingEvent(r *Request, v any) string {
	id, ok := input.AsInt(v)
	if !ok || id <= 0 {
		return "Must be an event ID (a whole number of 1 or more), not a slug."
	}
	p, err := r.s.store.GetPost(r.ctx, id)
	switch {
	case errors.Is(err, repository.ErrNotFound) || (err == nil && p.Kind != repository.KindEvent):
		return fmt.Sprintf("There is no event with ID %d.", id)
	case err != nil:
		r.depErr = err
		return "The store is not available."
	}
	return ""
}

// writeArgs declares the create/update parameters of a term.
func (tt *terms) writeArgs(create bool) []Arg {
	args := []Arg{
		{Name: "name", Type: tString, Required: create, Check: nonEmptyString, Desc: "Name, in the request language.", MaxLen: limits.MaxTermName, Text: plainText},
		{Name: "description", Type: tString, Check: nonEmptyString, Desc: "Description, in the request language.", MaxLen: limits.MaxDescription, Text: richText},
		{Name: "slug", Type: tString, Check: nonEmptyString, Desc: "Slug in the request language; generated from the name when absent.", MaxLen: limits.MaxSlug},
	}
	if tt.tax == repository.TaxCategory {
		args = append(args, Arg{Name: "parent", Type: tInteger, Check: func(r *Request, v any) string {
			if n, _ := input.AsInt(v); n == 0 {
				return ""
			}
			return tt.existingTerms()(r, v)
		}, Desc: "Parent category ID (0 for none)."})
	}
	return args
}

// load finds the term a route addresses; another taxonomy's ID is 404.
func (tt *terms) load(r *Request) (*repository.Term, error) {
	id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
	t, err := tt.store.GetTerm(r.ctx, id)
	if errors.Is(err, repository.ErrNotFound) || (err == nil && t.Taxonomy != tt.tax) {
		return nil, apierr.NotFound(tt.res, id)
	}
	return t, err
}

// count returns the number of published events using a term.
func (tt *terms) count(r *Request, t *repository.Term) (int, error) {
	c, err := tt.render.Counts.ForTerms(r.ctx, tt.store, map[int64]*repository.Term{t.ID: t})
	if err != nil {
		return 0, err
	}
	return c[t.ID], nil
}

// get serves GET /categories/{id} and /tags/{id}.
func (tt *terms) get(r *Request) error {
	t, err := tt.load(r)
	if err != nil {
		return err
	}
	n, err := tt.count(r, t)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, tt.render.Term(t, n, r.lang))
}

// create serves POST on /categories and /tags (201 with Location).
func (tt *terms) create(r *Request) error {
	if !access.CanManageTerms(r.user, tt.tax) {
		return access.Forbidden(r.user)
	}
	name := strings.TrimSpace(r.bag.Str("name"))
	parent, _ := input.AsInt(r.bag.Values["parent"])
	t := &repository.Term{Taxonomy: tt.tax}
	// Under the name's lock (linkrules.go): parallel creates of one
	// name make one term, the others get term_exists.
	err := tt.store.Exclusive(r.ctx, nameLockKey("term:"+string(tt.tax), r.lang, name), func(context.Context) error {
		dups, err := tt.store.FindTerms(r.ctx, repository.TermQuery{Taxonomy: tt.tax, Name: name, NameLang: r.lang, Parent: parent, HasParent: true})
		if err != nil {
			return err
		}
		if len(dups) > 0 {
			return apierr.New(400, "term_exists", "A term with the name provided already exists with this parent.").With("term_id", dups[0].ID)
		}
		applyTerm(r, t)
		return tt.store.CreateTerm(r.ctx, t)
	})
	if err != nil {
		return err
	}
	tt.render.Counts.Invalidate(t.ID)
	r.c.Set("Location", tt.render.APIBase(r.lang)+"/"+tt.collection+"/"+strconv.FormatInt(t.ID, 10))
	return present.SendJSON(r.c, 201, tt.render.Term(t, 0, r.lang))
}

// applyTerm writes the sent fields onto a term in the request language.
func applyTerm(r *Request, t *repository.Term) {
	if v, ok := r.bag.Get("name"); ok {
		s, _ := input.AsString(v)
		t.Name.Set(r.lang, strings.TrimSpace(s))
	}
	if v, ok := r.bag.Get("description"); ok {
		s, _ := input.AsString(v)
		t.Description.Set(r.lang, s)
	}
	if v, ok := r.bag.Get("slug"); ok {
		s, _ := input.AsString(v)
		if sl := repository.NormalizeSlug(s); sl != "" {
			t.Slug.Set(r.lang, sl)
		}
	}
	if t.Slug[r.lang] == "" && t.Name.Has(r.lang) {
		t.Slug.Set(r.lang, repository.Slugify(t.Name[r.lang]))
	}
	if len(t.Slug) == 0 {
		t.Slug.Set(r.lang, "term")
	}
	if v, ok := r.bag.Get("parent"); ok && t.Taxonomy == repository.TaxCategory {
		t.Parent, _ = input.AsInt(v)
	}
}

// loadManaged refuses a caller who may not manage the taxonomy's terms,
// then finds the :id term (load).
func (tt *terms) loadManaged(r *Request) (*repository.Term, error) {
	if !access.CanManageTerms(r.user, tt.tax) {
		return nil, access.Forbidden(r.user)
	}
	return tt.load(r)
}

// update serves POST/PUT/PATCH on one term.
func (tt *terms) update(r *Request) error {
	cur, err := tt.loadManaged(r)
	if err != nil {
		return err
	}
	if v, ok := r.bag.Get("parent"); ok {
		if err := tt.checkParent(r, cur, v); err != nil {
			return err
		}
	}
	t, err := tt.store.UpdateTerm(r.ctx, cur.ID, func(t *repository.Term) error {
		applyTerm(r, t)
		return nil
	})
	if errors.Is(err, repository.ErrNotFound) {
		return apierr.NotFound(tt.res, cur.ID)
	}
	if err != nil {
		return err
	}
	tt.render.Counts.Invalidate(t.ID)
	n, err := tt.count(r, t)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, tt.render.Term(t, n, r.lang))
}

// checkParent refuses a parent that is the category itself or one of its
// descendants (a cycle).
func (tt *terms) checkParent(r *Request, t *repository.Term, v any) error {
	p, _ := input.AsInt(v)
	for seen := 0; p != 0 && seen < 1000; seen++ {
		if p == t.ID {
			return apierr.New(400, "rest_term_invalid", "A category cannot be its own ancestor.").With("params", map[string]string{"parent": fmt.Sprintf("parent %d is this category or one of its descendants; choose another category, or 0 for none.", p)})
		}
		pt, err := tt.store.GetTerm(r.ctx, p)
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

// delete serves DELETE: always permanent; 200 with the term as it was.
func (tt *terms) delete(r *Request) error {
	t, err := tt.loadManaged(r)
	if err != nil {
		return err
	}
	n, err := tt.count(r, t)
	if err != nil {
		return err
	}
	if err := tt.store.DeleteTerm(r.ctx, t.ID); errors.Is(err, repository.ErrNotFound) {
		return apierr.NotFound(tt.res, t.ID)
	} else if err != nil {
		return err
	}
	tt.render.Counts.Invalidate(t.ID)
	return present.SendJSON(r.c, 200, tt.render.Term(t, n, r.lang))
}

// maxPerPage caps per_page on every list (50, as the original plugin).
const maxPerPage = limits.MaxPerPage

// list serves GET /categories and /tags from the store (terms are few):
// filters, ordering and paging as WordPress's term lists, links carrying
// every filter (docs/decisions.md, "Reads"), and 200 with an empty list
// past the last page.
func (tt *terms) list(r *Request) error {
	all, err := tt.store.FindTerms(r.ctx, repository.TermQuery{Taxonomy: tt.tax})
	if err != nil {
		return err
	}
	counts, err := tt.render.Counts.All(r.ctx, tt.store, tt.tax)
	if err != nil {
		return err
	}
	b := r.bag
	def := tt.cfg.DefaultLanguage
	var include, exclude, eventTerms []int64
	if v, ok := b.Get("include"); ok {
		include, _ = input.AsIntList(v)
	}
	if v, ok := b.Get("exclude"); ok {
		exclude, _ = input.AsIntList(v)
	}
	postVal, hasPost := b.Get("post")
	if v, ok := b.Get("event"); ok {
		postVal, hasPost = v, true
	}
	if hasPost {
		id, _ := input.AsInt(postVal)
		p, err := tt.store.GetPost(r.ctx, id)
		if err != nil {
			return err
		}
		if p.Event != nil {
			eventTerms = p.Event.Categories
			if tt.tax == repository.TaxTag {
				eventTerms = p.Event.Tags
			}
		}
		if eventTerms == nil {
			eventTerms = []int64{}
		}
	}
	hideEmpty, _ := input.AsBool(b.Values["hide_empty"])
	search := strings.ToLower(b.Str("search"))
	slug := b.Str("slug")
	parentVal, hasParent := b.Get("parent")
	parent, _ := input.AsInt(parentVal)
	var out []*repository.Term
	if input.SearchMatchesNothing(search) {
		all = nil
	}
	for _, t := range all {
		switch {
		case include != nil && !contains(include, t.ID),
			contains(exclude, t.ID),
			eventTerms != nil && !contains(eventTerms, t.ID),
			hideEmpty && counts[t.ID] == 0,
			hasParent && t.Parent != parent,
			slug != "" && t.Slug.Get(r.lang, def, tt.cfg.Languages...) != slug && t.Slug[def] != slug,
			search != "" && !strings.Contains(strings.ToLower(t.Name.Get(r.lang, def, tt.cfg.Languages...)), search) && !strings.Contains(strings.ToLower(t.Slug.Get(r.lang, def, tt.cfg.Languages...)), search):
			continue
		}
		out = append(out, t)
	}
	sortTerms(out, b.Str("orderby"), b.Str("order"), include, counts, r.lang, def)
	page, _ := input.AsInt(b.Values["page"])
	perPage, _ := input.AsInt(b.Values["per_page"])
	if perPage > maxPerPage {
		perPage = maxPerPage
	}
	total := len(out)
	totalPages := (total + int(perPage) - 1) / int(perPage)
	from := limits.Offset(page, perPage)
	if v, ok := b.Get("offset"); ok {
		off, _ := input.AsInt(v)
		from = int(min(off, limits.MaxOffset))
	}
	items := []any{}
	for i := from; i < total && i < from+int(perPage); i++ {
		items = append(items, tt.render.Term(out[i], counts[out[i].ID], r.lang))
	}
	base := tt.render.APIBase(r.lang) + "/" + tt.collection + "/"
	resp := &present.TermList{Key: tt.collection, Items: items, RestURL: listURL(base, r, int(page)), Total: total, TotalPages: totalPages}
	if int(page) < totalPages {
		resp.NextRestURL = listURL(base, r, int(page)+1)
	}
	if page > 1 && int(page)-1 <= totalPages && total > 0 {
		resp.PreviousRestURL = listURL(base, r, int(page)-1)
	}
	return present.SendList(r.c, resp)
}

// listURL rebuilds a list address carrying every parameter the client sent
// (docs/decisions.md, "Reads"), URL-encoded, with page last (page 1
// omitted).
func listURL(base string, r *Request, page int) string {
	q := url.Values{}
	for k, v := range r.c.Queries() {
		if k == "page" || k == "_method" {
			continue
		}
		q.Set(strings.Clone(k), strings.Clone(v))
	}
	enc := q.Encode()
	if page > 1 {
		if enc != "" {
			enc += "&"
		}
		enc += "page=" + strconv.Itoa(page)
	}
	if enc == "" {
		return base
	}
	return base + "?" + enc
}

// sortTerms orders terms as WordPress's orderby/order do; ties go by ID.
func sortTerms(ts []*repository.Term, orderby, order string, include []int64, counts map[int64]int, lang, def string) {
	desc := order != "" && !strings.EqualFold(order, "asc")
	key := strings.ToLower(orderby)
	less := func(a, b *repository.Term) int {
		switch key {
		case "id", "term_id", "term_taxonomy_id":
			return cmpInt(a.ID, b.ID)
		case "slug":
			return strings.Compare(a.Slug.Get(lang, def), b.Slug.Get(lang, def))
		case "count":
			return cmpInt(int64(counts[a.ID]), int64(counts[b.ID]))
		case "parent":
			return cmpInt(a.Parent, b.Parent)
		case "description":
			return strings.Compare(a.Description.Get(lang, def), b.Description.Get(lang, def))
		case "include":
			return cmpInt(int64(indexOf(include, a.ID)), int64(indexOf(include, b.ID)))
		case "none", "term_group", "term_order", "taxonomy":
			return 0
		default:
			return strings.Compare(strings.ToLower(a.Name.Get(lang, def)), strings.ToLower(b.Name.Get(lang, def)))
		}
	}
	sort.SliceStable(ts, func(i, j int) bool {
		c := less(ts[i], ts[j])
		if c == 0 {
			c = cmpInt(ts[i].ID, ts[j].ID)
		}
		if desc {
			return c > 0
		}
		return c < 0
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func indexOf(list []int64, v int64) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return len(list)
}
