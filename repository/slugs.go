package repository

import (
	"strconv"
	"strings"

	"github.com/gosimple/slug"
)

// Slugify turns a title into a slug: lower-case ASCII, accents folded, runs
// of other characters replaced by "-" (github.com/gosimple/slug does the
// transliteration). It returns "" when nothing usable is left.
func Slugify(title string) string {
	return slug.Make(title)
}

// SlugCandidate returns the n-th candidate for a unique slug: base itself for
// n <= 1, then base-2, base-3, ... Engines try candidates in order until one
// is free for the kind (or taxonomy) and language.
func SlugCandidate(base string, n int) string {
	if n <= 1 {
		return base
	}
	return base + "-" + strconv.Itoa(n)
}

// NormalizeSlug cleans a client-supplied slug the way WordPress's
// sanitize_title does for ASCII input: it is slugified unless it already is
// a valid slug.
func NormalizeSlug(s string) string {
	s = strings.TrimSpace(s)
	if slug.IsSlug(s) {
		return s
	}
	return Slugify(s)
}
