package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testsupport"
)

// TestEventStatusWrites: event_status and event_status_reason are written
// on create and update, read back on single reads and lists (scheduled by
// default), shown in json_ld as schema.org's eventStatus, and anything
// else is refused with the accepted values named, leaving the event as it
// was.
func TestEventStatusWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plain := e.must(201, "POST", "events", "editor", map[string]any{"title": "Plain",
		"start_date": "2027-05-01 10:00", "end_date": "2027-05-01 11:00"})
	if plain.str("event_status") != "scheduled" || plain.path("event_status_reason") != "" {
		t.Errorf("a new event: event_status %q, reason %v; want scheduled and \"\"", plain.str("event_status"), plain.path("event_status_reason"))
	}
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Storm night",
		"start_date": "2027-05-02 20:00", "end_date": "2027-05-02 23:00",
		"event_status": "canceled", "event_status_reason": "  Storm warning «é»  "}).id()
	ev := fmt.Sprintf("events/%d", id)
	tooLong := strings.Repeat("x", 1001)
	e.run(t, []scenario{
		{name: "read", method: "GET", url: ev, status: 200, want: map[string]any{
			"event_status": "canceled", "event_status_reason": "Storm warning «é»",
			"json_ld.eventStatus": "https://schema.org/EventCancelled"}},
		{name: "postponed", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": "postponed"}, status: 200,
			want: map[string]any{"event_status": "postponed", "event_status_reason": "Storm warning «é»"}},
		{name: "postponed in json_ld", method: "GET", url: ev, status: 200, want: map[string]any{"json_ld.eventStatus": "https://schema.org/EventPostponed"}},
		{name: "moved online", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": "moved_online", "event_status_reason": ""}, status: 200,
			want: map[string]any{"event_status": "moved_online", "event_status_reason": ""}},
		{name: "moved online in json_ld", method: "GET", url: ev, status: 200, want: map[string]any{"json_ld.eventStatus": "https://schema.org/EventMovedOnline"}},
		{name: "unknown status", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": "cancelled", "title": "Renamed"}, status: 400,
			want:     map[string]any{"code": "rest_invalid_param", "data.status": 400},
			contains: []string{"event_status", "event_status must be one of scheduled, canceled, postponed, moved_online"}},
		{name: "not text", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": 3}, status: 400,
			want: map[string]any{"code": "rest_invalid_param"}},
		{name: "reason too long", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status_reason": tooLong, "title": "Renamed"}, status: 400,
			want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"event_status_reason"}},
		{name: "unknown on create", method: "POST", url: "events", as: "editor", status: 400,
			body: map[string]any{"title": "Refused", "start_date": "2027-05-03 10:00", "end_date": "2027-05-03 11:00", "event_status": "rescheduled"},
			want: map[string]any{"code": "rest_invalid_param"}, contains: []string{"scheduled, canceled, postponed, moved_online"}},
		{name: "refused writes left no trace", method: "GET", url: ev, status: 200,
			want: map[string]any{"title": "Storm night", "event_status": "moved_online"}},
		{name: "scheduled again", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": "scheduled"}, status: 200,
			want: map[string]any{"event_status": "scheduled", "json_ld.eventStatus": nil}},
		{name: "scheduled in json_ld", method: "GET", url: ev, status: 200, want: map[string]any{"json_ld.eventStatus": "https://schema.org/EventScheduled"}},
		{name: "form field", method: "PATCH", url: ev, as: "editor", body: map[string]any{"event_status": "canceled", "event_status_reason": "Ill"}, status: 200,
			want: map[string]any{"event_status": "canceled", "event_status_reason": "Ill"}},
	})
	e.flush()
	list := e.must(200, "GET", "events?start_date=2027-05-01&end_date=2027-05-31", "", nil)
	if list.str("events.0.event_status") != "scheduled" || list.str("events.1.event_status") != "canceled" || list.str("events.1.event_status_reason") != "Ill" {
		t.Errorf("list: %s", list.raw)
	}
}

