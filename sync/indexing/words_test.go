package indexing

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/search"
)

func TestCutLongWords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 100)
	cut := strings.Repeat("a", limits.MaxWordBytes)
	accented := strings.Repeat("é", 40) // 80 bytes
	for _, tt := range []struct{ name, in, want string }{
		{"short words unchanged", "Jazz night at the Blue Note", "Jazz night at the Blue Note"},
		{"exactly the limit kept", cut, cut},
		{"long word cut", long, cut},
		{"long word between others", "x " + long + " y", "x " + cut + " y"},
		{"two long words", long + "," + long, cut + "," + cut},
		{"cut on a character boundary", accented, strings.Repeat("é", 32)},
		{"hyphens belong to the word", strings.Repeat("ab-", 30), strings.Repeat("ab-", 21) + "a"},
		{"URL parts are separate words", "https://example.test/" + strings.Repeat("path/", 30), "https://example.test/" + strings.Repeat("path/", 30)},
		{"CJK runs are left to the engine", strings.Repeat("日本語", 30), strings.Repeat("日本語", 30)},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := cutLongWords(tt.in); got != tt.want {
				t.Errorf("cutLongWords(%.40q) = %.80q, want %.80q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCutLongWordsBoundsEngineTokens checks the property the index relies
// on: after the cut, no token the engines' word splitter yields is longer
// than MaxWordBytes, and the text stays valid UTF-8.
func TestCutLongWordsBoundsEngineTokens(t *testing.T) {
	t.Parallel()
	inputs := []string{
		strings.Repeat("Ⓐ", 100), strings.Repeat("x", 5000) + "Ⅻ" + strings.Repeat("y", 70),
		strings.Repeat("ß", 3000), strings.Repeat("a\u0301", 100), strings.Repeat("1", 200) + "-" + strings.Repeat("z", 90),
		strings.Repeat("Ａ", 100), "<p>" + strings.Repeat("w", 4<<20) + "</p>",
	}
	for _, in := range inputs {
		out := cutLongWords(in)
		if !utf8.ValidString(out) {
			t.Errorf("invalid UTF-8 after cutting %.20q", in)
		}
		for _, w := range search.Words(out) {
			if len(w) > limits.MaxWordBytes {
				t.Errorf("token of %d bytes after cutting %.20q", len(w), in)
			}
		}
	}
}
