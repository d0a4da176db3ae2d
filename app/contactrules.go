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

// checkPhone accepts an empty value or any text without control
// characters or line separators.
func checkPhone(_ *request, v any) string {
	s, ok := asString(v)
	if !ok {
		return contactNotText
	}
	if lineBreaking(s) {
		return "phone" + noControlsMsg
	}
	return ""
}

// checkEmail accepts an empty value or one plain e-mail address.
func checkEmail(_ *request, v any) string {
	s, ok := asString(v)
	if !ok {
		return contactNotText
	}
	if s == "" {
		return ""
	}
	if lineBreaking(s) {
		return "email" + noControlsMsg
	}
	if !plainEmail(s) {
		return "email must be empty or one e-mail address such as name@example.org (no display name, spaces or quotes)."
	}
	return ""
}

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

// checkWebsite accepts an empty value or an absolute http or https URL
// without control characters or line separators.
func checkWebsite(_ *request, v any) string {
	s, ok := asString(v)
	if !ok {
		return contactNotText
	}
	if s == "" {
		return ""
	}
	if lineBreaking(s) {
		return "website" + noControlsMsg
	}
	if !validURL(s) {
		return "website must be empty or an absolute http or https URL such as https://example.org/page."
	}
	return ""
}

// contactNotText is the message of a contact field sent as a list or an object.
const contactNotText = "Must be a string (empty to clear), not a list or an object."
