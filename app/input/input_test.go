package input

import (
	"testing"
	"time"
)

func TestCoercions(t *testing.T) {
	tests := []struct {
		name string
		v    any
		b    bool
		ok   bool
	}{
		{"true", true, true, true},
		{"string 0", "0", false, true},
		{"mixed case", "TRUE", true, true},
		{"empty", "", false, false},
		{"word", "yes", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, ok := AsBool(tt.v); b != tt.b || ok != tt.ok {
				t.Errorf("AsBool(%v) = %v, %v; want %v, %v", tt.v, b, ok, tt.b, tt.ok)
			}
		})
	}
}

func TestBagOf(t *testing.T) {
	b := BagOf(map[string]any{"venue": "Hall", "city": nil})
	if !b.Sent("venue") || !b.Has("city") || b.Str("venue") != "Hall" || b.Has("zip") {
		t.Fatalf("bag %v", b.Values)
	}
	if _, ok := b.Unreadable(); ok {
		t.Fatal("an object bag is unreadable")
	}
}

func TestParseDateInRange(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		raw  string
		want string // "" for an error
	}{
		{"2026-12-01 10:00", "2026-12-01 10:00:00"},
		{"99999999999999", ""},
		{"2026-02-30", ""},
		{"tomorrow", "2026-11-23 00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseDateInRange(tt.raw, time.UTC, now, "en")
			if tt.want == "" {
				if err == nil {
					t.Errorf("%q parsed as %v", tt.raw, got)
				}
				if DateProblem(tt.raw, time.UTC, now, "en") == "" {
					t.Errorf("DateProblem(%q) is empty", tt.raw)
				}
				return
			}
			if err != nil || got.Format("2006-01-02 15:04:05") != tt.want {
				t.Errorf("%q = %v, %v; want %s", tt.raw, got, err, tt.want)
			}
		})
	}
}
