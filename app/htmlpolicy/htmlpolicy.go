// Package htmlpolicy is the one place that decides what markup a text
// field may keep (docs/editors.md, "HTML policy").
//
// Rich fields (descriptions and excerpts) written by callers without
// WordPress's unfiltered_html capability keep what wp_kses_post allows an
// author: the formatting, list, table, media and sectioning elements with
// their common attributes, and URLs only with the schemes of
// wp_allowed_protocols(). Everything else (script, style, iframe, form
// elements, event handler attributes, javascript: and data: URLs) is
// removed. Plain fields keep no markup at all. Callers with
// unfiltered_html (editors and admins) store what they send; that choice is
// the caller's (the app package), not this package's.
//
// The sanitiser is github.com/microcosm-cc/bluemonday, which parses with
// golang.org/x/net/html, the HTML5 algorithm browsers use.
package htmlpolicy

import (
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// allowedProtocols are WordPress's wp_allowed_protocols().
var allowedProtocols = []string{"http", "https", "ftp", "ftps", "mailto", "news", "irc", "irc6", "ircs", "gopher",
	"nntp", "feed", "telnet", "mms", "rtsp", "sms", "svn", "tel", "fax", "xmpp", "webcal", "urn"}

// rich is the wp_kses_post-like policy. bluemonday policies are safe for
// concurrent use once built.
var rich = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// WordPress adds no rel=nofollow to an author's own content.
	p.RequireNoFollowOnLinks(false)
	p.AllowURLSchemes(allowedProtocols...)
	p.AllowElements("address", "article", "aside", "big", "center", "details", "figcaption", "figure", "footer",
		"header", "hgroup", "main", "mark", "nav", "s", "section", "small", "strike", "summary", "u")
	p.AllowAttrs("class", "id", "title", "lang", "dir", "role", "aria-label", "aria-labelledby",
		"aria-describedby", "aria-details", "aria-hidden").Globally()
	p.AllowDataAttributes()
	p.AllowAttrs("target").Matching(regexp.MustCompile(`^(_blank|_self|_parent|_top)$`)).OnElements("a")
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^[a-zA-Z0-9 _-]+$`)).OnElements("a")
	p.AllowAttrs("datetime", "cite").OnElements("del", "ins", "time")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center|justify)$`)).OnElements("p", "div", "h1",
		"h2", "h3", "h4", "h5", "h6", "img", "table", "td", "th", "tr")
	p.AllowAttrs("loading").Matching(regexp.MustCompile(`^(lazy|eager)$`)).OnElements("img")
	return p
}()

// strict removes every element; the contents of script and style go too.
var strict = bluemonday.StrictPolicy()

// Rich returns s with the markup an author may not store removed. A value
// without '<' cannot hold markup and is returned unchanged.
func Rich(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return rich.Sanitize(s)
}

// Plain returns s as plain text: every tag removed (script and style with
// their contents) and the entities of the remaining text decoded, repeated
// until nothing changes, so that "&lt;script&gt;" inside stripped markup
// cannot decode into a tag. A '<' that could still start markup once the
// value is put next to other text ("x</" at the end of a value, which the
// parser keeps as text) is removed too: the result never holds '<'
// followed by a letter, '/', '!' or '?'. A value without '<' is returned
// unchanged.
func Plain(s string) string {
	for range 4 {
		if !strings.Contains(s, "<") {
			return s
		}
		out := html.UnescapeString(strict.Sanitize(s))
		if out == s {
			return dropTagOpeners(s)
		}
		s = out
	}
	// Still changing after four rounds: keep the escaped form, which holds
	// no markup.
	return strict.Sanitize(s)
}

// dropTagOpeners removes every '<' that would be followed by a letter,
// '/', '!' or '?' once the other such '<' are gone ("<</" becomes "/"). It
// works from the end, so each '<' sees the character that follows it in
// the result.
func dropTagOpeners(s string) string {
	out := make([]byte, len(s))
	j := len(out)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '<' && j < len(out) && opensMarkup(out[j]) {
			continue
		}
		j--
		out[j] = s[i]
	}
	return string(out[j:])
}

// opensMarkup reports whether c after '<' starts a tag, comment or
// processing instruction.
func opensMarkup(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}
