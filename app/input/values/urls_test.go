package values

import "testing"

// TestWebURL: absolute http(s) URLs pass; other schemes, relative URLs,
// and any white space, control character or character that can end an
// HTML attribute do not (the API's and the importer's rule).
func TestWebURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://example.org/page":            true,
		"http://example.org/a?b=c&d=e#f":      true,
		"https://example.org/a'b(c)":          true,
		"javascript:alert(1)":                 false,
		"ftp://example.org/":                  false,
		"/relative":                           false,
		"https://":                            false,
		`https://e.test/a".png`:               false,
		`https://e.test/"onmouseover="x`:      false,
		"https://e.test/<script>":             false,
		"https://e.test/a`b":                  false,
		`https://e.test/a\b`:                  false,
		"https://e.test/a b":                  false,
		"https://e.test/a\r\nSet-Cookie: x=1": false,
		"https://e.test/a\u2028b":             false,
		"https://e.test/\x7f":                 false,
	} {
		if got := WebURL(s); got != want {
			t.Errorf("WebURL(%q) = %v, want %v", s, got, want)
		}
	}
}
