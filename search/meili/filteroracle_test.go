package meili

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calendar/eventcal/search"
)

// The filter-parser oracle: Meilisearch's own crates/filter-parser (the
// code Meilisearch runs on every filter it receives) at v1.18.0 and
// v1.50.0, each built as a small command, fpcheck, that reads one filter
// per line on stdin, written as a JSON string (json.Marshal(filter)), and
// answers one line per filter, in order: "OK\t<JSON array>" (the parsed
// tree depth-first: operators such as "AND2", attribute names and values
// as Meilisearch reads them, after its unescaping), "OK\tempty" (an empty
// filter), "ERR\t<message>" (Meilisearch would answer
// invalid_search_filter) or "PANIC". The commands are not part of the
// repository (they are Rust builds for one machine): set
// MEILI_FILTER_PARSER to a directory holding v1.18.0/fpcheck and
// v1.50.0/fpcheck to run the test; without it the test skips.
// TestFiltersParseAsMeant builds the filters of generated queries (every
// list parameter alone and in every combination, with hostile strings and
// extreme numbers), sends all of them to each version in one process, and
// checks that every filter parses to the conditions the query meant, with
// the same values.

// filterParserEnv names the directory of the oracle's builds.
const filterParserEnv = "MEILI_FILTER_PARSER"

// fpcheckPath returns the oracle of a version under MEILI_FILTER_PARSER,
// or "" when the variable is not set; a set variable without the version's
// command fails the test (a misconfiguration must not pass as a skip).
func fpcheckPath(t *testing.T, version string) string {
	t.Helper()
	dir := os.Getenv(filterParserEnv)
	if dir == "" {
		return ""
	}
	p := filepath.Join(dir, version, "fpcheck")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: no filter parser for %s: %v", filterParserEnv, dir, version, err)
	}
	return p
}

// runFpcheck parses every filter with one run of the oracle and returns
// its answer lines, in order.
func runFpcheck(t *testing.T, path string, filters []string) []string {
	t.Helper()
	var in bytes.Buffer
	for _, f := range filters {
		raw, _ := json.Marshal(f)
		in.Write(raw)
		in.WriteByte('\n')
	}
	cmd := exec.CommandContext(t.Context(), path)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != len(filters) {
		t.Fatalf("%s: %d answers for %d filters", path, len(lines), len(filters))
	}
	return lines
}

// oracleNode renders the oracle's depth-first tree from position i as a
// canonical string: AND and OR children sorted (their order does not
// change the meaning), values quoted with %q. It returns the position
// after the node.
func oracleNode(tokens []string, i int) (string, int, error) {
	if i >= len(tokens) {
		return "", i, fmt.Errorf("tree ends early")
	}
	tok := tokens[i]
	for _, op := range []string{"AND", "OR"} {
		if n, err := strconv.Atoi(strings.TrimPrefix(tok, op)); strings.HasPrefix(tok, op) && err == nil {
			var kids []string
			j := i + 1
			for range n {
				var kid string
				if kid, j, err = oracleNode(tokens, j); err != nil {
					return "", j, err
				}
				kids = append(kids, kid)
			}
			slices.Sort(kids)
			return op + "(" + strings.Join(kids, ", ") + ")", j, nil
		}
	}
	switch tok {
	case "NOT":
		kid, j, err := oracleNode(tokens, i+1)
		return "NOT(" + kid + ")", j, err
	case "GEO":
		if i+3 >= len(tokens) {
			return "", i, fmt.Errorf("GEO ends early")
		}
		return fmt.Sprintf("GEO(%s, %s, %s)", tokens[i+1], tokens[i+2], tokens[i+3]), i + 4, nil
	}
	if i+1 >= len(tokens) {
		return "", i, fmt.Errorf("condition ends early")
	}
	field, op := tok, tokens[i+1]
	if n, err := strconv.Atoi(strings.TrimPrefix(op, "IN")); strings.HasPrefix(op, "IN") && err == nil {
		if i+2+n > len(tokens) {
			return "", i, fmt.Errorf("IN ends early")
		}
		vals := make([]string, n)
		for k, v := range tokens[i+2 : i+2+n] {
			vals[k] = strconv.Quote(v)
		}
		return field + " IN [" + strings.Join(vals, ", ") + "]", i + 2 + n, nil
	}
	if i+2 >= len(tokens) {
		return "", i, fmt.Errorf("comparison ends early")
	}
	return field + " " + op + " " + strconv.Quote(tokens[i+2]), i + 3, nil
}

// meant is the canonical form (as oracleNode writes it) of conditions.
func meant(conds []string) string {
	switch len(conds) {
	case 0:
		return "empty"
	case 1:
		return conds[0]
	}
	conds = slices.Clone(conds)
	slices.Sort(conds)
	return "AND(" + strings.Join(conds, ", ") + ")"
}

