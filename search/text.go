package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"
)

// This file holds the text-matching rules of the search contract, shared by
// the reference (search/searchtest), both engines and the highlighter:
//
//   - Indexed text is plain text (PlainText): HTML tags are removed and
//     entities decoded before words are taken.
//   - Case and accents never matter (Fold): text and query are compared
//     after NFKD, removal of combining marks and lower casing.
//   - Every query word must match a word of the record; only the first
//     MaxQueryWords distinct words count (ParseQuery).
//   - The last query word also matches as a prefix, unless the query ends
//     after it with a separator (a space).
//   - Words are cut where Meilisearch's tokenizer cuts them (Words).
//   - Typos as Meilisearch counts them by default (MaxTypos, Distance,
//     Term.Matches), with disableOnNumbers (ExactWord).

// MaxQueryWords is the number of distinct query words that count:
// Meilisearch's own limit (the rest of a longer query is ignored), applied
// by both engines.
const MaxQueryWords = 10

// MaxWordBytes is the longest query word that can match (in bytes, after
// Fold): Meilisearch's MAX_WORD_LENGTH (crates/milli/src/lib.rs), beyond
// which a query word matches nothing; it also bounds the cost of the
// distance computations.
const MaxWordBytes = 250

// The word lengths (in characters, after Fold) from which typos are
// allowed: Meilisearch's DEFAULT_MIN_WORD_LEN_ONE_TYPO and
// DEFAULT_MIN_WORD_LEN_TWO_TYPOS (crates/milli/src/index.rs).
const (
	MinWordSizeOneTypo  = 5
	MinWordSizeTwoTypos = 9
)

// inlineElements do not separate words: "Caf<em>é</em>" is one word. Every
// other tag separates the text around it ("<p>a</p><p>b</p>" is two words).
var inlineElements = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true, "code": true,
	"data": true, "dfn": true, "em": true, "i": true, "kbd": true, "mark": true, "q": true,
	"s": true, "samp": true, "small": true, "span": true, "strong": true, "sub": true,
	"sup": true, "time": true, "u": true, "var": true, "del": true, "ins": true,
}

// PlainText returns the text of an HTML fragment: tags removed, entities
// decoded, the content of script, style and template elements and comments
// dropped. Text without '<' or '&' is returned as it is.
func PlainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	z := html.NewTokenizer(strings.NewReader(s))
	skip := 0 // depth inside script/style/template
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "template":
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			}
			if !inlineElements[tag] {
				b.WriteByte(' ')
			}
		}
	}
}

// Fold returns s compared as the contract compares text: Unicode
// compatibility decomposition (NFKD), combining marks removed, lower case.
// "Été", "ETE" and "été" all fold to "ete".
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	d := norm.NFKD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Words are split as Meilisearch's tokenizer, charabia, splits them, with
// the index settings of search/meili (settingsFor): charabia cuts the raw
// text at every occurrence of one of its DEFAULT_SEPARATORS (an
// Aho-Corasick search, leftmost-longest: charabia/src/segmenter/mod.rs,
// DEFAULT_SEPARATOR_AHO and AhoSegmentedStrIter, v0.9.6), normalises each
// piece, and its classifier marks a piece that is one of those separators
// as a separator, everything else as a word (charabia/src/normalizer/
// classify.rs). The list is separators.go, generated from charabia's
// source (search/internal/gensep), not written by hand: it is neither
// "every punctuation" nor "everything but letters and digits" ('$', '€',
// '£', '°', '~', '©', '®', '™', '|', '^', '<', '>', '=' are not in it, so
// "3°F" and "$20" are one word each; '_' and '-' are).
//
// '-' separates words, as in charabia's default list: "Late-night" is the
// two words "late" and "night", "2026-12-01" the three numbers "2026",
// "12" and "01". A query is cut the same way, so "late-night" asks for
// both parts (every query word must match) and finds "Late-night Comedy
// Club" as "night" and "late" do; the whole is found by its parts.
//
// Meilisearch v1.18.0 links charabia v0.9.6, v1.50.0 charabia v0.9.9
// (their Cargo.lock); the two lists differ in one entry: v0.9.9 adds
// U+200C ZERO WIDTH NON-JOINER. The words here follow v0.9.6 (the minimum
// and the compose file's version). Characters outside the list, U+00A0
// NO-BREAK SPACE, U+000B and U+2011 NON-BREAKING HYPHEN among them, are
// part of words. Known differences that remain: charabia also cuts where
// the script changes between two letters ("abcδεζ" is two words there,
// one here) and segments Chinese, Japanese, Thai, Khmer and German
// compounds with dictionaries.

