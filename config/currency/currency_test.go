package currency

import "testing"

// TestChecks checks the symbol, code and position rules and the two
// readings of a cost text (SymbolLike, BareAmounts).
func TestChecks(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		ok   bool
		like bool
	}{
		{"", true, false}, {"$", true, true}, {"€", true, true}, {"kr.", true, true}, {"US$", true, true},
		{"CHF", true, true}, {"per person", true, false}, {"$1", false, false}, {" $", false, false},
		{"dollars of the US", false, false}, {"a\nb", false, false},
	} {
		if got := CheckSymbol(tt.s) == ""; got != tt.ok {
			t.Errorf("CheckSymbol(%q) ok %v, want %v", tt.s, got, tt.ok)
		}
		if got := SymbolLike(tt.s); got != tt.like {
			t.Errorf("SymbolLike(%q) = %v, want %v", tt.s, got, tt.like)
		}
	}
	for _, tt := range []struct{ in, want, msg string }{
		{"", "", ""}, {"usd", "USD", ""}, {"EUR", "EUR", ""}, {"EURO", "", "bad"}, {"E1R", "", "bad"}, {"€€€", "", "bad"},
	} {
		got, msg := CheckCode(tt.in)
		if got != tt.want || (msg != "") != (tt.msg != "") {
			t.Errorf("CheckCode(%q) = %q %q", tt.in, got, msg)
		}
	}
	for _, tt := range []struct{ in, want, msg string }{
		{"", "", ""}, {"prefix", "prefix", ""}, {"Suffix", "suffix", ""}, {"postfix", "", "bad"}, {"before", "", "bad"},
	} {
		got, msg := CheckPosition(tt.in)
		if got != tt.want || (msg != "") != (tt.msg != "") {
			t.Errorf("CheckPosition(%q) = %q %q", tt.in, got, msg)
		}
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"10", true}, {"5 - 15", true}, {"5 – 15", true}, {"12,50", true}, {"1,000.50", true}, {"Free", true}, {" free ", true},
		{"", false}, {"-", false}, {"€12", false}, {"10 per person", false}, {"Free – 15", false},
	} {
		if got := BareAmounts(tt.s); got != tt.want {
			t.Errorf("BareAmounts(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