// Conditions as the oracle reads them, written from the query's values
// (not with the builders under test).
func condIn[T int64 | string](field string, vs []T) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(fmt.Sprint(v))
	}
	return field + " IN [" + strings.Join(q, ", ") + "]"
}

func condCmp(field, op string, v any) string {
	return field + " " + op + " " + strconv.Quote(fmt.Sprint(v))
}

// hostile are string values a filter must carry unchanged.
var hostile = []string{
	"publish", `say "hi"`, `"`, `\`, `\"`, `trailing\`, `\\`, `a\b`, `\n`, `\u{41}`, "real\nnewline\ttab",
	"café", "Île-de-France", "日本語 \"引用\"", "emoji 🎷\\🎺", "AND OR NOT ( ) [ ] = 'x'", "]", ", ", "x' OR 1=1",
	"  padded  ", "TO", "IN [", "_geoRadius(1, 2, 3)", "\u200b", "ﬁ",
}

func TestFiltersParseAsMeant(t *testing.T) {
	t.Parallel()
	versions := []string{"v1.18.0", "v1.50.0"}
	paths := map[string]string{}
	for _, v := range versions {
		if paths[v] = fpcheckPath(t, v); paths[v] == "" {
			t.Skipf("needs Meilisearch's own filter parser as a command: set %s to a directory holding %s/fpcheck (crates/filter-parser of that Meilisearch release, built as the line reader described in search/meili/filteroracle_test.go)", filterParserEnv, v)
		}
	}

	type filterCase struct {
		name   string
		filter string
		want   string
	}
	var cases []filterCase

	// Event queries: every subset of the list parameters, each with a few
	// value sets (hostile strings, extreme numbers), and the scalar
	// parameters on or off.
	idSets := [][]int64{{1}, {3, 1, 2}, {math.MaxInt64, math.MinInt64, 0, -1}, {9007199254740993}}
	statusSets := [][]string{{"publish"}, hostile[:8], hostile[8:16], hostile[16:]}
	lists := []string{"statuses", "ids", "categories", "tags", "venues", "organizers"}
	for mask := 1; mask < 1<<len(lists); mask++ {
		for vs := range 4 {
			var q search.EventQuery
			var want []string
			set := func(k int) bool { return mask&(1<<k) != 0 }
			ids := idSets[(vs+mask)%len(idSets)]
			if set(0) {
				q.Statuses = statusSets[vs]
				want = append(want, condIn(attrStatus, q.Statuses))
			}
			for k, target := range []*[]int64{&q.IDs, &q.CategoryIDs, &q.TagIDs, &q.VenueIDs, &q.OrganizerIDs} {
				if set(k + 1) {
					*target = ids
					want = append(want, condIn([]string{attrID, attrCategoryIDs, attrTagIDs, attrVenueIDs, attrOrganizerIDs}[k], ids))
				}
			}
			if vs%2 == 1 {
				q.StartGTE, q.EndLT = search.Some(int64(math.MinInt64)), search.Some(int64(math.MaxInt64))
				q.Featured, q.ParentID, q.ExcludeHidden = search.Some(false), search.Some(int64(-7)), true
				want = append(want, condCmp(attrStart, ">=", int64(math.MinInt64)), condCmp(attrEnd, "<", int64(math.MaxInt64)),
					condCmp(attrFeatured, "=", false), condCmp(attrParentID, "=", -7), condCmp(attrHideFromListings, "=", false))
			}
			if vs == 2 {
				q.StartGT, q.StartLT, q.EndLTE, q.EndGT = search.Some(int64(0)), search.Some(int64(1)), search.Some(int64(2)), search.Some(int64(-3))
				q.Ticketed, q.HasGeo, q.ExcludeProtected = search.Some(true), search.Some(true), true
				want = append(want, condCmp(attrStart, ">", 0), condCmp(attrStart, "<", 1), condCmp(attrEnd, "<=", 2), condCmp(attrEnd, ">", -3),
					condCmp(attrTicketed, "=", true), condCmp(attrHasGeo, "=", true), condCmp(attrHasPassword, "=", false))
			}
			cases = append(cases, filterCase{fmt.Sprintf("events %06b/%d", mask, vs), eventFilter(q), meant(want)})
		}
	}

	// Place queries: statuses, IDs, has_events and the upcoming rule (an
	// OR over the statuses' attributes), alone and together.
	v := vocabulary{statuses: append(slices.Clone(defaultStatuses), `x"y`, "日本")}
	for mask := 1; mask < 1<<4; mask++ {
		for vs := range 2 {
			var q search.PlaceQuery
			var want []string
			if mask&1 != 0 {
				q.Statuses = statusSets[vs*2+1]
				want = append(want, condIn(attrStatus, q.Statuses))
			}
			if mask&2 != 0 {
				q.IDs = idSets[2]
				want = append(want, condIn(attrID, q.IDs))
			}
			if mask&4 != 0 {
				q.HasEvents = search.Some(vs == 0)
				want = append(want, condCmp(attrHasEvents, "=", vs == 0))
			}
			if mask&8 != 0 {
				after := []int64{0, 1735689600}[vs]
				q.UpcomingAfter, q.UpcomingStatuses = search.Some(after), []string{"publish", `x"y`, "日本"}
				var alts []string
				for _, st := range q.UpcomingStatuses {
					f := attr(prefixLastStart, st)
					alt := condCmp(f, ">=", after)
					if after <= 0 {
						alt = "AND(" + strings.Join(slices.Sorted(slices.Values([]string{alt, condCmp(f, "!=", 0)})), ", ") + ")"
					}
					alts = append(alts, alt)
				}
				slices.Sort(alts)
				want = append(want, "OR("+strings.Join(alts, ", ")+")")
			}
			f, ok := placeFilter(q, v)
			if !ok {
				t.Fatalf("place query %+v matches nothing", q)
			}
			cases = append(cases, filterCase{fmt.Sprintf("places %04b/%d", mask, vs), f, meant(want)})
		}
	}

	// Geo circles: the numbers of _geoRadius and the edge ring, extreme
	// and tiny ones included. (NaN and ±Inf never get here: the API
	// refuses them, and the parser would refuse them too.)
	points := []search.GeoPoint{{Lat: 52.3676, Lng: 4.9041}, {Lat: -90, Lng: -180}, {Lat: 90, Lng: 180}, {Lat: 5e-324, Lng: -5e-324},
		{Lat: 0.1 + 0.2, Lng: 1.0 / 3}, {Lat: math.Copysign(0, -1), Lng: 1e-7}}
	for i, c := range points {
		for _, r := range []float64{0.001, 5000, 1.5e-9, search.MaxDistanceM} {
			geo := func(m float64) string {
				return fmt.Sprintf("GEO(%s, %s, %s)", number(c.Lat), number(c.Lng), number(m))
			}
			cases = append(cases,
				filterCase{fmt.Sprintf("geo %d %v", i, r), geoRadius(c, r), geo(r)},
				filterCase{fmt.Sprintf("ring %d %v", i, r), and(eq(attrHasGeo, true), geoRadius(c, r+1), not(geoRadius(c, r))),
					meant([]string{condCmp(attrHasGeo, "=", true), geo(r + 1), "NOT(" + geo(r) + ")"})},
				filterCase{fmt.Sprintf("inside %d %v", i, r), or(geoRadius(c, r), in(attrKey, []string{"4", "5-20270304T190000"})),
					"OR(" + strings.Join(slices.Sorted(slices.Values([]string{geo(r), condIn(attrKey, []string{"4", "5-20270304T190000"})})), ", ") + ")"})
		}
	}

	filters := make([]string, len(cases))
	for i, c := range cases {
		filters[i] = c.filter
	}
	for _, version := range versions {
		answers := runFpcheck(t, paths[version], filters)
		for i, c := range cases {
			got := answers[i]
			rest, ok := strings.CutPrefix(got, "OK\t")
			if !ok {
				t.Errorf("%s %s: %q does not parse: %s", version, c.name, c.filter, got)
				continue
			}
			if rest == "empty" {
				if c.want != "empty" {
					t.Errorf("%s %s: %q parses as empty", version, c.name, c.filter)
				}
				continue
			}
			var tokens []string
			if err := json.Unmarshal([]byte(rest), &tokens); err != nil {
				t.Fatalf("%s: answer %q: %v", version, got, err)
			}
			tree, end, err := oracleNode(tokens, 0)
			if err == nil && end != len(tokens) {
				err = fmt.Errorf("%d tokens left", len(tokens)-end)
			}
			if err != nil || tree != c.want {
				t.Errorf("%s %s: %q\nparses as %s (%v)\nmeant      %s", version, c.name, c.filter, tree, err, c.want)
			}
		}
	}
	// The geo numbers read back as the same floats.
	for _, c := range points {
		for _, s := range []string{number(c.Lat), number(c.Lng)} {
			if f, err := strconv.ParseFloat(s, 64); err != nil || f != c.Lat && f != c.Lng {
				t.Errorf("%s does not read back: %v, %v", s, f, err)
			}
		}
	}
}