// Tokenizer cuts text into words at one list of separators: charabia's
// DEFAULT_SEPARATORS less the non-separator tokens it was made with
// (NewTokenizer). The package functions (Words, ParseQuery) use the
// tokenizer with none, which is Meilisearch's default and the contract's.
type Tokenizer struct {
	// set holds the single-character separators; seqs the longer ones
	// that contain a character that is not a separator on its own
	// ("។ល។", whose middle letter then separates too), by first rune.
	// The others (". ", ", ") are made of separators and cut the same
	// way as their characters.
	ascii [utf8.RuneSelf]bool
	set   map[rune]bool
	seqs  map[rune][]string
}

// NewTokenizer returns the tokenizer of an index whose nonSeparatorTokens
// are nonSeparators: the separators are DEFAULT_SEPARATORS less every
// entry equal to one of them, a set difference on the list's strings, as
// Meilisearch builds it (Index::allowed_separators, crates/milli/src/
// index.rs at v1.18.0) and hands it to charabia's
// TokenizerBuilder::separators, which uses it both to cut the text and
// to classify the pieces (charabia/src/tokenizer.rs, build).
func NewTokenizer(nonSeparators []string) *Tokenizer {
	t := &Tokenizer{set: map[rune]bool{}, seqs: map[rune][]string{}}
	for _, s := range charabiaSeparators096 {
		if slices.Contains(nonSeparators, s) {
			continue
		}
		if r, n := utf8.DecodeRuneInString(s); n == len(s) {
			t.set[r] = true
			if r < utf8.RuneSelf {
				t.ascii[r] = true
			}
		}
	}
	for _, s := range charabiaSeparators096 {
		if utf8.RuneCountInString(s) < 2 || slices.Contains(nonSeparators, s) {
			continue
		}
		for _, r := range s {
			if !t.set[r] {
				first, _ := utf8.DecodeRuneInString(s)
				t.seqs[first] = append(t.seqs[first], s)
				break
			}
		}
	}
	return t
}

// defaultTokenizer cuts at every one of charabia's DEFAULT_SEPARATORS.
var defaultTokenizer = NewTokenizer(nil)

// isSeparator reports whether r alone separates words.
func (t *Tokenizer) isSeparator(r rune) bool {
	if r < utf8.RuneSelf {
		return t.ascii[r]
	}
	return t.set[r]
}

// isWordRune reports whether r belongs to a word under the default
// tokenizer: it is not a separator.
func isWordRune(r rune) bool { return !defaultTokenizer.isSeparator(r) }

// separatorLen returns the length in bytes of the separator starting at
// text[i] (whose rune r is n bytes long), 0 when none does.
func (t *Tokenizer) separatorLen(text string, i int, r rune, n int) int {
	if seqs := t.seqs[r]; seqs != nil {
		for _, s := range seqs {
			if strings.HasPrefix(text[i:], s) {
				return len(s)
			}
		}
	}
	if t.isSeparator(r) {
		return n
	}
	return 0
}

// Words splits text into words at charabia's separators (see above) and
// folds each (Fold); pieces that fold to nothing are dropped. Use it on
// plain text (PlainText) or on a query.
func Words(text string) []string { return defaultTokenizer.Words(text) }

// Words splits text into words at t's separators and folds each (Fold),
// as the package function Words does at the default ones.
func (t *Tokenizer) Words(text string) []string {
	words, _ := t.splitWords(text)
	return words
}

// MaxAttributeWords is how many words of one text attribute (a title, a
// description, an excerpt, a place field, in one language) every engine
// makes searchable. Meilisearch indexes at most 65,536 word positions per
// attribute (MAX_POSITION_PER_ATTRIBUTE, u16::MAX + 1, in
// crates/milli/src/lib.rs) and drops the words past it; the embedded
// engines stop at the same count, so that the end of a very long
// description is unsearchable in every engine, not found by one and
// missed by the other. Meilisearch also advances the position on
// separators (a hard one such as '.' counts 8), so on punctuated text its
// cut comes earlier than this word count: the engines agree exactly on
// text of words and spaces, and within that margin otherwise (a
// 200,000-character description, the limit, reaches the cut only with
// words of two or three letters).
const MaxAttributeWords = 1 << 16

// IndexedWords returns the searchable words of one attribute's plain
// text: the first MaxAttributeWords of Words(text).
func IndexedWords(text string) []string {
	w := Words(text)
	return w[:min(len(w), MaxAttributeWords)]
}

// splitWords returns the words of text and whether the last one runs to
// the end of text (no separator follows it).
func (t *Tokenizer) splitWords(text string) (words []string, open bool) {
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if f := Fold(text[start:end]); f != "" {
				words = append(words, f)
			}
			start = -1
		}
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if sep := t.separatorLen(text, i, r, n); sep > 0 {
			flush(i)
			i += sep
			continue
		}
		if start < 0 {
			start = i
		}
		i += n
	}
	open = start >= 0
	flush(len(text))
	return words, open && len(words) > 0
}

