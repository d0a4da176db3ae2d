package meilisim

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/calendar/eventcal/config/testsupport"
	"github.com/calendar/eventcal/search"
)

// An emulation of Meilisearch's search over the fake's stored documents,
// used by TestSuiteAgainstFake to run the shared conformance suite without
// a server. It checks the engine's translation (attribute names, filter
// grammar and operators, settings that a search depends on, paging, the
// edge and one-field rules), not Meilisearch itself: its tokenizer is
// search.Tokenizer with the index's nonSeparatorTokens (tokenizerOf).
// Where Meilisearch would refuse a request (an attribute not
// filterable, sortable or searchable) it refuses too; the routes cap
// totals at the index's maxTotalHits after distinct, as Meilisearch does. Its _geoRadius is
// Meilisearch's own rule, written out here from its source (not by calling
// search.DistanceM); with geoCos set, its cos stands for another C
// library's, off by a last place for some arguments.

// EmulateSearch returns the documents of an index matching a search body,
// in order, or an error message in Meilisearch's words. It applies
// neither distinct nor maxTotalHits (the routes do, in Meilisearch's
// order: searchroute.go, multisearch.go).
func (f *searchRoutes) EmulateSearch(ix *Index, body map[string]any) ([]map[string]any, *APIError) {
	docs, _, err := f.rankedSearch(ix, body)
	return docs, err
}

