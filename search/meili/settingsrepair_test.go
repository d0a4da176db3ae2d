package meili

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// setSets are the settings whose lists Meilisearch treats as sets (their
// merged order follows the live index).
var setSets = []string{"filterableAttributes", "sortableAttributes", "nonSeparatorTokens"}

// normalSettings returns a decoded settings object with its set-valued
// lists sorted.
func normalSettings(s map[string]any) map[string]any {
	out := maps.Clone(s)
	for _, k := range setSets {
		if list, ok := out[k].([]any); ok {
			list = slices.Clone(list)
			slices.SortFunc(list, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			out[k] = list
		}
	}
	return out
}

// TestStartupRepairsEverySetting changes one setting of the events index
// behind the service's back (another tool, a person with the master key)
// and opens a new engine on the server: its Init puts every setting the
// service declares or relies on back, and logs the name of the setting it
// repaired.
func TestStartupRepairsEverySetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string // as logged
		key   string // the settings key changed
		value any
	}{
		{"rankingRules", "rankingRules", []any{"words", "typo", "proximity", "attribute", "sort", "exactness"}},
		{"searchableAttributes", "searchableAttributes", []any{"*"}},
		{"filterableAttributes", "filterableAttributes", []any{"id"}},
		{"sortableAttributes", "sortableAttributes", []any{"id"}},
		{"displayedAttributes", "displayedAttributes", []any{"id", "title_en"}},
		{"distinctAttribute", "distinctAttribute", "id"},
		{"typoTolerance", "typoTolerance", map[string]any{"enabled": false, "minWordSizeForTypos": map[string]any{"oneTypo": 5, "twoTypos": 9},
			"disableOnWords": []any{}, "disableOnAttributes": []any{}, "disableOnNumbers": true}},
		{"faceting.maxValuesPerFacet", "faceting", map[string]any{"maxValuesPerFacet": 100, "sortFacetValuesBy": map[string]any{"*": "alpha"}}},
		{"faceting.sortFacetValuesBy", "faceting", map[string]any{"maxValuesPerFacet": 1000000, "sortFacetValuesBy": map[string]any{"*": "count"}}},
		{"faceting.sortFacetValuesBy", "faceting", map[string]any{"maxValuesPerFacet": 1000000, "sortFacetValuesBy": map[string]any{"*": "alpha", "category_ids": "count"}}},
		{"pagination.maxTotalHits", "pagination", map[string]any{"maxTotalHits": 1000}},
		{"searchCutoffMs", "searchCutoffMs", 150},
		{"prefixSearch", "prefixSearch", "disabled"},
		{"proximityPrecision", "proximityPrecision", "byAttribute"},
		{"nonSeparatorTokens", "nonSeparatorTokens", []any{"-"}},
		{"separatorTokens", "separatorTokens", []any{"&"}},
		{"dictionary", "dictionary", []any{"j.s. bach"}},
		{"stopWords", "stopWords", []any{"the", "de"}},
		{"synonyms", "synonyms", map[string]any{"gig": []any{"concert"}}},
		{"localizedAttributes", "localizedAttributes", []any{map[string]any{"attributePatterns": []any{"title_*"}, "locales": []any{"jpn"}}}},
		{"embedders", "embedders", map[string]any{"default": map[string]any{"source": "userProvided", "dimensions": 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+fmt.Sprint(tt.value), func(t *testing.T) {
			f := newFakeMeili(t)
			if err := f.engine(Options{Languages: testLangs}).Init(t.Context()); err != nil {
				t.Fatalf("first Init: %v", err)
			}
			uid := DefaultIndexPrefix + string(EventIndex)
			f.Mu.Lock()
			declared := meilisim.JSONValue(f.Indexes[uid].Settings).(map[string]any)
			f.Indexes[uid].Settings[tt.key] = meilisim.JSONValue(tt.value)
			f.Mu.Unlock()

			var logs testsupport.SyncBuffer
			e := f.engine(Options{Languages: testLangs, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := e.Init(t.Context()); err != nil {
				t.Fatalf("Init after the change: %v", err)
			}
			f.Mu.Lock()
			got := meilisim.JSONValue(f.Indexes[uid].Settings).(map[string]any)
			f.Mu.Unlock()
			if !reflect.DeepEqual(normalSettings(got), normalSettings(declared)) {
				t.Errorf("%s not repaired:\n got %s\nwant %s", tt.key, meilisim.JSONString(got[tt.key]), meilisim.JSONString(declared[tt.key]))
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "index="+uid) {
					line = l
				}
			}
			if !strings.Contains(line, "repairing") || !strings.Contains(line, tt.name) {
				t.Errorf("no log line naming %s for %s; logs:\n%s", tt.name, uid, logs.String())
			}

			// Repaired, the index needs nothing more.
			f.Reset()
			if err := e.Init(t.Context()); err != nil {
				t.Fatalf("third Init: %v", err)
			}
			if w := f.Writes(); len(w) != 0 {
				t.Errorf("Init after the repair wrote %q", w)
			}
		})
	}
}

// TestSettingsRepairIsOneBatch: the update and the resets of one repair
// are all queued before the first is awaited, so Meilisearch applies them
// in one batch (one re-indexing of the documents).
func TestSettingsRepairIsOneBatch(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	if err := f.engine(Options{Languages: testLangs}).Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	uid := DefaultIndexPrefix + string(EventIndex)
	f.Mu.Lock()
	f.Indexes[uid].Settings["distinctAttribute"] = "id"
	f.Indexes[uid].Settings["stopWords"] = []any{"the"}
	f.Indexes[uid].Settings["pagination"] = map[string]any{"maxTotalHits": 1000}
	f.Mu.Unlock()
	f.stepOnPoll()
	f.Reset()
	if err := f.engine(Options{Languages: testLangs}).Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []string{"PATCH /indexes/" + uid + "/settings", "DELETE /indexes/" + uid + "/settings/distinct-attribute",
		"DELETE /indexes/" + uid + "/settings/stop-words"}
	if got := f.Writes(); !slices.Equal(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	last := f.Batches[len(f.Batches)-1]
	if len(last) != 3 {
		t.Errorf("the repair took batches %v, want its three tasks in one", f.Batches)
	}
}

// TestSettingsTaskWaitReadsEveryPage: more pending settings updates than
// one page of GET /tasks (Meilisearch answers 20 unless told otherwise) are
// all awaited before the live settings are read. The tasks are held
// "processing" until polled (Server.BusyTasks), so an update the engine
// did not find stays pending; the oldest one is the one that brings the
// declared settings back, and it is on the last page.
func TestSettingsTaskWaitReadsEveryPage(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs})
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	uid := e.IndexUID(EventIndex)
	f.Mu.Lock()
	declared := maps.Clone(f.Indexes[uid].Settings)
	f.Indexes[uid].Settings = meilisim.DefaultSettings()
	f.BusyTasks["settingsUpdate"] = 1
	f.Mu.Unlock()
	const pending = 2*settingsTaskPage + 5
	for i := range pending {
		apply := func() *meilisim.APIError { return nil }
		if i == 0 {
			apply = func() *meilisim.APIError {
				maps.Copy(f.Indexes[uid].Settings, declared)
				return nil
			}
		}
		f.Enqueue(httptest.NewRecorder(), "settingsUpdate", uid, apply)
	}
	f.Mu.Lock()
	f.BusyTasks["settingsUpdate"] = 0
	f.Mu.Unlock()
	f.Reset()

	if err := e.Init(t.Context()); err != nil {
		t.Fatalf("Init: %v", err)
	}
	if n := f.patches(uid); n != 0 {
		t.Errorf("%d settings updates sent while pending ones bring the declared settings, want 0", n)
	}
	f.Mu.Lock()
	still := 0
	for _, task := range f.Tasks {
		if task.Summary["indexUid"] == uid && task.Summary["type"] == "settingsUpdate" {
			if s := f.TaskStatus(task); s == "enqueued" || s == "processing" {
				still++
			}
		}
	}
	f.Mu.Unlock()
	if still != 0 {
		t.Errorf("%d of %d pending settings updates were not awaited", still, pending)
	}
	if pages := f.Calls(http.MethodGet, "/tasks"); len(pages) < 3 {
		t.Errorf("%d task lists read for %d pending tasks, want every page", len(pages), pending)
	}
}
