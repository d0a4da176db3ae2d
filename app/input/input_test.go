package input

import (
	"encoding/json"
	"strings"
	"testing"
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

func TestValidate(t *testing.T) {
	args := []Arg[string]{
		{Name: "title", Type: String, Required: true, MaxLen: 5},
		{Name: "page", Type: Integer, Default: "1", Check: func(who string, v any) string {
			if n, _ := AsInt(v); n > 9 {
				return "Must be at most 9 for " + who + "."
			}
			return ""
		}},
		{Name: "order", Type: String, Enum: []string{"asc", "desc"}},
		// size decodes "S", "M" or "L" into a number of seats, reading
		// another parameter of the bag (a decoder's zone, for dates).
		{Name: "size", Type: String, Decode: func(who string, b *Bag, v any) (any, string) {
			s, _ := AsString(v)
			n := map[string]int{"S": 10, "M": 50, "L": 200}[s]
			if n == 0 {
				return nil, "Must be S, M or L for " + who + "."
			}
			if b.Str("order") == "desc" {
				n = -n
			}
			return n, ""
		}},
	}
	tests := []struct {
		name   string
		values map[string]any
		want   string // a substring of the error, "" for none
	}{
		{"valid, default filled", map[string]any{"title": "Jazz"}, ""},
		{"missing", map[string]any{}, "rest_missing_callback_param"},
		{"too long", map[string]any{"title": "Jazz night"}, "at most 5 characters"},
		{"not an integer", map[string]any{"title": "a", "page": "x"}, "page must be an integer"},
		{"check given the caller", map[string]any{"title": "a", "page": "12"}, "at most 9 for tester"},
		{"not in the enum", map[string]any{"title": "a", "order": "up"}, "one of asc, desc"},
		{"decoded", map[string]any{"title": "a", "order": "desc", "size": "M"}, ""},
		{"not decodable", map[string]any{"title": "a", "size": "XL"}, "size must be S, M or L for tester"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := BagOf(tt.values)
			err := Validate("tester", b, args)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.want == "":
				if b.Str("page") != "1" {
					t.Errorf("page default not filled: %v", b.Values)
				}
				if d, ok := b.Decoded("size"); ok != b.Has("size") || (ok && d != -50) {
					t.Errorf("size decoded as %v, %v; want -50 when sent", d, ok)
				}
			case err == nil:
				t.Fatalf("no error, want %q", tt.want)
			case b.Has("size"):
				if _, ok := b.Decoded("size"); ok {
					t.Errorf("a refused value was kept as decoded")
				}
				fallthrough
			default:
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q, want %q", err.Error(), tt.want)
				}
			}
		})
	}
}

// TestNumbers: AsInt takes whole numbers (as JSON numbers or numeric
// strings, spaces trimmed, a whole float within 2^53 too) and AsFloat any
// finite number; neither takes other types, empty text, NaN or infinity.
func TestNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v      any
		i      int64
		iOK    bool
		f      float64
		fOK    bool
		reason string
	}{
		{json.Number("42"), 42, true, 42, true, "a JSON number"},
		{" 7 ", 7, true, 7, true, "a string, trimmed"},
		{"-3", -3, true, -3, true, "negative"},
		{"5.0", 5, true, 5, true, "a whole float"},
		{"1e3", 1000, true, 1000, true, "an exponent"},
		{"2.5", 0, false, 2.5, true, "a fraction is no int"},
		{"1e16", 0, false, 1e16, true, "a float past 2^53 is no int"},
		{"9223372036854775807", 9223372036854775807, true, 9223372036854775807, true, "the largest int64"},
		{"", 0, false, 0, false, "empty"},
		{"  ", 0, false, 0, false, "blank"},
		{"NaN", 0, false, 0, false, "NaN"},
		{"Inf", 0, false, 0, false, "infinity"},
		{"ten", 0, false, 0, false, "words"},
		{true, 0, false, 0, false, "a bool"},
		{nil, 0, false, 0, false, "null"},
		{[]any{"1"}, 0, false, 0, false, "a list"},
	}
	for _, tt := range tests {
		if i, ok := AsInt(tt.v); i != tt.i || ok != tt.iOK {
			t.Errorf("%s: AsInt(%#v) = %d, %v; want %d, %v", tt.reason, tt.v, i, ok, tt.i, tt.iOK)
		}
		if f, ok := AsFloat(tt.v); f != tt.f || ok != tt.fOK {
			t.Errorf("%s: AsFloat(%#v) = %v, %v; want %v, %v", tt.reason, tt.v, f, ok, tt.f, tt.fOK)
		}
	}
}

// TestAsStrings: a CSV or a list becomes its items as strings (trimmed,
// empty CSV items dropped, an item that is not a string ""), never nil.
func TestAsStrings(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"csv", " publish, draft ,,", []string{"publish", "draft"}},
		{"list", []any{"a", " b ", "", 7.0}, []string{"a", "b", ""}},
		{"empty string", "", []string{}},
		{"nil", nil, []string{}},
		{"one number", 7.0, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AsStrings(tt.v)
			if got == nil || strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("AsStrings(%#v) = %#v, want %#v", tt.v, got, tt.want)
			}
		})
	}
}
