package api_test

import (
	"strconv"
	"testing"
)

// TestIncludeOrdersByStart checks that an include list is ordered by start
// date like every other event list, not by publish date (issue 13).
func TestIncludeOrdersByStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(title, start string, publishedDaysAgo int) int64 {
		date := e.now.AddDate(0, 0, -publishedDaysAgo).Format("2006-01-02 15:04:05")
		return e.must(201, "POST", "events", "editor", map[string]any{"title": title, "start_date": start, "end_date": start, "date": date}).id()
	}
	// Publish order: late, early, middle. Start order: early, middle, late.
	late := mk("Late", "2027-03-01 10:00", 30)
	early := mk("Early", "2027-01-01 10:00", 20)
	middle := mk("Middle", "2027-02-01 10:00", 10)
	e.flush()
	q := strconv.FormatInt(late, 10) + "," + strconv.FormatInt(early, 10) + "," + strconv.FormatInt(middle, 10)
	for _, url := range []string{"events?include=" + q, "events?include[]=" + strconv.FormatInt(middle, 10) + "&include[]=" + strconv.FormatInt(late, 10) + "&include[]=" + strconv.FormatInt(early, 10)} {
		got := listIDs(e.must(200, "GET", url, "", nil), "events")
		if ids(got...) != ids(early, middle, late) {
			t.Errorf("%s: got %v, want %v (start order)", url, got, []int64{early, middle, late})
		}
	}
}

// TestSlugsLikeWordPress checks generated and client-sent slugs through the
// API (issue 13: "Food & Wine" is food-wine, as sanitize_title makes it).
func TestSlugsLikeWordPress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := map[string]any{"start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ev {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	e.run(t, []scenario{
		{name: "ampersand dropped", method: "POST", url: "events", as: "editor", body: with("title", "Food & Wine"), status: 201, want: map[string]any{"slug": "food-wine"}},
		{name: "accents and ampersand", method: "POST", url: "events", as: "editor", body: with("title", "Café Crème & Co"), status: 201, want: map[string]any{"slug": "cafe-creme-co"}},
		{name: "entity", method: "POST", url: "events", as: "editor", body: with("title", "Tom &amp; Jerry"), status: 201, want: map[string]any{"slug": "tom-jerry"}},
		{name: "typographic quotes and dashes", method: "POST", url: "events", as: "editor", body: with("title", "“Rock” – ’n’ Roll"), status: 201, want: map[string]any{"slug": "rock-n-roll"}},
		{name: "client slug cleaned", method: "POST", url: "events", as: "editor", body: with("title", "x", "slug", "Wine & Dine"), status: 201, want: map[string]any{"slug": "wine-dine"}},
		{name: "client slug percent-encoded", method: "POST", url: "events", as: "editor", body: with("title", "y", "slug", "caf%C3%A9-noir"), status: 201, want: map[string]any{"slug": "cafe-noir"}},
		{name: "read by slug", method: "GET", url: "events/by-slug/food-wine", status: 200, want: map[string]any{"title": "Food & Wine"}},
		{name: "second one unique", method: "POST", url: "events", as: "editor", body: with("title", "Food &amp; Wine"), status: 201, want: map[string]any{"slug": "food-wine-2"}},
		{name: "venue", method: "POST", url: "venues", as: "editor", body: map[string]any{"venue": "Bar & Grill"}, status: 201, want: map[string]any{"slug": "bar-grill"}},
		{name: "category", method: "POST", url: "categories", as: "editor", body: map[string]any{"name": "Arts & Crafts"}, status: 201, want: map[string]any{"slug": "arts-crafts"}},
	})
}

// TestCostCurrencyJoined checks that "€ 12" comes back "€12" as the original
// formats it, and that other costs keep their text.
func TestCostCurrencyJoined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := func(cost any) map[string]any {
		return map[string]any{"title": "Priced", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00", "cost": cost}
	}
	e.run(t, []scenario{
		{name: "prefix symbol with space", method: "POST", url: "events", as: "editor", body: ev("€ 12"), status: 201,
			want: map[string]any{"cost": "€12", "cost_details.currency_symbol": "€", "cost_details.currency_position": "prefix", "cost_details.values": []any{"12"}}},
		{name: "postfix symbol with space", method: "POST", url: "events", as: "editor", body: ev("12 €"), status: 201,
			want: map[string]any{"cost": "12€", "cost_details.currency_symbol": "€", "cost_details.currency_position": "postfix"}},
		{name: "decimal comma kept", method: "POST", url: "events", as: "editor", body: ev("€ 12,50"), status: 201,
			want: map[string]any{"cost": "€12,50", "cost_details.values": []any{"12.5"}}},
		{name: "code as symbol", method: "POST", url: "events", as: "editor", body: ev("USD 20"), status: 201,
			want: map[string]any{"cost": "USD20", "cost_details.currency_symbol": "USD"}},
		{name: "already joined", method: "POST", url: "events", as: "editor", body: ev("$23"), status: 201, want: map[string]any{"cost": "$23"}},
		{name: "list of spaced prices", method: "POST", url: "events", as: "editor", body: ev([]any{"€ 10", "€ 25"}), status: 201,
			want: map[string]any{"cost": "€10 – €25"}},
		{name: "list with free", method: "POST", url: "events", as: "editor", body: ev([]any{"0 €", "15 €"}), status: 201,
			want: map[string]any{"cost": "Free – 15€"}},
		{name: "words stay", method: "POST", url: "events", as: "editor", body: ev("12 per person"), status: 201, want: map[string]any{"cost": "12 per person"}},
		{name: "range stays", method: "POST", url: "events", as: "editor", body: ev("€ 10 - 20"), status: 201, want: map[string]any{"cost": "€ 10 - 20"}},
		{name: "plain number", method: "POST", url: "events", as: "editor", body: ev("15"), status: 201, want: map[string]any{"cost": "15", "cost_details.currency_symbol": ""}},
		{name: "free text", method: "POST", url: "events", as: "editor", body: ev("Free"), status: 201, want: map[string]any{"cost": "Free"}},
	})
}

// TestSearchWithoutWords checks that a search with no letter or digit
// matches nothing with a total of 0 on every list (docs/decisions.md,
// "Search text").
func TestSearchWithoutWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Star * night _ 100%", "start_date": "2026-12-01 10:00", "end_date": "2026-12-01 11:00", "venue": map[string]any{"venue": "Hall %"}, "organizer": map[string]any{"organizer": "Org *"}})
	e.must(201, "POST", "categories", "editor", map[string]any{"name": "Under_score", "slug": "under_score"})
	e.flush()
	var cases []scenario
	for _, q := range []string{"*", "%25", "_", "-", "%22%22", "*%20*", "...", "%E2%80%94"} {
		for _, list := range []string{"events", "venues", "organizers", "categories"} {
			cases = append(cases, scenario{name: list + " " + q, method: "GET", url: list + "?search=" + q, as: "editor", status: 200,
				want: map[string]any{"total": 0, "total_pages": 0, list: []any{}}})
		}
	}
	cases = append(cases,
		scenario{name: "a word still matches", method: "GET", url: "events?search=star", status: 200, want: map[string]any{"total": 1}},
		scenario{name: "a number still matches", method: "GET", url: "events?search=100", status: 200, want: map[string]any{"total": 1}},
		scenario{name: "page 2 of nothing", method: "GET", url: "events?search=*&page=2", status: 404},
	)
	e.run(t, cases)
}
