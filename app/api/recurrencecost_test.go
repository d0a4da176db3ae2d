package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/app/calendar/recurrence"
)

// costliestRules is the costliest series the service accepts, as its
// expansion counts work: five rules (the most allowed), each examining
// every day of the year or month, three with BYSETPOS, two rarely giving
// a date.
var costliestRules = []any{
	"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1",
	"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
	"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO",
	"FREQ=YEARLY;BYYEARDAY=366",
	"FREQ=DAILY;BYMONTHDAY=13;BYDAY=FR",
}

// TestImpossibleSeriesRefused: a series whose rules can never occur is a
// 400 naming the rule and the part at fault, and leaves nothing stored.
func TestImpossibleSeriesRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		rules []any
		want  string
	}{
		{[]any{"FREQ=DAILY;BYSETPOS=2"}, "recurrence.rules[0]: BYSETPOS=2 can never select a date: FREQ=DAILY gives one candidate date per day."},
		{[]any{"FREQ=WEEKLY", "FREQ=YEARLY;BYYEARDAY=366;BYMONTH=2"}, "recurrence.rules[1]: the rule never occurs"},
		{[]any{"FREQ=MONTHLY;BYDAY=6MO"}, "recurrence.rules[0]: BYDAY=6MO can never occur"},
		{[]any{"FREQ=MONTHLY;BYDAY=5FR;BYMONTHDAY=1", "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2,3;BYSETPOS=2", "FREQ=YEARLY;BYWEEKNO=1;BYMONTH=6;WKST=SU",
			"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO;BYMONTHDAY=1", "FREQ=MONTHLY;BYMONTHDAY=2;BYDAY=5TU"}, "recurrence.rules[0]: the rule gives no date in the 107 years after the series' start"},
	} {
		r := e.do("POST", "events", "editor", weekly(map[string]any{"title": "Never", "recurrence": map[string]any{"rules": c.rules}}))
		if r.status != 400 || !strings.Contains(r.raw, c.want) || r.str("code") != "rest_invalid_param" {
			t.Errorf("%v: %d %s, want 400 with %q", c.rules, r.status, r.raw, c.want)
		}
	}
	if r := e.must(200, "GET", "events?status=publish,future,draft,pending,private&per_page=50", "editor", nil); r.num("total") != 0 {
		t.Errorf("refused series stored: %s", r.raw)
	}
}

// costlySeriesEnv returns an env whose recurrence cache keeps at most max
// expansions (0: the default), with the costliest accepted series
// published, and that series' ID.
func costlySeriesEnv(t *testing.T, max int) (*env, *recurrence.Cache, string) {
	t.Helper()
	cache := recurrence.NewCache(max, 0)
	e := newEnvWith(t, t.TempDir(), envOptions{recurrenceCache: cache})
	id := fmt.Sprint(e.must(201, "POST", "events", "editor", weekly(map[string]any{"title": "Costly", "status": "publish",
		"recurrence": map[string]any{"rules": costliestRules}})).id())
	return e, cache, id
}

// TestOccurrenceReadsUseKeptExpansion: the costliest accepted series is
// expanded once, by its write; reads of its occurrences (list pages, one occurrence,
// its feed), 16 of them concurrent, expand it no more. A change of its
// rules expands it again once.
func TestOccurrenceReadsUseKeptExpansion(t *testing.T) {
	t.Parallel()
	e, cache, id := costlySeriesEnv(t, 0)
	occ := "events/" + id + "/occurrences"
	base := cache.Expansions()
	if base != 1 {
		t.Errorf("the create: %d expansions kept, want 1", base)
	}
	first := e.must(200, "GET", occ+"?per_page=1", "", nil)
	key := first.str("events.0.occurrence.key")
	if key == "" || first.num("total") < 20 {
		t.Fatalf("occurrences: %s", first.raw)
	}
	// Each read differs (the response cache cannot answer it).
	for i := 1; i <= 20; i++ {
		e.must(200, "GET", fmt.Sprintf("%s?per_page=%d", occ, i), "", nil)
		e.must(200, "GET", occ+"/"+key+fmt.Sprintf("?context=view&_=%d", i), "", nil)
	}
	e.must(200, "GET", "events/"+id+".ics", "", nil)
	if n := cache.Expansions() - base; n != 0 {
		t.Errorf("42 reads after the create: %d expansions, want 0", n)
	}
	// The response cache serves the occurrence routes as it serves lists:
	// a strong ETag, 304 on revalidation.
	for _, u := range []string{occ + "?per_page=3", occ + "/" + key, "events/" + id + ".ics"} {
		tag := e.must(200, "GET", u, "", nil).header.Get("ETag")
		if r := e.doWith("GET", root+"/"+u, "", nil, map[string]string{"If-None-Match": tag}); tag == "" || r.status != 304 {
			t.Errorf("%s: ETag %q, revalidation %d", u, tag, r.status)
		}
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.do("GET", fmt.Sprintf("%s?per_page=%d&page=1", occ, 30+i), "", nil); r.status != 200 {
				t.Errorf("concurrent read: %d %s", r.status, r.raw)
			}
		}()
	}
	wg.Wait()
	if n := cache.Expansions() - base; n != 0 {
		t.Errorf("16 concurrent reads: %d expansions, want 0", n)
	}
	e.must(200, "PATCH", "events/"+id, "editor", map[string]any{"recurrence": map[string]any{"rules": costliestRules[:4]}})
	e.must(200, "GET", occ, "", nil)
	e.must(200, "GET", occ+"?per_page=2", "", nil)
	if n := cache.Expansions() - base; n != 1 {
		t.Errorf("after a rule change (kept by the write) and two reads: %d expansions, want 1", n)
	}
}

