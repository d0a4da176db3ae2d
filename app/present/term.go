package present

import (
	"strconv"

	"github.com/calendar/eventcal/repository"
)

// taxonomyName is the WordPress taxonomy name clients of the original expect.
func taxonomyName(tax repository.Taxonomy) string {
	if tax == repository.TaxCategory {
		return "tribe_events_cat"
	}
	return "post_tag"
}

// TermCollection is the route segment of a taxonomy.
func TermCollection(tax repository.Taxonomy) string {
	if tax == repository.TaxCategory {
		return "categories"
	}
	return "tags"
}

// termURLs is {self, collection, up?}.
func (rn *Renderer) termURLs(t *repository.Term, lang string) *Obj {
	base := rn.APIBase(lang) + "/" + TermCollection(t.Taxonomy)
	o := NewObjN(3).Add("self", base+"/"+strconv.FormatInt(t.ID, 10)).Add("collection", base)
	if t.Parent != 0 {
		o.Add("up", base+"/"+strconv.FormatInt(t.Parent, 10))
	}
	return o
}

// renderEmbeddedTerms renders the terms of an event in the shape the
// original plugin embeds them in events: WordPress's raw term (name, slug,
// term_group, term_taxonomy_id, taxonomy, description, parent, count,
// filter), then id and urls.
func (rn *Renderer) renderEmbeddedTerms(ids []int64, l *Linked, lang string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		t := l.terms[id]
		if t == nil {
			continue
		}
		count := l.counts[t.Taxonomy][t.ID]
		k := renderedKey{id: t.ID, lang: lang, kind: renderedTerm}
		out = append(out, rn.links.rendered(k, t, nil, count, func() *Obj { return rn.renderEmbeddedTerm(t, count, lang).Freeze() }))
	}
	return out
}

// renderEmbeddedTerm renders one term of an event.
func (rn *Renderer) renderEmbeddedTerm(t *repository.Term, count int, lang string) *Obj {
	def := rn.cfg.DefaultLanguage
	o := NewObjN(13)
	o.Add("name", t.Name.Get(lang, def, rn.cfg.Languages...))
	o.Add("slug", t.Slug.Get(lang, def, rn.cfg.Languages...))
	o.Add("term_group", 0)
	o.Add("term_taxonomy_id", t.ID)
	o.Add("taxonomy", taxonomyName(t.Taxonomy))
	o.Add("description", t.Description.Get(lang, def, rn.cfg.Languages...))
	o.Add("parent", t.Parent)
	o.Add("count", count)
	o.Add("filter", "raw")
	o.Add("id", t.ID)
	o.Add("urls", rn.termURLs(t, lang))
	o.Add("language", rn.textLang(t.Name, lang))
	o.Add("translations", rn.translations(t.Name, t.Description))
	return o
}

// Term renders a term as /categories and /tags do (WordPress's REST term
// with link renamed url, then urls: not the shape embedded in events).
func (rn *Renderer) Term(t *repository.Term, count int, lang string) *Obj {
	def := rn.cfg.DefaultLanguage
	o := NewObj()
	o.Set("id", t.ID)
	o.Set("count", count)
	o.Set("description", t.Description.Get(lang, def, rn.cfg.Languages...))
	o.Set("name", t.Name.Get(lang, def, rn.cfg.Languages...))
	o.Set("slug", t.Slug.Get(lang, def, rn.cfg.Languages...))
	o.Set("taxonomy", taxonomyName(t.Taxonomy))
	if t.Taxonomy == repository.TaxCategory {
		o.Set("parent", t.Parent)
	}
	o.Set("meta", []any{})
	seg := "tag"
	if t.Taxonomy == repository.TaxCategory {
		seg = "events/category"
	}
	o.Set("url", rn.siteBase(lang)+"/"+seg+"/"+t.Slug.Get(lang, def, rn.cfg.Languages...)+"/")
	o.Set("urls", rn.termURLs(t, lang))
	o.Set("language", rn.textLang(t.Name, lang))
	o.Set("translations", rn.translations(t.Name, t.Description))
	return o
}
