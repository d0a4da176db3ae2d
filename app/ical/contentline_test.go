package ical

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextValue(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "Jazz night", "Jazz night"},
		{"specials", `a\b;c,d:e"f`, `a\\b\;c\,d:e"f`},
		{"crlf", "a\r\nb", `a\nb`},
		{"cr", "a\rb", `a\nb`},
		{"lf", "a\nb", `a\nb`},
		{"cr cr lf", "a\r\r\nb", `a\n\nb`},
		{"unicode line separators", "a\u2028b\u2029c\u0085d", `a\nb\nc\nd`},
		{"vertical tab and form feed", "a\vb\fc", `a\nb\nc`},
		{"forged event", "x\r\nEND:VEVENT\r\nBEGIN:VEVENT", `x\nEND:VEVENT\nBEGIN:VEVENT`},
		{"controls dropped", "a\x00b\x1bc\x7fd\u0090e", "abcde"},
		{"tab kept", "a\tb", "a\tb"},
		{"invalid utf-8 dropped", "a\xffb", "ab"},
		{"replacement char kept", "a\uFFFDb", "a\uFFFDb"},
		{"unicode", "Café ünïcode 東京", "Café ünïcode 東京"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := textValue(tc.in); got != tc.want {
				t.Errorf("textValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestURIValue(t *testing.T) {
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"http", "http://example.test/a/", "http://example.test/a/", true},
		{"https with query", "https://example.test/a?b=c&d=e;f", "https://example.test/a?b=c&d=e;f", true},
		{"crlf", "http://example.test/\r\nEND:VEVENT", "", false},
		{"lf", "http://example.test/\nx", "", false},
		{"line separator", "http://example.test/\u2028x", "", false},
		{"space", "http://example.test/a b", "", false},
		{"dquote", `http://example.test/"x"`, "", false},
		{"javascript", "javascript:alert(1)", "", false},
		{"relative", "/event/x/", "", false},
		{"empty", "", "", false},
		{"unicode path is percent-encoded", "http://example.test/café", "http://example.test/caf%C3%A9", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := uriValue(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("uriValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestCalAddressValue(t *testing.T) {
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "hello@jazz.example", "mailto:hello@jazz.example", true},
		{"spaces around", " hello@jazz.example ", "mailto:hello@jazz.example", true},
		{"forged event", "a@b.c\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:forged", "", false},
		{"lf", "a@b.c\nx", "", false},
		{"line separator", "a@b.c\u2028x", "", false},
		{"display name", "Jazz <hello@jazz.example>", "", false},
		{"two addresses", "a@b.c, d@e.f", "", false},
		{"quoted local part", `"a b"@c.d`, "", false},
		{"no at", "hello", "", false},
		{"empty", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := calAddressValue(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("calAddressValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParamValue(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "Jazz Society", "Jazz Society"},
		{"comma quoted", "Jazz, Blues", `"Jazz, Blues"`},
		{"colon quoted", "a:b", `"a:b"`},
		{"semicolon quoted", "a;b", `"a;b"`},
		{"dquote replaced", `say "hi"`, `say 'hi'`},
		{"dquote and comma", `"A", B`, `"'A', B"`},
		{"line breaks become spaces", "a\r\nb\u2028c\nd", "a b c d"},
		{"controls", "a\x00\x1b b", "a b"},
		{"backslash kept", `a\b`, `a\b`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := paramValue(tc.in); got != tc.want {
				t.Errorf("paramValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestFold checks lines are cut at 75 octets (74 after the leading space of
// a continuation), never inside a UTF-8 sequence, and unfold to the input.
func TestFold(t *testing.T) {
	cases := []struct{ name, in string }{
		{"short", "SUMMARY:x"},
		{"exactly 75", "SUMMARY:" + strings.Repeat("a", 67)},
		{"76", "SUMMARY:" + strings.Repeat("a", 68)},
		{"two-byte runes", "SUMMARY:" + strings.Repeat("é", 100)},
		{"three-byte runes", "SUMMARY:" + strings.Repeat("東", 100)},
		{"four-byte runes", "SUMMARY:" + strings.Repeat("🎷", 100)},
		{"mixed", "SUMMARY:a" + strings.Repeat("é東🎷b", 40)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeFolded(&buf, []byte(tc.in)); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if !strings.HasSuffix(out, "\r\n") {
				t.Fatalf("no CRLF at the end: %q", out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n")
			for i, l := range lines {
				if len(l) > maxLineOctets {
					t.Errorf("line %d is %d octets", i, len(l))
				}
				if i > 0 && !strings.HasPrefix(l, " ") {
					t.Errorf("continuation %d does not start with a space: %q", i, l)
				}
				if !utf8.ValidString(l) {
					t.Errorf("line %d cuts a UTF-8 sequence: %q", i, l)
				}
			}
			if got := strings.ReplaceAll(strings.TrimSuffix(out, "\r\n"), "\r\n ", ""); got != tc.in {
				t.Errorf("unfolds to %q", got)
			}
		})
	}
}