// rankedSearch is EmulateSearch with each document's ranking score
// (keyed by Index.KeyOf). The score is the simulator's, not Meilisearch's
// formula (crates/milli/src/score_details.rs): 1 for a placeholder
// search, and for a text query a value in (0, 1] that decreases with the
// emulated ranking (fewer typos, then an earlier attribute), so that
// ordering by it agrees with the emulated ranking rules.
func (f *searchRoutes) rankedSearch(ix *Index, body map[string]any) ([]map[string]any, map[string]float64, *APIError) {
	settings := ix.Settings
	strs := func(v any) []string {
		var out []string
		list, _ := v.([]any)
		for _, x := range list {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	bad := func(code, format string, args ...any) *APIError {
		e := NewAPIError(code, fmt.Sprintf(format, args...))
		return &e
	}

	match := func(map[string]any) bool { return true }
	if fs, ok := body["filter"].(string); ok {
		p := &filterParser{src: fs, filterable: strs(settings["filterableAttributes"]), cos: f.GeoCos}
		expr, err := p.parse()
		if err != nil {
			return nil, nil, bad("invalid_search_filter", "%v in %q", err, fs)
		}
		match = expr
	}

	// The query: words as search.ParseQuery reads them (Meilisearch's
	// tokenizer and normaliser are emulated by search.Tokenizer, with the
	// index's separators, as Meilisearch tokenizes a query: crates/milli/
	// src/search/new/mod.rs, execute_search), with typos and the last
	// word's prefix as the settings allow; a one-word phrase ("\"x\"")
	// matches exactly.
	tok := tokenizerOf(settings)
	var terms []search.Term
	if q, _ := body["q"].(string); q != "" {
		terms = tok.ParseQuery(q)
		typo, _ := settings["typoTolerance"].(map[string]any)
		for i := range terms {
			if strings.Contains(q, `"`+terms[i].Word+`"`) || typo["enabled"] != true {
				terms[i].Typos = 0
			}
			if settings["prefixSearch"] == "disabled" {
				terms[i].Prefix = false
			}
		}
	}
	searchable := strs(settings["searchableAttributes"])
	on := strs(body["attributesToSearchOn"])
	for _, a := range on {
		if !slices.Contains(searchable, a) && !slices.Equal(searchable, []string{"*"}) {
			return nil, nil, bad("invalid_search_attributes_to_search_on", "Attribute `%s` is not searchable.", a)
		}
	}
	if len(terms) > 0 && body["matchingStrategy"] != "all" {
		return nil, nil, bad("invalid_search_matching_strategy", "the fake only emulates matchingStrategy all")
	}
	// search.Term.Matches is Meilisearch's rule with disableOnNumbers on
	// (search.ExactWord): a document word of digits is stored exact.
	if typo, _ := settings["typoTolerance"].(map[string]any); len(terms) > 0 && typo["enabled"] == true && typo["disableOnNumbers"] != true {
		return nil, nil, bad("invalid_settings_typo_tolerance", "the fake only emulates typoTolerance.disableOnNumbers true")
	}

	sortable := strs(settings["sortableAttributes"])
	type sortKey struct {
		attr string
		desc bool
	}
	var keys []sortKey
	for _, s := range strs(body["sort"]) {
		attr, dir, _ := strings.Cut(s, ":")
		if !slices.Contains(sortable, attr) {
			return nil, nil, bad("invalid_search_sort", "Attribute `%s` is not sortable.", attr)
		}
		keys = append(keys, sortKey{attr, dir == "desc"})
	}

	// The words a prefix term reaches by its prefix, when Meilisearch caps
	// them (prefixReach).
	reach := make([]map[string]bool, len(terms))
	for i, t := range terms {
		reach[i] = prefixReach(ix, t)
	}
	// A document matches when each term matches one of the indexed words
	// of its searched attributes (the words' posting lists: searchIndex),
	// and the filter.
	sx := searchIndexOf(ix)
	var cand []bool // the documents (sx.docs) every term matches; nil: all
	if len(terms) > 0 {
		byWord := sx.postings(tok, on)
		for i, t := range terms {
			hit := make([]bool, len(sx.docs))
			for w, docs := range byWord {
				var ok bool
				if reach[i] != nil && w != t.Word && strings.HasPrefix(w, t.Word) {
					ok = reach[i][w]
				} else {
					ok = t.Matches(w)
				}
				if ok {
					for _, d := range docs {
						hit[d] = true
					}
				}
			}
			if cand != nil {
				for d := range hit {
					hit[d] = hit[d] && cand[d]
				}
			}
			cand = hit
		}
	}
	var out []map[string]any
	for d, doc := range sx.docs {
		if cand != nil && !cand[d] || !match(doc) {
			continue
		}
		out = append(out, doc)
	}
	slices.SortFunc(out, func(a, b map[string]any) int {
		for _, k := range keys {
			c := compareSortValues(a[k.attr], b[k.attr], k.desc)
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(sprint(a["id"]), sprint(b["id"]))
	})
	scores := make(map[string]float64, len(out))
	for _, doc := range out {
		scores[ix.KeyOf(doc)] = 1
	}
	if len(terms) > 0 {
		// The ranking rules order the hits. Emulated: fewer typos first,
		// then a match in an earlier attribute.
		rank := map[any][2]int{}
		for _, doc := range out {
			typos, firstAttr := 0, len(on)
			for _, t := range terms {
				best := 3
				for i, a := range on {
					text, _ := doc[a].(string)
					for _, w := range allWords(tok, text) {
						if !t.Matches(w) {
							continue
						}
						d := 0
						if w != t.Word && !(t.Prefix && strings.HasPrefix(w, t.Word)) {
							d = search.Distance(t.Word, w)
						}
						if d < best {
							best = d
						}
						firstAttr = min(firstAttr, i)
					}
				}
				typos += best
			}
			rank[doc["id"]] = [2]int{typos, firstAttr}
			n := float64(len(on) + 1)
			scores[ix.KeyOf(doc)] = 1 - (float64(typos)*n+float64(firstAttr))/(float64(3*len(terms)+1)*n)
		}
		if len(keys) == 0 {
			slices.SortStableFunc(out, func(a, b map[string]any) int {
				ra, rb := rank[a["id"]], rank[b["id"]]
				return cmp.Or(cmp.Compare(ra[0], rb[0]), cmp.Compare(ra[1], rb[1]))
			})
		}
	}
	return out, scores, nil
}

// searchIndex is what rankedSearch reads of an index's documents, made
// once per change of the index (Index.Writes) rather than at every
// search, which scanned and split the texts of every document: the
// documents in the order of their primary key, and for each tokenizer
// and list of searched attributes the posting lists of the words they
// index (indexedWords). It answers what the scan answered: a document
// has a word in its searched attributes exactly when the word's list
// holds it.
type searchIndex struct {
	// writes and n are the index's Writes and number of documents when
	// it was made (n also catches a test that stores a document directly
	// without counting the write).
	writes, n int
	docs      []map[string]any
	words     map[postingsKey]map[string][]int32
}

// postingsKey names the posting lists of one tokenizer and one list of
// searched attributes (joined with NUL).
type postingsKey struct {
	tok *simTokenizer
	on  string
}

// searchIndexOf returns the index's searchIndex, made anew after a
// change. The caller holds f.Mu.
func searchIndexOf(ix *Index) *searchIndex {
	if sx := ix.search; sx != nil && sx.writes == ix.Writes && sx.n == len(ix.Docs) {
		return sx
	}
	keys := slices.Sorted(maps.Keys(ix.Docs))
	sx := &searchIndex{writes: ix.Writes, n: len(ix.Docs), docs: make([]map[string]any, len(keys)), words: map[postingsKey]map[string][]int32{}}
	for i, k := range keys {
		sx.docs[i] = ix.Docs[k]
	}
	ix.search = sx
	return sx
}

// postings returns, for each word that tok indexes in the attributes on
// of some document, the documents (numbers into sx.docs, ascending, each
// once) that hold it.
func (sx *searchIndex) postings(tok *simTokenizer, on []string) map[string][]int32 {
	key := postingsKey{tok, strings.Join(on, "\x00")}
	if m, ok := sx.words[key]; ok {
		return m
	}
	m := map[string][]int32{}
	for d, doc := range sx.docs {
		for _, a := range on {
			text, _ := doc[a].(string)
			for _, w := range indexedWords(tok, text) {
				if list := m[w]; len(list) == 0 || list[len(list)-1] != int32(d) {
					m[w] = append(list, int32(d))
				}
			}
		}
	}
	sx.words[key] = m
	return m
}

// maxTotalHits is the index's pagination.maxTotalHits (default 1000).
func maxTotalHits(ix *Index) int {
	if v, ok := ix.Settings["pagination"].(map[string]any)["maxTotalHits"].(float64); ok {
		return int(v)
	}
	if v, ok := ix.Settings["pagination"].(map[string]any)["maxTotalHits"].(int); ok {
		return v
	}
	return 1000
}

// compareSortValues orders two values of a sort attribute as Meilisearch's
// sort rule does: numbers before strings, numbers numerically, strings
// lexicographically, and a document without the attribute after the
// others whatever the direction.
func compareSortValues(x, y any, desc bool) int {
	rank := func(v any) int {
		switch v.(type) {
		case float64:
			return 0
		case string:
			return 1
		}
		return 2
	}
	if rx, ry := rank(x), rank(y); rx != ry || rx == 2 {
		return cmp.Compare(rx, ry)
	}
	var c int
	if a, ok := x.(float64); ok {
		c = cmp.Compare(a, y.(float64))
	} else {
		c = cmp.Compare(x.(string), y.(string))
	}
	if desc {
		c = -c
	}
	return c
}

// emulateDistinct applies a search's distinct attribute (nil when it has
// none) to its matches found, in their order, as Meilisearch does
// (crates/milli/src/search/new/distinct.rs, bucket_sort and
// execute_search in crates/milli/src/search/new/mod.rs): hits keeps, of
// the documents sharing a value, the first in the ranking order (a
// document without the attribute is alone); the exhaustive count
// (page/hitsPerPage) is the number of hits; and facets are counted over
// apply_distinct_rule of the candidates, which walks them in INTERNAL
// document order and keeps the first of each value: not necessarily the
// hit listed. The attribute must be filterable.
func emulateDistinct(ix *Index, body map[string]any, found []map[string]any) (hits, forFacets []map[string]any, err *APIError) {
	attr, _ := body["distinct"].(string)
	if attr == "" {
		return found, found, nil
	}
	filterable, _ := ix.Settings["filterableAttributes"].([]any)
	if !slices.Contains(filterable, any(attr)) {
		e := NewAPIError("invalid_search_distinct", fmt.Sprintf("Attribute `%s` is not filterable and thus, cannot be used as distinct attribute.", attr))
		return nil, nil, &e
	}
	keep := func(docs []map[string]any) []map[string]any {
		seen := map[string]bool{}
		var out []map[string]any
		for _, d := range docs {
			v, ok := d[attr]
			if ok {
				k := sprint(v)
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, d)
		}
		return out
	}
	byInternal := slices.Clone(found)
	slices.SortFunc(byInternal, func(a, b map[string]any) int {
		return cmp.Compare(ix.Internal[ix.KeyOf(a)], ix.Internal[ix.KeyOf(b)])
	})
	return keep(found), keep(byInternal), nil
}

// emulateFacets returns the facetDistribution of a search's matches, or an
// error when a facet is not filterable (as Meilisearch refuses it).
func emulateFacets(ix *Index, body map[string]any, found []map[string]any) (map[string]map[string]int, *APIError) {
	list, _ := body["facets"].([]any)
	if len(list) == 0 {
		return nil, nil
	}
	filterable, _ := ix.Settings["filterableAttributes"].([]any)
	dist := map[string]map[string]int{}
	for _, x := range list {
		a := sprint(x)
		if !slices.Contains(filterable, any(a)) {
			e := NewAPIError("invalid_search_facets", fmt.Sprintf("Attribute `%s` is not filterable.", a))
			return nil, &e
		}
		counts := map[string]int{}
		for _, doc := range found {
			switch v := doc[a].(type) {
			case []any:
				for _, x := range v {
					counts[sprint(x)]++
				}
			case nil:
			default:
				counts[sprint(v)]++
			}
		}
		dist[a] = counts
	}
	return dist, nil
}

// filterParser parses the filter grammar of
// meilisearch/meilisearch crates/filter-parser/src/lib.rs (the part the
// engine uses) into a predicate.
type filterParser struct {
	src        string
	pos        int
	filterable []string
	// syntaxOnly parses without checking that attributes are filterable
	// (what the route checks before it enqueues a deletion by filter).
	syntaxOnly bool
	// cos is the cos of the geo distance (nil: math.Cos).
	cos func(float64) float64
}

type predicate = func(doc map[string]any) bool

func (p *filterParser) parse() (predicate, error) {
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if tok := p.next(); tok != "" {
		return nil, fmt.Errorf("unexpected %q", tok)
	}
	return e, nil
}

// next returns the next token: a punctuation mark, an operator, a quoted
// string (with its quotes, escapes still in) or a word.
func (p *filterParser) next() string {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
	if p.pos >= len(p.src) {
		return ""
	}
	start := p.pos
	c := p.src[p.pos]
	switch {
	case strings.ContainsRune("()[],", rune(c)):
		p.pos++
	case c == '!' || c == '>' || c == '<' || c == '=':
		p.pos++
		if p.pos < len(p.src) && p.src[p.pos] == '=' {
			p.pos++
		}
	case c == '"':
		p.pos++
		for p.pos < len(p.src) && p.src[p.pos] != '"' {
			if p.src[p.pos] == '\\' {
				p.pos++
			}
			p.pos++
		}
		p.pos++
	default:
		for p.pos < len(p.src) && !strings.ContainsRune(" ()[],!<>=\"", rune(p.src[p.pos])) {
			p.pos++
		}
	}
	return p.src[start:min(p.pos, len(p.src))]
}

func (p *filterParser) peek() string {
	pos := p.pos
	tok := p.next()
	p.pos = pos
	return tok
}

func (p *filterParser) expect(want string) error {
	if tok := p.next(); tok != want {
		return fmt.Errorf("expected %q, got %q", want, tok)
	}
	return nil
}

func (p *filterParser) or() (predicate, error) {
	return p.chain("OR", p.and, true)
}

func (p *filterParser) and() (predicate, error) {
	return p.chain("AND", p.not, false)
}

// chain parses sub, then more of it joined by op, into the predicate of
// them all joined: OR when decides is true (the first part that holds
// decides), AND when it is false (the first that fails decides). The
// parts are pure, so stopping at the deciding one gives the value of
// every part evaluated and joined; it spares the filter's other look-ups
// for each document the simulator filters.
func (p *filterParser) chain(op string, sub func() (predicate, error), decides bool) (predicate, error) {
	first, err := sub()
	if err != nil {
		return nil, err
	}
	parts := []predicate{first}
	for p.peek() == op {
		p.next()
		next, err := sub()
		if err != nil {
			return nil, err
		}
		parts = append(parts, next)
	}
	if len(parts) == 1 {
		return first, nil
	}
	return func(doc map[string]any) bool {
		for _, part := range parts {
			if part(doc) == decides {
				return decides
			}
		}
		return !decides
	}, nil
}

func (p *filterParser) not() (predicate, error) {
	if p.peek() == "NOT" {
		p.next()
		inner, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(doc map[string]any) bool { return !inner(doc) }, nil
	}
	return p.primary()
}

func (p *filterParser) primary() (predicate, error) {
	tok := p.next()
	switch {
	case tok == "(":
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		return e, p.expect(")")
	case tok == "_geoRadius":
		return p.geoRadius()
	case tok == "" || strings.ContainsAny(tok[:1], "()[],!<>=\""):
		return nil, fmt.Errorf("expected an attribute, got %q", tok)
	}
	field := tok
	if !p.syntaxOnly && !slices.Contains(p.filterable, field) {
		return nil, fmt.Errorf("attribute `%s` is not filterable", field)
	}
	op := p.next()
	if op == "IN" {
		if err := p.expect("["); err != nil {
			return nil, err
		}
		var values []string
		for {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			values = append(values, v)
			if sep := p.next(); sep == "]" {
				break
			} else if sep != "," {
				return nil, fmt.Errorf("expected ',' or ']', got %q", sep)
			}
		}
		in := newInSet(values)
		return func(doc map[string]any) bool { return in.has(doc[field]) }, nil
	}
	if !slices.Contains([]string{"=", "!=", ">", ">=", "<", "<="}, op) {
		return nil, fmt.Errorf("unknown operator %q", op)
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if op == "!=" {
		eq := elementTest("=", v)
		return func(doc map[string]any) bool { return !eq(doc[field]) }, nil
	}
	test := elementTest(op, v)
	return func(doc map[string]any) bool { return test(doc[field]) }, nil
}

// value reads a literal: a quoted string (unescaped as Meilisearch does)
// or a bare word.
func (p *filterParser) value() (string, error) {
	tok := p.next()
	if strings.HasPrefix(tok, `"`) {
		if len(tok) < 2 || !strings.HasSuffix(tok, `"`) {
			return "", fmt.Errorf("unterminated string %s", tok)
		}
		s, err := strconv.Unquote(tok)
		if err != nil {
			return "", fmt.Errorf("bad string %s: %v", tok, err)
		}
		return s, nil
	}
	if tok == "" || strings.ContainsAny(tok, "()[],!<>=") {
		return "", fmt.Errorf("expected a value, got %q", tok)
	}
	return tok, nil
}

func (p *filterParser) geoRadius() (predicate, error) {
	if !p.syntaxOnly && !slices.Contains(p.filterable, "_geo") {
		return nil, fmt.Errorf("attribute `_geo` is not filterable")
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var args []float64
	for i := range 3 {
		tok := p.next()
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil || strings.ContainsAny(tok, "eE") {
			return nil, fmt.Errorf("bad _geoRadius argument %q", tok)
		}
		args = append(args, f)
		if sep := p.next(); i < 2 && sep != "," || i == 2 && sep != ")" {
			return nil, fmt.Errorf("bad _geoRadius separator %q", sep)
		}
	}
	return func(doc map[string]any) bool {
		geo, ok := doc["_geo"].(map[string]any)
		if !ok {
			return false
		}
		lat, _ := geo["lat"].(float64)
		lng, _ := geo["lng"].(float64)
		return fakeDistanceM(p.cos, [2]float64{args[0], args[1]}, [2]float64{lat, lng}) <= args[2]+0x1p-52
	}, nil
}

// fakeDistanceM is Meilisearch's milli::distance_between_two_points(base,
// point) (crates/milli/src/lib.rs), which _geoRadius compares with
// `<= radius + f64::EPSILON` (the GeoLowerThan arm of the filter's
// evaluation, crates/milli/src/search/facet/filter.rs in v1.18): geoutils
// 0.5.1's haversine_distance_to (src/formula.rs), in metres, rounded to the
// millimetre, earth radius 6371e3 m, hav(θ) = (1 − cos θ) / 2, degrees to
// radians by Rust's to_radians (x · (π/180)).
func fakeDistanceM(cos func(float64) float64, start, end [2]float64) float64 {
	if cos == nil {
		cos = math.Cos
	}
	radsPerDeg := float64(math.Pi) / 180.0
	haversine := func(theta float64) float64 { return (1.0 - cos(theta)) / 2.0 }
	phi1 := start[0] * radsPerDeg
	phi2 := end[0] * radsPerDeg
	lambda1 := start[1] * radsPerDeg
	lambda2 := end[1] * radsPerDeg
	havDeltaPhi := haversine(phi2 - phi1)
	havDeltaLambda := float64(float64(cos(phi1)*cos(phi2)) * haversine(lambda2-lambda1))
	totalDelta := havDeltaPhi + havDeltaLambda
	return math.Round(2.0*6371e3*math.Asin(math.Sqrt(totalDelta))*1000.0) / 1000.0
}

// OtherLibmCos is a cos that differs from math.Cos by one unit in the last
// place for about two arguments in three (up for some, down for others,
// never beyond [-1, 1]), as another C library's may: the engine must still
// decide every point as search.GeoCircle.Contains does.
// OtherLibmCos stands for another C library's cos in _geoRadius distances (set it as Server.GeoCos).
func OtherLibmCos(x float64) float64 {
	c := math.Cos(x)
	switch math.Float64bits(x) % 3 {
	case 1:
		return min(math.Nextafter(c, 2), 1)
	case 2:
		return max(math.Nextafter(c, -2), -1)
	}
	return c
}

// elementTest returns the test of a document value against op and the
// literal lit, which compares the value (or, for an array, any of its
// elements) with lit: numerically for numbers, as the words true and
// false for booleans, exactly for strings. A missing value never
// matches. lit is parsed once, here, not for each document a filter
// reads.
func elementTest(op, lit string) func(v any) bool {
	n, err := strconv.ParseFloat(lit, 64)
	isNum := err == nil
	var num func(x float64) bool
	switch op {
	case "=":
		num = func(x float64) bool { return x == n }
	case ">":
		num = func(x float64) bool { return x > n }
	case ">=":
		num = func(x float64) bool { return x >= n }
	case "<":
		num = func(x float64) bool { return x < n }
	case "<=":
		num = func(x float64) bool { return x <= n }
	default:
		isNum = false
	}
	var test func(v any) bool
	test = func(v any) bool {
		switch x := v.(type) {
		case []any:
			return slices.ContainsFunc(x, test)
		case float64:
			return isNum && num(x)
		case bool:
			return op == "=" && strconv.FormatBool(x) == lit
		case string:
			return op == "=" && x == lit
		}
		return false
	}
	return test
}

// inSet holds the values of an IN filter so that a document is looked up
// in them at once: has(v) is elementTest("=", x)(v) for some value x, a
// number compared as a number and anything else as text, without parsing
// every value again for every document (a filter of many IDs reads every
// document of the index).
type inSet struct {
	nums map[float64]bool
	strs map[string]bool
}

// newInSet returns the inSet of an IN filter's values.
func newInSet(values []string) inSet {
	s := inSet{nums: map[float64]bool{}, strs: map[string]bool{}}
	for _, v := range values {
		s.strs[v] = true
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			s.nums[n] = true
		}
	}
	return s
}

// has reports whether v, or an element of it, equals one of the values.
func (s inSet) has(v any) bool {
	switch x := v.(type) {
	case []any:
		return slices.ContainsFunc(x, s.has)
	case float64:
		return s.nums[x]
	case bool:
		return s.strs[strconv.FormatBool(x)]
	case string:
		return s.strs[x]
	}
	return false
}

// Meilisearch's prefix rule, with its cap (crates/milli/src/search/new/
// query_term/compute_derivations.rs at v1.18.0):
//
//   - Prefixes of 1 to 4 bytes (max_prefix_length) that start 100 words or
//     more (prefix_count_threshold) are stored at indexing
//     (crates/milli/src/index.rs:1792, update/new/word_fst_builder.rs
//     PrefixFstBuilder::insert_word); such a prefix reaches every word
//     that starts with it (word_prefix_docids: use_prefix_db,
//     compute_derivations.rs:200-216).
//   - Any other prefix reaches, besides the word itself, only the first
//     MAX_PREFIX_COUNT (1,000) words starting with it, in byte order of
//     the index's words (find_zero_typo_prefix_derivations,
//     compute_derivations.rs:38-73; limits.rs MAX_PREFIX_COUNT).
//
// The words are those of every document of the index, in every searchable
// attribute, whatever a search's filter. The contract's engines have no
// cap (search.Term.Matches); docs/operators.md, "Meilisearch", documents the
// difference.
const (
	maxPrefixLength      = 4
	prefixCountThreshold = 100
	maxPrefixCount       = 1000
)

// prefixReach returns, for a prefix term whose prefix is capped, the words
// (other than the term's word) it reaches by its prefix; nil when every
// word starting with it is reached. The caller holds f.Mu.
func prefixReach(ix *Index, t search.Term) map[string]bool {
	if !t.Prefix {
		return nil
	}
	words := wordList(ix)
	i, _ := slices.BinarySearch(words, t.Word)
	n := 0
	for j := i; j < len(words) && strings.HasPrefix(words[j], t.Word); j++ {
		n++
	}
	if len(t.Word) <= maxPrefixLength && n >= prefixCountThreshold {
		return nil // a stored prefix
	}
	reach := map[string]bool{}
	for j := i; j < len(words) && strings.HasPrefix(words[j], t.Word) && len(reach) < maxPrefixCount; j++ {
		if words[j] != t.Word {
			reach[words[j]] = true
		}
	}
	if len(reach) < maxPrefixCount {
		return nil // under the cap: no word is left out
	}
	return reach
}

// wordList returns the sorted distinct words of the index's searchable
// attributes (every string attribute when they are "*"). The caller holds
// f.Mu.
func wordList(ix *Index) []string {
	if ix.Words != nil && ix.WordsAt == ix.Writes {
		return ix.Words
	}
	var searchable []string
	if list, ok := ix.Settings["searchableAttributes"].([]any); ok {
		for _, a := range list {
			searchable = append(searchable, fmt.Sprint(a))
		}
	}
	all := len(searchable) == 0 || slices.Equal(searchable, []string{"*"})
	seen := map[string]bool{}
	for _, doc := range ix.Docs {
		for a, v := range doc {
			text, ok := v.(string)
			if !ok || !all && !slices.Contains(searchable, a) {
				continue
			}
			for _, w := range indexedWords(tokenizerOf(ix.Settings), text) {
				seen[w] = true
			}
		}
	}
	ix.Words = slices.Sorted(maps.Keys(seen))
	if ix.Words == nil {
		ix.Words = []string{}
	}
	ix.WordsAt = ix.Writes
	return ix.Words
}

// MaxPositionsPerAttribute is how many word positions of one attribute
// Meilisearch indexes: MAX_POSITION_PER_ATTRIBUTE (u16::MAX + 1) in
// crates/milli/src/lib.rs, applied by the extractors
// (crates/milli/src/update/new/extract/searchable/extract_word_docids.rs).
// Words beyond it are stored but not searchable.
const MaxPositionsPerAttribute = 1 << 16

// indexedWords returns the words of an attribute's text that are
// indexed: the first MaxPositionsPerAttribute, cut by tok. The simulator
// gives each word one position; Meilisearch also advances positions on
// separators (8 for a hard one such as "."), so with punctuation the real
// cut comes earlier.
func indexedWords(tok *simTokenizer, text string) []string {
	return indexedWordsMemo.Get(tokenizedText{tok, text})
}

// tokenizedText is a text and the tokenizer that cuts it.
type tokenizedText struct {
	tok  *simTokenizer
	text string
}

// simTokenizer is a search.Tokenizer, one per distinct nonSeparatorTokens
// setting (tokenizerOf), so that its pointer identifies the setting in
// indexedWordsMemo's keys.
type simTokenizer struct{ *search.Tokenizer }

// tokenizers holds the tokenizer of each nonSeparatorTokens setting seen,
// keyed by its sorted tokens joined with NUL.
var tokenizers = testsupport.Memo[string, *simTokenizer]{F: func(key string) *simTokenizer {
	var non []string
	if key != "" {
		non = strings.Split(key, "\x00")
	}
	return &simTokenizer{search.NewTokenizer(non)}
}}

// tokenizerOf returns the tokenizer of an index with these settings.
// Meilisearch tokenizes documents and queries with charabia's
// DEFAULT_SEPARATORS less the index's nonSeparatorTokens
// (Index::allowed_separators in crates/milli/src/index.rs, given to
// charabia's TokenizerBuilder::separators); by default ('-' among the
// separators) "late-night" is the words "late" and "night", with
// nonSeparatorTokens ["-"] one word "late-night" (charabia/src/
// separators.rs, DEFAULT_SEPARATORS, holds '-' twice, as a dash and as a
// math symbol). A settings change re-indexes, so the words follow the
// index's current settings, as here, where they are cut at search time.
// separatorTokens (extra separators) are not emulated: the engine never
// sets them.
func tokenizerOf(settings map[string]any) *simTokenizer {
	var non []string
	list, _ := settings["nonSeparatorTokens"].([]any)
	for _, x := range list {
		non = append(non, fmt.Sprint(x))
	}
	slices.Sort(non)
	return tokenizers.Get(strings.Join(non, "\x00"))
}

// indexedWordsMemo remembers indexedWords' answers: a search splits the
// texts of every document of the index. Its values are shared; callers
// only read them.
var indexedWordsMemo = testsupport.Memo[tokenizedText, []string]{F: func(k tokenizedText) []string {
	w := allWords(k.tok, k.text)
	if len(w) > MaxPositionsPerAttribute {
		w = w[:MaxPositionsPerAttribute:MaxPositionsPerAttribute]
	}
	return w
}}

// allWords returns every word of text as tok cuts it (tok.Words),
// remembered: the ranking reads the words of every hit's attributes for
// each search. The slice is shared; callers only read it.
func allWords(tok *simTokenizer, text string) []string {
	return allWordsMemo.Get(tokenizedText{tok, text})
}

// allWordsMemo remembers allWords' answers.
var allWordsMemo = testsupport.Memo[tokenizedText, []string]{F: func(k tokenizedText) []string {
	return k.tok.Words(k.text)
}}
