package indexing

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/calendar/eventcal/config/limits"
)

// cutLongWords returns s with every word longer than limits.MaxWordBytes
// cut to its first MaxWordBytes bytes (on a character boundary), so that no
// engine ever sees a longer token: a multi-megabyte one-word title would
// otherwise become one term of the engine's dictionary, which Bleve's
// segment merger copies again and again.
//
// A word is a run of characters that are not spaces, control characters or
// punctuation (except '-' and '_'), and not of a script written without
// spaces (Han, Kana, Hangul, Thai...), whose characters the engines
// segment themselves. Every token an engine cuts lies inside such a run, so
// bounding the runs bounds the tokens. Text without a long run is returned
// as is, without copying.
func cutLongWords(s string) string {
	var b strings.Builder
	copied := 0 // s[:copied] is in b (once b is used)
	start := -1 // start of the current run, -1 outside a run
	for i, r := range s {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start > limits.MaxWordBytes {
			copied = cutRun(&b, s, copied, start, i)
		}
		start = -1
	}
	if start >= 0 && len(s)-start > limits.MaxWordBytes {
		copied = cutRun(&b, s, copied, start, len(s))
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// cutRun writes s[copied:end] to b with the run s[start:end] cut to
// MaxWordBytes, and returns the new copied position (end).
func cutRun(b *strings.Builder, s string, copied, start, end int) int {
	keep := start + limits.MaxWordBytes
	for keep > start && !utf8.RuneStart(s[keep]) {
		keep--
	}
	b.WriteString(s[copied:keep])
	return end
}

// isWordRune reports whether r continues a word (see cutLongWords).
func isWordRune(r rune) bool {
	switch {
	case r == '-' || r == '_':
		return true
	case unicode.IsSpace(r), unicode.IsControl(r), unicode.IsPunct(r):
		return false
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao,
		unicode.Khmer, unicode.Myanmar, unicode.Tibetan):
		return false
	}
	return true
}
