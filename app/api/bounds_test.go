package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// storeSnapshot is what a refused write must leave as it was: every post's
// revision and the account sums.
func storeSnapshot(t *testing.T, e *env) string {
	t.Helper()
	ctx := context.Background()
	posts, err := e.store.FindRecords(ctx, repository.RecordQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range posts {
		fmt.Fprintf(&b, "%d:%d:%s ", p.ID, p.Revision, p.Status)
	}
	for _, login := range []string{"contributor", "author", "editor"} {
		n, err := e.store.AccountDocuments(ctx, e.users[login].ID)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%d ", login, n)
	}
	return b.String()
}

// boundCase is one write against a content bound: its status and, for a
// refusal, the code and the setting the body must name.
type boundCase struct {
	name    string
	method  string
	url     func() string
	as      string
	body    any
	status  int
	code    string
	setting string
}

// runBoundCases sends each write in order; a refused one must answer the
// bound's code and setting and leave the store exactly as it was.
func runBoundCases(t *testing.T, e *env, cases []boundCase) {
	t.Helper()
	for _, c := range cases {
		before := storeSnapshot(t, e)
		r := e.do(c.method, c.url(), c.as, c.body)
		if r.status != c.status {
			t.Fatalf("%s: status %d, want %d: %.400s", c.name, r.status, c.status, r.raw)
		}
		if c.status < 400 {
			continue
		}
		if r.str("code") != c.code || r.str("data.setting") != c.setting || !strings.Contains(r.str("message"), c.setting) {
			t.Errorf("%s: %s", c.name, r.raw)
		}
		if after := storeSnapshot(t, e); after != before {
			t.Errorf("%s: the refused write changed the store:\n before %s\n after  %s", c.name, before, after)
		}
	}
}

// TestSeriesOverrideTextBound: the changed occurrences of one series hold
// at most MAX_SERIES_OVERRIDE_TEXT bytes of text, whoever writes them; a
// change past it is 400 rest_series_override_text_limit naming the
// setting and stores nothing; changes that shrink the text pass.
func TestSeriesOverrideTextBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "MAX_SERIES_OVERRIDE_TEXT", "1000")
	var own, others int64
	occ := func(id *int64, key string) func() string {
		return func() string { return fmt.Sprintf("events/%d/occurrences/%s", *id, key) }
	}
	own = e.must(201, "POST", "events", "contributor", weekly(map[string]any{"status": "draft"})).id()
	others = e.must(201, "POST", "events", "editor", weekly(nil)).id()
	text := func(n int) string { return strings.Repeat("é", n/2) } // n bytes
	runBoundCases(t, e, []boundCase{
		{"first change", "PATCH", occ(&own, "20270318T190000"), "contributor", map[string]any{"description": text(600)}, 200, "", ""},
		{"second change past the bound", "PATCH", occ(&own, "20270325T190000"), "contributor", map[string]any{"description": text(600)}, 400,
			"rest_series_override_text_limit", "MAX_SERIES_OVERRIDE_TEXT"},
		{"title and excerpt count too", "PATCH", occ(&own, "20270325T190000"), "contributor",
			map[string]any{"title": text(200), "excerpt": text(202)}, 400, "rest_series_override_text_limit", "MAX_SERIES_OVERRIDE_TEXT"},
		{"other languages count too", "PATCH", occ(&own, "20270318T190000?multilang_language=fr"), "contributor",
			map[string]any{"description": text(402)}, 400, "rest_series_override_text_limit", "MAX_SERIES_OVERRIDE_TEXT"},
		{"within the bound", "PATCH", occ(&own, "20270325T190000"), "contributor", map[string]any{"title": text(400)}, 200, "", ""},
		{"shrinking passes", "PATCH", occ(&own, "20270318T190000"), "contributor", map[string]any{"description": "short"}, 200, "", ""},
		{"editors are bounded too", "PATCH", occ(&others, "20270318T190000"), "editor", map[string]any{"description": text(1002)}, 400,
			"rest_series_override_text_limit", "MAX_SERIES_OVERRIDE_TEXT"},
		{"each series has its own", "PATCH", occ(&others, "20270318T190000"), "editor", map[string]any{"description": text(1000)}, 200, "", ""},
	})
	p := mustPost(t, e, own)
	if n := p.Event.OverrideTextBytes(); n != len("short")+400 {
		t.Errorf("stored override text %d bytes, want %d", n, len("short")+400)
	}
}

