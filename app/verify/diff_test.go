package verify

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDiffBodies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	tests := []struct {
		name   string
		isJSON bool
		a, b   string
		want   string
	}{
		{"equal", true, `{"a":1}`, `{"a":1}`, ""},
		{"scalar", true, `{"a":1,"b":"x"}`, `{"a":1,"b":"y"}`, `$.b: "x" at from, "y" at against`},
		{"nested path", true, `{"events":[{"id":1},{"id":2,"venue":{"city":"Lyon"}}]}`, `{"events":[{"id":1},{"id":2,"venue":{"city":"Lille"}}]}`,
			`$.events[1].venue.city: "Lyon" at from, "Lille" at against`},
		{"first in document order", true, `{"b":1,"a":1}`, `{"b":2,"a":2}`, `$.b: 1 at from, 2 at against`},
		{"missing key", true, `{"a":1,"b":2}`, `{"a":1}`, `$.b: 2 at from, missing at against`},
		{"extra key", true, `{"a":1}`, `{"a":1,"c":[1,2]}`, `$.c: missing at from, an array of 2 items at against`},
		{"odd key", true, `{"a b":1}`, `{"a b":2}`, `$["a b"]: 1 at from, 2 at against`},
		{"shorter array", true, `[1,2,3]`, `[1,2]`, `$[2]: 3 at from, missing at against (3 items at from, 2 at against)`},
		{"longer array", true, `[1]`, `[1,{"x":1}]`, `$[1]: missing at from, an object of 1 keys at against (1 items at from, 2 at against)`},
		{"kind", true, `{"v":[]}`, `{"v":{}}`, `$.v: an array of 0 items at from, an object of 0 keys at against`},
		{"null and false", true, `{"v":null}`, `{"v":false}`, `$.v: null at from, false at against`},
		{"number text", true, `{"v":1.0}`, `{"v":1}`, `$.v: 1.0 at from, 1 at against`},
		{"key order", true, `{"a":1,"b":2}`, `{"b":2,"a":1}`, `$: keys in another order ("a" at from, "b" at against)`},
		{"spacing", true, `{"a":1}`, `{"a": 1}`, `the same JSON values written differently (first differing byte at offset 5)`},
		{"escaping", true, `{"a":"é"}`, `{"a":"\u00e9"}`, `the same JSON values written differently (first differing byte at offset 6)`},
		{"long value", true, `{"a":"` + long + `"}`, `{"a":"y"}`, `$.a: "` + long[:79] + `… at from, "y" at against`},
		{"not JSON at against", true, `{"a":1}`, `<html>`, `the body at against is not JSON`},
		{"not JSON at from", true, `{"a":1} x`, `{"a":1}`, `the body at from is not JSON (data after the JSON document)`},
		{"neither JSON", true, "a\nb", "a\nc", `line 2: "b" at from, "c" at against`},
		{"text line", false, "BEGIN:VCALENDAR\r\nSUMMARY:A\r\nEND:VCALENDAR\r\n", "BEGIN:VCALENDAR\r\nSUMMARY:B\r\nEND:VCALENDAR\r\n",
			`line 2: "SUMMARY:A" at from, "SUMMARY:B" at against`},
		{"text missing line", false, "A\r\nB\r\n", "A\r\n", `line 2: "B" at from, missing at against (2 lines at from, 1 at against)`},
		{"text extra line", false, "A\r\n", "A\r\nB\r\n", `line 2: missing at from, "B" at against (1 lines at from, 2 at against)`},
		{"line endings", false, "A\r\nB\r\n", "A\nB\n", `the same lines with other line endings (first differing byte at offset 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diffBodies(tt.isJSON, []byte(tt.a), []byte(tt.b))
			if !strings.HasPrefix(got, tt.want) || (tt.want == "" && got != "") {
				t.Errorf("diffBodies:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestParseJSONDepth: a body nested deeper than maxDepth is refused, not
// followed (bounded work on a hostile answer).
func TestParseJSONDepth(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	if _, err := parseJSON([]byte(deep)); err != errDepth {
		t.Errorf("parseJSON of %d levels: %v, want errDepth", maxDepth+2, err)
	}
	ok := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := parseJSON([]byte(ok)); err != nil {
		t.Errorf("parseJSON of %d levels: %v", maxDepth, err)
	}
}

func TestCompareAnswers(t *testing.T) {
	t.Parallel()
	ok := func(body string) *answer {
		return &answer{status: 200, ctype: "application/json; charset=utf-8", body: []byte(body)}
	}
	notFound := &answer{status: 404, ctype: "application/json; charset=utf-8", body: []byte(`{"code":"rest-event-not-found","message":"x","data":{"status":404}}`)}
	withTotal := func(n string) *answer {
		a := ok(`[]`)
		a.totals = map[string]string{"X-WP-Total": n}
		return a
	}
	tests := []struct {
		name string
		a, b *answer
		want string
	}{
		{"equal", ok(`{}`), ok(`{}`), ""},
		{"missing at against", ok(`{}`), notFound, "missing at against: status 200 at from, 404 (rest-event-not-found) at against"},
		{"missing at from", notFound, ok(`{}`), "missing at from: status 404 (rest-event-not-found) at from, 200 at against"},
		{"two errors", &answer{status: 403}, notFound, "status 403 at from, 404 (rest-event-not-found) at against"},
		{"content type", ok(`{}`), &answer{status: 200, ctype: "text/calendar", body: []byte(`{}`)}, `Content-Type "application/json; charset=utf-8" at from, "text/calendar" at against`},
		{"total", withTotal("3"), withTotal("4"), `header X-WP-Total: "3" at from, "4" at against`},
		{"over the cap", &answer{status: 200, overCap: true}, ok(`{}`), "a body over 10 bytes (at from): not compared"},
		{"body", ok(`{"a":1}`), ok(`{"a":2}`), "$.a: 1 at from, 2 at against"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compareAnswers(tt.a, tt.b, 10); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestParseJSONAsDecoder: parseJSON's own scanner of valid documents
// gives the nodes encoding/json's tokens give (decodeJSON): key order,
// string texts as json.Marshal writes the decoded value (escapes,
// <, >, &, U+2028, invalid UTF-8), numbers as written, white space, and
// the depth bound at its edge; and a body that is not one valid
// document gets decodeJSON's error.
func TestParseJSONAsDecoder(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{}`, `[]`, ` { } `, "[ 1 ,\t2 ,\r\n3 ]", `"plain"`, `12`, `-0.5e+10`, `1E3`, `true`, `false`, `null`,
		`{"b":1,"a":[true,false,null,"x"],"c":{"d":{}}}`,
		`{"esc":"a\"b\\c\/d\n\u00e9\u0041","html":"<a href=\"x\">&amp;</a>","ls":"a` + "\u2028" + `b\u2029"}`,
		`{"utf":"Hôtel de ville 😀","bad":"a` + "\xff\xfe" + `b","key\u00e9":1,"k\"q":2,"<k>":3}`,
		"{\"ctl\":\"tab\\there\",\"del\":\"\x7f\"}",
		`["&<p>Live music</p>>","<` + "\u2027\u2028\u2029" + `&","` + "\u2029" + `","é<&>😀","x` + "\xe2\x80" + `"]`,
		`[{"id":1,"title":"Concert 01","venue":{"id":2,"city":"Lyon"}},{"id":2,"title":"Concert (fr)"}]`,
		`{"a":1,"a":2}`,
		strings.Repeat("[", maxDepth) + `"deepest"` + strings.Repeat("]", maxDepth),
		strings.Repeat("[", maxDepth+1) + `1` + strings.Repeat("]", maxDepth+1),
		strings.Repeat(`{"k":`, maxDepth+1) + `1` + strings.Repeat("}", maxDepth+1),
		// Not one valid document: decodeJSON answers.
		``, `{`, `{"a":1}x`, `{"a":1} {}`, `[1,]`, `{"a" 1}`, `nul`, `"open`,
	}
	for _, doc := range docs {
		got, gotErr := parseJSON([]byte(doc))
		want, wantErr := decodeJSON([]byte(doc))
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("parseJSON(%.60q): %s, %v; decodeJSON: %s, %v", doc, nodeString(got), gotErr, nodeString(want), wantErr)
		}
	}
}

// nodeString writes a node with its structure, for a failure message.
func nodeString(n *node) string {
	if n == nil {
		return "nil"
	}
	switch n.kind {
	case '{':
		var parts []string
		for i, k := range n.keys {
			parts = append(parts, fmt.Sprintf("%q:%s", k, nodeString(n.vals[i])))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case '[':
		var parts []string
		for _, v := range n.vals {
			parts = append(parts, nodeString(v))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return n.text
}
