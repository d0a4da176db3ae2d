package ical

import (
	"io"
	"math"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the one place where iCalendar output is escaped. Every value
// a feed writes goes through one of the encoders below, chosen by the
// value's RFC 5545 type, and every line goes through writeLine, which folds
// it. Nothing else in the package writes bytes.
//
// Why not a library's serializer: github.com/arran4/golang-ical (still used
// by the tests as a parser) escapes parameter values with backslashes,
// which RFC 5545 3.2 does not define, and passes CR and LF in URI and
// CAL-ADDRESS values through, so a stored organizer e-mail of
// "a@b.c\r\nEND:VEVENT..." forged a second event; github.com/emersion/go-ical
// quotes correctly but does not fold lines and refuses an empty calendar.
//
// The rules (docs/operators.md, "Output escaping and contact fields"):
//   - TEXT (3.3.11): backslash, ';' and ',' are backslash-escaped; every line
//     break (CRLF, CR, LF, VT, FF, NEL, U+2028, U+2029) becomes "\n"; other
//     control characters (C0 but TAB, DEL, C1) and invalid UTF-8 are
//     dropped.
//   - URI (3.3.13) and CAL-ADDRESS (3.3.3): the value must parse (net/url;
//     net/mail for an e-mail), is written in its canonical percent-encoded
//     form, and must not hold a control character, white space or DQUOTE;
//     a value that fails is left out, never written.
//   - Parameter values (3.2): line breaks and control characters become a
//     space, DQUOTE (not allowed even inside quotes) becomes an apostrophe,
//     and a value holding ':', ';' or ',' is written between DQUOTEs.
//   - Content lines (3.1) end with CRLF and are folded at 75 octets, never
//     inside a UTF-8 sequence.

// maxLineOctets is the longest content line RFC 5545 3.1 allows, CRLF
// excluded.
const maxLineOctets = 75

// param is one property parameter.
type param struct{ name, value string }

// contentWriter writes content lines and keeps the first write error.
type contentWriter struct {
	w   io.Writer
	err error
	buf []byte
}

// line writes NAME;PARAM=value...:value, folded. value must already be
// encoded for its type (textValue, uriValue, ...), so it holds no line
// break; paramValue is applied to the parameters here.
func (cw *contentWriter) line(name, value string, params ...param) {
	if cw.err != nil {
		return
	}
	b := cw.buf[:0]
	b = append(b, name...)
	for _, p := range params {
		b = append(b, ';')
		b = append(b, p.name...)
		b = append(b, '=')
		b = append(b, paramValue(p.value)...)
	}
	b = append(b, ':')
	b = append(b, value...)
	cw.buf = b
	cw.err = writeFolded(cw.w, b)
}

// writeFolded writes one content line with CRLF, folded so that no line
// exceeds maxLineOctets: a continuation line starts with a space, and a
// fold never falls inside a UTF-8 sequence.
func writeFolded(w io.Writer, b []byte) error {
	out := make([]byte, 0, len(b)+len(b)/maxLineOctets*3+2)
	limit := maxLineOctets
	for len(b) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		out = append(out, b[:cut]...)
		out = append(out, '\r', '\n', ' ')
		b = b[cut:]
		limit = maxLineOctets - 1 // the leading space counts
	}
	out = append(out, b...)
	out = append(out, '\r', '\n')
	_, err := w.Write(out)
	return err
}

// isLineBreak reports whether r ends a line in some convention.
func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// isControl reports whether r is a control character RFC 5545 keeps out
// of values (TAB excepted, which TEXT allows).
func isControl(r rune) bool {
	return r != '\t' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0))
}

// textValue encodes s as a TEXT value (RFC 5545 3.3.11).
func textValue(s string) string {
	s = strings.ToValidUTF8(s, "") // invalid bytes are dropped
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		switch {
		case r == '\n' && i > 0 && s[i-1] == '\r':
			// the LF of a CRLF: the CR already wrote the break
		case isLineBreak(r):
			b.WriteString(`\n`)
		case r == '\\' || r == ';' || r == ',':
			b.WriteByte('\\')
			b.WriteRune(r)
		case isControl(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// safeURIValue reports whether v may be written as a URI or CAL-ADDRESS
// value: no control character, white space (U+2028 and U+2029 included) or
// DQUOTE.
func safeURIValue(v string) bool {
	if v == "" || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if isControl(r) || r == '\t' || r == '"' || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// uriValue encodes s as a URI value (RFC 5545 3.3.13): an absolute http or
// https URL in net/url's canonical form. ok is false when s is not one, or
// holds characters a content line cannot carry; the property is then left
// out.
func uriValue(s string) (string, bool) {
	if !safeURIValue(strings.TrimSpace(s)) {
		return "", false
	}
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	v := u.String()
	return v, safeURIValue(v)
}

// calAddressValue encodes an e-mail address as a CAL-ADDRESS value
// (RFC 5545 3.3.3), "mailto:" and the address as net/mail parses it. ok is
// false when email is not exactly one plain address (no display name), or
// the result could not be written safely; ORGANIZER is then left out.
func calAddressValue(email string) (string, bool) {
	email = strings.TrimSpace(email)
	if !safeURIValue(email) {
		return "", false
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Name != "" || a.Address != email {
		return "", false
	}
	v := "mailto:" + a.Address
	return v, safeURIValue(v)
}

// paramValue encodes a parameter value (RFC 5545 3.2): line breaks and
// control characters become spaces, runs of spaces collapse, DQUOTE (which
// no parameter value may hold) becomes an apostrophe, and a value holding
// ':', ';' or ',' is quoted.
func paramValue(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case isLineBreak(r) || isControl(r) || r == '\t':
			return ' '
		case r == '"':
			return '\''
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = strings.Join(strings.Fields(s), " ")
	if strings.ContainsAny(s, ":;,") {
		return `"` + s + `"`
	}
	return s
}

// floatValue encodes a FLOAT; ok is false for NaN and infinities.
func floatValue(f float64) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	return strconv.FormatFloat(f, 'f', -1, 64), true
}
