package meili

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/meili/meilisim"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestLanguagesAgainstSimulator runs the shared language table
// (searchtest.RunLanguages) on the simulator in each supported version,
// with the default language configured (its text is the base text, and
// searches in it are one search) and without languages (every language is
// written as its own, and every text search is a pair): the lists are the
// embedded engines' in every case.
func TestLanguagesAgainstSimulator(t *testing.T) {
	for _, version := range simVersions {
		for _, opts := range []Options{
			{Languages: []string{"en", "fr", "de", "nl"}, DefaultLanguage: "en"},
			{},
		} {
			t.Run(fmt.Sprintf("%s default %q", version, opts.DefaultLanguage), func(t *testing.T) {
				f := newEmulatingSim(t, version)
				var n atomic.Int64
				searchtest.RunLanguages(t, func(t *testing.T) search.Engine {
					o := opts
					o.IndexPrefix = fmt.Sprintf("lang_%d_", n.Add(1))
					e := f.engine(o)
					if err := e.Init(t.Context()); err != nil {
						t.Fatal(err)
					}
					return e
				})
			})
		}
	}
}

// wrongResultsEnv, when set, makes TestLanguagesWrongResultsFailAtOnce
// the child that runs the suite on a broken engine.
const wrongResultsEnv = "EVENTCAL_TEST_MEILI_WRONG_RESULTS"

// TestLanguagesWrongResultsFailAtOnce: when the engine's answers are wrong
// (every page loses its first hit, as a broken resultPage did), the
// language suite fails each case at its first search instead of searching
// again until go test's -timeout. The suite runs in a child test binary
// (its failing cases would fail this test); the child counts the searches
// it made, and this test wants one per case and one for the check after
// indexing, not a poll's hundreds.
func TestLanguagesWrongResultsFailAtOnce(t *testing.T) {
	if os.Getenv(wrongResultsEnv) != "" {
		var searches atomic.Int64
		t.Cleanup(func() { fmt.Printf("searches=%d\n", searches.Load()) })
		f := newEmulatingSim(t, meilisim.NewestVersion)
		searchtest.RunLanguages(t, func(t *testing.T) search.Engine {
			return &wrongResults{Engine: f.engine(Options{Languages: []string{"en", "fr", "de", "nl"}, DefaultLanguage: "en"}), searches: &searches}
		})
		return
	}
	child := exec.Command(os.Args[0], "-test.run=^TestLanguagesWrongResultsFailAtOnce$", "-test.v",
		"-test.timeout="+testdeadline.Timeout(t).String())
	child.Env = append(os.Environ(), wrongResultsEnv+"=1")
	out, err := child.CombinedOutput()
	if err == nil {
		t.Fatalf("the suite passed on an engine that loses the first hit of every page:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^searches=(\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the child did not report its searches (%v):\n%s", err, out)
	}
	searches, _ := strconv.Atoi(string(m[1]))
	cases := len(regexp.MustCompile(`(?m)^    --- (PASS|FAIL): `).FindAll(out, -1))
	t.Logf("the child searched %d times for %d cases", searches, cases)
	if !strings.Contains(string(out), "IDs differ") {
		t.Errorf("no case reported the wrong IDs:\n%s", out)
	}
	if cases == 0 || searches > cases+1 {
		t.Errorf("the child searched %d times for %d cases, want at most %d (a search per case and one after indexing)", searches, cases, cases+1)
	}
}

// wrongResults is an engine whose event searches lose the first hit of
// every page, and that counts them.
type wrongResults struct {
	search.Engine
	searches *atomic.Int64
}

// SearchEvents runs q and drops the first ID of the page.
func (w *wrongResults) SearchEvents(ctx context.Context, q search.EventQuery) (search.Result, error) {
	w.searches.Add(1)
	r, err := w.Engine.SearchEvents(ctx, q)
	if len(r.IDs) > 0 {
		r.IDs = r.IDs[1:]
		if len(r.Occurrences) > 0 {
			r.Occurrences = r.Occurrences[1:]
		}
	}
	return r, err
}

