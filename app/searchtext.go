package app

import (
	"strings"
	"unicode"
)

// searchMatchesNothing reports whether a search text has no letter and no
// digit ("*", "%", "_", "--"): such a search matches nothing and reports a
// total of 0 (decisions.md, "Search text"). It is checked here, before any
// engine sees the text, so that every engine answers the same.
func searchMatchesNothing(text string) bool {
	return text != "" && !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}
