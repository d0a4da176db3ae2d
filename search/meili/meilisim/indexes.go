package meilisim

// Indexes and settings: the index, settings, swap and stats routes.

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultSettings are the settings of a new index (Meilisearch defaults).
func DefaultSettings() map[string]any {
	return map[string]any{
		"displayedAttributes":  []any{"*"},
		"searchableAttributes": []any{"*"},
		"filterableAttributes": []any{},
		"sortableAttributes":   []any{},
		"rankingRules":         []any{"words", "typo", "proximity", "attribute", "sort", "exactness"},
		"stopWords":            []any{},
		"nonSeparatorTokens":   []any{},
		"separatorTokens":      []any{},
		"dictionary":           []any{},
		"synonyms":             map[string]any{},
		"distinctAttribute":    nil,
		"proximityPrecision":   "byWord",
		"typoTolerance": map[string]any{
			"enabled":             true,
			"minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
			"disableOnWords":      []any{},
			"disableOnAttributes": []any{},
			"disableOnNumbers":    false,
		},
		"faceting":            map[string]any{"maxValuesPerFacet": 100, "sortFacetValuesBy": map[string]any{"*": "alpha"}},
		"pagination":          map[string]any{"maxTotalHits": 1000},
		"embedders":           map[string]any{},
		"searchCutoffMs":      nil,
		"localizedAttributes": nil,
		"facetSearch":         true,
		"prefixSearch":        "indexingTime",
	}
}

// indexRoutes holds the indexes and answers the index routes.
type indexRoutes struct{ *Server }

// AddIndex creates an index directly, with the given settings merged over
// the defaults.
func (f *indexRoutes) AddIndex(uid string, settings map[string]any) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	s := DefaultSettings()
	if settings != nil {
		for k, v := range JSONValue(settings).(map[string]any) {
			s[k] = v
		}
	}
	f.Indexes[uid] = f.NewIndex("id")
	f.Indexes[uid].Settings = s
}

// NewIndex returns an empty index with the default settings, created now
// (each index a nanosecond after the previous one). The caller holds f.Mu.
func (f *indexRoutes) NewIndex(primaryKey string) *Index {
	f.Created++
	at := time.Date(2025, 1, 1, 0, 0, 0, f.Created, time.UTC).Format(time.RFC3339Nano)
	return &Index{CreatedAt: at, PrimaryKey: primaryKey, Settings: DefaultSettings(), Docs: map[string]map[string]any{}, Internal: map[string]uint32{}, Used: map[uint32]bool{}}
}

// Index returns the index uid, or nil.
func (f *indexRoutes) Index(uid string) *Index {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.Indexes[uid]
}

// GetIndex answers GET /indexes/{uid}.
func (f *indexRoutes) GetIndex(w http.ResponseWriter, r *http.Request) {
	uid, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Reply(w, 200, map[string]any{"uid": uid, "primaryKey": ix.PrimaryKey,
		"createdAt": ix.CreatedAt, "updatedAt": ix.CreatedAt})
}

// CreateIndex answers POST /indexes with an indexCreation task.
func (f *indexRoutes) CreateIndex(w http.ResponseWriter, r *http.Request) {
	body, _ := bodyOf(r).(map[string]any)
	uid, _ := body["uid"].(string)
	pk, _ := body["primaryKey"].(string)
	f.Enqueue(w, "indexCreation", uid, func() *APIError {
		if _, ok := f.Indexes[uid]; ok {
			e := NewAPIError("index_already_exists", fmt.Sprintf("Index `%s` already exists.", uid))
			return &e
		}
		f.Indexes[uid] = f.NewIndex(pk)
		return nil
	})
}

// DeleteIndex answers DELETE /indexes/{uid} with an indexDeletion task.
func (f *indexRoutes) DeleteIndex(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	f.Enqueue(w, "indexDeletion", uid, func() *APIError {
		if _, ok := f.Indexes[uid]; !ok {
			return indexNotFound(uid)
		}
		delete(f.Indexes, uid)
		return nil
	})
}

// settingsRoutes answers the settings routes of an index.
type settingsRoutes struct{ *Server }

