package meili

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meilisearch/meilisearch-go"

	"github.com/calendar/eventcal/search"
)

// Index names one of the engine's indexes; the index UID is the
// engine's prefix followed by this name (calendar_events, …).
type Index string

// The engine's indexes.
const (
	EventIndex Index = "events"
	// EventHiddenIndex is the editor index: it holds the events of every
	// status, publish included (hidden.go; before attribute scheme 5,
	// every status but publish).
	EventHiddenIndex Index = "events_hidden"
	VenueIndex       Index = "venues"
	OrganizerIndex   Index = "organizers"
)

// indexes lists every Index, in the order Init reconciles them.
var indexes = []Index{EventIndex, EventHiddenIndex, VenueIndex, OrganizerIndex}

// indexOf maps a place kind to its index.
func indexOf(kind search.PlaceKind) (Index, error) {
	switch kind {
	case search.Venues:
		return VenueIndex, nil
	case search.Organizers:
		return OrganizerIndex, nil
	}
	return "", fmt.Errorf("meili: unknown place kind %q", kind)
}

// Default vocabulary (see Options).
var (
	// defaultStatuses are the registered post statuses
	// (repository.Statuses); each gets a last_start_<status> attribute.
	defaultStatuses = []string{"publish", "future", "draft", "pending", "private", "trash"}
	// defaultVenueFields and defaultOrganizerFields are the Fields named in
	// search.PlaceDocument's documentation.
	defaultVenueFields     = []string{"address", "city", "province", "state", "stateprovince", "zip", "phone"}
	defaultOrganizerFields = []string{"phone", "email", "website"}
)

// vocabulary is the open-ended part of the schema: the languages, place
// fields and event statuses that have their own attributes. It starts from
// Options and grows when a document brings a new key (Engine.learn), so a
// document's text is never silently unsearchable.
type vocabulary struct {
	languages       []string
	venueFields     []string
	organizerFields []string
	statuses        []string
}

// union returns v extended with the keys of o it lacks, and whether it
// grew. The original slices are never modified.
func (v vocabulary) union(o vocabulary) (vocabulary, bool) {
	grew := false
	add := func(dst, src []string) []string {
		for _, s := range src {
			if s != "" && !slices.Contains(dst, s) {
				dst = append(slices.Clip(dst), s)
				grew = true
			}
		}
		return dst
	}
	v.languages = add(v.languages, o.languages)
	v.venueFields = add(v.venueFields, o.venueFields)
	v.organizerFields = add(v.organizerFields, o.organizerFields)
	v.statuses = add(v.statuses, o.statuses)
	return v, grew
}

// fieldsOf returns the place fields of an index.
func (v vocabulary) fieldsOf(ix Index) []string {
	if ix == VenueIndex {
		return v.venueFields
	}
	return v.organizerFields
}

// maxTotalHits is the pagination.maxTotalHits of every index. Meilisearch
// never returns, and never counts, more than maxTotalHits matches (default
// 1000: a calendar with more events than that would report wrong totals and
// empty deep pages). 1,000,000 is far above the calendar's size; raising it
// costs nothing for queries that match fewer documents.
// https://www.meilisearch.com/docs/reference/api/settings/update-pagination
const maxTotalHits = 1_000_000

// rankingRules puts "sort" FIRST. Meilisearch applies ranking rules in
// order and each later rule only breaks ties of the earlier ones; the
// default order is words, typo, proximity, attribute, sort, exactness, in
// which a text query would reorder results by relevance and the requested
// date order would only break relevance ties. Calendar lists are ordered
// by date (start or publish date, then ID) whatever the text query, as the
// search contract's reference semantics and the Bleve engine do, so sort
// must decide first; the relevance rules after it never matter because every
// sort ends with the unique id.
// https://www.meilisearch.com/docs/learn/relevancy/ranking_rules
// https://www.meilisearch.com/docs/learn/filtering_and_sorting/sort_search_results
var rankingRules = []string{"sort", "words", "typo", "proximity", "attribute", "exactness"}

