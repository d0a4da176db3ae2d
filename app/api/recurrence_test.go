package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testsupport"
)

// weekly is a series of four Thursdays at 19:00 in Amsterdam, across the
// last Sunday of March 2027.
func weekly(extra map[string]any) map[string]any {
	b := map[string]any{"title": "Weekly class", "start_date": "2027-03-18 19:00:00", "end_date": "2027-03-18 21:00:00",
		"timezone": "Europe/Amsterdam", "recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func occurrenceStarts(r *resp, key string) []string {
	var out []string
	list, _ := r.path(key).([]any)
	for i := range list {
		out = append(out, fmt.Sprint(jsonPath(list[i], "occurrence.key"), "@", jsonPath(list[i], "utc_start_date")))
	}
	return out
}

// TestRecurrenceWrites: a series is written and read back as written; bad
// rules are 400s naming the part at fault; null makes it single again.
func TestRecurrenceWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	series := e.must(201, "POST", "events", "editor", weekly(map[string]any{
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"}, "exclusions": []any{"2027-03-25 19:00:00"}, "additions": []any{"2027-03-20 10:00:00"}}}))
	id := fmt.Sprint(series.id())
	single := e.must(201, "POST", "events", "editor", map[string]any{"title": "Once", "start_date": "2027-01-01 10:00", "end_date": "2027-01-01 11:00"})
	badRule := func(rule, want string) scenario {
		return scenario{name: "refused " + rule, method: "POST", url: "events", as: "editor",
			body: weekly(map[string]any{"recurrence": map[string]any{"rules": []any{rule}}}), status: 400,
			want: map[string]any{"code": "rest_invalid_param"}, contains: []string{want}}
	}
	e.run(t, []scenario{
		{name: "read as written", method: "GET", url: "events/" + id, status: 200, want: map[string]any{
			"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"}, "exclusions": []any{"2027-03-25 19:00:00"}, "additions": []any{"2027-03-20 10:00:00"}},
			"start_date": "2027-03-18 19:00:00", "end_date": "2027-03-18 21:00:00"}},
		{name: "single is null", method: "GET", url: fmt.Sprintf("events/%d", single.id()), status: 200, want: map[string]any{"recurrence": nil},
			absent: []string{"occurrence"}},
		badRule("FREQ=HOURLY", "recurrence.rules[0]: FREQ=HOURLY is finer than daily"),
		badRule("RRULE:FREQ=DAILY", `without the \"RRULE:\" prefix`),
		badRule("FREQ=WEEKLY;BYDAY=XX", "recurrence.rules[0]: not a valid RRULE"),
		badRule("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "never occurs"),
		badRule("FREQ=DAILY;COUNT=2;UNTIL=20270401T000000Z", "COUNT and UNTIL"),
		{name: "bad exclusion", method: "POST", url: "events", as: "editor", status: 400,
			body:     weekly(map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=DAILY"}, "exclusions": []any{"next tuesday"}}}),
			contains: []string{`recurrence.exclusions[0]: \"next tuesday\" is not a start time YYYY-MM-DD HH:MM:SS`}},
		{name: "not an object", method: "POST", url: "events", as: "editor", status: 400,
			body: weekly(map[string]any{"recurrence": []any{"FREQ=DAILY"}}), want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"recurrence must be null or an object"}},
		{name: "unknown key", method: "POST", url: "events", as: "editor", status: 400,
			body: weekly(map[string]any{"recurrence": map[string]any{"rule": "FREQ=DAILY"}}), contains: []string{`Unknown key \"rule\"`}},
		{name: "too many occurrences", method: "POST", url: "events", as: "editor", status: 400,
			body:     weekly(map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=DAILY"}, "additions": manyDates(400)}}),
			contains: []string{"at most 1000 are allowed"}},
		{name: "too many rules", method: "POST", url: "events", as: "editor", status: 400,
			body:     weekly(map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY"}}}),
			contains: []string{"at most 5 items"}},
		{name: "rule as form JSON text", method: "POST", url: "events", as: "editor", status: 201,
			body: url.Values{"title": {"Form"}, "start_date": {"2027-01-04 10:00"}, "end_date": {"2027-01-04 11:00"}, "recurrence": {`{"rules":["FREQ=DAILY;COUNT=2"]}`}},
			want: map[string]any{"recurrence.rules": []any{"FREQ=DAILY;COUNT=2"}, "recurrence.exclusions": []any{}}},
		{name: "null makes it single again", method: "PATCH", url: "events/" + id, as: "editor", body: map[string]any{"recurrence": nil}, status: 200,
			want: map[string]any{"recurrence": nil}},
		{name: "occurrences of a single event", method: "GET", url: "events/" + id + "/occurrences", status: 400,
			want: map[string]any{"code": "rest-event-not-recurring"}},
	})
}

// manyDates returns n additions at 08:00 on consecutive days of 2027.
func manyDates(n int) []any {
	out := make([]any, n)
	d := time.Date(2027, 4, 1, 8, 0, 0, 0, time.UTC)
	for i := range out {
		out[i] = d.AddDate(0, 0, i).Format(time.DateTime)
	}
	return out
}

// TestOccurrenceRoutes: list, read, change, cancel and split occurrences;
// local time is kept across DST (the UTC start moves by an hour).
func TestOccurrenceRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.must(201, "POST", "venues", "editor", map[string]any{"venue": "Hall"})
	id := fmt.Sprint(e.must(201, "POST", "events", "editor", weekly(nil)).id())
	occ := "events/" + id + "/occurrences"
	window := "?start_date=2027-01-01&end_date=2027-12-31"
	e.run(t, []scenario{
		{name: "list across DST", method: "GET", url: occ + window, status: 200, want: map[string]any{"total": 4, "total_pages": 1,
			"events.0.start_date": "2027-03-18 19:00:00", "events.2.start_date": "2027-04-01 19:00:00", "events.2.end_date": "2027-04-01 21:00:00",
			"events.0.id": json.Number(id), "events.3.occurrence.start": "2027-04-08 19:00:00", "events.0.timezone": "Europe/Amsterdam"},
			check: func(t *testing.T, r *resp) {
				want := "[20270318T190000@2027-03-18 18:00:00 20270325T190000@2027-03-25 18:00:00 20270401T190000@2027-04-01 17:00:00 20270408T190000@2027-04-08 17:00:00]"
				if got := fmt.Sprint(occurrenceStarts(r, "events")); got != want {
					t.Errorf("occurrences %s\nwant %s", got, want)
				}
				if !strings.Contains(r.str("rest_url"), "/events/"+id+"/occurrences/") {
					t.Errorf("rest_url %s", r.str("rest_url"))
				}
			}},
		{name: "paged", method: "GET", url: occ + window + "&per_page=3&page=2", status: 200, want: map[string]any{"total": 4, "total_pages": 2,
			"events.0.occurrence.key": "20270408T190000"}},
		{name: "window", method: "GET", url: occ + "?start_date=2027-03-26&end_date=2027-04-05", status: 200, want: map[string]any{"total": 1,
			"events.0.occurrence.key": "20270401T190000"}},
		{name: "page past the end", method: "GET", url: occ + window + "&page=3", status: 404},
		{name: "read one", method: "GET", url: occ + "/20270401T190000", status: 200, want: map[string]any{
			"start_date": "2027-04-01 19:00:00", "utc_start_date": "2027-04-01 17:00:00", "timezone_abbr": "CEST",
			"occurrence.key": "20270401T190000", "title": "Weekly class", "json_ld.startDate": "2027-04-01T17:00:00Z"}},
		{name: "not an occurrence", method: "GET", url: occ + "/20270402T190000", status: 404, want: map[string]any{"code": "rest-occurrence-not-found"}},
		{name: "not a key", method: "GET", url: occ + "/tomorrow", status: 404, want: map[string]any{"code": "rest-occurrence-not-found"}},
		{name: "anonymous change", method: "PATCH", url: occ + "/20270325T190000", body: map[string]any{"title": "x"}, status: 401},
		{name: "contributor change", method: "PATCH", url: occ + "/20270325T190000", as: "contributor", body: map[string]any{"title": "x"}, status: 403},
		{name: "change one", method: "PATCH", url: occ + "/20270325T190000", as: "editor",
			body: map[string]any{"title": "Moved class", "start_date": "2027-03-26 10:00:00", "venue": v.id(), "cost": "5"}, status: 200,
			want: map[string]any{"title": "Moved class", "start_date": "2027-03-26 10:00:00", "end_date": "2027-03-26 12:00:00",
				"occurrence.key": "20270325T190000", "occurrence.start": "2027-03-25 19:00:00", "venue.venue": "Hall", "cost": "5"}},
		{name: "inline venue refused", method: "PATCH", url: occ + "/20270325T190000", as: "editor",
			body: map[string]any{"venue": map[string]any{"venue": "New"}}, status: 400, contains: []string{"existing venues only"}},
		{name: "series edit keeps the change", method: "PATCH", url: "events/" + id, as: "editor", body: map[string]any{"title": "Weekly yoga"}, status: 200},
		{name: "changed one after a series edit", method: "GET", url: occ + window, status: 200, want: map[string]any{"total": 4,
			"events.0.title": "Weekly yoga", "events.1.title": "Moved class", "events.1.start_date": "2027-03-26 10:00:00", "events.2.title": "Weekly yoga"}},
		{name: "cancel one", method: "DELETE", url: occ + "/20270401T190000", as: "editor", status: 200, want: map[string]any{"occurrence.key": "20270401T190000"}},
		{name: "cancelled is gone", method: "GET", url: occ + "/20270401T190000", status: 404},
		{name: "cancelled is an exclusion", method: "GET", url: "events/" + id, status: 200, want: map[string]any{
			"recurrence.exclusions": []any{"2027-04-01 19:00:00"}}},
		{name: "three left", method: "GET", url: occ + window, status: 200, want: map[string]any{"total": 3}},
		{name: "an edit removing the changed occurrence drops its change", method: "PATCH", url: "events/" + id, as: "editor",
			body: map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"}, "exclusions": []any{"2027-03-25 19:00:00"}}}, status: 200},
		{name: "re-added occurrence is plain", method: "GET", url: occ + "/20270401T190000", status: 200, want: map[string]any{"title": "Weekly yoga"}},
		{name: "restore it", method: "PATCH", url: "events/" + id, as: "editor",
			body: map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"}}}, status: 200},
		{name: "its change is gone", method: "GET", url: occ + "/20270325T190000", status: 200, want: map[string]any{"title": "Weekly yoga", "start_date": "2027-03-25 19:00:00"}},
	})
}

// TestSplitSeries: "this and following" ends the series before the
// occurrence and creates a new one from it with the changes; a repeat of
// the same request after a half-done split creates no second series.
func TestSplitSeries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := fmt.Sprint(e.must(201, "POST", "events", "editor", weekly(map[string]any{
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=6"}}})).id())
	occ := "events/" + id + "/occurrences"
	window := "?start_date=2027-01-01&end_date=2027-12-31"
	e.must(200, "PATCH", occ+"/20270415T190000", "editor", map[string]any{"title": "Special"})
	split := e.must(201, "POST", occ+"/20270401T190000/split", "editor", map[string]any{"title": "Weekly class, new room"})
	nid := fmt.Sprint(split.id())
	if got := fmt.Sprint(split.path("parent")); got != id {
		t.Errorf("split response: parent %s, want the old series %s", got, id)
	}
	if split.str("start_date") != "2027-04-01 19:00:00" || split.str("title") != "Weekly class, new room" ||
		fmt.Sprint(split.path("recurrence.rules")) != "[FREQ=WEEKLY;COUNT=4]" {
		t.Fatalf("new series: %s", split.raw)
	}
	old := e.must(200, "GET", "events/"+id, "", nil)
	if fmt.Sprint(old.path("recurrence.rules")) != "[FREQ=WEEKLY;COUNT=2]" {
		t.Fatalf("old series: %v", old.path("recurrence"))
	}
	a := e.must(200, "GET", occ+window, "", nil)
	b := e.must(200, "GET", "events/"+nid+"/occurrences"+window, "", nil)
	got := fmt.Sprint(append(occurrenceStarts(a, "events"), occurrenceStarts(b, "events")...))
	want := "[20270318T190000@2027-03-18 18:00:00 20270325T190000@2027-03-25 18:00:00 20270401T190000@2027-04-01 17:00:00 " +
		"20270408T190000@2027-04-08 17:00:00 20270415T190000@2027-04-15 17:00:00 20270422T190000@2027-04-22 17:00:00]"
	if got != want {
		t.Fatalf("occurrences after the split\n got %s\nwant %s", got, want)
	}
	if title := b.str("events.2.title"); title != "Special" {
		t.Errorf("the changed occurrence moved to the new series with its change: title %q", title)
	}
	e.run(t, []scenario{
		{name: "split again at the same place", method: "POST", url: occ + "/20270401T190000/split", as: "editor", status: 404},
		{name: "split at the first occurrence", method: "POST", url: "events/" + nid + "/occurrences/20270401T190000/split", as: "editor", status: 400,
			contains: []string{"first occurrence"}},
		{name: "contributor", method: "POST", url: "events/" + nid + "/occurrences/20270408T190000/split", as: "contributor", status: 403},
	})
}

// TestSeriesICalendar: the feeds carry RRULE, EXDATE and RDATE on the
// series' VEVENT and each changed occurrence as a VEVENT with
// RECURRENCE-ID and the same UID.
func TestSeriesICalendar(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := fmt.Sprint(e.must(201, "POST", "events", "editor", weekly(map[string]any{
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;UNTIL=20270430"}, "exclusions": []any{"2027-04-08 19:00:00"}, "additions": []any{"2027-05-02 11:00:00"}}})).id())
	e.must(200, "PATCH", "events/"+id+"/occurrences/20270401T190000", "editor", map[string]any{"title": "Moved; class", "start_date": "2027-04-02 20:00:00"})
	e.flush()
	for _, target := range []string{"events/" + id + ".ics", "events.ics?start_date=2027-01-01&end_date=2027-12-31"} {
		r := e.must(200, "GET", target, "", nil)
		body := strings.ReplaceAll(r.raw, "\r\n", "\n")
		for _, want := range []string{
			"RRULE:FREQ=WEEKLY;UNTIL=20270430T215959Z\n",
			"EXDATE;TZID=Europe/Amsterdam:20270408T190000\n",
			"RDATE;TZID=Europe/Amsterdam:20270502T110000\n",
			"RECURRENCE-ID;TZID=Europe/Amsterdam:20270401T190000\n",
			"DTSTART;TZID=Europe/Amsterdam:20270402T200000\n",
			"SUMMARY:Moved\\; class\n",
			"DTSTART;TZID=Europe/Amsterdam:20270318T190000\n",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", target, want, body)
			}
		}
		if n := strings.Count(body, "UID:event-"+id+"@"); n != 2 {
			t.Errorf("%s: %d VEVENTs with the series' UID, want 2 (the series and its changed occurrence)", target, n)
		}
	}
}

// TestSeriesWebhooks: series writes and occurrence changes are reported
// as event messages; a series' message carries its recurrence and its
// changed occurrences, a split reports the new series as created.
func TestSeriesWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	_, secret := e.addWebhook(rc.URL)
	seen := 0
	next := func() []message {
		t.Helper()
		e.deliver()
		got := rc.All()
		var out []message
		for _, g := range got[seen:] {
			out = append(out, verify(t, secret, g))
		}
		seen = len(got)
		return out
	}
	id := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	if m := next(); len(m) != 1 || m[0].Type != "event.created" || jsonPath(m[0].Item, "recurrence.rules.0") != "FREQ=WEEKLY;COUNT=4" {
		t.Fatalf("series created: %+v", m)
	}
	occ := fmt.Sprintf("events/%d/occurrences/", id)
	e.must(200, "PATCH", occ+"20270325T190000", "editor", map[string]any{"title": "Moved", "start_date": "2027-03-26 10:00:00"})
	m := next()
	if len(m) != 1 || m[0].Type != "event.updated" || jsonPath(m[0].Item, "changed_occurrences.0.key") != "20270325T190000" ||
		jsonPath(m[0].Item, "changed_occurrences.0.start_date") != "2027-03-26 10:00:00" || jsonPath(m[0].Item, "changed_occurrences.0.title") != "Moved" {
		t.Fatalf("occurrence changed: %+v", m)
	}
	e.must(200, "DELETE", occ+"20270401T190000", "editor", nil)
	if m := next(); len(m) != 1 || m[0].Type != "event.updated" || fmt.Sprint(jsonPath(m[0].Item, "recurrence.exclusions")) != "[2027-04-01 19:00:00]" {
		t.Fatalf("occurrence cancelled: %+v", m)
	}
	nid := e.must(201, "POST", occ+"20270408T190000/split", "editor", map[string]any{"title": "New room"}).id()
	types := map[string]int64{}
	for _, x := range next() {
		n, _ := x.Item["id"].(float64)
		types[x.Type] = int64(n)
	}
	if types["event.created"] != nid || types["event.updated"] != id {
		t.Fatalf("split: messages %v, want event.created %d and event.updated %d", types, nid, id)
	}
}

// TestListsShowOccurrences: /events lists each occurrence in the window as
// an item (the series' fields, the occurrence's dates, an occurrence
// object), totals and pages count occurrences, hide_subsequent_recurrences
// lists each series once, and the occurrence running now is listed.
func TestListsShowOccurrences(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	e.must(201, "POST", "events", "editor", map[string]any{"title": "Single concert", "start_date": "2027-03-27 20:00", "end_date": "2027-03-27 22:00"})
	e.must(200, "PATCH", fmt.Sprintf("events/%d/occurrences/20270401T190000", id), "editor", map[string]any{"title": "Special class"})
	// Daily 11:00 to 13:00 UTC: the one of today (12:00 now) is running.
	running := e.must(201, "POST", "events", "editor", map[string]any{"title": "Lunch talk", "start_date": "2026-11-20 11:00", "end_date": "2026-11-20 13:00",
		"timezone": "UTC", "recurrence": map[string]any{"rules": []any{"FREQ=DAILY;COUNT=5"}}}).id()
	e.flush()
	probe := e.must(200, "GET", "events?start_date=2027-03-01&end_date=2027-04-30", "", nil)
	if probe.path("events.0.occurrence") == nil {
		t.Fatal("the list holds no occurrence object: the engine must index one document per occurrence (search.Result.Occurrences)")
	}
	window := "events?start_date=2027-03-01&end_date=2027-04-30"
	e.run(t, []scenario{
		{name: "occurrences and a single event", method: "GET", url: window, status: 200, want: map[string]any{"total": 5,
			"events.0.occurrence.key": "20270318T190000", "events.0.utc_start_date": "2027-03-18 18:00:00",
			"events.1.occurrence.key": "20270325T190000", "events.2.title": "Single concert",
			"events.3.occurrence.key": "20270401T190000", "events.3.title": "Special class", "events.3.utc_start_date": "2027-04-01 17:00:00",
			"events.4.end_date": "2027-04-08 21:00:00", "events.4.id": id},
			absent: []string{"events.2.occurrence"}},
		{name: "paging across occurrences", method: "GET", url: window + "&per_page=2&page=2", status: 200, want: map[string]any{"total": 5, "total_pages": 3,
			"events.0.title": "Single concert", "events.1.occurrence.key": "20270401T190000"}},
		{name: "search finds occurrences by the series' text", method: "GET", url: window + "&search=weekly", status: 200, want: map[string]any{"total": 3}},
		{name: "each series once", method: "GET", url: window + "&hide_subsequent_recurrences=true", status: 200, want: map[string]any{"total": 2,
			"events.0.occurrence.key": "20270318T190000", "events.1.title": "Single concert"}},
		{name: "the running occurrence is listed", method: "GET", url: "events?search=lunch", status: 200, want: map[string]any{
			"total": 3, "events.0.occurrence.key": "20261122T110000", "events.0.id": running}},
	})
}

// TestRunningOccurrence: the occurrence happening now is listed (from
// today 00:00 by default) and readable while it runs.
func TestRunningOccurrence(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // now is 2026-11-22 12:00 UTC
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Lunch talk", "start_date": "2026-11-20 11:00", "end_date": "2026-11-20 13:00",
		"timezone": "UTC", "recurrence": map[string]any{"rules": []any{"FREQ=DAILY;COUNT=5"}}}).id()
	e.run(t, []scenario{
		{name: "listed from today", method: "GET", url: fmt.Sprintf("events/%d/occurrences", id), status: 200, want: map[string]any{
			"total": 3, "events.0.occurrence.key": "20261122T110000", "events.0.start_date": "2026-11-22 11:00:00", "events.0.end_date": "2026-11-22 13:00:00"}},
		{name: "past ones with dates", method: "GET", url: fmt.Sprintf("events/%d/occurrences?start_date=2026-11-01", id), status: 200, want: map[string]any{"total": 5}},
		{name: "readable", method: "GET", url: fmt.Sprintf("events/%d/occurrences/20261122T110000", id), status: 200, want: map[string]any{"utc_end_date": "2026-11-22 13:00:00"}},
	})
}

// TestOccurrencesUnderTECRoot: with TEC_COMPAT the occurrence routes answer
// under the original's root too, and their links name that root.
func TestOccurrencesUnderTECRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	id := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	r := e.must(200, "GET", fmt.Sprintf("/wp-json/tribe/events/v1/events/%d/occurrences?start_date=2027-01-01", id), "", nil)
	if r.num("total") != 4 || !strings.HasPrefix(r.str("events.0.occurrence.rest_url"), "http://example.test/wp-json/tribe/events/v1/events/") ||
		!strings.Contains(r.str("rest_url"), "/wp-json/tribe/events/v1/events/") {
		t.Fatalf("under the TEC root: %s", r.raw)
	}
}
