package repository

import (
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gosimple/unidecode"
)

// Slugify turns a title into a slug the way WordPress's sanitize_title does
// (https://developer.wordpress.org/reference/functions/sanitize_title_with_dashes/),
// always in ASCII (docs/decisions.md, "Identifiers and slugs": WordPress
// keeps letters of other scripts percent-encoded): "Food & Wine" is "food-wine",
// "Café Crème & Co" is "cafe-creme-co". Tags are stripped, entities and
// percent-encoded UTF-8 are decoded, typographic marks WordPress drops
// (quotes, ©, ™, …) are dropped, en and em dashes and non-breaking spaces
// become "-", other letters are transliterated (github.com/gosimple/unidecode),
// "." and "/" become "-", anything but a-z, 0-9, "_" and "-" goes, and runs
// of spaces and dashes become one "-". It returns "" when nothing usable is
// left. Slugify(Slugify(s)) == Slugify(s).
func Slugify(title string) string {
	s := slugTags.ReplaceAllString(title, "")
	s = decodeOctets(s)
	s = html.UnescapeString(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			continue
		case slugDropped[r], unicode.Is(unicode.Mn, r), unicode.Is(unicode.Cf, r):
			continue
		case slugDashes[r], r == '.', r == '/':
			b.WriteByte('-')
		case r == '×':
			b.WriteByte('x')
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case r < utf8.RuneSelf:
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteString(strings.ToLower(unidecode.Unidecode(string(r))))
		}
	}
	s = slugRemoved.ReplaceAllString(b.String(), "")
	s = slugSeparators.ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

var (
	// slugTags matches HTML tags (strip_tags).
	slugTags = regexp.MustCompile(`<[^>]*>`)
	// slugRemoved matches what may not stay in a slug. Letters that
	// transliterate to several characters ("(c)") lose their punctuation here.
	slugRemoved = regexp.MustCompile(`[^a-z0-9 _-]+`)
	// slugSeparators matches runs of spaces and dashes.
	slugSeparators = regexp.MustCompile(`[\s-]+`)
	// slugDropped lists what sanitize_title removes entirely in its "save"
	// context: soft hyphen, inverted marks, guillemets, typographic quotes,
	// bullet, ©, ®, °, …, ™, acute accent and small tilde.
	slugDropped = map[rune]bool{
		'\u00ad': true, '¡': true, '¿': true, '«': true, '»': true, '‹': true, '›': true,
		'‘': true, '’': true, '“': true, '”': true, '‚': true, '‛': true, '„': true, '‟': true,
		'•': true, '©': true, '®': true, '°': true, '…': true, '™': true, '´': true, '˜': true,
		'\'': true, '"': true, '`': true,
	}
	// slugDashes lists what sanitize_title turns into "-": non-breaking
	// space, en dash, em dash (and the other Unicode dashes).
	slugDashes = map[rune]bool{'\u00a0': true, '–': true, '—': true, '‐': true, '‑': true, '‒': true, '―': true, '−': true}
)

// decodeOctets decodes percent-encoded UTF-8 ("caf%C3%A9" is "café"), as a
// slug sent in its URL-encoded form means the same slug. A "%" that does
// not start a valid sequence is dropped, as sanitize_title drops it.
func decodeOctets(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if d, err := url.PathUnescape(s); err == nil && utf8.ValidString(d) {
		return d
	}
	return strings.ReplaceAll(s, "%", "")
}

// SlugCandidate returns the n-th candidate for a unique slug: base itself for
// n <= 1, then base-2, base-3, ... Engines try candidates in order until one
// is free for the kind (or label kind) and language.
func SlugCandidate(base string, n int) string {
	if n <= 1 {
		return base
	}
	return base + "-" + strconv.Itoa(n)
}

// NormalizeSlug cleans a client-supplied slug the way WordPress's
// sanitize_title does (Slugify leaves a valid slug as it is).
func NormalizeSlug(s string) string {
	return Slugify(strings.TrimSpace(s))
}