// Term is one word of a query as it matches: the folded word, whether it
// also matches as a prefix, and how many typos it allows.
type Term struct {
	Word   string
	Prefix bool
	// Typos is MaxTypos(Word).
	Typos int
}

// ParseQuery returns the terms of a query: its first MaxQueryWords
// distinct words (Words), in order. The last one is a prefix when it runs
// to the end of the query (no space or other separator after it) and is
// not a repeat of an earlier word: the repeat would have to match both
// ways, which the earlier exact word already demands. A hyphenated query
// word is as many words as its parts ("e-bike" is "e" and "bike", the
// last one a prefix).
func ParseQuery(q string) []Term { return defaultTokenizer.ParseQuery(q) }

// ParseQuery returns the terms of a query cut at t's separators, by the
// rules of the package function ParseQuery.
func (t *Tokenizer) ParseQuery(q string) []Term {
	words, open := t.splitWords(q)
	var terms []Term
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			continue
		}
		if len(terms) == MaxQueryWords {
			break
		}
		seen[w] = true
		terms = append(terms, Term{Word: w, Typos: MaxTypos(w)})
	}
	if len(terms) == 0 {
		return nil
	}
	if open {
		final := words[len(words)-1]
		if last := &terms[len(terms)-1]; last.Word == final && !slicesContainsBefore(words, final) {
			last.Prefix = true
		}
	}
	return terms
}

// slicesContainsBefore reports whether the last word of words also appears
// earlier.
func slicesContainsBefore(words []string, w string) bool {
	for _, x := range words[:len(words)-1] {
		if x == w {
			return true
		}
	}
	return false
}

// MaxTypos is the number of typos a folded query word allows: none below
// MinWordSizeOneTypo characters, one up to MinWordSizeTwoTypos-1, two from
// there. It depends on the length only, digits or not: Meilisearch's
// typoTolerance.disableOnNumbers acts on the words of the documents, not
// on the query's (see ExactWord).
func MaxTypos(w string) int {
	n := utf8.RuneCountInString(w)
	switch {
	case n < MinWordSizeOneTypo:
		return 0
	case n < MinWordSizeTwoTypos:
		return 1
	}
	return 2
}

// ExactWord reports whether a folded record word is reached without typos
// only: every character is numeric or ASCII punctuation. That is
// Meilisearch's typoTolerance.disableOnNumbers, which search/meili turns
// on: at indexing such a word goes to the exact word store
// (crates/milli/src/disabled_typos_terms.rs, DisabledTyposTerms::is_exact,
// used by crates/milli/src/update/new/extract/searchable/
// extract_word_docids.rs:322-327 at v1.18.0), which a query word reaches
// as itself or as a prefix (Word::Original in crates/milli/src/search/new/
// db_cache.rs:183-205, and find_zero_typo_prefix_derivations in
// query_term/compute_derivations.rs:38-73), never by a typo derivation
// (Word::Derived reads word_docids only). So "19905" finds "1990s" but not
// "19901", and "1990s" does not find "19901".
func ExactWord(w string) bool {
	for _, r := range w {
		// Rust's char::is_numeric (Unicode Nd, Nl, No) and
		// char::is_ascii_punctuation (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~).
		asciiPunct := r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
		if !unicode.IsNumber(r) && !asciiPunct {
			return false
		}
	}
	return true
}

// Distance is the restricted Damerau-Levenshtein (optimal string
// alignment) distance between a and b, in characters: insertions,
// deletions, substitutions and transpositions of two adjacent characters
// each cost 1. It is the distance of Meilisearch's Levenshtein automata
// (built with transpositions).
func Distance(a, b string) int {
	d, _ := distances([]rune(a), []rune(b))
	return d
}

// PrefixDistance is the smallest Distance between a and a prefix of b
// (the empty prefix included): the distance of Meilisearch's prefix
// automata.
func PrefixDistance(a, b string) int {
	_, p := distances([]rune(a), []rune(b))
	return p
}

// distances returns Distance(a, b) and the smallest distance between a and
// a prefix of b.
func distances(a, b []rune) (whole, prefix int) {
	// rows i-2, i-1 and i of the OSA matrix (a along rows, b along columns).
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
		}
		prev2, prev, cur = prev, cur, prev2
	}
	prefix = prev[0]
	for _, v := range prev {
		prefix = min(prefix, v)
	}
	return prev[len(b)], prefix
}

