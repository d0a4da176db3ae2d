package search

import (
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
//   - Typos as Meilisearch counts them by default (MaxTypos, Distance,
//     Term.Matches).

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

// isWordRune reports whether r belongs to a word: letters, digits and '-'
// (reference 7.1).
func isWordRune(r rune) bool {
	return r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// Words splits text into folded words (Fold) on every character other than
// letters, digits and '-'. Use it on plain text (PlainText) or on a query.
func Words(text string) []string {
	return strings.FieldsFunc(Fold(text), func(r rune) bool { return !isWordRune(r) })
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
// ways, which the earlier exact word already demands.
func ParseQuery(q string) []Term {
	words := Words(q)
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
	last, _ := utf8.DecodeLastRuneInString(Fold(q))
	if isWordRune(last) {
		final := words[len(words)-1]
		if t := &terms[len(terms)-1]; t.Word == final && !slicesContainsBefore(words, final) {
			t.Prefix = true
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
// there. Words made only of digits (and '-', the one punctuation a word
// holds) never allow typos: Meilisearch's typoTolerance.disableOnNumbers,
// which exempts words whose every character is numeric or ASCII
// punctuation (crates/milli/src/disabled_typos_terms.rs).
func MaxTypos(w string) int {
	digits := true
	for _, r := range w {
		if !unicode.IsNumber(r) && r != '-' {
			digits = false
			break
		}
	}
	n := utf8.RuneCountInString(w)
	switch {
	case digits || n < MinWordSizeOneTypo:
		return 0
	case n < MinWordSizeTwoTypos:
		return 1
	}
	return 2
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
//   - else, within the term's typos: a word with the same first letter at
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
	if t.Typos == 0 {
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
		return Distance(t.Word, w) <= budget
	}
	if utf8.RuneCountInString(w) < utf8.RuneCountInString(t.Word)-budget {
		return false
	}
	return PrefixDistance(t.Word, w) <= budget
}

// MatchesAny reports whether any of the folded words matches the term.
func (t Term) MatchesAny(words []string) bool {
	for _, w := range words {
		if t.Matches(w) {
			return true
		}
	}
	return false
}
