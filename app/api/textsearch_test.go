package api_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// searchFixture creates events for the text-matching scenarios and returns
// their IDs by name.
func searchFixture(t *testing.T, e *env) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	jazzCat := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Jazz"}).id()
	filmCat := e.must(201, "POST", "categories", "editor", map[string]any{"name": "Film"}).id()
	hall := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Main Hall", "city": "Paris"}).id()
	m["cat:jazz"], m["cat:film"], m["venue:hall"] = jazzCat, filmCat, hall
	mk := func(name string, body map[string]any) {
		t.Helper()
		m[name] = e.must(201, "POST", "events", "editor", body).id()
	}
	day := func(d int) (string, string) {
		return fmt.Sprintf("2026-12-%02d 10:00", d), fmt.Sprintf("2026-12-%02d 11:00", d)
	}
	s, en := day(5)
	mk("jazznight", map[string]any{"title": "Jazz Night", "description": "<p>Live <strong>music</strong> all evening</p>",
		"excerpt": "Saxophones & more", "start_date": s, "end_date": en, "categories": []any{jazzCat}, "venue": hall, "featured": true})
	s, en = day(2)
	mk("garden", map[string]any{"title": "Garden party", "description": "A concret under the stars, every concret nigth of the month",
		"start_date": s, "end_date": en, "venue": hall})
	s, en = day(8)
	mk("concert", map[string]any{"title": "Concert Night", "description": "In the main room", "start_date": s, "end_date": en,
		"categories": []any{jazzCat}})
	s, en = day(3)
	mk("summer", map[string]any{"title": "Summer Party", "description": "Outdoor dance", "start_date": s, "end_date": en,
		"categories": []any{filmCat}, "ticketed": true})
	e.must(200, "POST", "events/"+strconv.FormatInt(m["summer"], 10)+"?multilang_language=fr", "editor",
		map[string]any{"title": "Fête d'été", "description": "Cinéma en plein air"})
	s, en = day(4)
	mk("secret", map[string]any{"title": "Secret Jazz", "description": "confidential programme", "excerpt": "confidential guests",
		"password": "pw", "start_date": s, "end_date": en, "categories": []any{jazzCat, filmCat}, "venue": hall})
	e.flush()
	return m
}

func TestTextMatchingRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := searchFixture(t, e)
	cases := []struct {
		name, query, as string
		want            []int64
	}{
		{"whole word", "search=jazz", "", []int64{m["jazznight"]}},
		{"prefix as typed", "search=jaz", "", []int64{m["jazznight"]}},
		{"prefix of one letter", "search=j", "", []int64{m["jazznight"]}},
		{"prefix ends at a space", "search=jaz%20", "", nil},
		{"case", "search=JAZZ", "", []int64{m["jazznight"]}},
		{"accents ignored in the query", "search=ete&multilang_language=fr", "", []int64{m["summer"]}},
		{"accents ignored in capitals", "search=ETE&multilang_language=fr", "", []int64{m["summer"]}},
		{"accented query", "search=%C3%A9t%C3%A9&multilang_language=fr", "", []int64{m["summer"]}},
		{"cinema in french", "search=cinema&multilang_language=fr", "", []int64{m["summer"]}},
		{"french words not in english", "search=cinema", "", nil},
		{"english falls back in french", "search=jazz&multilang_language=fr", "", []int64{m["jazznight"]}},
		{"typo in the last word", "search=jazz%20nigth", "", []int64{m["jazznight"]}},
		{"only the last word is a prefix", "search=jaz%20night", "", nil},
		{"transposition", "search=nihgt%20", "", []int64{m["jazznight"], m["concert"]}},
		{"transposition and typo", "search=nigth%20", "", []int64{m["garden"], m["jazznight"], m["concert"]}},
		{"four letters allow no typo", "search=jazx", "", nil},
		{"other first letter with one typo", "search=bight%20", "", nil},
		{"all words in any order", "search=night%20jazz", "", []int64{m["jazznight"]}},
		{"markup is not text", "search=strong", "", nil},
		{"tag name is not a word", "search=p%20", "", nil},
		{"text inside markup is", "search=music", "", []int64{m["jazznight"]}},
		{"entity decoded", "search=saxophones%20%26", "", []int64{m["jazznight"]}},
		// Ten distinct words (repeats do not count), then one that
		// matches nothing: ignored as the eleventh, counted as the tenth.
		{"eleventh word ignored", "search=jazz%20night%20nigth%20live%20music%20jazz%20all%20evening%20saxophones%20more%20saxophone%20zzzqqq", "", []int64{m["jazznight"]}},
		{"tenth word counts", "search=jazz%20night%20nigth%20live%20music%20jazz%20all%20evening%20saxophones%20more%20zzzqqq", "", nil},
		{"anonymous never matches protected", "search=confidential", "", nil},
		{"editor matches protected", "search=confidential", "editor", []int64{m["secret"]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			if got := listIDs(e.must(200, "GET", "events?"+c.query, c.as, nil), "events"); ids(got...) != ids(c.want...) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestTextSearchRelevanceFacetsHighlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := searchFixture(t, e)
	idStr := func(name string) string { return strconv.FormatInt(m[name], 10) }
	e.run(t, []scenario{
		// The title that holds every word exactly ranks before the
		// description that matches only through typos, though it starts
		// later; by date, the earlier one comes first.
		{name: "relevance", method: "GET", url: "events?search=concert%20night&orderby=relevance", status: 200,
			check: func(t *testing.T, r *resp) {
				if got := listIDs(r, "events"); ids(got...) != ids(m["concert"], m["garden"]) {
					t.Errorf("relevance order %v, want %v", got, []int64{m["concert"], m["garden"]})
				}
			}},
		{name: "date order by default", method: "GET", url: "events?search=concert%20night", status: 200,
			check: func(t *testing.T, r *resp) {
				if got := listIDs(r, "events"); ids(got...) != ids(m["garden"], m["concert"]) {
					t.Errorf("date order %v", got)
				}
			}},
		{name: "relevance pages", method: "GET", url: "events?search=concert%20night&orderby=relevance&per_page=1&page=2", status: 200,
			want: map[string]any{"total": 2, "events.0.id": m["garden"]}},
		{name: "relevance needs search", method: "GET", url: "events?orderby=relevance", status: 400, contains: []string{"orderby"}},
		{name: "unknown order", method: "GET", url: "events?orderby=title", status: 400, contains: []string{"orderby"}},

		// Facets count the whole result, not the page; the protected
		// event counts only for a caller who sees its fields.
		{name: "facets anonymous", method: "GET", url: "events?facets=categories,venue,featured,ticketed&per_page=1", status: 200,
			want: map[string]any{"total": 5, "facets": map[string]any{
				"categories": map[string]any{idStr("cat:jazz"): 2, idStr("cat:film"): 1},
				"venue":      map[string]any{idStr("venue:hall"): 2},
				"featured":   map[string]any{"false": 3, "true": 1},
				"ticketed":   map[string]any{"false": 3, "true": 1},
			}}},
		{name: "facets with a search", method: "GET", url: "events?search=night&facets=categories,tags,organizer", status: 200,
			want: map[string]any{"total": 3, "facets": map[string]any{
				"categories": map[string]any{idStr("cat:jazz"): 2}, "tags": map[string]any{}, "organizer": map[string]any{},
			}}},
		{name: "facets of an editor in view context leave protected out", method: "GET", url: "events?facets=categories", as: "editor", status: 200,
			want: map[string]any{"total": 5, "facets.categories": map[string]any{idStr("cat:jazz"): 2, idStr("cat:film"): 1}}},
		{name: "facets of an admin in edit context count protected", method: "GET", url: "events?facets=categories&context=edit", as: "admin", status: 200,
			want: map[string]any{"total": 5, "facets.categories": map[string]any{idStr("cat:jazz"): 3, idStr("cat:film"): 2}}},
		{name: "facets with a filter", method: "GET", url: "events?facets=venue&categories=" + idStr("cat:jazz"), status: 200,
			want: map[string]any{"total": 3, "facets.venue": map[string]any{idStr("venue:hall"): 1}}},
		{name: "unknown facet", method: "GET", url: "events?facets=categories,price", status: 400, contains: []string{"facets"}},
		{name: "no facets unless asked", method: "GET", url: "events", status: 200, absent: []string{"facets"}},

		// Highlights: escaped, with prefix and typo matches marked; never
		// for a field the caller may not see.
		{name: "highlight", method: "GET", url: "events?search=saxophones%20jaz&highlight=true", status: 200,
			want: map[string]any{"events.0.highlight.title": "<mark>Jazz</mark> Night",
				"events.0.highlight.excerpt": "<mark>Saxophones</mark> &amp; more"}},
		{name: "highlight a typo", method: "GET", url: "events?search=nigth%20&highlight=true&orderby=relevance", status: 200,
			check: func(t *testing.T, r *resp) {
				found := false
				for i := 0; r.path("events."+strconv.Itoa(i)) != nil; i++ {
					found = found || r.str("events."+strconv.Itoa(i)+".highlight.title") == "Jazz <mark>Night</mark>"
				}
				if !found {
					t.Errorf("no marked typo match: %s", r.raw)
				}
			}},
		{name: "highlight of a locked event hides the excerpt", method: "GET", url: "events?search=secret&highlight=true", as: "editor", status: 200,
			want: map[string]any{"events.0.id": m["secret"], "events.0.highlight.title": "<mark>Secret</mark> Jazz",
				"events.0.highlight.excerpt": "", "events.0.excerpt": ""}},
		{name: "highlight of an unlocked event", method: "GET", url: "events?search=secret%20guests&highlight=true&password=pw", as: "editor", status: 200,
			want: map[string]any{"events.0.highlight.excerpt": "confidential <mark>guests</mark>"}},
		{name: "no highlight unless asked", method: "GET", url: "events?search=jazz", status: 200, absent: []string{"events.0.highlight"}},
	})
}

func TestTextSearchParamsDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	idx := e.must(200, "GET", "/calendar/events/v1", "", nil)
	doc := e.must(200, "GET", "doc", "", nil)
	for _, name := range []string{"orderby", "facets", "highlight"} {
		if !strings.Contains(idx.raw, `"`+name+`"`) {
			t.Errorf("namespace index lacks %s", name)
		}
		if !strings.Contains(doc.raw, `"name":"`+name+`"`) {
			t.Errorf("/doc lacks %s", name)
		}
	}
}

func TestPlaceTextSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Théâtre du Châtelet", "city": "Paris",
		"address": "1 Place du Châtelet", "description": "<p>A <em>grand</em> hall</p>"}).id()
	e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Other Hall", "city": "Lyon"})
	e.flush()
	cases := []struct {
		query string
		want  []int64
	}{
		{"theatre chatelet", []int64{v}},
		{"THEATRE CHATEL", []int64{v}},
		{"chatelte%20", []int64{v}},
		{"theatre paris", nil}, // words in two fields
		{"pari", []int64{v}},
		{"em%20", nil},
		{"grand", []int64{v}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			e.t = t
			if got := listIDs(e.must(200, "GET", "venues?search="+c.query, "", nil), "venues"); ids(got...) != ids(c.want...) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