// TestEventStatusFilter: event_status filters lists (a comma list or an
// array of statuses), counting an occurrence by its own status; an unknown
// status is refused.
func TestEventStatusFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(title, day, status string) {
		body := map[string]any{"title": title, "start_date": "2027-06-" + day + " 10:00", "end_date": "2027-06-" + day + " 11:00"}
		if status != "" {
			body["event_status"] = status
		}
		e.must(201, "POST", "events", "editor", body)
	}
	mk("On", "01", "")
	mk("Off", "02", "canceled")
	mk("Later", "03", "postponed")
	mk("Online", "04", "moved_online")
	mk("On too", "05", "scheduled")
	series := e.must(201, "POST", "events", "editor", map[string]any{"title": "Class", "start_date": "2027-06-07 19:00", "end_date": "2027-06-07 20:00",
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=3"}}}).id()
	e.must(200, "PATCH", fmt.Sprintf("events/%d/occurrences/20270614T190000", series), "editor", map[string]any{"event_status": "canceled"})
	e.flush()
	window := "events?start_date=2027-06-01&end_date=2027-06-30&per_page=50"
	titles := func(q string) string {
		r := e.must(200, "GET", window+q, "", nil)
		var out []string
		for i := 0; r.path(fmt.Sprintf("events.%d", i)) != nil; i++ {
			out = append(out, r.str(fmt.Sprintf("events.%d.title", i))+" "+r.str(fmt.Sprintf("events.%d.start_date", i))[5:10])
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct{ q, want string }{
		{"", "On 06-01, Off 06-02, Later 06-03, Online 06-04, On too 06-05, Class 06-07, Class 06-14, Class 06-21"},
		{"&event_status=canceled", "Off 06-02, Class 06-14"},
		{"&event_status=postponed,moved_online", "Later 06-03, Online 06-04"},
		{"&event_status[]=postponed&event_status[]=canceled", "Off 06-02, Later 06-03, Class 06-14"},
		{"&event_status=scheduled", "On 06-01, On too 06-05, Class 06-07, Class 06-21"},
	} {
		if got := titles(c.q); got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
	r := e.must(400, "GET", window+"&event_status=cancelled", "", nil)
	if r.str("code") != "rest_invalid_param" || !strings.Contains(r.raw, "scheduled, canceled, postponed, moved_online") {
		t.Errorf("unknown status: %s", r.raw)
	}
}

// TestOccurrenceEventStatus: a PATCH of one occurrence with
// event_status=canceled keeps it listed, as cancelled, with its reason and
// schema.org's EventCancelled; DELETE still removes the date; a moved
// occurrence is EventRescheduled with its previous start.
func TestOccurrenceEventStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.must(201, "POST", "events", "editor", weekly(map[string]any{"event_status_reason": "Series reason"})).id()
	occ := fmt.Sprintf("events/%d/occurrences/", id)
	e.run(t, []scenario{
		{name: "cancel one", method: "PATCH", url: occ + "20270325T190000", as: "editor", status: 200,
			body: map[string]any{"event_status": "canceled", "event_status_reason": "Teacher ill"},
			want: map[string]any{"event_status": "canceled", "event_status_reason": "Teacher ill", "start_date": "2027-03-25 19:00:00"}},
		{name: "still readable", method: "GET", url: occ + "20270325T190000", status: 200,
			want: map[string]any{"event_status": "canceled", "json_ld.eventStatus": "https://schema.org/EventCancelled"}},
		{name: "the others keep the series' status", method: "GET", url: occ + "20270401T190000", status: 200,
			want: map[string]any{"event_status": "scheduled", "event_status_reason": "Series reason", "json_ld.eventStatus": "https://schema.org/EventScheduled"}},
		{name: "refused status", method: "PATCH", url: occ + "20270401T190000", as: "editor", status: 400,
			body: map[string]any{"event_status": "off", "title": "Not kept"}, want: map[string]any{"code": "rest_invalid_param"},
			contains: []string{"event_status must be one of scheduled, canceled, postponed, moved_online"}},
		{name: "refused left no trace", method: "GET", url: occ + "20270401T190000", status: 200,
			want: map[string]any{"title": "Weekly class", "event_status": "scheduled"}},
		{name: "move one", method: "PATCH", url: occ + "20270401T190000", as: "editor", status: 200,
			body: map[string]any{"start_date": "2027-04-02 19:00:00"}},
		{name: "moved is rescheduled", method: "GET", url: occ + "20270401T190000", status: 200,
			want: map[string]any{"json_ld.eventStatus": "https://schema.org/EventRescheduled", "json_ld.previousStartDate": "2027-04-01T17:00:00Z"}},
		{name: "not moved has no previous start", method: "GET", url: occ + "20270318T190000", status: 200, absent: []string{"json_ld.previousStartDate"}},
		{name: "delete removes the date", method: "DELETE", url: occ + "20270408T190000", as: "editor", status: 200},
		{name: "deleted is gone", method: "GET", url: occ + "20270408T190000", status: 404,
			want: map[string]any{"code": "rest-occurrence-not-found"}},
	})
	list := e.must(200, "GET", occ[:len(occ)-1]+"?start_date=2027-03-01&end_date=2027-04-30", "", nil)
	var got []string
	for i := 0; list.path(fmt.Sprintf("events.%d", i)) != nil; i++ {
		got = append(got, list.str(fmt.Sprintf("events.%d.start_date", i))[5:10]+" "+list.str(fmt.Sprintf("events.%d.event_status", i)))
	}
	if want := "03-18 scheduled, 03-25 canceled, 04-02 scheduled"; strings.Join(got, ", ") != want {
		t.Errorf("occurrences: %s, want %s", strings.Join(got, ", "), want)
	}
	e.flush()
	r := e.must(200, "GET", "events?start_date=2027-03-01&end_date=2027-04-30&event_status=canceled", "", nil)
	if r.num("total") != 1 || r.str("events.0.occurrence.key") != "20270325T190000" || r.str("events.0.event_status_reason") != "Teacher ill" {
		t.Errorf("cancelled occurrences listed: %s", r.raw)
	}
}

// TestEventStatusFeed: the iCalendar feed says STATUS:CANCELLED for a
// cancelled event or occurrence, TENTATIVE for a postponed one and
// CONFIRMED for one moved online.
func TestEventStatusFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := map[string]int64{}
	for i, st := range []string{"scheduled", "canceled", "postponed", "moved_online"} {
		day := fmt.Sprintf("2027-07-%02d", i+1)
		ids[st] = e.must(201, "POST", "events", "editor", map[string]any{"title": "Status " + st,
			"start_date": day + " 10:00", "end_date": day + " 11:00", "event_status": st}).id()
	}
	e.flush()
	feed := parseFeed(t, e.do("GET", "events.ics?start_date=2027-07-01&end_date=2027-07-31", "", nil))
	for st, want := range map[string]string{"scheduled": "CONFIRMED", "canceled": "CANCELLED", "postponed": "TENTATIVE", "moved_online": "CONFIRMED"} {
		v := feed[fmt.Sprintf("event-%d@example.test", ids[st])]
		if v == nil {
			t.Fatalf("%s: no VEVENT in the feed", st)
		}
		if p := v.GetProperty("STATUS"); p == nil || p.Value != want {
			t.Errorf("%s: STATUS %v, want %s", st, p, want)
		}
	}
	single := e.do("GET", fmt.Sprintf("events/%d.ics", ids["canceled"]), "", nil)
	if single.status != http.StatusOK || !strings.Contains(single.raw, "STATUS:CANCELLED\r\n") {
		t.Errorf("single feed of a cancelled event: %d %s", single.status, single.raw)
	}
}

// TestEventStatusWebhook: cancelling an event sends event.updated whose
// item carries event_status; cancelling an occurrence sends the series'
// event.updated whose changed_occurrences carry it.
func TestEventStatusWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "WEBHOOK_ALLOW_PRIVATE", "true")
	rc := testsupport.NewRecorder(t)
	_, secret := e.addWebhook(rc.URL, "event.updated")
	id := e.must(201, "POST", "events", "editor", map[string]any{"title": "Hooked",
		"start_date": "2027-01-10 10:00", "end_date": "2027-01-10 11:00"}).id()
	series := e.must(201, "POST", "events", "editor", weekly(nil)).id()
	e.deliver()
	last := func() message {
		t.Helper()
		e.deliver()
		got := rc.All()
		if len(got) == 0 {
			t.Fatal("no message")
		}
		return verify(t, secret, got[len(got)-1])
	}
	e.must(200, "PATCH", fmt.Sprintf("events/%d", id), "editor", map[string]any{"event_status": "canceled", "event_status_reason": "Flooded"})
	m := last()
	if m.Type != "event.updated" || m.Item["event_status"] != "canceled" || m.Item["event_status_reason"] != "Flooded" {
		t.Errorf("message %s, item event_status %v, reason %v", m.Type, m.Item["event_status"], m.Item["event_status_reason"])
	}
	e.must(200, "PATCH", fmt.Sprintf("events/%d/occurrences/20270401T190000", series), "editor", map[string]any{"event_status": "canceled"})
	m = last()
	changed, _ := json.Marshal(m.Item["changed_occurrences"])
	if m.Type != "event.updated" || !strings.Contains(string(changed), `"key":"20270401T190000"`) || !strings.Contains(string(changed), `"event_status":"canceled"`) {
		t.Errorf("message %s, changed_occurrences %s", m.Type, changed)
	}
}

// TestEventStatusTECRoot: under The Events Calendar's root events have no
// event_status fields (the original's have none), but json_ld carries
// eventStatus as the original's does; writes there still set the status.
func TestEventStatusTECRoot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "TEC_COMPAT", "true")
	ev := e.must(http.StatusCreated, "POST", tecRoot+"/events", "editor", map[string]any{"title": "Off",
		"start_date": "2030-03-12 20:00", "end_date": "2030-03-12 23:00", "event_status": "canceled"})
	if strings.Contains(ev.raw, `"event_status"`) {
		t.Errorf("the TEC root writes event_status: %s", ev.raw)
	}
	theirs := e.must(http.StatusOK, "GET", fmt.Sprintf("%s/events/%d", tecRoot, ev.id()), "", nil)
	if theirs.str("json_ld.eventStatus") != "https://schema.org/EventCancelled" || theirs.path("event_status") != nil {
		t.Errorf("under the TEC root: %s", theirs.raw)
	}
	if ours := e.must(http.StatusOK, "GET", fmt.Sprintf("%s/events/%d", root, ev.id()), "", nil); ours.str("event_status") != "canceled" {
		t.Errorf("under our root: event_status %q", ours.str("event_status"))
	}
}
