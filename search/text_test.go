package search

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain jazz", "plain jazz"},
		{"<p>Jazz <strong>Night</strong></p>", " Jazz Night "},
		{"<p>one</p><p>two</p>", " one  two "},
		{"Caf<em>é</em> &amp; th&eacute;&acirc;tre", "Café & théâtre"},
		{"a<br/>b", "a b"},
		{"x<script>var strong = 1</script>y", "x  y"},
		{"x<style>p { color: red }</style>y", "x  y"},
		{"<!-- strong -->z", "z"},
		{"5 &lt; 6 &#233;", "5 < 6 é"},
		{"unclosed <b", "unclosed "},
	}
	for _, tt := range tests {
		if got := PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWordsFold(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Été ETE ete", []string{"ete", "ete", "ete"}},
		{"CINÉMA, open-air!", []string{"cinema", "open", "air"}},
		{"ﬁlm ²", []string{"film", "2"}}, // compatibility decomposition
		{"Ærø Straße", []string{"ærø", "straße"}},
		{"über—naïve", []string{"uber", "naive"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in   string
		want []Term
	}{
		{"jaz", []Term{{Word: "jaz", Prefix: true}}},
		{"jaz ", []Term{{Word: "jaz"}}},
		{"jaz!", []Term{{Word: "jaz"}}},
		{"Summer JA", []Term{{Word: "summer", Typos: 1}, {Word: "ja", Prefix: true}}},
		{"jazz nigth", []Term{{Word: "jazz"}, {Word: "nigth", Typos: 1, Prefix: true}}},
		{"jazz jazz", []Term{{Word: "jazz"}}},
		{"festivals", []Term{{Word: "festivals", Typos: 2, Prefix: true}}},
		// The typo budget depends on the length only (disableOnNumbers
		// acts on the record's words: ExactWord).
		{"20250", []Term{{Word: "20250", Prefix: true, Typos: 1}}},
		{"3°F $20", []Term{{Word: "3°f"}, {Word: "$20", Prefix: true}}},
		{"  ", nil},
		// The first ten distinct words count; the eleventh (last) is cut,
		// so no word is a prefix.
		{"a b a c d e f g h i j k", []Term{{Word: "a"}, {Word: "b"}, {Word: "c"}, {Word: "d"}, {Word: "e"}, {Word: "f"}, {Word: "g"}, {Word: "h"}, {Word: "i"}, {Word: "j"}}},
		{"a b c d e f g h i j", []Term{{Word: "a"}, {Word: "b"}, {Word: "c"}, {Word: "d"}, {Word: "e"}, {Word: "f"}, {Word: "g"}, {Word: "h"}, {Word: "i"}, {Word: "j", Prefix: true}}},
		// A hyphenated word is its parts; the last part is the prefix.
		{"Late-night", []Term{{Word: "late"}, {Word: "night", Typos: 1, Prefix: true}}},
		{"late-nig", []Term{{Word: "late"}, {Word: "nig", Prefix: true}}},
		{"e-bike ", []Term{{Word: "e"}, {Word: "bike"}}},
		{"late-", []Term{{Word: "late"}}},
		{"-", nil},
		{"-bike", []Term{{Word: "bike", Prefix: true}}},
	}
	for _, tt := range tests {
		if got := ParseQuery(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b          string
		whole, prefix int
	}{
		{"night", "night", 0, 0},
		{"nigth", "night", 1, 1}, // adjacent transposition counts 1
		{"nihgt", "night", 1, 1},
		{"nght", "night", 1, 1},
		{"jaz", "jazz", 1, 0},
		{"concret", "concerts", 2, 1},
		{"ca", "abc", 3, 1}, // restricted: no edit inside a transposed pair
		{"été", "ete", 2, 2},
		{"", "abc", 3, 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.whole {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.whole)
		}
		if got := PrefixDistance(tt.a, tt.b); got != tt.prefix {
			t.Errorf("PrefixDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.prefix)
		}
	}
}

func TestTermMatches(t *testing.T) {
	term := func(q string) Term { return ParseQuery(q)[0] }
	tests := []struct {
		query, word string
		want        bool
	}{
		{"jazz ", "jazz", true},
		{"jazz ", "jazzy", false},
		{"jaz", "jazz", true},
		{"jaz ", "jazz", false},
		// 4 characters: no typo; 5: one typo with the same first letter.
		{"jazx ", "jazz", false},
		{"nigth ", "night", true},
		{"nigth", "nightclub", true},
		{"mught ", "night", false}, // other first letter
		{"nxxht ", "night", false}, // two typos
		// 8 characters: one typo; 9: two.
		{"festivxl ", "festival", true},
		{"festivxx ", "festival", false},
		{"festivals ", "festivaxx", true},
		{"festivals ", "xestivals", true},  // other first letter: both typos
		{"festivals ", "xestivaxs", false}, // other first letter and another typo
		{"festivasl ", "festivals", true},  // transposition
		{"efstivasl ", "festivals", false}, // first-letter transposition + another
		{"efstivals ", "festivals", true},  // first-letter transposition alone
		{"20251 ", "20250", false},         // a record word of digits is reached without typos only
		{"2025", "20250", true},            // but as a prefix too
		{"19905 ", "1990s", true},          // a query word of digits has the typos of its length
		{"19905", "1990s", true},
		{"1990s ", "19901", false}, // ... and a record word of digits none
		{"1990s", "199012", false},
		{"1990s ", "1990x", true},
		{"12-14x ", "12-14", false}, // '-' is ASCII punctuation: still an exact word
		{"12.5x ", "12.5", false},
		{"3°fx ", "3°f", false},  // '°' is neither: one typo of five characters
		{"3°fxy ", "3°f", false}, // (two typos)
		{"3°fahr ", "3°fahx", true},
		{"€2000 ", "€2001", true},       // '€' is not ASCII punctuation
		{"$2000 ", "$2001", false},      // '$' is
		{"cinema", "cinema", true},      // (folded on both sides by Words)
		{"konzertx", "konzert", true},   // prefix with a typo: deletion
		{"konzrt", "konzertsaal", true}, // distance to the closest prefix
		{"konzrtx ", "konzertsaal", false},
		{strings.Repeat("a", 251) + " ", strings.Repeat("a", 251), false}, // over Meilisearch's word length
		{strings.Repeat("a", 250) + " ", strings.Repeat("a", 250), true},
	}
	for _, tt := range tests {
		if got := term(tt.query).Matches(tt.word); got != tt.want {
			t.Errorf("term %+v matches %q = %v, want %v", term(tt.query), tt.word, got, tt.want)
		}
	}
}

func TestHighlight(t *testing.T) {
	tests := []struct{ text, query, want string }{
		{"Jazz Night at the Café", "jaz", "<mark>Jazz</mark> Night at the Café"},
		{"Jazz Night at the Café", "jazz nigth", "<mark>Jazz</mark> <mark>Night</mark> at the Café"},
		{"Été <b>&</b> cafe", "ete cafe ", "<mark>Été</mark> &lt;b&gt;&amp;&lt;/b&gt; <mark>cafe</mark>"},
		{"open-air, night", "open-air", "<mark>open</mark>-<mark>air</mark>, night"},
		{"Late-night Comedy Club", "night", "Late-<mark>night</mark> Comedy Club"},
		{"E-bike tour", "e-bik", "<mark>E</mark>-<mark>bike</mark> tour"},
		{"no match here", "zzz", "no match here"},
		// '<' and '>' do not separate words (charabia), '(' and ')' do.
		{"x<script>", "script", "x&lt;script&gt;"},
		{"x<script>", "x<script>", "<mark>x&lt;script&gt;</mark>"},
		{"x(script)", "script", "x(<mark>script</mark>)"},
	}
	for _, tt := range tests {
		if got := Highlight(tt.text, ParseQuery(tt.query)); got != tt.want {
			t.Errorf("Highlight(%q, %q) = %q, want %q", tt.text, tt.query, got, tt.want)
		}
	}
}

// TestWordsSeparators: words are cut where charabia cuts them (its
// DEFAULT_SEPARATORS), at the boundaries the issue
// named: '$', '€', '£', '°', '~', '©', '®', '™', '|', '^', '<', '>', '='
// do not separate; ASCII punctuation otherwise does, as do '_', dashes
// ('-' among them), and the multi-character "។ល។".
func TestWordsSeparators(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"3°F", []string{"3°f"}},
		{"$20 €15 £10", []string{"$20", "€15", "£10"}},
		{"a~b a©b a®b a™b a|b a^b a<b>c a=b", []string{"a~b", "a©b", "a®b", "atmb", "a|b", "a^b", "a<b>c", "a=b"}},
		{"a!b a\"b a#b a%b a&b a'b a(b)c a*b a+b a,b a.b a/b", []string{"a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "c", "a", "b", "a", "b", "a", "b", "a", "b", "a", "b"}},
		{"a:b a;b a?b a@b a[b]c a\\b a{b}c a`b a_b", []string{"a", "b", "a", "b", "a", "b", "a", "b", "a", "b", "c", "a", "b", "a", "b", "c", "a", "b", "a", "b"}},
		{"e-bike open-air", []string{"e", "bike", "open", "air"}},
		{"2026-12-01 +31-20-555-1234", []string{"2026", "12", "01", "31", "20", "555", "1234"}},
		{"a\uff0db a\ufe63b", []string{"a", "b", "a", "b"}}, // they fold to '-': separators too
		{"a\u2011b", []string{"a\u2010b"}},                  // NON-BREAKING HYPHEN is not in the list
		{"a\u2010b a\u2013b a\u2014b", []string{"a", "b", "a", "b", "a", "b"}},
		{"a\u2009b a\u3000b a\tb a\x00b", []string{"a", "b", "a", "b", "a", "b", "a", "b"}},
		// U+00A0 is not in charabia's list: one word, which NFKD then
		// writes with a space (as Meilisearch's normaliser does).
		{"a\u00a0b", []string{"a b"}},
		{"a\vb a\u00b7b", []string{"a\vb", "a", "b"}}, // \v is no separator in charabia; '·' is
		{"a\u203fb", []string{"a", "b"}},              // v0.9.6's list (v0.9.9 drops it)
		{"a\u200cb", []string{"a\u200cb"}},            // v0.9.9 adds it
		{"\u1780\u17d4\u179b\u17d4\u1780 \u179b", []string{"\u1780", "\u1780", "\u179b"}},
		{"smile 🎷 ok", []string{"smile", "🎷", "ok"}},
		{"...!?", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTokenizerNonSeparators: a tokenizer made with nonSeparatorTokens
// ["-"] (how search/meili configured its indexes before '-' separated
// words) keeps hyphenated words whole, and only the entries named leave
// the list: the other dashes still separate.
func TestTokenizerNonSeparators(t *testing.T) {
	tests := []struct {
		non  []string
		in   string
		want []string
	}{
		{nil, "Late-night e-bike", []string{"late", "night", "e", "bike"}},
		{[]string{"-"}, "Late-night e-bike", []string{"late-night", "e-bike"}},
		{[]string{"-"}, "a\u2010b a\u2013b a_b", []string{"a", "b", "a", "b", "a", "b"}},
		{[]string{"_"}, "a_b a-b", []string{"a_b", "a", "b"}},
	}
	for _, tt := range tests {
		if got := NewTokenizer(tt.non).Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("NewTokenizer(%q).Words(%q) = %q, want %q", tt.non, tt.in, got, tt.want)
		}
	}
	if got, want := NewTokenizer([]string{"-"}).ParseQuery("late-nig"), []Term{{Word: "late-nig", Typos: 1, Prefix: true}}; !slices.Equal(got, want) {
		t.Errorf("ParseQuery with '-' kept = %+v, want %+v", got, want)
	}
}

// TestSeparatorLists: the two generated lists (separators.go) differ in
// the one entry charabia added in v0.9.9 (U+200C), and hold the
// characters the tokenizer relies on.
func TestSeparatorLists(t *testing.T) {
	only := func(a, b []string) []string {
		var out []string
		for _, s := range a {
			if !slices.Contains(b, s) {
				out = append(out, s)
			}
		}
		return out
	}
	if got := only(charabiaSeparators096, charabiaSeparators099); len(got) != 0 {
		t.Errorf("only in v0.9.6: %q", got)
	}
	if got := only(charabiaSeparators099, charabiaSeparators096); !slices.Equal(got, []string{"\u200c"}) {
		t.Errorf("only in v0.9.9: %q", got)
	}
	for _, s := range []string{"\x00", ". ", ", ", "-", "_", " ", "\n", "`", "+", "\u17d4\u179b\u17d4"} {
		if !slices.Contains(charabiaSeparators096, s) {
			t.Errorf("%q missing", s)
		}
	}
}

// TestNoWordHoldsAHyphen: no character that belongs to a word folds to
// something holding '-' or '"', so no word of Words holds one: search/meili
// sends the words as they are, and Meilisearch reads "-word" after a space
// as a negation and '"' as a phrase.
func TestNoWordHoldsAHyphen(t *testing.T) {
	for r := rune(0); r <= 0x10FFFF; r++ {
		if isWordRune(r) && strings.ContainsAny(Fold(string(r)), "-\"") {
			t.Errorf("%U is a word character that folds to %q", r, Fold(string(r)))
		}
	}
}

// TestWithinAgreesWithDistance: within answers as Distance and
// PrefixDistance compared with k, for every pair of words of up to four
// letters over a small alphabet (a two-byte letter among them), and for
// words longer than its stack arrays.
func TestWithinAgreesWithDistance(t *testing.T) {
	var words []string
	var grow func(w string)
	grow = func(w string) {
		words = append(words, w)
		if utf8.RuneCountInString(w) == 4 {
			return
		}
		for _, c := range []string{"a", "b", "é"} {
			grow(w + c)
		}
	}
	grow("")
	long := strings.Repeat("ab", 40)
	words = append(words, long, long+"x", "x"+long, long[:79]+"é")
	for _, a := range words {
		for _, b := range words {
			for k := range 3 {
				if got, want := within(a, b, k, false), Distance(a, b) <= k; got != want {
					t.Fatalf("within(%q, %q, %d, whole) = %v, want %v (Distance %d)", a, b, k, got, want, Distance(a, b))
				}
				if got, want := within(a, b, k, true), PrefixDistance(a, b) <= k; got != want {
					t.Fatalf("within(%q, %q, %d, prefix) = %v, want %v (PrefixDistance %d)", a, b, k, got, want, PrefixDistance(a, b))
				}
			}
		}
	}
}

// TestWithinWork: within computes only the band of k around the diagonal
// (at most len(a)·(2k+1) cells, whatever the length of b), and stops
// early for a word that parts from a at its second letter, as the
// words a typo walk reads mostly are (a full matrix would be
// len(a)·len(b) cells).
func TestWithinWork(t *testing.T) {
	tests := []struct {
		a, b     string
		k        int
		maxCells int
	}{
		{"lecture", "lagprobe1234", 1, 4 * 3},
		{"lecture", "lagprobe1234", 2, 5 * 5},
		{"festivals", strings.Repeat("f", 200), 2, 9 * 5},
		{"festivals", "festivals" + strings.Repeat("x", 200), 1, 9 * 3},
		{"concert", "concerts", 1, 7 * 3},
	}
	for _, tt := range tests {
		for _, prefix := range []bool{false, true} {
			if _, cells := withinCells(tt.a, tt.b, tt.k, prefix); cells > tt.maxCells {
				t.Errorf("withinCells(%q, %q, %d, %v) computed %d cells, want at most %d", tt.a, tt.b, tt.k, prefix, cells, tt.maxCells)
			}
		}
	}
}

// TestTermMatchesAllocatesNothing: a typo check (what a typo walk does
// for each word it reads) allocates nothing, matching or not.
func TestTermMatchesAllocatesNothing(t *testing.T) {
	tests := []struct {
		query string
		words []string
	}{
		{"lecture", []string{"lagprobe1234", "lectures", "lcture", "lexture"}},
		{"lecture ", []string{"lagprobe1234", "lectrue", "lectur"}},
		{"festivals ", []string{"festivaxx", "fxstivals", "fairground"}},
	}
	for _, tt := range tests {
		term := ParseQuery(tt.query)[0]
		for _, w := range tt.words {
			if n := testing.AllocsPerRun(50, func() { term.Matches(w) }); n != 0 {
				t.Errorf("term %q matching %q: %v allocations, want none", tt.query, w, n)
			}
		}
	}
}