// settingsFor declares the settings of one index from the vocabulary: the
// single place where filterable, sortable and searchable attributes,
// ranking rules and text matching are written down. Init and EnsureIndex
// reconcile the live index with it.
func settingsFor(ix Index, v vocabulary) *meilisearch.Settings {
	var searchable, filterable, sortable []string
	for _, lang := range v.languages {
		searchable = append(searchable, textAttrs(lang)...)
	}
	switch ix {
	case EventIndex, EventHiddenIndex:
		// The base text first (documents.go): the attribute ranking rule
		// compares positions within the attributes a search names, which
		// are one language's or the base ones, each in title,
		// description, excerpt order.
		searchable = append(slices.Clone(baseAttrs), searchable...)
		filterable = []string{
			attrID, attrKey, attrStatus, attrStart, attrEnd,
			attrCategoryIDs, attrTagIDs, attrVenueIDs, attrOrganizerIDs,
			attrFeatured, attrTicketed, attrHasGeo, attrGeo, attrParentID,
			attrHideFromListings, attrHasPassword, attrGen, attrLangs, attrEventStatus,
		}
		sortable = []string{attrStart, attrPublishDate, attrID, attrOccurrence}
	default:
		for _, f := range v.fieldsOf(ix) {
			searchable = append(searchable, attr(prefixField, f))
		}
		filterable = []string{attrID, attrStatus, attrHasEvents}
		for _, s := range v.statuses {
			filterable = append(filterable, attr(prefixLastStart, s))
		}
		sortable = []string{attrPublishDate, attrID}
	}
	if len(searchable) == 0 {
		// No language known yet: leave the default ("*"); text queries
		// return nothing until a language is learned (see textSearch).
		searchable = []string{"*"}
	}
	prefixSearch := "indexingTime"
	return &meilisearch.Settings{
		RankingRules:         rankingRules,
		SearchableAttributes: uniq(searchable),
		FilterableAttributes: uniq(filterable),
		SortableAttributes:   sortable,
		// Typo tolerance by the contract's rules (search/text.go), which
		// are Meilisearch's defaults written out: one typo from
		// search.MinWordSizeOneTypo characters, two from
		// search.MinWordSizeTwoTypos; disableOnNumbers: a document word
		// made of digits (and ASCII punctuation) is reached without typos
		// only (search.ExactWord).
		// The client always sends the whole object.
		TypoTolerance: &meilisearch.TypoTolerance{
			Enabled:             true,
			MinWordSizeForTypos: meilisearch.MinWordSizeForTypos{OneTypo: search.MinWordSizeOneTypo, TwoTypos: search.MinWordSizeTwoTypos},
			DisableOnWords:      []string{},
			DisableOnAttributes: []string{},
			DisableOnNumbers:    true,
		},
		Pagination: &meilisearch.Pagination{MaxTotalHits: maxTotalHits},
		// Facet counts are exact only when every value is returned:
		// maxValuesPerFacet (default 100) caps the values per facet.
		Faceting: &meilisearch.Faceting{
			MaxValuesPerFacet: maxTotalHits,
			SortFacetValuesBy: map[string]meilisearch.SortFacetType{"*": meilisearch.SortFacetTypeAlpha},
		},
		// Prefix search on the last query word (the contract's "jaz" finds
		// "jazz"), computed at indexing time (the default, written out).
		// https://www.meilisearch.com/docs/capabilities/full_text_search/how_to/configure_prefix_search
		PrefixSearch: &prefixSearch,
		// searchCutoffMs (default 1500) stops a search that runs longer
		// and returns the documents ranked so far: a page in the wrong
		// order, with a wrong total. The cutoff is set far above any
		// request timeout, so a slow server fails the request rather than
		// answering wrongly.
		SearchCutoffMs: searchCutoffMs,
	}
}

// searchCutoffMs is the searchCutoffMs of every index (see settingsFor).
const searchCutoffMs = 60_000

