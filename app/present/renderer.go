package present

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Renderer turns records into the API's JSON shapes. It holds what every
// shape needs (the settings, the store for linked records) and the caches
// of linked records, renderings and term counts. One Renderer serves every
// request; it is safe for concurrent use. The venue and organizer shapes
// are declared on placeRenderer (place.go), which Renderer embeds
// (holding the Renderer back).
type Renderer struct {
	placeRenderer

	cfg   *config.Config
	store repository.Store
	// siteHost is SITE_URL without its scheme, for global_id.
	siteHost string
	links    linkedRecords
	// Counts keeps term counts between renders; writes Invalidate the
	// counts of the terms they touch.
	Counts LabelCounts
	// Expansions keeps series' expansions between reads (nil: every read
	// expands); the occurrence routes and feeds read through it.
	Expansions *recurrence.Cache
}

// NewRenderer returns a Renderer. generation is the write generation
// (every write route moves it, and so does every write to the search
// index, whoever made it; the linked-record cache starts over and kept
// term counts are taken again then); recordTTL bounds how long linked
// records are reused and countTTL how long term counts are (0: 2 s;
// negative: never).
func NewRenderer(cfg *config.Config, store repository.Store, generation func() int64, recordTTL, countTTL time.Duration) *Renderer {
	rn := &Renderer{cfg: cfg, store: store, links: linkedRecords{gen: generation, ttl: recordTTL}}
	rn.placeRenderer = placeRenderer{rn}
	rn.Counts.ttl, rn.Counts.gen = countTTL, generation
	if u, err := url.Parse(cfg.SiteURL); err == nil {
		rn.siteHost = u.Host + strings.TrimSuffix(u.Path, "/")
	}
	return rn
}

// View says how an item is rendered.
type View struct {
	// Lang is the language of the returned content.
	Lang string
	// Single adds json_ld (single-item reads); lists and writes leave it out.
	Single bool
}

// Linked holds what rendering a set of posts needs besides the posts.
type Linked struct {
	posts  map[int64]*repository.Record
	terms  map[int64]*repository.Label
	counts map[repository.LabelKind]map[int64]int
}

// fetchLinked fetches the venues, organizers, images and terms of posts,
// whatever their status. Renderers never call it: they get what a reader
// may see from LinkedFor, the one place that decides it.
func (rn *Renderer) fetchLinked(ctx context.Context, posts []*repository.Record) (*Linked, error) {
	var postIDs, termIDs []int64
	for _, p := range posts {
		if p.ImageID != 0 {
			postIDs = append(postIDs, p.ImageID)
		}
		if e := p.Event; e != nil {
			postIDs = append(postIDs, e.Venues...)
			postIDs = append(postIDs, e.Organizers...)
			termIDs = append(termIDs, e.Categories...)
			termIDs = append(termIDs, e.Tags...)
		}
	}
	l := &Linked{posts: map[int64]*repository.Record{}, terms: map[int64]*repository.Label{}, counts: map[repository.LabelKind]map[int64]int{}}
	if len(postIDs) > 0 {
		m, err := rn.Records(ctx, postIDs)
		if err != nil {
			return nil, err
		}
		l.posts = m
		// images of linked venues and organizers
		var more []int64
		for _, p := range m {
			if p.ImageID != 0 && m[p.ImageID] == nil {
				more = append(more, p.ImageID)
			}
		}
		if len(more) > 0 {
			imgs, err := rn.Records(ctx, more)
			if err != nil {
				return nil, err
			}
			for id, p := range imgs {
				l.posts[id] = p
			}
		}
	}
	if len(termIDs) > 0 {
		m, err := rn.linkedTerms(ctx, termIDs)
		if err != nil {
			return nil, err
		}
		l.terms = m
		counts, err := rn.Counts.ForLabels(ctx, rn.store, m)
		if err != nil {
			return nil, err
		}
		for id, n := range counts {
			tax := m[id].Taxonomy
			if l.counts[tax] == nil {
				l.counts[tax] = map[int64]int{}
			}
			l.counts[tax][id] = n
		}
	}
	return l, nil
}

// LinkedFor fetches what posts link to and leaves out every linked record
// access.SeesLinked hides from u, so no renderer can embed it. It is the only
// caller of fetchLinked: every output format gets its linked records here
// (TestOnlyLinkedForFetchesLinks keeps it so).
func (rn *Renderer) LinkedFor(ctx context.Context, u *repository.User, posts []*repository.Record) (*Linked, error) {
	l, err := rn.fetchLinked(ctx, posts)
	if err != nil {
		return nil, err
	}
	for id, p := range l.posts {
		if !access.SeesLinked(u, p) {
			delete(l.posts, id)
		}
	}
	return l, nil
}

// TECShaped reports whether the renderer serves The Events Calendar's own
// root (TEC_COMPAT, or a drop-in API_NAMESPACE): its responses then have
// the original's fields that this service's root leaves out (image
// sizes, json_ld performer).
func (rn *Renderer) TECShaped() bool { return rn.cfg.APIRoot() == config.TECRoot }

// APIBase is the absolute API root for links, with the language prefix
// when the language is not the default one.
func (rn *Renderer) APIBase(lang string) string {
	prefix := ""
	if lang != "" && lang != rn.cfg.DefaultLanguage {
		prefix = "/" + lang
	}
	return rn.cfg.SiteURL + prefix + rn.cfg.APIRoot()
}

// siteBase is the site URL for permalinks, with the language prefix.
func (rn *Renderer) siteBase(lang string) string {
	if lang != "" && lang != rn.cfg.DefaultLanguage {
		return rn.cfg.SiteURL + "/" + lang
	}
	return rn.cfg.SiteURL
}

// textLang returns the language a record's text is shown in: the requested
// one when the record has a translation in it, else the default language,
// else the record's first language (repository.Text.Get's fallback).
func (rn *Renderer) textLang(primary repository.Text, lang string) string {
	switch {
	case primary.Has(lang):
		return lang
	case primary.Has(rn.cfg.DefaultLanguage):
		return rn.cfg.DefaultLanguage
	}
	if first := primary.First(rn.cfg.Languages...); first != "" {
		return first
	}
	return rn.cfg.DefaultLanguage
}

// translations lists the languages a record has text in, in LANGUAGES order.
func (rn *Renderer) translations(texts ...repository.Text) []string {
	out := []string{}
	for _, l := range rn.cfg.Languages {
		for _, t := range texts {
			if t.Has(l) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// globalID is "<site host><path>?id=<id>".
func (rn *Renderer) globalID(id int64) string {
	return rn.siteHost + "?id=" + strconv.FormatInt(id, 10)
}

// permalink is the public URL of a post.
func (rn *Renderer) permalink(p *repository.Record, lang string) string {
	sl := p.Slug.Get(lang, rn.cfg.DefaultLanguage, rn.cfg.Languages...)
	return rn.siteBase(lang) + "/" + string(p.Kind) + "/" + sl + "/"
}