// GetSettings answers GET /indexes/{uid}/settings.
func (f *settingsRoutes) GetSettings(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Mu.Lock()
	answer := JSONValue(ix.Settings)
	f.Mu.Unlock()
	f.Reply(w, 200, answer)
}

// settingsFields are the fields of a settings object (struct Settings in
// crates/meilisearch-types/src/settings.rs at v1.18.0; v1.50.0 adds
// foreignKeys).
var settingsFields = []string{
	"displayedAttributes", "searchableAttributes", "filterableAttributes", "sortableAttributes",
	"rankingRules", "stopWords", "nonSeparatorTokens", "separatorTokens", "dictionary", "synonyms",
	"distinctAttribute", "proximityPrecision", "typoTolerance", "faceting", "pagination", "embedders",
	"searchCutoffMs", "localizedAttributes", "facetSearch", "prefixSearch", "chat",
}

// UpdateSettings answers PATCH /indexes/{uid}/settings with a
// settingsUpdate task. As crates/meilisearch/src/routes/indexes/
// settings.rs does:
//
//   - an unknown field is refused at once with 400 bad_request (the
//     settings struct is deny_unknown_fields), and no task is registered;
//   - a missing index is created by the task when the key may create
//     indexes (allow_index_creation: the master key, or a key whose
//     actions hold "*" or "indexes.create"); otherwise the task fails
//     with index_not_found.
func (f *settingsRoutes) UpdateSettings(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	body, _ := bodyOf(r).(map[string]any)
	fields := settingsFields
	if versionAtLeast(f.opts.Version, 1, 50) {
		fields = append(slices.Clone(fields), "foreignKeys")
	}
	for _, k := range SortedKeys(body) {
		if !slices.Contains(fields, k) {
			f.Reply(w, 400, NewAPIError("bad_request", fmt.Sprintf("Unknown field `%s`: expected one of `%s`", k, strings.Join(fields, "`, `"))))
			return
		}
	}
	create := f.mayCreateIndex(r.Header.Get("Authorization"))
	f.Enqueue(w, "settingsUpdate", uid, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			if !create {
				return indexNotFound(uid)
			}
			ix = f.NewIndex("")
			f.Indexes[uid] = ix
		}
		for k, v := range body {
			ix.Settings[k] = v
		}
		ix.Writes++
		return nil
	})
}

// mayCreateIndex reports whether a request's key may create indexes: any
// key but one created through POST /keys whose actions hold neither "*"
// nor "indexes.create" (crates/meilisearch-auth, allow_index_creation).
func (f *indexRoutes) mayCreateIndex(auth string) bool {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for _, k := range f.Keys {
		if "Bearer "+fmt.Sprint(k["key"]) != auth {
			continue
		}
		actions, _ := k["actions"].([]any)
		return slices.Contains(actions, any("*")) || slices.Contains(actions, any("indexes.create")) || slices.Contains(actions, any("indexes.*"))
	}
	return true
}

// SwapIndexes answers POST /swap-indexes with an indexSwap task.
func (f *indexRoutes) SwapIndexes(w http.ResponseWriter, r *http.Request) {
	pairs, _ := bodyOf(r).([]any)
	f.Enqueue(w, "indexSwap", nil, func() *APIError {
		for _, p := range pairs {
			names := p.(map[string]any)["indexes"].([]any)
			a, b := names[0].(string), names[1].(string)
			for _, uid := range []string{a, b} {
				if _, ok := f.Indexes[uid]; !ok {
					return indexNotFound(uid)
				}
			}
			f.Indexes[a], f.Indexes[b] = f.Indexes[b], f.Indexes[a]
		}
		return nil
	})
}

// Stats answers GET /indexes/{uid}/stats.
func (f *indexRoutes) Stats(w http.ResponseWriter, r *http.Request) {
	_, ix := f.PathIndex(w, r)
	if ix == nil {
		return
	}
	f.Mu.Lock()
	n := len(ix.Docs)
	f.Mu.Unlock()
	f.Reply(w, 200, map[string]any{"numberOfDocuments": n, "isIndexing": false, "fieldDistribution": map[string]any{}})
}
