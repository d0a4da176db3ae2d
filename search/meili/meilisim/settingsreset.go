package meilisim

import (
	"net/http"
	"strings"
)

// ResetSetting answers DELETE /indexes/{uid}/settings/{name} (a setting's
// reset route, such as /settings/distinct-attribute) with a settingsUpdate
// task that sets the setting back to its default. The routes follow
// make_setting_route! in crates/meilisearch/src/routes/indexes/settings.rs
// (v1.18.0): the kebab-case name of each setting, answered 404 when no
// setting has that name.
func (f *settingsRoutes) ResetSetting(w http.ResponseWriter, r *http.Request) {
	uid := r.PathValue("uid")
	key := camelCase(r.PathValue("name"))
	def, ok := DefaultSettings()[key]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	f.Enqueue(w, "settingsUpdate", uid, func() *APIError {
		ix, ok := f.Indexes[uid]
		if !ok {
			return indexNotFound(uid)
		}
		ix.Settings[key] = def
		ix.Writes++
		return nil
	})
}

// camelCase turns a route's kebab-case setting name into the setting's
// JSON name ("distinct-attribute" → "distinctAttribute").
func camelCase(kebab string) string {
	parts := strings.Split(kebab, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
