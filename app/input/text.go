package input

import (
	"net/mail"
	"strings"
	"unicode"
)

// SearchMatchesNothing reports whether a search text has no letter and no
// digit ("*", "%", "_", "--"): such a search matches nothing and reports a
// total of 0 (decisions.md, "Search text"). It is checked here, before any
// engine sees the text, so that every engine answers the same.
func SearchMatchesNothing(text string) bool {
	return text != "" && !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// Contact fields (issue 19, item 6; docs/operators.md, "Output escaping and contact fields"). The original checks
// none of them but `website` (reference 6.1, 7.3, 8: "empty or string" for
// e-mail and phone, "empty or URL" for website). We accept what a person
// would type and refuse what can only break an output format:
//
//   - every contact field: no control character (C0, DEL, C1: CR, LF and
//     TAB included) and no Unicode line or paragraph separator (U+2028,
//     U+2029), which some formats and clients read as a line break;
//   - email: one plain address as net/mail parses it (name@example.org; no
//     display name, no list, no white space), since feeds write it as the
//     ORGANIZER's mailto: address;
//   - website: an absolute http or https URL (net/url), as before;
//   - phone: any other text (numbers are written in too many ways to check).
//
// Values stored before these checks existed are still made safe when
// written out: every format escapes what it renders (app/ical).

// LineBreaking reports whether s holds a character no contact field may
// hold: a control character or a Unicode line or paragraph separator.
func LineBreaking(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
}

// PlainEmail reports whether s (spaces around it aside) is exactly one
// address net/mail accepts, with no display name and no white space or
// DQUOTE in it.
func PlainEmail(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '"' }) {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}
