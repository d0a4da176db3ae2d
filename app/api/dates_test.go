package api_test

import (
	"net/url"
	"testing"
)

// TestDatesAsPeopleWriteThem checks relative and written dates through the
// API on an Amsterdam site at e.now (Sunday 2026-11-22 13:00 local): the
// next six months are in the future (issue 13), the request's language is
// the hint, and what is not a date is 400.
func TestDatesAsPeopleWriteThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TIMEZONE", "Europe/Amsterdam")
	mk := func(title, start string) int64 {
		return e.must(201, "POST", "events", "editor", map[string]any{"title": title, "start_date": start, "end_date": start}).id()
	}
	dec := mk("December", "2026-12-10 20:00")
	apr := mk("April", "2027-04-01 20:00")
	aug := mk("August", "2027-08-01 20:00")
	e.flush()
	list := func(q url.Values, want ...int64) scenario {
		return scenario{name: q.Encode(), method: "GET", url: "events?" + q.Encode(), status: 200, check: func(t *testing.T, r *resp) {
			if got := listIDs(r, "events"); ids(got...) != ids(want...) {
				t.Errorf("got %v, want %v", got, want)
			}
		}}
	}
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	bad := func(name, param, value string, kv ...string) scenario {
		v := q(kv...)
		v.Set(param, value)
		return scenario{name: name, method: "GET", url: "events?" + v.Encode(), status: 400,
			want:     map[string]any{"code": "rest_invalid_param", "data.details." + param + ".data.received": value},
			contains: []string{param + " must be a date: YYYY-MM-DD"}}
	}
	e.run(t, []scenario{
		list(q("start_date", "today", "end_date", "+6 months"), dec, apr),
		list(q("start_date", "today", "end_date", "in 6 months"), dec, apr),
		list(q("start_date", "now", "end_date", "next year"), dec, apr, aug),
		list(q("start_date", "first day of next month", "end_date", "last day of next month"), dec),
		list(q("start_date", "1 December 2026", "end_date", "Dec 31 2026"), dec),
		list(q("start_date", "tomorrow 9am", "end_date", "+2 weeks"), nil...),
		list(q("starts_after", "next month", "starts_before", "July 2027"), apr),
		list(q("start_date", "demain", "end_date", "dans 6 mois", "multilang_language", "fr"), dec, apr),
		list(q("start_date", "morgen", "end_date", "over 6 maanden", "multilang_language", "nl"), dec, apr),
		list(q("start_date", "jutro", "end_date", "1 grudnia 2027", "multilang_language", "pl"), dec, apr, aug),
		list(q("start_date", "mañana", "end_date", "1 de mayo de 2027", "multilang_language", "es"), dec, apr),
		bad("birthday", "start_date", "before my birthday"),
		bad("soon", "end_date", "soon"),
		bad("french word in english", "start_date", "demain"),
		bad("garbage", "ends_after", "8 after"),
		bad("stray number", "starts_before", "tomorrow:40"),
		bad("short number", "start_date", "12"),
		bad("german word in french", "start_date", "übermorgen", "multilang_language", "fr"),
	})
	// Writes read dates the same way, as wall-clock time in the event's zone.
	e.run(t, []scenario{
		{name: "next wednesday 4pm", method: "POST", url: "events", as: "editor", body: map[string]any{"title": "W", "start_date": "next wednesday 4pm", "end_date": "next wednesday 6pm"}, status: 201,
			want: map[string]any{"start_date": "2026-11-25 16:00:00", "end_date": "2026-11-25 18:00:00", "utc_start_date": "2026-11-25 15:00:00"}},
		{name: "demain in french", method: "POST", url: "events?multilang_language=fr", as: "editor", body: map[string]any{"title": "D", "start_date": "demain 10:00", "end_date": "après-demain"}, status: 201,
			want: map[string]any{"start_date": "2026-11-23 10:00:00", "end_date": "2026-11-24 00:00:00"}},
		{name: "first day of next month in the event zone", method: "POST", url: "events", as: "editor", body: map[string]any{"title": "F", "timezone": "America/New_York", "start_date": "first day of next month", "end_date": "last day of next month"}, status: 201,
			want: map[string]any{"start_date": "2026-12-01 07:00:00", "end_date": "2026-12-31 07:00:00", "utc_start_date": "2026-12-01 12:00:00"}},
		{name: "nonsense start", method: "POST", url: "events", as: "editor", body: map[string]any{"title": "X", "start_date": "a 6", "end_date": "tomorrow"}, status: 400,
			want: map[string]any{"code": "rest_invalid_param", "data.details.start_date.data.received": "a 6"}, contains: []string{"start_date must be a date"}},
	})
}