// Matches reports whether the folded record word w matches the term:
//
//   - nothing when the term's word is longer than MaxWordBytes;
//   - equal to the term's word, or, for a prefix term, starting with it;
//   - else, unless w is an ExactWord, within the term's typos: a word with the same first letter at
//     distance up to Typos; a word with another first letter at distance
//     up to Typos-1 (the changed first letter counts as two typos,
//     compute_derivations.rs in Meilisearch's milli). For a prefix term the
//     distance is to the closest prefix of w.
func (t Term) Matches(w string) bool {
	if len(t.Word) > MaxWordBytes {
		return false
	}
	if w == t.Word || t.Prefix && strings.HasPrefix(w, t.Word) {
		return true
	}
	if t.Typos == 0 || ExactWord(w) {
		return false
	}
	budget := t.Typos
	f1, _ := utf8.DecodeRuneInString(t.Word)
	f2, _ := utf8.DecodeRuneInString(w)
	if f1 != f2 {
		budget--
	}
	if budget <= 0 {
		return false
	}
	if !t.Prefix {
		// The lengths alone bound the distance from below.
		if diff := utf8.RuneCountInString(w) - utf8.RuneCountInString(t.Word); diff > budget || -diff > budget {
			return false
		}
		return within(t.Word, w, budget, false)
	}
	if utf8.RuneCountInString(w) < utf8.RuneCountInString(t.Word)-budget {
		return false
	}
	return within(t.Word, w, budget, true)
}

// within reports whether Distance(a, b) (prefix: PrefixDistance(a, b))
// is at most k, as Matches asks it of every word a typo walk reads: the
// words sharing a query word's first letter, most of them far from it.
// So it computes only the band of the matrix within k of the diagonal
// (a cell outside is more than k), stops once two rows in a row exceed
// k (no later row can come back under), reads at most len(a)+k
// characters of b, and allocates nothing for words of up to
// withinStack characters.
func within(a, b string, k int, prefix bool) bool {
	ok, _ := withinCells(a, b, k, prefix)
	return ok
}

// withinStack is the length, in characters, up to which within works in
// arrays on the stack.
const withinStack = 64

// withinCells is within, also returning the number of matrix cells it
// computed (the work, for the tests).
func withinCells(a, b string, k int, prefix bool) (ok bool, cells int) {
	var abuf, bbuf [withinStack]rune
	ra := appendRunes(abuf[:0], a, -1)
	n := len(ra)
	// No column past n+k can end within k: read one more to know whether
	// b is longer.
	rb := appendRunes(bbuf[:0], b, n+k+1)
	if len(rb) > n+k {
		if !prefix {
			return false, 0
		}
		rb = rb[:n+k]
	}
	m := len(rb)
	if n-m > k {
		return false, 0 // the last row's band holds no column
	}
	inf := k + 1 // any distance over k
	var rowBuf [3 * (withinStack + 8)]int
	var rows []int
	if w := 3 * (m + 2); w <= len(rowBuf) {
		rows = rowBuf[:w]
	} else {
		rows = make([]int, w)
	}
	// Rows i-2, i-1 and i of the OSA matrix (a along rows, b along
	// columns), as distances: each row holds columns i-k-1 to i+k+1, the
	// two ends inf.
	prev2, prev, cur := rows[:m+2], rows[m+2:2*(m+2)], rows[2*(m+2):]
	for j := range prev {
		prev[j] = min(j, inf)
	}
	prevMin := 0
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		cur[lo-1] = inf
		if lo == 1 {
			cur[0] = min(i, inf)
		}
		rowMin := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, inf)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		cells += max(0, hi-lo+1)
		cur[hi+1] = inf
		// A cell takes the minimum over the row above, or two above
		// plus one: once two rows exceed k, every later one does.
		if rowMin > k && prevMin > k {
			return false, cells
		}
		prevMin = rowMin
		prev2, prev, cur = prev, cur, prev2
	}
	if !prefix {
		return prev[m] <= k, cells
	}
	for j := max(0, n-k); j <= min(m, n+k); j++ {
		if prev[j] <= k {
			return true, cells
		}
	}
	return false, cells
}

// appendRunes appends the characters of s to dst, at most limit of them
// (no limit when negative).
func appendRunes(dst []rune, s string, limit int) []rune {
	for _, r := range s {
		if len(dst) == limit {
			break
		}
		dst = append(dst, r)
	}
	return dst
}

// Known differences from Meilisearch, which caps what one query word
// reaches (crates/milli/src/search/new/limits.rs at v1.18.0): a prefix
// that was not stored at indexing (longer than 4 bytes, or starting fewer
// than 100 words) reaches only the first 1,000 words starting with it in
// byte order (MAX_PREFIX_COUNT, compute_derivations.rs:62), and typo
// derivations stop at 150 words with one typo and 50 with two. Matches has
// no cap; search/meili's fake models the prefix cap (prefixReach) and
// docs/operators.md ("Meilisearch") describes when it can matter.

// MatchesAny reports whether any of the folded words matches the term.
func (t Term) MatchesAny(words []string) bool {
	for _, w := range words {
		if t.Matches(w) {
			return true
		}
	}
	return false
}
