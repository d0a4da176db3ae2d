package meili

import (
	"testing"

	"github.com/calendar/eventcal/search"
)

// TestQuote is the table of the only escaping function: backslashes and
// double quotes are escaped, everything else (unicode included) passes.
func TestQuote(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{``, `""`},
		{`publish`, `"publish"`},
		{`two words`, `"two words"`},
		{`it's`, `"it's"`},
		{`say "hi"`, `"say \"hi\""`},
		{`"`, `"\""`},
		{`""`, `"\"\""`},
		{`a\b`, `"a\\b"`},
		{`\`, `"\\"`},
		{`trailing\`, `"trailing\\"`},
		{`\\`, `"\\\\"`},
		{`\"`, `"\\\""`},
		{`\n is not a newline`, `"\\n is not a newline"`},
		{`\u{41}`, `"\\u{41}"`},
		{"real\nnewline\ttab", "\"real\nnewline\ttab\""},
		{`café`, `"café"`},
		{`Île-de-France`, `"Île-de-France"`},
		{`日本語 "引用"`, `"日本語 \"引用\""`},
		{`emoji 🎷\🎺`, `"emoji 🎷\\🎺"`},
		{`AND OR NOT ( ) [ ] = 'x'`, `"AND OR NOT ( ) [ ] = 'x'"`},
		{"\xff\xfe", "\"\xff\xfe\""},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestFilterHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, got, want string }{
		{"eq string", eq("status", `pub"lish`), `status = "pub\"lish"`},
		{"eq number", eq("parent_id", int64(-7)), `parent_id = -7`},
		{"eq bool", eq("featured", false), `featured = false`},
		{"in numbers", in("tag_ids", []int64{3, 1, 2}), `tag_ids IN [3, 1, 2]`},
		{"in strings", in("status", []string{"publish", `a\b`}), `status IN ["publish", "a\\b"]`},
		{"ne", ne("last_start_publish", 0), `last_start_publish != 0`},
		{"gte", gte("start", 1735689600), `start >= 1735689600`},
		{"gt", gt("start", -1), `start > -1`},
		{"lt", lt("end", 0), `end < 0`},
		{"lte", lte("end", 9007199254740993), `end <= 9007199254740993`},
		{"and none", and(), ``},
		{"and empties", and("", "", ""), ``},
		{"and one", and("", "a = 1", ""), `a = 1`},
		{"and many", and("a = 1", "", "b = 2", "c = 3"), `a = 1 AND b = 2 AND c = 3`},
		{"or none", or("", ""), ``},
		{"or one", or("a = 1"), `a = 1`},
		{"or many", or("a = 1", "b = 2"), `(a = 1 OR b = 2)`},
		{"or inside and", and("x = 1", or("a = 1", "b = 2")), `x = 1 AND (a = 1 OR b = 2)`},
		{"and inside or", or(and("a = 1", "b = 2"), "c = 3"), `(a = 1 AND b = 2 OR c = 3)`},
		{"not", not("a = 1"), `NOT a = 1`},
		{"geo", geoRadius(search.GeoPoint{Lat: 48.8566, Lng: -2.3522}, 10000), `_geoRadius(48.8566, -2.3522, 10000)`},
		{"geo small numbers never use exponents", geoRadius(search.GeoPoint{Lat: 1e-7, Lng: -45}, 0.5), `_geoRadius(0.0000001, -45, 0.5)`},
		{"attr escapes what is not a-z, 0-9 or '-'", attr(prefixLastStart, "Auto Draft!"), `last_start__41_uto_20__44_raft_21_`},
		{"attr keeps hyphens", attr(prefixTitle, "pt-br"), `title_pt-br`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

func TestPageWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		offset, limit       int
		page, perPage, skip int
	}{
		{0, 0, 1, 0, 0},
		{5, 0, 1, 0, 0},
		{0, 10, 1, 10, 0},
		{10, 10, 2, 10, 0},
		{20, 10, 3, 10, 0},
		{3, 5, 1, 8, 3},
		{7, 4, 2, 6, 1},
		{1495, 10, 116, 13, 0},
		{998, 5, 84, 12, 2},
		{100000, 8, 12501, 8, 0},
	}
	for _, tt := range tests {
		page, perPage, skip := pageWindow(tt.offset, tt.limit)
		if page != tt.page || perPage != tt.perPage || skip != tt.skip {
			t.Errorf("pageWindow(%d, %d) = %d, %d, %d; want %d, %d, %d",
				tt.offset, tt.limit, page, perPage, skip, tt.page, tt.perPage, tt.skip)
		}
	}
	// Every window covers the requested range and no more than needed
	// starts before it.
	for offset := 0; offset <= 400; offset++ {
		for limit := 1; limit <= 60; limit++ {
			page, perPage, skip := pageWindow(offset, limit)
			start := (page - 1) * perPage
			if perPage < limit || start+skip != offset || offset+limit > start+perPage {
				t.Fatalf("pageWindow(%d, %d) = page %d of %d, skip %d: does not cover [%d, %d)",
					offset, limit, page, perPage, skip, offset, offset+limit)
			}
		}
	}
}
