package ical

import (
	"strings"

	"golang.org/x/net/html"
)

// blockTags start and end a paragraph: a line break before and after.
var blockTags = map[string]bool{
	"p": true, "div": true, "ul": true, "ol": true, "table": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "blockquote": true,
	"pre": true, "section": true, "article": true, "header": true, "footer": true, "dl": true,
}

// lineTags start a new line: breaks, list items, table rows.
var lineTags = map[string]bool{"br": true, "li": true, "tr": true, "dt": true, "dd": true, "hr": true}

// skipTags hold no readable text.
var skipTags = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "iframe": true, "object": true}

// PlainText turns an HTML fragment into plain text: tags are removed,
// entities decoded, block elements become line breaks, runs of spaces
// within a line collapse and at most one empty line separates paragraphs.
func PlainText(fragment string) string {
	if !strings.ContainsAny(fragment, "<&") {
		return strings.TrimSpace(fragment)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(fragment))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidy(b.String())
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch {
			case skipTags[string(name)]:
				if tt == html.StartTagToken {
					skip++
				}
			case blockTags[string(name)], lineTags[string(name)]:
				b.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch {
			case skipTags[string(name)]:
				if skip > 0 {
					skip--
				}
			case blockTags[string(name)]:
				b.WriteByte('\n')
			}
		}
	}
}

// tidy collapses spaces within lines and blank lines between paragraphs.
func tidy(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	out := make([]string, 0, len(lines))
	blank := false
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if len(out) > 0 {
				blank = true
			}
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