// mergeSettings returns want extended with what live already has, so that
// reconciling never shrinks an index another process relies on (a replica
// that learned another language or field, or runs another version, goes on
// finding its words and filtering on its attributes). The searchable,
// filterable and sortable attributes are the union, live's first in live's
// order, so that processes with different vocabularies converge on one
// list instead of rewriting each other's order; a "*" (Meilisearch's
// default) counts as no list. The other settings are want's.
func mergeSettings(live, want *meilisearch.Settings) *meilisearch.Settings {
	merged := *want
	if live == nil {
		return &merged
	}
	union := func(l, w []string) []string {
		var out []string
		for _, a := range append(slices.Clone(l), w...) {
			if a != "*" && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		if len(out) == 0 {
			return slices.Clone(w)
		}
		return out
	}
	merged.SearchableAttributes = union(live.SearchableAttributes, want.SearchableAttributes)
	merged.FilterableAttributes = union(live.FilterableAttributes, want.FilterableAttributes)
	merged.SortableAttributes = union(live.SortableAttributes, want.SortableAttributes)
	return &merged
}

// settingsDiff names the settings in which live differs from want (nil
// when the index is up to date): every setting settingsFor declares, and
// every setting the service relies on being Meilisearch's default
// (defaultSettings). Lists Meilisearch treats as sets are compared as
// sets. The names are those of the settings API
// (crates/meilisearch-types/src/settings.rs), with a dot for a field of a
// nested setting.
func settingsDiff(live, want *meilisearch.Settings) []string {
	var diff []string
	check := func(name string, same bool) {
		if !same {
			diff = append(diff, name)
		}
	}
	check("rankingRules", slices.Equal(live.RankingRules, want.RankingRules))
	check("searchableAttributes", slices.Equal(live.SearchableAttributes, want.SearchableAttributes))
	check("filterableAttributes", sameSet(live.FilterableAttributes, want.FilterableAttributes))
	check("sortableAttributes", sameSet(live.SortableAttributes, want.SortableAttributes))
	check("typoTolerance", live.TypoTolerance != nil && sameTypoTolerance(*live.TypoTolerance, *want.TypoTolerance))
	check("pagination.maxTotalHits", live.Pagination != nil && live.Pagination.MaxTotalHits == want.Pagination.MaxTotalHits)
	check("faceting.maxValuesPerFacet", live.Faceting != nil && live.Faceting.MaxValuesPerFacet == want.Faceting.MaxValuesPerFacet)
	check("faceting.sortFacetValuesBy", live.Faceting != nil && maps.Equal(live.Faceting.SortFacetValuesBy, want.Faceting.SortFacetValuesBy))
	check("searchCutoffMs", live.SearchCutoffMs == want.SearchCutoffMs)
	check("prefixSearch", live.PrefixSearch != nil && *live.PrefixSearch == *want.PrefixSearch)
	for _, d := range defaultSettings {
		check(d.name, d.isDefault(live))
	}
	return diff
}

// defaultSetting is a setting the service never writes but relies on
// being Meilisearch's default: isDefault reports whether it is, and reset
// restores the default through the setting's reset route (DELETE
// /indexes/{uid}/settings/<name>). A reset route is used because the
// client's Settings type omits empty values and nil pointers, so a
// settings update cannot carry "[]", "{}" or null.
type defaultSetting struct {
	name      string
	isDefault func(live *meilisearch.Settings) bool
	reset     func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error)
}

