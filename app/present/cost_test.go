package present

import (
	"slices"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// TestFormatCost checks the cost text and cost_details for every rule:
// no currency (a bare number stays bare), a currency in effect (prefix and
// suffix, ranges, lists, Free), a symbol already in the text, and words.
func TestFormatCost(t *testing.T) {
	t.Parallel()
	none := Currency{}
	usd := Currency{Symbol: "$", Code: "USD", Position: "prefix"}
	eur := Currency{Symbol: "€", Code: "EUR", Position: "suffix"}
	for _, tt := range []struct {
		name           string
		raw            []string
		cur            Currency
		want           string
		sym, code, pos string
		values         []string
	}{
		{"no cost", nil, usd, "", "", "", "", []string{}},
		{"bare number stays bare", []string{"10"}, none, "10", "", "", "", []string{"10"}},
		{"bare range stays bare", []string{"5 - 15"}, none, "5 - 15", "", "", "", []string{"5", "15"}},
		{"prefix symbol added", []string{"10"}, usd, "$10", "$", "USD", "prefix", []string{"10"}},
		{"range with prefix", []string{"5 - 15"}, usd, "$5 – $15", "$", "USD", "prefix", []string{"5", "15"}},
		{"range with en dash", []string{"5 – 15"}, usd, "$5 – $15", "$", "USD", "prefix", []string{"5", "15"}},
		{"decimal point kept", []string{"12.50"}, usd, "$12.50", "$", "USD", "prefix", []string{"12.5"}},
		{"suffix symbol added", []string{"12,50"}, eur, "12,50€", "€", "EUR", "suffix", []string{"12.5"}},
		{"suffix range keeps commas", []string{"12,50 - 15,00"}, eur, "12,50€ – 15,00€", "€", "EUR", "suffix", []string{"12.5", "15"}},
		{"thousands kept", []string{"1,000"}, usd, "$1,000", "$", "USD", "prefix", []string{"1000"}},
		{"list with prefix", []string{"20", "10", "30"}, usd, "$10 – $30", "$", "USD", "prefix", []string{"10", "20", "30"}},
		{"list with zero", []string{"0", "15"}, usd, "Free – $15", "$", "USD", "prefix", []string{"0", "15"}},
		{"list with Free", []string{"Free", "15"}, eur, "Free – 15€", "€", "EUR", "suffix", []string{"0", "15"}},
		{"Free stays Free", []string{"Free"}, usd, "Free", "$", "USD", "prefix", []string{"0"}},
		{"Free without currency", []string{"free"}, none, "free", "", "", "", []string{"0"}},
		{"same value twice", []string{"10", "10"}, usd, "$10", "$", "USD", "prefix", []string{"10"}},
		{"own symbol kept", []string{"€12"}, usd, "€12", "€", "", "prefix", []string{"12"}},
		{"own symbol with comma", []string{"€ 12,50"}, usd, "€12,50", "€", "", "prefix", []string{"12.5"}},
		{"own symbol is the currency's", []string{"$45"}, usd, "$45", "$", "USD", "prefix", []string{"45"}},
		{"own postfix symbol", []string{"20$"}, none, "20$", "$", "", "postfix", []string{"20"}},
		{"own symbol list", []string{"0$", "20$", "30$"}, none, "Free – 30$", "$", "", "postfix", []string{"0", "20", "30"}},
		{"words stay", []string{"10 per person"}, usd, "10 per person", "$", "USD", "prefix", []string{"10"}},
		{"words without number", []string{"Donation"}, usd, "Donation", "$", "USD", "prefix", []string{}},
		{"code without symbol", []string{"10"}, Currency{Code: "CHF"}, "10", "", "CHF", "", []string{"10"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, d := formatCost(tt.raw, tt.cur)
			if got != tt.want {
				t.Errorf("cost %q, want %q", got, tt.want)
			}
			if d.CurrencySymbol != tt.sym || d.CurrencyCode != tt.code || d.CurrencyPosition != tt.pos {
				t.Errorf("cost_details %q %q %q, want %q %q %q", d.CurrencySymbol, d.CurrencyCode, d.CurrencyPosition, tt.sym, tt.code, tt.pos)
			}
			if !slices.Equal(d.Values, tt.values) {
				t.Errorf("values %q, want %q", d.Values, tt.values)
			}
		})
	}
}

// TestEventCurrency checks that an event's own currency fields win over
// the site's, field by field, and that a symbol stands before the amount
// unless a position says otherwise.
func TestEventCurrency(t *testing.T) {
	t.Parallel()
	site := config.Default()
	site.CurrencySymbol, site.CurrencyCode, site.CurrencyPosition = "$", "USD", ""
	bare := config.Default()
	for _, tt := range []struct {
		name string
		cfg  *config.Config
		e    repository.EventFields
		want Currency
	}{
		{"none anywhere", bare, repository.EventFields{}, Currency{}},
		{"site only", site, repository.EventFields{}, Currency{"$", "USD", "prefix"}},
		{"event only", bare, repository.EventFields{CurrencySymbol: "€", CurrencyCode: "EUR", CurrencyPosition: "suffix"}, Currency{"€", "EUR", "suffix"}},
		{"event wins", site, repository.EventFields{CurrencySymbol: "£", CurrencyCode: "GBP"}, Currency{"£", "GBP", "prefix"}},
		{"event position with site symbol", site, repository.EventFields{CurrencyPosition: "suffix"}, Currency{"$", "USD", "suffix"}},
		{"position without symbol", bare, repository.EventFields{CurrencyPosition: "suffix", CurrencyCode: "EUR"}, Currency{"", "EUR", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rn := &Renderer{cfg: tt.cfg}
			rn.placeRenderer = placeRenderer{rn}
			if got := rn.EventCurrency(&tt.e); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
