package api

import (
	"strings"
	"testing"
)

func TestSanitizeRequestID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"uuid", "3f1c2a9e-8d4b-4c7e-9a51-0b6d2e4f7a10", "3f1c2a9e-8d4b-4c7e-9a51-0b6d2e4f7a10"},
		{"punctuation", `a:b/c+d=e_f.g~h"i'j`, `a:b/c+d=e_f.g~h"i'j`},
		{"max length", strings.Repeat("x", maxRequestIDLen), strings.Repeat("x", maxRequestIDLen)},
		{"too long", strings.Repeat("x", maxRequestIDLen+1), ""},
		{"space", "a b", ""},
		{"tab", "a\tb", ""},
		{"newline (log injection)", "a\nlevel=ERROR msg=forged", ""},
		{"NUL", "a\x00b", ""},
		{"DEL", "a\x7fb", ""},
		{"non-ASCII", "café", ""},
		{"invalid UTF-8", "a\xffb", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sanitizeRequestID(tc.in); got != tc.want {
				t.Errorf("sanitizeRequestID(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
