package api_test

import (
	"fmt"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// TestEventCurrencyFields (issue 34, finding 3): currency_symbol,
// currency_code and currency_position are writable event fields, checked
// (400 rest_invalid_param, nothing stored), shown through cost and
// cost_details and in JSON-LD offers; an update of other fields keeps
// them, an empty value clears one.
func TestEventCurrencyFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.run(t, []scenario{
		{name: "no currency: bare stays bare", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "5 - 15"), status: 201,
			want: map[string]any{"cost": "5 - 15", "cost_details.currency_symbol": "", "cost_details.currency_position": ""}},
		{name: "event symbol prefix", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "5 - 15", "currency_symbol", "$", "currency_code", "usd"), status: 201,
			want: map[string]any{"cost": "$5 – $15", "cost_details.currency_symbol": "$", "cost_details.currency_code": "USD", "cost_details.currency_position": "prefix", "cost_details.values": []any{"5", "15"}}},
		{name: "event symbol suffix keeps comma", method: "POST", url: "events?_embed=1", as: "editor", body: pricedEvent("cost", "12,50", "currency_symbol", "€", "currency_position", "suffix", "currency_code", "EUR"), status: 201,
			want: map[string]any{"cost": "12,50€", "cost_details.currency_position": "suffix", "cost_details.values": []any{"12.5"}}},
		{name: "written symbol wins", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "€12", "currency_symbol", "$"), status: 201,
			want: map[string]any{"cost": "€12", "cost_details.currency_symbol": "€"}},
		{name: "position not an option", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10", "currency_position", "postfix"), status: 400, check: invalidParamOf("currency_position")},
		{name: "code not ISO", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10", "currency_code", "EURO"), status: 400, check: invalidParamOf("currency_code")},
		{name: "symbol too long", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10", "currency_symbol", "dollars of the US"), status: 400, check: invalidParamOf("currency_symbol")},
		{name: "symbol with digits", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10", "currency_symbol", "$1"), status: 400, check: invalidParamOf("currency_symbol")},
		{name: "symbol not text", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10", "currency_symbol", []any{"$"}), status: 400, check: invalidParamOf("currency_symbol")},
	})
	// Refused writes left nothing behind: four events were created.
	e.t = t
	e.flush()
	list := e.must(200, "GET", "events?per_page=50&start_date=2026-01-01", "editor", nil)
	if n := len(list.path("events").([]any)); n != 4 {
		t.Errorf("%d events stored, want 4 (refused writes must store nothing)", n)
	}

	id := e.must(201, "POST", "events", "editor", pricedEvent("cost", "10", "currency_symbol", "£", "currency_code", "GBP")).id()
	single := e.must(200, "GET", fmt.Sprintf("events/%d", id), "editor", nil)
	if got := single.str("json_ld.offers.priceCurrency"); got != "GBP" {
		t.Errorf("json_ld offers priceCurrency %q, want GBP (the code in effect)", got)
	}
	upd := e.must(200, "POST", fmt.Sprintf("events/%d", id), "editor", map[string]any{"title": "Renamed"})
	if got := upd.str("cost"); got != "£10" {
		t.Errorf("after an update of the title, cost %q, want £10 (currency kept)", got)
	}
	upd = e.must(200, "POST", fmt.Sprintf("events/%d", id), "editor", map[string]any{"currency_symbol": ""})
	if got, code := upd.str("cost"), upd.str("cost_details.currency_code"); got != "10" || code != "GBP" {
		t.Errorf("after clearing the symbol, cost %q code %q, want 10 and GBP", got, code)
	}
}

// TestSiteCurrency (issue 34, finding 3): CURRENCY_SYMBOL, CURRENCY_CODE
// and CURRENCY_POSITION apply to events without a currency of their own,
// as the original's site default does ("10" reads "$10"); an event's own
// currency wins.
func TestSiteCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "CURRENCY_SYMBOL", "$", "CURRENCY_CODE", "USD")
	e.run(t, []scenario{
		{name: "site symbol", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "10"), status: 201,
			want: map[string]any{"cost": "$10", "cost_details.currency_symbol": "$", "cost_details.currency_code": "USD", "cost_details.currency_position": "prefix"}},
		{name: "site symbol on a range", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "5 - 15"), status: 201, want: map[string]any{"cost": "$5 – $15"}},
		{name: "free", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "Free"), status: 201, want: map[string]any{"cost": "Free", "cost_details.values": []any{"0"}}},
		{name: "no cost", method: "POST", url: "events", as: "editor", body: pricedEvent(), status: 201, want: map[string]any{"cost": ""}},
		{name: "event's own wins", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "12,50", "currency_symbol", "€", "currency_code", "EUR", "currency_position", "suffix"), status: 201,
			want: map[string]any{"cost": "12,50€", "cost_details.currency_code": "EUR"}},
	})
	suffix := newEnv(t, "CURRENCY_SYMBOL", "kr", "CURRENCY_POSITION", "suffix")
	suffix.run(t, []scenario{
		{name: "site suffix", method: "POST", url: "events", as: "editor", body: pricedEvent("cost", "120"), status: 201,
			want: map[string]any{"cost": "120kr", "cost_details.currency_position": "suffix"}},
	})
}

// TestWebhookCostWithCurrency: a webhook message's item shows the cost as
// the API does, with the site's currency (the same renderer).
func TestWebhookCostWithCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true", "CURRENCY_SYMBOL", "€", "CURRENCY_POSITION", "suffix", "CURRENCY_CODE", "EUR")
	rc := testsupport.NewRecorder(t)
	_, secret := e.addWebhook(rc.URL, "event.created")
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Hooked", "start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00", "cost": "12,50"})
	e.deliver()
	got := rc.All()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	m := verify(t, secret, got[0])
	if m.Item["cost"] != "12,50€" {
		t.Errorf("item cost %v, want 12,50€", m.Item["cost"])
	}
	if d, _ := m.Item["cost_details"].(map[string]any); d["currency_code"] != "EUR" || d["currency_position"] != "suffix" {
		t.Errorf("item cost_details %v", m.Item["cost_details"])
	}
}

// pricedEvent is the body of an event create with the fields of extra
// (name, value pairs) added.
func pricedEvent(extra ...any) map[string]any {
	m := map[string]any{"title": "Priced", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}
