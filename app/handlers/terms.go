package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
)

// terms serves the routes of one taxonomy (categories or tags): the
// writes and the single read go through the calendar's terms service.
type terms struct {
	tax        repository.LabelKind
	res        string // "category", "tag"
	collection string // "categories", "tags"
	cfg        *config.Config
	store      repository.Store
	render     *present.Renderer
	svc        *calendar.Labels
}

// termTypes returns the handlers of categories and of tags.
func (s *API) termTypes() (cat, tag *terms) {
	count := func(ctx context.Context, t *repository.Label) (int, error) {
		return termCount(ctx, s.render, s.store, t)
	}
	svc := calendar.NewLabels(calendar.LabelsDeps{Store: s.store, Count: count, Changed: s.render.Counts.Invalidate})
	return &terms{tax: repository.LabelCategory, res: "category", collection: "categories", cfg: s.cfg, store: s.store, render: s.render, svc: svc},
		&terms{tax: repository.LabelTag, res: "tag", collection: "tags", cfg: s.cfg, store: s.store, render: s.render, svc: svc}
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
	if tt.tax == repository.LabelCategory {
		args = append(args, Arg{Name: "parent", Type: tInteger, Check: tt.existingTerms(), Desc: "Children of this category."})
	}
	return args
}

// existingTerms checks that every ID in a list is a term of the taxonomy.
func (tt *terms) existingTerms() func(r *Request, v any) string {
	return func(r *Request, v any) string {
		return existingIDs(r, v, tt.res, tt.store.GetLabels, func(t *repository.Label) bool { return t.Taxonomy == tt.tax })
	}
}

// existingEvent checks that the value is the ID of an event (any status).
func existingEvent(r *Request, v any) string {
	id, ok := input.AsInt(v)
	if !ok || id <= 0 {
		return "Must be an event ID (a whole number of 1 or more), not a slug."
	}
	p, err := r.s.store.GetRecord(r.ctx, id)
	switch {
	case errors.Is(err, repository.ErrNotFound) || (err == nil && p.Kind != repository.KindEvent):
		return fmt.Sprintf("There is no event with ID %d.", id)
	case err != nil:
		r.depErr = err
		return "The store is not available."
	}
	return ""
}

// writeArgs declares the create/update parameters of a term. The checks
// here name every problem of the request's form in one 400 before the
// service runs (which checks them again, for every caller); the HTML
// policy is the service's.
func (tt *terms) writeArgs(create bool) []Arg {
	args := []Arg{
		{Name: "name", Type: tString, Required: create, Check: nonEmptyString, Desc: "Name, in the request language.", MaxLen: limits.MaxTermName},
		{Name: "description", Type: tString, Check: nonEmptyString, Desc: "Description, in the request language.", MaxLen: limits.MaxDescription},
		{Name: "slug", Type: tString, Check: nonEmptyString, Desc: "Slug in the request language; generated from the name when absent.", MaxLen: limits.MaxSlug},
	}
	if tt.tax == repository.LabelCategory {
		args = append(args, Arg{Name: "parent", Type: tInteger, Check: func(r *Request, v any) string {
			if n, _ := input.AsInt(v); n == 0 {
				return ""
			}
			return tt.existingTerms()(r, v)
		}, Desc: "Parent category ID (0 for none)."})
	}
	return args
}

// termInput decodes the validated write parameters into the service's
// command: the fields sent, parent only where the route declares it
// (categories).
func (tt *terms) termInput(r *Request) *calendar.LabelInput {
	in := &calendar.LabelInput{}
	str := func(name string) *string {
		v, ok := r.bag.Get(name)
		if !ok {
			return nil
		}
		s, _ := input.AsString(v)
		return &s
	}
	in.Name, in.Description, in.Slug = str("name"), str("description"), str("slug")
	if v, ok := r.bag.Get("parent"); ok && tt.tax == repository.LabelCategory {
		n, _ := input.AsInt(v)
		in.Parent = &n
	}
	return in
}

// termID is the route's :id (0 when it is not a number: no term has it).
func termID(r *Request) int64 {
	id, _ := strconv.ParseInt(r.c.Params("id"), 10, 64)
	return id
}

// termCount returns the number of published events using a term.
func termCount(ctx context.Context, render *present.Renderer, st repository.Store, t *repository.Label) (int, error) {
	c, err := render.Counts.ForLabels(ctx, st, map[int64]*repository.Label{t.ID: t})
	if err != nil {
		return 0, err
	}
	return c[t.ID], nil
}

// get serves GET /categories/{id} and /tags/{id}.
func (tt *terms) get(r *Request) error {
	t, err := tt.svc.Get(r.ctx, tt.tax, termID(r))
	return tt.reply(r, t, err)
}

// create serves POST on /categories and /tags (201 with Location).
func (tt *terms) create(r *Request) error {
	t, err := tt.svc.Create(r.ctx, r.user, r.lang, tt.tax, tt.termInput(r))
	if err != nil {
		return err
	}
	r.c.Set("Location", tt.render.APIBase(r.lang)+"/"+tt.collection+"/"+strconv.FormatInt(t.ID, 10))
	return present.SendJSON(r.c, 201, tt.render.Label(t, 0, r.lang))
}

// update serves POST/PUT/PATCH on one term.
func (tt *terms) update(r *Request) error {
	t, err := tt.svc.Update(r.ctx, r.user, r.lang, tt.tax, termID(r), tt.termInput(r))
	return tt.reply(r, t, err)
}

// reply answers 200 with t and its count, or the error of the service
// call that returned t.
func (tt *terms) reply(r *Request, t *repository.Label, err error) error {
	if err != nil {
		return err
	}
	n, err := termCount(r.ctx, tt.render, tt.store, t)
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, tt.render.Label(t, n, r.lang))
}

// delete serves DELETE: always permanent; 200 with the term as it was.
func (tt *terms) delete(r *Request) error {
	t, n, err := tt.svc.Delete(r.ctx, r.user, tt.tax, termID(r))
	if err != nil {
		return err
	}
	return present.SendJSON(r.c, 200, tt.render.Label(t, n, r.lang))
}

// maxPerPage caps per_page on every list (50, as the original plugin).
const maxPerPage = limits.MaxPerPage

// list serves GET /categories and /tags from the store (terms are few):
// filters, ordering and paging as WordPress's term lists, links carrying
// every filter (docs/decisions.md, "Reads"), and 200 with an empty list
// past the last page.
func (tt *terms) list(r *Request) error {
	all, err := tt.store.FindLabels(r.ctx, repository.LabelQuery{Taxonomy: tt.tax})
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
		p, err := tt.store.GetRecord(r.ctx, id)
		if err != nil {
			return err
		}
		if p.Event != nil {
			eventTerms = p.Event.Categories
			if tt.tax == repository.LabelTag {
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
	var out []*repository.Label
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
		items = append(items, tt.render.Label(out[i], counts[out[i].ID], r.lang))
	}
	base := tt.render.APIBase(r.lang) + "/" + tt.collection + "/"
	resp := &present.LabelList{Key: tt.collection, Items: items, RestURL: listURL(base, r, int(page)), Total: total, TotalPages: totalPages}
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
func sortTerms(ts []*repository.Label, orderby, order string, include []int64, counts map[int64]int, lang, def string) {
	desc := order != "" && !strings.EqualFold(order, "asc")
	key := strings.ToLower(orderby)
	less := func(a, b *repository.Label) int {
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
