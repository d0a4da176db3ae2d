package present

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/repository"
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

// Currency is the currency shown with an event's cost: the event's own
// symbol, code and position, each falling back to the site's setting.
type Currency struct {
	// Symbol is shown with the amounts ("" for none); Code is the ISO
	// 4217 code ("" for none); Position is "prefix" or "suffix" ("" when
	// there is no symbol).
	Symbol, Code, Position string
}

// EventCurrency returns the currency in effect for an event: its own
// fields where set, the site's settings (CURRENCY_SYMBOL, CURRENCY_CODE,
// CURRENCY_POSITION) for the rest; a symbol without a position stands
// before the amount.
func (rn *Renderer) EventCurrency(e *repository.EventFields) Currency {
	c := Currency{Symbol: e.CurrencySymbol, Code: e.CurrencyCode, Position: e.CurrencyPosition}
	if c.Symbol == "" {
		c.Symbol = rn.cfg.CurrencySymbol
	}
	if c.Code == "" {
		c.Code = rn.cfg.CurrencyCode
	}
	if c.Position == "" {
		c.Position = rn.cfg.CurrencyPosition
	}
	if c.Symbol == "" {
		c.Position = ""
	} else if c.Position == "" {
		c.Position = currency.Prefix
	}
	return c
}

// formatCost formats a cost as the original plugin does, keeping the
// text as written (decimal commas too). A cost written as bare numbers
// ("10", "5 - 15", "12,50", or a list of them, "Free" counting as 0)
// is shown with cur's symbol when there is one: one value as "$10",
// several as "lowest – highest" with 0 shown as "Free" ("$5 – $15").
// Without a symbol, or when the text has words or its own symbol ("€12",
// "20$"), one value stays as written and several are "lowest – highest"
// of the items as written.
//
// cost_details has the symbol and position found in the text, else cur's
// (with cur's code when the symbols agree), and the numeric values
// ascending ("Free" is 0; as strings, as the original returns them).
func formatCost(raw []string, cur Currency) (string, CostDetails) {
	details := CostDetails{Values: []string{}}
	if len(raw) == 0 {
		return "", details
	}
	var vals []costNum
	symbol, position := "", ""
	bare := true
	for _, c := range raw {
		nums := costNumber(c)
		vals = append(vals, nums...)
		if len(nums) == 0 || !currency.BareAmounts(c) {
			bare = false
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
	details.Values = strs
	switch {
	case symbol != "":
		details.CurrencySymbol, details.CurrencyPosition = symbol, position
		if symbol == cur.Symbol {
			details.CurrencyCode = cur.Code
		}
	default:
		details.CurrencySymbol, details.CurrencyCode, details.CurrencyPosition = cur.Symbol, cur.Code, cur.Position
	}
	if bare && symbol == "" && cur.Symbol != "" {
		show := func(v costNum, several bool) string {
			switch {
			case v.word:
				return v.text
			case v.n == 0 && several:
				return "Free"
			case cur.Position == currency.Suffix:
				return v.text + cur.Symbol
			}
			return cur.Symbol + v.text
		}
		lo, hi := vals[0], vals[len(vals)-1]
		if lo.n == hi.n {
			return show(lo, false), details
		}
		return show(lo, true) + " – " + show(hi, true), details
	}
	if len(raw) == 1 {
		return joinCurrency(strings.TrimSpace(raw[0]), symbol, position), details
	}
	if len(vals) == 0 {
		return strings.Join(raw, ", "), details
	}
	// A list: each value shown by its item as written.
	type item struct {
		n    float64
		text string
	}
	var items []item
	for _, c := range raw {
		for _, m := range costNumber(c) {
			items = append(items, item{m.n, c})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].n < items[j].n })
	show := func(v item) string {
		if v.n == 0 {
			return "Free"
		}
		return joinCurrency(strings.TrimSpace(v.text), symbol, position)
	}
	lo, hi := items[0], items[len(items)-1]
	if lo.n == hi.n {
		return show(lo), details
	}
	return show(lo) + " – " + show(hi), details
}

// costNum is one amount of a cost text: its value and the text it was
// written as ("12,50"); word is set for "Free".
type costNum struct {
	n    float64
	text string
	word bool
}

// costNumber finds the numbers in a cost text; a decimal comma (5,50) is
// read as a decimal point.
func costNumber(s string) []costNum {
	var out []costNum
	var cur strings.Builder
	flush := func() {
		t := strings.Trim(cur.String(), ".,")
		written := t
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
			out = append(out, costNum{n: f, text: written})
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
		out = append(out, costNum{n: 0, text: strings.TrimSpace(s), word: true})
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

// currencyOf finds a currency symbol written next to the amounts of s:
// before the first number, or after the last one.
func currencyOf(s string) (string, string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return "", ""
	}
	if pre := strings.TrimSpace(s[:i]); pre != "" && !strings.EqualFold(pre, "free") {
		if currency.SymbolLike(pre) {
			return pre, "prefix"
		}
		return "", ""
	}
	j := strings.LastIndexAny(s, "0123456789")
	if post := strings.TrimSpace(s[j+1:]); post != "" && currency.SymbolLike(post) {
		return post, "postfix"
	}
	return "", ""
}
