// Package currency checks the currency of a cost: the symbol shown with
// it, its ISO 4217 code and where the symbol stands. The site settings
// (CURRENCY_SYMBOL, CURRENCY_CODE, CURRENCY_POSITION), the event fields
// of the same names and the importer all check them here.
package currency

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSymbol bounds a currency symbol, in characters ("$", "€", "CHF",
// "kr.", "US$").
const MaxSymbol = 10

// The positions of a symbol: before the amount ($10) or after it (10€).
const (
	Prefix = "prefix"
	Suffix = "suffix"
)

// CheckSymbol says what is wrong with a currency symbol ("" when
// nothing): at most MaxSymbol characters, no line breaks or control
// characters, no digits (they would be read as part of the amount), and
// no spaces at either end. "" is allowed (no symbol).
func CheckSymbol(s string) string {
	switch {
	case s == "":
		return ""
	case utf8.RuneCountInString(s) > MaxSymbol:
		return "must be at most 10 characters"
	case !utf8.ValidString(s):
		return "must be UTF-8 text"
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsDigit(r) }) >= 0:
		return "must not hold digits, line breaks or control characters"
	case strings.TrimSpace(s) != s:
		return "must not start or end with a space"
	}
	return ""
}

// CheckCode reads an ISO 4217 currency code: three letters A-Z in either
// case, returned upper-cased; "" is allowed (no code). msg says what is
// wrong otherwise.
func CheckCode(s string) (code, msg string) {
	if s == "" {
		return "", ""
	}
	if len(s) != 3 || strings.IndexFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) >= 0 {
		return "", "must be a three-letter ISO 4217 code such as USD or EUR"
	}
	return strings.ToUpper(s), ""
}

// CheckPosition reads a symbol position: "prefix" or "suffix" in either
// case, returned lower-cased; "" is allowed (the default, prefix). msg
// says what is wrong otherwise.
func CheckPosition(s string) (pos, msg string) {
	switch p := strings.ToLower(s); p {
	case "", Prefix, Suffix:
		return p, ""
	}
	return "", "must be prefix or suffix"
}

// SymbolLike reports whether text written beside an amount can be a
// currency symbol: one short word without digits ("$", "€", "USD",
// "kr."), not words ("per person").
func SymbolLike(s string) bool {
	return s != "" && !strings.ContainsFunc(s, unicode.IsSpace) && CheckSymbol(s) == ""
}

// BareAmounts reports whether a cost text is only amounts: numbers joined
// by spaces, dashes, commas or slashes ("10", "5 - 15", "12,50", "5 – 15"),
// or the word "Free" alone. Such a cost is shown with the currency in
// effect.
func BareAmounts(s string) bool {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "free") {
		return true
	}
	digit := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r == '.' || r == ',' || r == '-' || r == '–' || r == '—' || r == '/' || unicode.IsSpace(r):
		default:
			return false
		}
	}
	return digit
}
