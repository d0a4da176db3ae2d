package app

import (
	"net/mail"
	"strings"
	"unicode"
)

// Contact fields (issue 19, item 6; README "Security"). The original checks
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

// lineBreaking reports whether s holds a character no contact field may
// hold: a control character or a Unicode line or paragraph separator.
func lineBreaking(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	})
}

// noControlsMsg is the message for a contact field that holds one.
const noControlsMsg = " must not contain line breaks, tabs or other control characters."

// contactCheck returns the validator of the contact field named field:
// an empty value passes, a value with a control character or line
// separator is refused, and any other must satisfy valid (nil: any text),
// else the answer is the field's name followed by expected.
func contactCheck(field string, valid func(string) bool, expected string) func(*request, any) string {
	return func(_ *request, v any) string {
		s, ok := asString(v)
		switch {
		case !ok:
			return contactNotText
		case s == "":
			return ""
		case lineBreaking(s):
			return field + noControlsMsg
		case valid != nil && !valid(s):
			return field + expected
		}
		return ""
	}
}

var (
	// checkPhone accepts any text without control characters or line
	// separators.
	checkPhone = contactCheck("phone", nil, "")
	// checkEmail accepts one plain e-mail address.
	checkEmail = contactCheck("email", plainEmail,
		" must be empty or one e-mail address such as name@example.org (no display name, spaces or quotes).")
	// checkWebsite accepts an absolute http or https URL.
	checkWebsite = contactCheck("website", validURL,
		" must be empty or an absolute http or https URL such as https://example.org/page.")
)

// plainEmail reports whether s (spaces around it aside) is exactly one
// address net/mail accepts, with no display name and no white space or
// DQUOTE in it.
func plainEmail(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '"' }) {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// contactNotText is the message of a contact field sent as a list or an object.
const contactNotText = "Must be a string (empty to clear), not a list or an object."
