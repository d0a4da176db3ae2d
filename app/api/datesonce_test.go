package api_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/calendar/eventcal/app/datetext"
)

// TestWriteReadsEachDateOnce: a write route reads each date it is sent
// once (datetext.WatchReads counts the reads of a text): the route's
// declared parameter reads it into a typed value (datetext.Value, in the
// zone the write names), and the calendar takes the instant from that
// value in the event's zone, through check, commit and the write, without
// parsing the text again. Every date text here is sent by this test only.
func TestWriteReadsEachDateOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TIMEZONE", "Europe/Amsterdam")
	series := e.must(201, "POST", "events", "editor", map[string]any{"title": "Series",
		"start_date": "2027-04-01 19:00:00", "end_date": "2027-04-01 21:00:00",
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=10"}}}).id()
	var site, newYork int64 // the events the creates below make
	tests := []struct {
		name   string
		method string
		url    func() string
		body   map[string]any
		status int
		// reads is the number of reads of each date text of body.
		reads int64
		// want maps response paths to values.
		want map[string]string
		made *int64
	}{
		{name: "create", method: "POST", url: func() string { return "events" }, status: 201, reads: 1, made: &site,
			body: map[string]any{"title": "Once", "date": "2031-01-02 03:04:05", "start_date": "2031-05-06 07:08:09", "end_date": "2031-05-06 09:08:09"},
			want: map[string]string{"start_date": "2031-05-06 07:08:09", "utc_start_date": "2031-05-06 05:08:09", "end_date": "2031-05-06 09:08:09"}},
		{name: "create in another zone, phrases", method: "POST", url: func() string { return "events" }, status: 201, reads: 1, made: &newYork,
			body: map[string]any{"title": "Elsewhere", "timezone": "America/New_York", "start_date": "+23 days", "end_date": "+24 days"},
			// e.now is 2026-11-22 12:00 UTC, 07:00 in New York.
			want: map[string]string{"start_date": "2026-12-15 07:00:00", "utc_start_date": "2026-12-15 12:00:00", "end_date": "2026-12-16 07:00:00"}},
		{name: "create with an inline venue", method: "POST", url: func() string { return "events" }, status: 201, reads: 1,
			body: map[string]any{"title": "Linked", "start_date": "2031-03-04 05:06:07", "end_date": "2031-03-04 06:06:07",
				"venue": map[string]any{"venue": "Hall", "date": "2030-09-10 11:12:13"}}},
		{name: "update", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d", site) }, status: 200, reads: 1,
			body: map[string]any{"date_utc": "2031-02-03 04:05:06", "start_date": "2031-06-07 08:09:10", "end_date": "2031-06-07 10:09:10"},
			want: map[string]string{"start_date": "2031-06-07 08:09:10", "end_date": "2031-06-07 10:09:10"}},
		{name: "update an event in another zone", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d", newYork) }, status: 200, reads: 1,
			body: map[string]any{"start_date": "2031-07-08 09:10:11", "end_date": "2031-07-08 11:10:11"},
			// Wall-clock time in the event's zone, read in the site's
			// zone by the route and placed in New York by the calendar.
			want: map[string]string{"start_date": "2031-07-08 09:10:11", "utc_start_date": "2031-07-08 13:10:11", "end_date": "2031-07-08 11:10:11"}},
		{name: "update an event in another zone, a phrase and its zone", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d", newYork) }, status: 200, reads: 1,
			body: map[string]any{"timezone": "America/New_York", "start_date": "+25 days", "end_date": "+26 days"},
			want: map[string]string{"start_date": "2026-12-17 07:00:00", "end_date": "2026-12-18 07:00:00"}},
		// The one case of a second read: a phrase sent to an event in
		// another zone than the site's, without timezone. The route reads
		// it in the site's zone (it does not know the event's yet); what
		// "tomorrow" means depends on the zone's day, so the calendar
		// reads it again in the event's zone.
		{name: "update an event in another zone, a phrase alone", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d", newYork) }, status: 200, reads: 2,
			body: map[string]any{"start_date": "+27 days", "end_date": "+28 days"},
			want: map[string]string{"start_date": "2026-12-19 07:00:00", "end_date": "2026-12-20 07:00:00"}},
		{name: "update and refuse", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d", site) }, status: 400, reads: 1,
			body: map[string]any{"start_date": "2031-08-09 10:11:12", "end_date": "2031-08-08 10:11:12"}},
		{name: "create a venue", method: "POST", url: func() string { return "venues" }, status: 201, reads: 1,
			body: map[string]any{"venue": "Dated", "date": "2030-10-11 12:13:14"}},
		{name: "change an occurrence", method: "PATCH", url: func() string { return fmt.Sprintf("events/%d/occurrences/20270408T190000", series) }, status: 200, reads: 1,
			body: map[string]any{"start_date": "2027-04-08 20:11:12", "end_date": "2027-04-08 22:11:12"},
			want: map[string]string{"start_date": "2027-04-08 20:11:12", "end_date": "2027-04-08 22:11:12"}},
		{name: "split a series", method: "POST", url: func() string { return fmt.Sprintf("events/%d/occurrences/20270415T190000/split", series) }, status: 201, reads: 1,
			body: map[string]any{"start_date": "2027-04-15 19:30:31", "end_date": "2027-04-15 21:30:31"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			var texts []string
			collect := func(body map[string]any) {
				for _, k := range []string{"date", "date_utc", "start_date", "end_date"} {
					if s, ok := body[k].(string); ok {
						texts = append(texts, s)
					}
				}
			}
			collect(tt.body)
			if v, ok := tt.body["venue"].(map[string]any); ok {
				collect(v)
			}
			counters := map[string]func() int64{}
			for _, s := range texts {
				reads, stop := datetext.WatchReads(s)
				defer stop()
				counters[s] = reads
			}
			r := e.do(tt.method, tt.url(), "editor", tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			for _, s := range texts {
				if n := counters[s](); n != tt.reads {
					t.Errorf("%q was read %d times, want %d", s, n, tt.reads)
				}
			}
			for p, want := range tt.want {
				if got := r.str(p); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			if tt.made != nil {
				*tt.made = r.id()
			}
		})
	}
	t.Run("list filter", func(t *testing.T) {
		e.t = t
		const text = "2031-11-12 13:14:15"
		reads, stop := datetext.WatchReads(text)
		defer stop()
		e.must(200, "GET", "events?starts_after="+url.QueryEscape(text), "editor", nil)
		if n := reads(); n != 1 {
			t.Errorf("%q was read %d times, want 1", text, n)
		}
	})
}
