package present

import (
	"bytes"
	"strconv"

	"github.com/calendar/eventcal/repository"
)

// taxonomyName is the WordPress taxonomy name clients of the original expect.
func taxonomyName(tax repository.LabelKind) string {
	if tax == repository.LabelCategory {
		return "tribe_events_cat"
	}
	return "post_tag"
}

// LabelCollection is the route segment of a taxonomy.
func LabelCollection(tax repository.LabelKind) string {
	if tax == repository.LabelCategory {
		return "categories"
	}
	return "tags"
}

// LabelURLs is a term's urls: self, collection, and up for a child.
type LabelURLs struct {
	Self       string
	Collection string
	Up         string // omitted when empty
}

func (u *LabelURLs) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("self", u.Self)
	w.str("collection", u.Collection)
	w.strSet("up", u.Up)
	return w.close()
}

// MarshalJSON writes the urls.
func (u *LabelURLs) MarshalJSON() ([]byte, error) { return marshal(u) }

// termURLs is {self, collection, up?}.
func (rn *Renderer) termURLs(t *repository.Label, lang string) LabelURLs {
	base := rn.APIBase(lang) + "/" + LabelCollection(t.Taxonomy)
	u := LabelURLs{Self: base + "/" + strconv.FormatInt(t.ID, 10), Collection: base}
	if t.Parent != 0 {
		u.Up = base + "/" + strconv.FormatInt(t.Parent, 10)
	}
	return u
}

// EmbeddedLabel is a term in the shape the original plugin embeds it in
// events: WordPress's raw term (name, slug, term_group, term_taxonomy_id,
// taxonomy, description, parent, count, filter), then id and urls.
type EmbeddedLabel struct {
	Name           string
	Slug           string
	TermTaxonomyID int64
	Taxonomy       string
	Description    string
	Parent         int64
	Count          int
	ID             int64
	URLs           LabelURLs
	Language       string
	Translations   []string
	frozen
}

func (t *EmbeddedLabel) writeJSON(buf *bytes.Buffer) error {
	if t == nil {
		buf.WriteString("null")
		return nil
	}
	if t.enc != nil {
		buf.Write(t.enc)
		return nil
	}
	w := openObj(buf)
	w.str("name", t.Name)
	w.str("slug", t.Slug)
	w.raw("term_group", "0")
	w.int("term_taxonomy_id", t.TermTaxonomyID)
	w.str("taxonomy", t.Taxonomy)
	w.str("description", t.Description)
	w.int("parent", t.Parent)
	w.int("count", int64(t.Count))
	w.raw("filter", `"raw"`)
	w.int("id", t.ID)
	w.typed("urls", &t.URLs)
	w.str("language", t.Language)
	w.strs("translations", t.Translations)
	return w.close()
}

// MarshalJSON writes the term.
func (t *EmbeddedLabel) MarshalJSON() ([]byte, error) { return marshal(t) }

// renderEmbeddedTerms renders the terms of an event, reused from the
// linked-record cache (linkcache.go).
func (rn *Renderer) renderEmbeddedTerms(ids []int64, l *Linked, lang string) []*EmbeddedLabel {
	out := make([]*EmbeddedLabel, 0, len(ids))
	for _, id := range ids {
		t := l.terms[id]
		if t == nil {
			continue
		}
		count := l.counts[t.Taxonomy][t.ID]
		k := renderedKey{id: t.ID, lang: lang, kind: renderedTerm}
		out = append(out, rendered(&rn.links, k, t, nil, count, func() *EmbeddedLabel {
			e := rn.renderEmbeddedTerm(t, count, lang)
			e.enc = freezeEnc(e)
			return e
		}))
	}
	return out
}

// renderEmbeddedTerm renders one term of an event.
func (rn *Renderer) renderEmbeddedTerm(t *repository.Label, count int, lang string) *EmbeddedLabel {
	def := rn.cfg.DefaultLanguage
	return &EmbeddedLabel{
		Name:           t.Name.Get(lang, def, rn.cfg.Languages...),
		Slug:           t.Slug.Get(lang, def, rn.cfg.Languages...),
		TermTaxonomyID: t.ID,
		Taxonomy:       taxonomyName(t.Taxonomy),
		Description:    t.Description.Get(lang, def, rn.cfg.Languages...),
		Parent:         t.Parent,
		Count:          count,
		ID:             t.ID,
		URLs:           rn.termURLs(t, lang),
		Language:       rn.textLang(t.Name, lang),
		Translations:   rn.translations(t.Name, t.Description),
	}
}

// Label is a term as /categories and /tags render it (WordPress's REST
// term with link renamed url, then urls: not the shape embedded in
// events).
type Label struct {
	ID          int64
	Count       int
	Description string
	Name        string
	Slug        string
	Taxonomy    string
	// Parent is set for categories only (tags have no parent field).
	Parent       *int64
	URL          string
	URLs         LabelURLs
	Language     string
	Translations []string
}

func (t *Label) writeJSON(buf *bytes.Buffer) error {
	if t == nil {
		buf.WriteString("null")
		return nil
	}
	w := openObj(buf)
	w.int("id", t.ID)
	w.int("count", int64(t.Count))
	w.str("description", t.Description)
	w.str("name", t.Name)
	w.str("slug", t.Slug)
	w.str("taxonomy", t.Taxonomy)
	if t.Parent != nil {
		w.int("parent", *t.Parent)
	}
	w.raw("meta", "[]")
	w.str("url", t.URL)
	w.typed("urls", &t.URLs)
	w.str("language", t.Language)
	w.strs("translations", t.Translations)
	return w.close()
}

// MarshalJSON writes the term.
func (t *Label) MarshalJSON() ([]byte, error) { return marshal(t) }

// Label renders a term as /categories and /tags do.
func (rn *Renderer) Label(t *repository.Label, count int, lang string) *Label {
	def := rn.cfg.DefaultLanguage
	slug := t.Slug.Get(lang, def, rn.cfg.Languages...)
	o := &Label{
		ID:           t.ID,
		Count:        count,
		Description:  t.Description.Get(lang, def, rn.cfg.Languages...),
		Name:         t.Name.Get(lang, def, rn.cfg.Languages...),
		Slug:         slug,
		Taxonomy:     taxonomyName(t.Taxonomy),
		URLs:         rn.termURLs(t, lang),
		Language:     rn.textLang(t.Name, lang),
		Translations: rn.translations(t.Name, t.Description),
	}
	seg := "tag"
	if t.Taxonomy == repository.LabelCategory {
		parent := t.Parent
		o.Parent, seg = &parent, "events/category"
	}
	o.URL = rn.siteBase(lang) + "/" + seg + "/" + slug + "/"
	return o
}
