package present

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// CostDetails is an event's cost_details: the currency symbol, code and
// position found in the cost text and its numeric values ascending (as
// strings, as the original returns them).
type CostDetails struct {
	CurrencySymbol   string
	CurrencyCode     string
	CurrencyPosition string
	Values           []string
}

func (d *CostDetails) writeJSON(buf *bytes.Buffer) error {
	w := openObj(buf)
	w.str("currency_symbol", d.CurrencySymbol)
	w.str("currency_code", d.CurrencyCode)
	w.str("currency_position", d.CurrencyPosition)
	w.strs("values", d.Values)
	return w.close()
}

// MarshalJSON writes the details.
func (d *CostDetails) MarshalJSON() ([]byte, error) { return marshal(d) }

// formatCost formats a cost as the original plugin does: one value
// as written; several as "lowest – highest" with 0 shown as "Free".
// cost_details has the currency symbol and position found in the text and
// the numeric values ascending (as strings, as the original returns them).
func formatCost(raw []string) (string, CostDetails) {
	details := CostDetails{Values: []string{}}
	if len(raw) == 0 {
		return "", details
	}
	type val struct {
		n    float64
		text string
	}
	var vals []val
	symbol, position := "", ""
	for _, c := range raw {
		for _, m := range costNumber(c) {
			vals = append(vals, val{m.n, c})
		}
		if symbol == "" {
			symbol, position = currencyOf(c)
		}
	}
	sort.SliceStable(vals, func(i, j int) bool { return vals[i].n < vals[j].n })
	strs := make([]string, 0, len(vals))
	seen := map[string]bool{}
	for _, v := range vals {
		s := strconv.FormatFloat(v.n, 'f', -1, 64)
		if !seen[s] {
			seen[s] = true
			strs = append(strs, s)
		}
	}
	details.CurrencySymbol, details.CurrencyPosition, details.Values = symbol, position, strs
	if len(raw) == 1 {
		return joinCurrency(strings.TrimSpace(raw[0]), symbol, position), details
	}
	if len(vals) == 0 {
		return strings.Join(raw, ", "), details
	}
	show := func(v val) string {
		if v.n == 0 {
			return "Free"
		}
		return joinCurrency(strings.TrimSpace(v.text), symbol, position)
	}
	lo, hi := vals[0], vals[len(vals)-1]
	if lo.n == hi.n {
		return show(lo), details
	}
	return show(lo) + " – " + show(hi), details
}

type costNum struct{ n float64 }

// costNumber finds the numbers in a cost text; a decimal comma (5,50) is
// read as a decimal point.
func costNumber(s string) []costNum {
	var out []costNum
	var cur strings.Builder
	flush := func() {
		t := strings.Trim(cur.String(), ".,")
		cur.Reset()
		if t == "" {
			return
		}
		// "1,000.50" -> thousands comma; "5,50" -> decimal comma.
		if strings.Contains(t, ",") && strings.Contains(t, ".") {
			t = strings.ReplaceAll(t, ",", "")
		} else if i := strings.LastIndex(t, ","); i >= 0 {
			if strings.Count(t, ",") > 1 || len(t)-i-1 == 3 {
				t = strings.ReplaceAll(t, ",", "")
			} else {
				t = strings.ReplaceAll(t, ",", ".")
			}
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) {
			out = append(out, costNum{f})
		}
	}
	for _, r := range s {
		if (r >= '0' && r <= '9') || r == '.' || r == ',' {
			cur.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	if len(out) == 0 && strings.EqualFold(strings.TrimSpace(s), "free") {
		out = append(out, costNum{0})
	}
	return out
}

// joinCurrency writes one amount and its currency symbol without the space
// between them, as the original's tribe_format_currency does: "€ 12" is
// "€12", "12 €" is "12€". Any other text (a range, words,
// a symbol of several words) stays as written.
func joinCurrency(text, symbol, position string) string {
	if symbol == "" || strings.ContainsFunc(symbol, unicode.IsSpace) {
		return text
	}
	var amount string
	switch position {
	case "prefix":
		rest, ok := strings.CutPrefix(text, symbol)
		if !ok {
			return text
		}
		amount = strings.TrimSpace(rest)
	case "postfix":
		rest, ok := strings.CutSuffix(text, symbol)
		if !ok {
			return text
		}
		amount = strings.TrimSpace(rest)
	default:
		return text
	}
	if amount == "" || strings.Trim(amount, "0123456789.,") != "" || len(costNumber(amount)) != 1 {
		return text
	}
	if position == "prefix" {
		return symbol + amount
	}
	return amount + symbol
}

// currencyOf finds a currency symbol next to the first number of rn.
func currencyOf(s string) (string, string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return "", ""
	}
	if pre := strings.TrimSpace(s[:i]); pre != "" && !strings.EqualFold(pre, "free") {
		return pre, "prefix"
	}
	j := strings.LastIndexAny(s, "0123456789")
	if post := strings.TrimSpace(s[j+1:]); post != "" {
		return post, "postfix"
	}
	return "", ""
}
