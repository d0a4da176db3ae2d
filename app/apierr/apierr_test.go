package apierr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBoundMessage: a message quoting what a caller sent stays short: a
// word over 100 runes is cut to 80 and "…" (its closing quote and
// punctuation kept), white space is kept, a short message is unchanged,
// and the whole is cut to 1,000 runes.
func TestBoundMessage(t *testing.T) {
	t.Parallel()
	z80, z101 := strings.Repeat("z", 80), strings.Repeat("z", 101)
	e100 := strings.Repeat("é", 100)
	tests := []struct{ name, in, want string }{
		{"short", "Event with slug abc does not exist.", "Event with slug abc does not exist."},
		{"a word of 100 runes is kept", "slug " + e100 + " x", "slug " + e100 + " x"},
		{"a quoted word", `received "` + z101 + `".`, `received "` + z80[:79] + `…".`},
		{"a bare word", "Event with slug " + z101 + " does not exist.", "Event with slug " + z80 + "… does not exist."},
		{"white space kept", "a\n\t" + z101 + "  b", "a\n\t" + z80 + "…  b"},
		{"multibyte", "x " + strings.Repeat("é", 500), "x " + strings.Repeat("é", 80) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BoundMessage(tt.in); got != tt.want {
				t.Errorf("BoundMessage(%.120q) = %.200q, want %.200q", tt.in, got, tt.want)
			}
		})
	}
	many := strings.Repeat("word ", 1000)
	if got := BoundMessage(many); utf8.RuneCountInString(got) != 1001 || !strings.HasSuffix(got, "…") {
		t.Errorf("a long message: %d runes", utf8.RuneCountInString(got))
	}
	if got := New(404, "x", many+many).Message; utf8.RuneCountInString(got) != 8001 {
		t.Errorf("New: %d runes", utf8.RuneCountInString(got))
	}
	var p Params
	p.InvalidValue("venue", "Must be venue IDs: "+z101+".", z101)
	if err := p.Err().(*Error); len(err.Message) > 400 || strings.Contains(err.Message, z101) {
		t.Errorf("parameter message: %s", err.Message)
	}
}
