package search

import (
	"html"
	"strings"
	"unicode"
)

// Highlight returns plain text HTML-escaped, with every word that matches
// one of terms (Term.Matches: exact, prefix and typo matches alike) wrapped
// in <mark></mark>. Words are taken as Words takes them, each folded on its
// own, so the marks fall on the text as written (accents and case kept).
func Highlight(text string, terms []Term) string {
	var b strings.Builder
	b.Grow(len(text) + 16)
	start := -1 // byte offset of the current word, -1 outside one
	var folded strings.Builder
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := text[start:end]
		if matchesAny(terms, folded.String()) {
			b.WriteString("<mark>")
			b.WriteString(html.EscapeString(word))
			b.WriteString("</mark>")
		} else {
			b.WriteString(html.EscapeString(word))
		}
		start = -1
		folded.Reset()
	}
	for i, r := range text {
		f := Fold(string(r))
		inWord := f != "" && strings.IndexFunc(f, func(c rune) bool { return !isWordRune(c) }) < 0
		if f == "" && start >= 0 || unicode.Is(unicode.Mn, r) && start >= 0 {
			inWord = true // a combining mark continues its word
		}
		if inWord {
			if start < 0 {
				start = i
			}
			folded.WriteString(f)
			continue
		}
		flush(i)
		b.WriteString(html.EscapeString(string(r)))
	}
	flush(len(text))
	return b.String()
}

func matchesAny(terms []Term, w string) bool {
	for _, t := range terms {
		if t.Matches(w) {
			return true
		}
	}
	return false
}