// TestPairRequests: a text search in a language other than the default is
// two searches of the same index with the same page window, one on the
// language's attributes for the documents that have it, one on the base
// attributes for the others; a search in the default language, or
// without words, is one.
func TestPairRequests(t *testing.T) {
	f := newFakeMeili(t)
	e := f.engine(Options{Languages: testLangs, DefaultLanguage: "en"})
	f.AddIndex("calendar_events", nil)
	f.AddIndex("calendar_events_hidden", nil)
	tests := []struct {
		name string
		q    search.EventQuery
		want []map[string]any // the bodies' keys that matter
	}{
		{"default language", search.EventQuery{Lang: "en", Query: "jazz"}, []map[string]any{
			{"filter": `status IN ["publish"]`, "attributesToSearchOn": baseOn, "page": 1, "hitsPerPage": 10},
		}},
		{"no words", search.EventQuery{Lang: "nl"}, []map[string]any{
			{"filter": `status IN ["publish"]`, "page": 1, "hitsPerPage": 10},
		}},
		{"other language", search.EventQuery{Lang: "nl", Query: "jazz", Offset: 20, Limit: 10}, []map[string]any{
			{"filter": `status IN ["publish"] AND langs = "nl"`, "attributesToSearchOn": []any{"title_nl", "description_nl", "excerpt_nl"}, "page": 1, "hitsPerPage": 30},
			{"filter": `status IN ["publish"] AND NOT langs = "nl"`, "attributesToSearchOn": baseOn, "page": 1, "hitsPerPage": 30},
		}},
		{"other language, collapsed, facets", search.EventQuery{Lang: "nl", Query: "jazz", CollapseSeries: true, Facets: []string{search.FacetFeatured}}, []map[string]any{
			{"filter": `status IN ["publish"] AND langs = "nl"`, "distinct": "id", "hitsPerPage": 10},
			{"filter": `status IN ["publish"] AND langs = "nl"`, "facets": []any{"featured"}, "hitsPerPage": 0},
			{"filter": `status IN ["publish"] AND NOT langs = "nl"`, "distinct": "id", "hitsPerPage": 10},
			{"filter": `status IN ["publish"] AND NOT langs = "nl"`, "facets": []any{"featured"}, "hitsPerPage": 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Reset()
			q := tt.q
			q.Statuses = []string{"publish"}
			if q.Limit == 0 {
				q.Limit = 10
			}
			if _, err := e.SearchEvents(t.Context(), q); err != nil {
				t.Fatal(err)
			}
			got := f.Calls(http.MethodPost, "/indexes/*")
			if len(got) != len(tt.want) {
				t.Fatalf("%d requests, want %d: %v", len(got), len(tt.want), got)
			}
			for i, r := range got {
				body := r.Body.(map[string]any)
				for k, v := range tt.want[i] {
					if w := meilisim.JSONValue(v); !reflect.DeepEqual(body[k], w) {
						t.Errorf("search %d: %s = %v, want %v", i, k, body[k], w)
					}
				}
			}
		})
	}
}

// TestDocumentSizeDoesNotGrowWithLanguages: an event document holds each
// distinct text once. Its encoded size is the same with two configured
// languages as with six, when the event is written in two; before
// scheme 6, every configured language carried a copy of the fallback
// text (four more copies of the description here).
func TestDocumentSizeDoesNotGrowWithLanguages(t *testing.T) {
	desc := strings.Repeat("harbour ", 5000)
	size := func(langs []string) int {
		f := newFakeMeili(t)
		e := f.initialisedEngine(Options{Languages: langs, DefaultLanguage: "en"})
		text := map[string]search.Text{}
		for _, l := range langs {
			// What the document builder gives: every configured language,
			// French its own, the others the default's text.
			text[l] = search.Text{Title: "Harbour night", Description: desc}
		}
		text["fr"] = search.Text{Title: "Nuit du port", Description: "Lanternes"}
		if err := e.IndexEvents(t.Context(), []search.EventDocument{{ID: 1, Status: "draft", Text: text}}); err != nil {
			t.Fatal(err)
		}
		adds := f.Calls(http.MethodPost, "/indexes/calendar_events_hidden/documents")
		if len(adds) != 1 {
			t.Fatalf("%d additions", len(adds))
		}
		raw, err := json.Marshal(adds[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		return len(raw)
	}
	two, six := size([]string{"en", "fr"}), size([]string{"en", "fr", "de", "nl", "es", "it"})
	if two != six {
		t.Errorf("document of %d bytes with two languages, %d with six: it grows with the configured languages", two, six)
	}
	if six > len(desc)+1000 {
		t.Errorf("document of %d bytes for a %d-byte description: the description is written more than once", six, len(desc))
	}
}

// TestSchemeFiveMigration: live indexes of scheme 5 (every language's
// text in its own attributes) are written and searched in that layout
// until the rebuild's swap, so that no edited event is hidden meanwhile;
// after it, the documents carry the base text and langs, and searches in
// every language find the same events.
func TestSchemeFiveMigration(t *testing.T) {
	f := newEmulatingSim(t, MinVersion)
	opts := Options{Languages: testLangs, DefaultLanguage: "en"}
	e := f.engine(opts)
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The scheme-5 layout, as that engine wrote it.
	f.Mu.Lock()
	for _, uid := range []string{"calendar_events", "calendar_events_hidden"} {
		f.Indexes[uid].Put(map[string]any{"id": 1.0, "key": "1", "status": "publish", "start": 1000.0, "gen": 1.0,
			"title_en": "Jazz night", "description_en": "", "excerpt_en": "", "title_nl": "Jazzavond", "description_nl": "", "excerpt_nl": ""})
	}
	f.Indexes["calendar_meta"].Put(map[string]any{"id": 1.0, "attribute_scheme": 5.0})
	f.Mu.Unlock()
	e = f.engine(opts)
	if err := e.Init(t.Context()); err != nil {
		t.Fatal(err)
	}
	if o, _ := e.Outdated(t.Context()); !o {
		t.Fatal("scheme 5 not outdated")
	}
	find := func(when string, lang, word string, want []int64) {
		t.Helper()
		r, err := e.SearchEvents(t.Context(), search.EventQuery{Lang: lang, Query: word, Statuses: []string{"publish"}, Limit: 10})
		if err != nil || !slices.Equal(r.IDs, want) {
			t.Errorf("%s: search %q in %s = %v, %v; want %v", when, word, lang, r.IDs, err, want)
		}
	}
	find("before", "nl", "jazzavond", []int64{1})
	r, err := e.BeginRebuild(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	edit := []search.EventDocument{
		{ID: 1, Status: "publish", Start: 1000, Text: map[string]search.Text{"en": {Title: "Blues night"}, "nl": {Title: "Bluesavond"}}},
		{ID: 2, Status: "publish", Start: 2000, Text: map[string]search.Text{"en": {Title: "Folk night"}, "nl": {Title: "Folk night"}}},
	}
	if err := e.IndexEvents(t.Context(), edit); err != nil {
		t.Fatalf("write during the migration: %v", err)
	}
	f.Mu.Lock()
	live := f.Indexes["calendar_events"].Docs["2"]
	f.Mu.Unlock()
	if live["title_nl"] != "Folk night" || live["title__base"] != nil {
		t.Errorf("live document during the migration = %v, want the scheme-5 layout", live)
	}
	find("during the migration", "nl", "bluesavond", []int64{1})
	find("during the migration", "nl", "folk", []int64{2})
	find("during the migration", "en", "blues", []int64{1})
	if err := r.IndexEvents(t.Context(), edit); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	f.Mu.Lock()
	live = f.Indexes["calendar_events"].Docs["2"]
	f.Mu.Unlock()
	if live["title__base"] != "Folk night" || live["title_nl"] != nil || !reflect.DeepEqual(live["langs"], []any{}) {
		t.Errorf("live document after the swap = %v, want the base text only", live)
	}
	find("after the swap", "nl", "bluesavond", []int64{1})
	find("after the swap", "nl", "folk", []int64{2})
	find("after the swap", "en", "blues", []int64{1})
	find("after the swap", "nl", "night", []int64{2}) // event 1 has a Dutch title of its own
}
