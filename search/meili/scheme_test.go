package meili

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
)

// decodeAttrKey inverts attr's encoding of a key (the test's proof that
// attr is injective: two keys with one name would decode to one key).
func decodeAttrKey(t *testing.T, enc string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(enc); i++ {
		if enc[i] != '_' {
			b.WriteByte(enc[i])
			continue
		}
		end := strings.IndexByte(enc[i+1:], '_')
		if end < 0 {
			t.Fatalf("%q: unterminated escape", enc)
		}
		esc := enc[i+1 : i+1+end]
		if hex, ok := strings.CutPrefix(esc, "x"); ok {
			v, err := strconv.ParseUint(hex, 16, 8)
			if err != nil {
				t.Fatalf("%q: bad byte escape %q", enc, esc)
			}
			b.WriteByte(byte(v))
		} else {
			v, err := strconv.ParseInt(esc, 16, 32)
			if err != nil {
				t.Fatalf("%q: bad escape %q", enc, esc)
			}
			b.WriteRune(rune(v))
		}
		i += end + 1
	}
	return b.String()
}

// plainWord is what an attribute name may contain to be used bare in a
// filter expression.
var plainWord = regexp.MustCompile(`^[a-z0-9_-]+$`)

// TestAttributeNamesCannotCollide: keys that shared an attribute under the
// first scheme (lower-casing, '_' for the rest) get distinct names, every
// name decodes back to its key, and the usual keys keep their names.
func TestAttributeNamesCannotCollide(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"pt-BR", "pt-br", "PT-BR", "pt_br", "pt.br", "pt br"}, // all "pt-br" or "pt_br" before
		{"日本", "中国", "ελ", "__"},                               // all "__" before
		{"Publish", "publish", "PUBLISH"},
		{"auto-draft", "auto_draft", "auto draft", "auto-Draft"},
		{"\xff", "\xfe", "\uFFFD", "_x"}, // invalid UTF-8 bytes and the replacement character
		{"a_1f_", "a\x1f", "a.1f."},
		{"", "_", "-"},
	}
	var all []string
	for _, g := range groups {
		all = append(all, g...)
	}
	seen := map[string]string{}
	for _, key := range all {
		name := attr(prefixTitle, key)
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q share the attribute %q", key, other, name)
		}
		seen[name] = key
		enc := strings.TrimPrefix(name, prefixTitle)
		if got := decodeAttrKey(t, enc); got != key {
			t.Errorf("attr(%q) = %q decodes to %q", key, name, got)
		}
		if key != "" && !plainWord.MatchString(name) {
			t.Errorf("attr(%q) = %q is not a plain word", key, name)
		}
		if !utf8.ValidString(name) {
			t.Errorf("attr(%q) = %q is not UTF-8", key, name)
		}
	}
	// The keys of the default vocabulary keep their names.
	for _, key := range slices.Concat(defaultStatuses, defaultVenueFields, defaultOrganizerFields, []string{"en", "nl", "pt-br", "zh-hant"}) {
		if got := attr(prefixField, key); got != prefixField+key {
			t.Errorf("attr(%q) = %q, want it unchanged", key, got)
		}
	}
}