// TestAccountDocumentBound: the events of one contributor or author make
// at most MAX_ACCOUNT_DOCUMENTS index documents together (one per single
// event, one per occurrence, drafts and trash included); a create, update
// or split past it is 400 rest_account_document_limit naming the setting
// and stores nothing; editors are not bounded; writes that do not grow
// an account pass.
func TestAccountDocumentBound(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testAccountDocumentBound(t, newEnv(t, "MAX_ACCOUNT_DOCUMENTS", "10")) })
	t.Run("mongo", func(t *testing.T) {
		testAccountDocumentBound(t, newMongoEnv(t, "MAX_ACCOUNT_DOCUMENTS", "10"))
	})
}

func testAccountDocumentBound(t *testing.T, e *env) {
	series := func(count int, extra map[string]any) map[string]any {
		b := weekly(map[string]any{"status": "draft", "recurrence": map[string]any{"rules": []any{fmt.Sprintf("FREQ=WEEKLY;COUNT=%d", count)}}})
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	single := map[string]any{"title": "Once", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00", "status": "draft"}
	var first int64
	path := func(s string) func() string { return func() string { return s } }
	firstPath := func(suffix string) func() string {
		return func() string { return fmt.Sprintf("events/%d%s", first, suffix) }
	}
	first = e.must(201, "POST", "events", "contributor", series(4, nil)).id()
	if d := mustPost(t, e, first).Event.Documents; d != 4 {
		t.Fatalf("stored documents %d, want 4", d)
	}
	runBoundCases(t, e, []boundCase{
		{"second series", "POST", path("events"), "contributor", series(4, nil), 201, "", ""},
		{"third series past the bound", "POST", path("events"), "contributor", series(4, nil), 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"a single event", "POST", path("events"), "contributor", single, 201, "", ""},
		{"another single event", "POST", path("events"), "contributor", single, 201, "", ""},
		{"one more is past it", "POST", path("events"), "contributor", single, 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"growing a series is past it", "PATCH", firstPath(""), "contributor", series(5, nil), 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"trashing does not free it", "DELETE", firstPath(""), "contributor", nil, 200, "", ""},
		{"still full", "POST", path("events"), "contributor", single, 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"other accounts are separate", "POST", path("events"), "contributor2", series(10, nil), 201, "", ""},
		{"authors are bounded", "POST", path("events"), "author", series(11, nil), 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"editors are not", "POST", path("events"), "editor", series(30, nil), 201, "", ""},
	})
	// A shorter series frees documents: a split of the author's series
	// that would take it past the bound is refused before anything is
	// created; the same split within it passes.
	aid := e.must(201, "POST", "events", "author", series(6, nil)).id()
	e.must(201, "POST", "events", "author", series(3, nil))
	runBoundCases(t, e, []boundCase{
		{"split past the bound", "POST", path(fmt.Sprintf("events/%d/occurrences/20270408T190000/split", aid)), "author",
			map[string]any{"title": "Later"}, 400, "rest_account_document_limit", "MAX_ACCOUNT_DOCUMENTS"},
		{"shrinking passes", "PATCH", path(fmt.Sprintf("events/%d", aid)), "author", series(4, nil), 200, "", ""},
		{"the split now fits", "POST", path(fmt.Sprintf("events/%d/occurrences/20270408T190000/split", aid)), "author",
			map[string]any{"title": "Later"}, 201, "", ""},
	})
	if n, err := e.store.AccountDocuments(context.Background(), e.users["author"].ID); err != nil || n != 4+3 {
		t.Errorf("author's documents after the split: %d, %v; want 7 (2 + 2 + 3)", n, err)
	}
}

// TestSeriesOccurrenceBound: MAX_SERIES_OCCURRENCES bounds a series'
// occurrences up to the horizon (400 on the recurrence parameter naming
// the setting, nothing stored), and the index holds that many documents
// of a series at the bound.
func TestSeriesOccurrenceBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "MAX_SERIES_OCCURRENCES", "10")
	count := func(n int) map[string]any {
		return weekly(map[string]any{"recurrence": map[string]any{"rules": []any{fmt.Sprintf("FREQ=WEEKLY;COUNT=%d", n)}}})
	}
	e.must(201, "POST", "events", "editor", count(10))
	e.flush()
	list := e.must(200, "GET", "events?start_date=2027-01-01&end_date=2028-12-31", "", nil)
	if list.num("total") != 10 {
		t.Errorf("indexed occurrences: %v, want 10", list.num("total"))
	}
	before := storeSnapshot(t, e)
	r := e.do("POST", "events", "editor", count(11))
	if r.status != 400 || r.str("code") != "rest_invalid_param" || !strings.Contains(r.raw, "at most 10 are allowed") || !strings.Contains(r.raw, "MAX_SERIES_OCCURRENCES") {
		t.Errorf("past the bound: %d %s", r.status, r.raw)
	}
	if after := storeSnapshot(t, e); after != before {
		t.Errorf("the refused write changed the store:\n before %s\n after  %s", before, after)
	}
}