// defaultSettings lists the settings the service relies on being
// Meilisearch's defaults (crates/meilisearch-types/src/settings.rs at
// v1.18.0), and why:
//
//   - displayedAttributes "*": hits carry the attributes the searches ask
//     for (attributesToRetrieve only narrows the displayed ones);
//   - distinctAttribute null: a distinct attribute would collapse the
//     occurrences of a series into one hit in every search, and turn
//     every total and facet count into a count of distinct values;
//   - proximityPrecision "byWord": the proximity ranking rule of the
//     relevance order counts the distance between the words, not only
//     whether they share an attribute;
//   - stopWords, synonyms, dictionary, separatorTokens,
//     nonSeparatorTokens empty and localizedAttributes null: the words
//     Meilisearch finds are those of search.Words (search/text.go), which
//     the embedded engine also uses. Releases before hyphenated words were
//     found by their parts set nonSeparatorTokens to ["-"]; Init resets it
//     on their indexes, and Meilisearch then re-indexes every document
//     with '-' as a separator (a change of the allowed separators re-
//     indexes the searchable fields: InnerIndexSettingsDiff in
//     crates/milli/src/update/settings.rs at v1.18.0), so the documents
//     need no rewrite and no attribute scheme change;
//   - embedders empty: no document addition waits for, or fails on, an
//     embedding model.
var defaultSettings = []defaultSetting{
	{"displayedAttributes",
		func(s *meilisearch.Settings) bool { return slices.Equal(s.DisplayedAttributes, []string{"*"}) },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetDisplayedAttributesWithContext(ctx)
		}},
	{"distinctAttribute",
		func(s *meilisearch.Settings) bool { return s.DistinctAttribute == nil },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetDistinctAttributeWithContext(ctx)
		}},
	{"proximityPrecision",
		func(s *meilisearch.Settings) bool { return s.ProximityPrecision == meilisearch.ByWord },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetProximityPrecisionWithContext(ctx)
		}},
	{"stopWords",
		func(s *meilisearch.Settings) bool { return len(s.StopWords) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetStopWordsWithContext(ctx)
		}},
	{"synonyms",
		func(s *meilisearch.Settings) bool { return len(s.Synonyms) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetSynonymsWithContext(ctx)
		}},
	{"dictionary",
		func(s *meilisearch.Settings) bool { return len(s.Dictionary) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetDictionaryWithContext(ctx)
		}},
	{"separatorTokens",
		func(s *meilisearch.Settings) bool { return len(s.SeparatorTokens) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetSeparatorTokensWithContext(ctx)
		}},
	{"nonSeparatorTokens",
		func(s *meilisearch.Settings) bool { return len(s.NonSeparatorTokens) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetNonSeparatorTokensWithContext(ctx)
		}},
	{"localizedAttributes",
		func(s *meilisearch.Settings) bool { return len(s.LocalizedAttributes) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetLocalizedAttributesWithContext(ctx)
		}},
	{"embedders",
		func(s *meilisearch.Settings) bool { return len(s.Embedders) == 0 },
		func(ctx context.Context, ix meilisearch.IndexManager) (*meilisearch.TaskInfo, error) {
			return ix.ResetEmbeddersWithContext(ctx)
		}},
}

// settingsStore creates the indexes, keeps their settings and the
// vocabulary of languages and fields they are set up for.
type settingsStore struct{ *core }

// EnsureIndex creates the index uid when it does not exist (primary key
// id) and reconciles its settings with those declared for ix: it fetches
// the live settings and sends an update only when they differ. Every task
// is awaited. Init calls it for the engine's own indexes; a rebuild calls
// it to prepare an index under another name with the same settings.
func (e *settingsStore) EnsureIndex(ctx context.Context, uid string, ix Index) error {
	return e.ensureIndex(ctx, uid, primaryKeyOf(ix), settingsFor(ix, e.vocabulary()), false)
}

// primaryKeyOf is the primary key of an index: key (one document per
// occurrence) for the event indexes, id for the others.
func primaryKeyOf(ix Index) string {
	if ix == EventIndex || ix == EventHiddenIndex {
		return attrKey
	}
	return attrID
}

