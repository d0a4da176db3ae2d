package meili

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/calendar/eventcal/search"
)

// Attribute names of the Meilisearch documents. search.EventDocument and
// search.PlaceDocument are flattened at this edge: dates stay Unix seconds
// (numbers, so range filters and sorts are numeric), every boolean and list
// is always written (a negative filter must not match a document that
// lacks the field), and nested maps become one attribute per key.
const (
	attrID = "id"
	// attrKey is the primary key of the event indexes: one document per
	// occurrence, search.DocumentKey ("123", "123-20270304T190000": digits,
	// letters and '-', valid Meilisearch document IDs). attrID stays the
	// event (series) ID, filterable and the distinct attribute of
	// CollapseSeries.
	attrKey = "key"
	// attrOccurrence is the occurrence key, written for occurrences only:
	// it breaks the ties of the sort orders between occurrences of one
	// series (a single event is alone with its ID).
	attrOccurrence       = "occurrence"
	attrKind             = "kind"
	attrStatus           = "status"
	attrAuthor           = "author"
	attrPublishDate      = "publish_date"
	attrStart            = "start"
	attrEnd              = "end"
	attrStartLocal       = "start_local"
	attrEndLocal         = "end_local"
	attrAllDay           = "all_day"
	attrFeatured         = "featured"
	attrTicketed         = "ticketed"
	attrSticky           = "sticky"
	attrHideFromListings = "hide_from_listings"
	attrHasPassword      = "has_password"
	attrEventStatus      = "event_status"
	attrCategoryIDs      = "category_ids"
	attrCategorySlugs    = "category_slugs"
	attrTagIDs           = "tag_ids"
	attrTagSlugs         = "tag_slugs"
	attrVenueIDs         = "venue_ids"
	attrOrganizerIDs     = "organizer_ids"
	attrHasGeo           = "has_geo"
	attrParentID         = "parent_id"
	attrHasEvents        = "has_events"
	// attrGeo is Meilisearch's reserved geo attribute, {"lat": …, "lng": …}:
	// https://www.meilisearch.com/docs/learn/filtering_and_sorting/geosearch
	attrGeo = "_geo"
)

// The prefixes of the flattened per-key attributes.
const (
	prefixTitle       = "title_"
	prefixDescription = "description_"
	prefixExcerpt     = "excerpt_"
	prefixField       = "field_"
	prefixLastStart   = "last_start_"
)

// attr builds a flattened attribute name from a prefix and a key (a
// language code, a place field name or a status). Distinct keys always get
// distinct names (see attributeScheme): a-z, 0-9 and '-' are kept, and
// every other character, '_' and upper-case letters included, becomes '_',
// its code point in lower-case hexadecimal, and '_' ("pt-BR" →
// "pt-_42__52_", "pt_br" → "pt_5f_br"). Since '_' only ever starts or ends
// such an escape, the name can be decoded back to the key: no two keys
// share one, and the name is always a plain word in the filter grammar.
// Keys made of a-z, 0-9 and '-' only (every default language, status and
// place field) keep the names of the first scheme.
func attr(prefix, key string) string {
	var b strings.Builder
	b.Grow(len(prefix) + len(key))
	b.WriteString(prefix)
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-':
			b.WriteRune(r)
		case r == utf8.RuneError && size == 1:
			// A byte that is not UTF-8: "_x" and its value, so that two
			// such bytes never share the replacement character's escape.
			b.WriteString("_x")
			b.WriteString(strconv.FormatUint(uint64(key[i]), 16))
			b.WriteByte('_')
		default:
			b.WriteByte('_')
			b.WriteString(strconv.FormatInt(int64(r), 16))
			b.WriteByte('_')
		}
		i += size
	}
	return b.String()
}

// textAttrs are the searchable attributes of one language, in ranking
// order (title, description, excerpt).
func textAttrs(lang string) []string {
	return []string{attr(prefixTitle, lang), attr(prefixDescription, lang), attr(prefixExcerpt, lang)}
}

// Event text (attribute scheme 6). A search document carries each distinct
// text once, not once per configured language: the text of the base
// language (Options.DefaultLanguage, else the first of Options.Languages;
// the document builder resolves every configured language, so that is the
// default language's text, else the record's first language's) in
// title__base, description__base and excerpt__base, and the text of every other
// language L the event has a text of its own in (one that differs from
// the base text in some field, in some occurrence) in title_L,
// description_L and excerpt_L, named in the filterable list attrLangs.
// Every document of one event (every occurrence of a series) names the
// same languages, so a series is never split between the two searches
// below. A language the event lacks is not written: its text is the
// base text (the document builder resolves a missing translation to the
// default language's text, then to the first language's, field by field),
// which is in the base attributes already. So a document's size no longer
// grows with the number of configured languages: a daily series with a
// 200,000-character description written in one language sends that
// description once per occurrence, not once per configured language.
//
// A search with words in the base language is one search of the base
// attributes. A search with words in another language L
// (Engine.runPair) is two searches of the same index, with the same page window: the
// documents that name L searched on L's attributes (filter langs = L), and
// the others on the base attributes (NOT langs = L). They are disjoint,
// and each finds exactly the documents the one search of the earlier
// layout found on L's attributes, which held the same text. The page is
// the first offset+limit hits of each merged in the query's order (sort
// values, or _rankingScore best first for a relevance query) and cut; the
// total and each facet count are the sums of the two exact ones (with
// CollapseSeries each search applies distinct id, and a series is on one
// side only). Both searches are sent as plain searches, not one federated
// multi-search: inside a federation, Meilisearch's queries take no
// page/hitsPerPage, so their counts are not exhaustive and distinct is
// not applied to the total (see collapse.go). A list without words needs
// one search only (the text attributes play no part in it).
const (
	// baseKey follows a text prefix in the base attributes. attr never
	// writes "_b" after a prefix ('_' only ever starts a hexadecimal
	// escape), so no language's attribute is a base attribute.
	baseKey = "_base"
	// attrLangs lists the languages a document's text is written in
	// besides the base text.
	attrLangs = "langs"
)