// TestDistinctKeysGetDistinctAttributes: through the engine, two languages
// that differ only in case are indexed, declared and searched apart.
func TestDistinctKeysGetDistinctAttributes(t *testing.T) {
	t.Parallel()
	f := newFakeMeili(t)
	e := f.initialisedEngine(Options{Languages: []string{"en"}})
	err := e.IndexEvents(t.Context(), []search.EventDocument{
		{ID: 1, Status: "publish", Text: map[string]search.Text{"pt-BR": {Title: "Samba"}}},
		{ID: 2, Status: "publish", Text: map[string]search.Text{"pt-br": {Title: "Fado"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	docs := f.Calls(http.MethodPost, "/indexes/calendar_events/documents")[0].Body.([]any)
	byID := map[float64]map[string]any{}
	for _, d := range docs {
		byID[d.(map[string]any)["id"].(float64)] = d.(map[string]any)
	}
	if byID[1]["title_pt-_42__52_"] != "Samba" || byID[1]["title_pt-br"] != nil {
		t.Errorf("pt-BR document = %s", meilisim.JSONString(byID[1]))
	}
	if byID[2]["title_pt-br"] != "Fado" || byID[2]["title_pt-_42__52_"] != nil {
		t.Errorf("pt-br document = %s", meilisim.JSONString(byID[2]))
	}
	settings := f.Calls(http.MethodPatch, "/indexes/calendar_events/settings")
	if len(settings) == 0 {
		t.Fatal("no settings update for the new languages")
	}
	searchable := settings[len(settings)-1].Body.(map[string]any)["searchableAttributes"].([]any)
	for _, a := range []string{"title_pt-_42__52_", "title_pt-br"} {
		if !slices.Contains(searchable, any(a)) {
			t.Errorf("searchable attributes %v lack %s", searchable, a)
		}
	}
	f.Reset()
	if _, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: "pt-BR", Query: "samba", Limit: 1, Statuses: []string{"publish"}}); err != nil {
		t.Fatal(err)
	}
	body := f.Calls(http.MethodPost, "/indexes/calendar_events/search")[0].Body.(map[string]any)
	if want := []any{"title_pt-_42__52_", "description_pt-_42__52_", "excerpt_pt-_42__52_"}; !reflect.DeepEqual(body["attributesToSearchOn"], want) {
		t.Errorf("attributesToSearchOn = %v, want %v", body["attributesToSearchOn"], want)
	}
}

// TestAttributeSchemeMigration: indexes written under an older attribute
// scheme (or before the scheme was recorded) are reported outdated by
// Init; a full rebuild records the current scheme.
func TestAttributeSchemeMigration(t *testing.T) {
	t.Parallel()
	outdated := func(t *testing.T, e *Engine) bool {
		t.Helper()
		o, err := e.Outdated(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	recorded := func(f *fakeMeili) any {
		ix := f.Index("calendar_meta")
		if ix == nil {
			return nil
		}
		f.Mu.Lock()
		defer f.Mu.Unlock()
		if d, ok := ix.Docs["1"]; ok {
			return d["attribute_scheme"]
		}
		return nil
	}
	withOldDocument := func(f *fakeMeili) {
		f.AddIndex("calendar_events", nil)
		f.Mu.Lock()
		f.Indexes["calendar_events"].Docs["1"] = map[string]any{"id": float64(1), "title_pt-br": "written by the first scheme"}
		f.Mu.Unlock()
	}

	t.Run("new, empty indexes are current", func(t *testing.T) {
		f := newFakeMeili(t)
		e := f.engine(Options{})
		if err := e.Init(t.Context()); err != nil {
			t.Fatal(err)
		}
		if outdated(t, e) {
			t.Error("empty indexes reported outdated")
		}
		if got := recorded(f); got != float64(attributeScheme) {
			t.Errorf("recorded scheme %v, want %d", got, attributeScheme)
		}
	})

	for _, tc := range []struct {
		name   string
		record any // the metadata document's scheme; nil: none
	}{
		{"indexes with documents and no record are outdated", nil},
		{"indexes recorded under the first scheme are outdated", 1},
		// Scheme 2 kept events of every status in one index.
		{"indexes recorded under the second scheme are outdated", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMeili(t)
			withOldDocument(f)
			if tc.record != nil {
				f.AddIndex("calendar_meta", nil)
				f.Mu.Lock()
				f.Indexes["calendar_meta"].Docs["1"] = map[string]any{"id": float64(1), "attribute_scheme": meilisim.JSONValue(tc.record)}
				f.Mu.Unlock()
			}
			e := f.engine(Options{})
			if err := e.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !outdated(t, e) {
				t.Fatal("old indexes not reported outdated")
			}
			if got := recorded(f); !reflect.DeepEqual(got, meilisim.JSONValue(tc.record)) {
				t.Errorf("Init changed the record to %v", got)
			}
			// Init again (a restart before the rebuild): still outdated.
			e2 := f.engine(Options{})
			if err := e2.Init(t.Context()); err != nil || !outdated(t, e2) {
				t.Fatalf("second Init: outdated %v, err %v", outdated(t, e2), err)
			}
			// The zero-downtime rebuild migrates them.
			r, err := e.BeginRebuild(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := r.IndexEvents(t.Context(), []search.EventDocument{{ID: 1, Status: "publish", Text: map[string]search.Text{"pt-BR": {Title: "rewritten"}}}}); err != nil {
				t.Fatal(err)
			}
			if !outdated(t, e) {
				t.Error("outdated cleared before the swap")
			}
			if err := r.Commit(t.Context()); err != nil {
				t.Fatal(err)
			}
			if outdated(t, e) {
				t.Error("still outdated after the rebuild")
			}
			if got := recorded(f); got != float64(attributeScheme) {
				t.Errorf("recorded scheme after the rebuild %v, want %d", got, attributeScheme)
			}
			f.Mu.Lock()
			doc := f.Indexes["calendar_events"].Docs["1"]
			f.Mu.Unlock()
			if doc["title_pt-_42__52_"] != "rewritten" || doc["title_pt-br"] != nil {
				t.Errorf("live document after the rebuild = %s", meilisim.JSONString(doc))
			}
			// A restart finds current indexes.
			e3 := f.engine(Options{})
			if err := e3.Init(t.Context()); err != nil || outdated(t, e3) {
				t.Errorf("Init after the rebuild: outdated %v, err %v", outdated(t, e3), err)
			}
		})
	}
}