// ensureIndex creates index uid with primary key pk when it is missing and
// reconciles its settings. A live index whose primary key is id where pk
// is key holds events written under attribute scheme 3 or older (one
// document per event): it is left as it is, and Init marks it outdated
// (scheme.go), so that a rebuild replaces it.
//
// An existing index whose settings differ is repaired, with a warning
// naming the settings that differed; grow marks an update that extends
// the settings for a vocabulary that grew (Engine.learn), logged at info
// level.
func (e *settingsStore) ensureIndex(ctx context.Context, uid, pk string, want *meilisearch.Settings, grow bool) error {
	info, err := e.client.GetIndexWithContext(ctx, uid)
	created := false
	switch {
	case apiCode(err) == "index_not_found":
		created = true
		task, err := e.client.CreateIndexWithContext(ctx, &meilisearch.IndexConfig{Uid: uid, PrimaryKey: pk})
		if err := e.await(ctx, "create index "+uid, task, err); err != nil {
			// Another process may have created it in between.
			var te *TaskError
			if !errors.As(err, &te) || te.Code != "index_already_exists" {
				return err
			}
		}
	case err != nil:
		return e.fail("get index "+uid, err)
	case info.PrimaryKey != "" && info.PrimaryKey != pk && !(pk == attrKey && info.PrimaryKey == attrID):
		return fmt.Errorf("meili: index %s has primary key %q, want %q", uid, info.PrimaryKey, pk)
	}
	// Never stack a settings update on one still queued or running.
	if err := e.awaitSettingsTasks(ctx, uid); err != nil {
		return err
	}
	live, err := e.client.Index(uid).GetSettingsWithContext(ctx)
	if err != nil {
		return e.fail("get settings of "+uid, err)
	}
	// Never shrink: keep what another process (a replica with another
	// vocabulary, or an older one) has added to the live settings.
	want = mergeSettings(live, want)
	diff := settingsDiff(live, want)
	if diff == nil {
		return nil
	}
	switch {
	case created:
	case grow:
		e.opts.Logger.Info("meili: extending index settings for a new language, field or status",
			"index", uid, "settings", strings.Join(diff, ","))
	default:
		// An index that existed with other settings: changed by another
		// process, by hand, or declared differently by an older release.
		e.opts.Logger.Warn("meili: repairing index settings that differ from the declared ones",
			"index", uid, "settings", strings.Join(diff, ","))
	}
	index := e.client.Index(uid)
	var tasks []*meilisearch.TaskInfo
	if slices.ContainsFunc(diff, func(name string) bool { return !isDefaultSetting(name) }) {
		task, err := index.UpdateSettingsWithContext(ctx, want)
		if err != nil {
			return e.fail("update settings of "+uid, err)
		}
		tasks = append(tasks, task)
	}
	for _, d := range defaultSettings {
		if !slices.Contains(diff, d.name) {
			continue
		}
		task, err := d.reset(ctx, index)
		if err != nil {
			return e.fail("reset "+d.name+" of "+uid, err)
		}
		tasks = append(tasks, task)
	}
	// The updates are all queued before the first is awaited: settings
	// updates of one index are processed in one batch (autobatcher.rs),
	// so the index is re-indexed once.
	for _, task := range tasks {
		if err := e.await(ctx, "update settings of "+uid, task, nil); err != nil {
			return err
		}
	}
	return nil
}

// isDefaultSetting reports whether name is one of defaultSettings.
func isDefaultSetting(name string) bool {
	return slices.ContainsFunc(defaultSettings, func(d defaultSetting) bool { return d.name == name })
}

// learn makes sure the vocabulary holds every key of add, updating the
// settings of the engine's indexes first when it grows. The new vocabulary
// is published only once the settings are applied, so a search never
// names an attribute the index does not know.
func (e *settingsStore) learn(ctx context.Context, add vocabulary) error {
	if _, grew := e.vocabulary().union(add); !grew {
		return nil
	}
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	next, grew := e.vocabulary().union(add)
	if !grew {
		return nil
	}
	for _, ix := range indexes {
		if err := e.ensureIndex(ctx, e.IndexUID(ix), primaryKeyOf(ix), settingsFor(ix, next), true); err != nil {
			return err
		}
	}
	e.mu.Lock()
	e.vocab = next
	e.mu.Unlock()
	return nil
}

func (e *settingsStore) vocabulary() vocabulary {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.vocab
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// uniq drops repeated names, keeping the first occurrence.
func uniq(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func sameTypoTolerance(a, b meilisearch.TypoTolerance) bool {
	return a.Enabled == b.Enabled && a.MinWordSizeForTypos == b.MinWordSizeForTypos &&
		a.DisableOnNumbers == b.DisableOnNumbers &&
		sameSet(a.DisableOnWords, b.DisableOnWords) && sameSet(a.DisableOnAttributes, b.DisableOnAttributes)
}