// TestConcurrentFirstReadsExpandOnce: 16 concurrent anonymous reads of a
// series the cache no longer holds (evicted: this cache holds one) cause
// one expansion.
func TestConcurrentFirstReadsExpandOnce(t *testing.T) {
	t.Parallel()
	e, cache, id := costlySeriesEnv(t, 1)
	e.must(201, "POST", "events", "editor", weekly(map[string]any{"title": "Other", "status": "publish"}))
	base := cache.Expansions()
	if base != 2 {
		t.Fatalf("two creates: %d expansions, want 2", base)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.do("GET", fmt.Sprintf("events/%s/occurrences?per_page=%d", id, i+1), "", nil); r.status != 200 {
				t.Errorf("read: %d %s", r.status, r.raw)
			}
		}()
	}
	wg.Wait()
	if n := cache.Expansions() - base; n != 1 {
		t.Errorf("16 concurrent first reads: %d expansions, want 1", n)
	}
}

// TestSeriesDatesAndDST: an addition in year 0000 is refused; a weekly
// series written to start at 02:30 on New York's spring-forward day
// starts at 03:30 EDT that day (RFC 5545) and at 02:30 the weeks after;
// its feed states where its expansion ends.
func TestSeriesDatesAndDST(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "events", "editor", weekly(map[string]any{"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY;COUNT=4"},
		"additions": []any{"0000-12-31 15:00:00"}}}))
	if r.status != 400 || !strings.Contains(r.raw, `recurrence.additions[0]: \"0000-12-31 15:00:00\" is outside the years 0001 to 9999`) {
		t.Errorf("year 0000 addition: %d %s", r.status, r.raw)
	}
	id := fmt.Sprint(e.must(201, "POST", "events", "editor", map[string]any{"title": "Night", "status": "publish",
		"start_date": "2026-03-08 02:30:00", "end_date": "2026-03-08 03:45:00", "timezone": "America/New_York",
		"recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY"}}}).id())
	ev := e.must(200, "GET", "events/"+id, "", nil)
	if ev.str("start_date") != "2026-03-08 02:30:00" || ev.str("utc_start_date") != "2026-03-08 07:30:00" || ev.str("utc_end_date") != "2026-03-08 07:45:00" {
		t.Errorf("start %s (utc %s, end utc %s), want 02:30 written, 07:30 UTC (03:30 EDT)", ev.str("start_date"), ev.str("utc_start_date"), ev.str("utc_end_date"))
	}
	occ := e.must(200, "GET", "events/"+id+"/occurrences?start_date=2026-03-01&end_date=2026-03-31", "", nil)
	want := "[20260308T033000@2026-03-08 07:30:00 20260315T023000@2026-03-15 06:30:00 20260322T023000@2026-03-22 06:30:00 20260329T023000@2026-03-29 06:30:00]"
	if got := fmt.Sprint(occurrenceStarts(occ, "events")); got != want {
		t.Errorf("occurrences %s\nwant %s", got, want)
	}
	feed := strings.ReplaceAll(e.must(200, "GET", "events/"+id+".ics", "", nil).raw, "\r\n", "\n")
	if !strings.Contains(feed, "RRULE:FREQ=WEEKLY;UNTIL=22260308T073000Z\n") || !strings.Contains(feed, "DTSTART;TZID=America/New_York:20260308T023000\n") {
		t.Errorf("feed rule without the expansion's end:\n%s", feed)
	}
}