// baseAttrs are the base text attributes, in ranking order.
var baseAttrs = []string{prefixTitle + baseKey, prefixDescription + baseKey, prefixExcerpt + baseKey}

// baseLanguage is the language whose text the base attributes hold:
// Options.DefaultLanguage, else the first of Options.Languages ("" when
// neither is set: every language is then written as its own).
func (e *core) baseLanguage() string {
	if e.opts.DefaultLanguage != "" {
		return e.opts.DefaultLanguage
	}
	if len(e.opts.Languages) > 0 {
		return e.opts.Languages[0]
	}
	return ""
}

// eventLanguages returns the languages other than base whose text the
// documents of one event carry in attributes of their own (sorted): those
// whose text differs from the base text in some field of some document.
// A document without a base text (the documents of one event normally
// all have the same languages) has each of its languages written as its
// own: it has no base text, and is found in the base language by nothing,
// as before.
func eventLanguages(docs []search.EventDocument, base string) []string {
	var langs []string
	for _, d := range docs {
		bt, hasBase := d.Text[base]
		for l, t := range d.Text {
			if l != base && (!hasBase || t != bt) && !slices.Contains(langs, l) {
				langs = append(langs, l)
			}
		}
	}
	slices.Sort(langs)
	return langs
}

// putEventText writes the text of an event document in the layout of
// scheme 6 (see above): the base text once, the languages of langs each
// once, and the list of those languages.
func putEventText(m map[string]any, text map[string]search.Text, base string, langs []string) {
	if t, ok := text[base]; ok {
		m[baseAttrs[0]], m[baseAttrs[1]], m[baseAttrs[2]] = search.PlainText(t.Title), search.PlainText(t.Description), search.PlainText(t.Excerpt)
	}
	written := []string{}
	for _, l := range langs {
		t, ok := text[l]
		if !ok {
			continue
		}
		a := textAttrs(l)
		m[a[0]], m[a[1]], m[a[2]] = search.PlainText(t.Title), search.PlainText(t.Description), search.PlainText(t.Excerpt)
		written = append(written, l)
	}
	m[attrLangs] = written
}

// eventDocument flattens an event for Meilisearch, without its text
// (putEventText, or putText for indexes of scheme 5 or older, which hold
// the text of every language in d.Text). The engine has made those
// languages searchable before the batch is sent (see Engine.learn).
func eventDocument(d search.EventDocument) map[string]any {
	m := map[string]any{
		attrID:               d.ID,
		attrKey:              d.Key(),
		attrStatus:           d.Status,
		attrAuthor:           d.Author,
		attrPublishDate:      d.PublishDate,
		attrStart:            d.Start,
		attrEnd:              d.End,
		attrStartLocal:       d.StartLocal,
		attrEndLocal:         d.EndLocal,
		attrAllDay:           d.AllDay,
		attrFeatured:         d.Featured,
		attrTicketed:         d.Ticketed,
		attrSticky:           d.Sticky,
		attrHideFromListings: d.HideFromListings,
		attrHasPassword:      d.HasPassword,
		attrEventStatus:      d.EventStatusOf(),
		attrCategoryIDs:      ids(d.CategoryIDs),
		attrCategorySlugs:    strs(d.CategorySlugs),
		attrTagIDs:           ids(d.TagIDs),
		attrTagSlugs:         strs(d.TagSlugs),
		attrVenueIDs:         ids(d.VenueIDs),
		attrOrganizerIDs:     ids(d.OrganizerIDs),
		attrHasGeo:           d.HasGeo,
		attrParentID:         d.ParentID,
	}
	if d.Occurrence != "" {
		m[attrOccurrence] = d.Occurrence
	}
	if d.HasGeo && d.Geo != nil {
		// The internal GeoPoint is converted here, at the edge.
		m[attrGeo] = map[string]float64{"lat": d.Geo.Lat, "lng": d.Geo.Lng}
	}
	return m
}

// placeDocument flattens a venue or organizer. Every status in statuses
// gets a last_start_<status> number (0 when no linked event has it), so
// that the upcoming filter compares numbers that always exist.
func placeDocument(d search.PlaceDocument, statuses []string) map[string]any {
	m := map[string]any{
		attrID:          d.ID,
		attrKind:        string(d.Kind),
		attrStatus:      d.Status,
		attrPublishDate: d.PublishDate,
		attrHasEvents:   d.HasEvents,
	}
	for _, s := range statuses {
		m[attr(prefixLastStart, s)] = d.LastStart[s]
	}
	for name, v := range d.Fields {
		m[attr(prefixField, name)] = search.PlainText(v)
	}
	putText(m, d.Text)
	return m
}

// putText writes the text of every language as plain text
// (search.PlainText): Meilisearch indexes what it is given, and tag names
// and entities must not be words.
func putText(m map[string]any, text map[string]search.Text) {
	for lang, t := range text {
		a := textAttrs(lang)
		m[a[0]], m[a[1]], m[a[2]] = search.PlainText(t.Title), search.PlainText(t.Description), search.PlainText(t.Excerpt)
	}
}

// ids and strs turn a nil list into an empty one, so that the attribute is
// written as [] rather than null.
func ids(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

func strs(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
