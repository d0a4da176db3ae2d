package recurrence_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/repository"
	"github.com/teambition/rrule-go"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %s: %v", name, err)
	}
	return loc
}

func local(t *testing.T, s string, loc *time.Location) time.Time {
	t.Helper()
	v, err := recurrence.ParseLocal(s, loc)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

// now is the fixed "now" of the tests.
var now = time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)

func series(t *testing.T, zoneName, start string, dur time.Duration, rules, excl, add []string) recurrence.Series {
	loc := zone(t, zoneName)
	st := local(t, start, loc)
	return recurrence.Series{Start: st, End: st.Add(dur), Zone: loc,
		Recurrence: &repository.Recurrence{Rules: rules, Exclusions: excl, Additions: add}}
}

// oracle expands the same series with rrule-go's own Set, parsed from
// iCalendar text (DTSTART;TZID=..., RRULE, EXDATE and RDATE lines), up to end.
// DTSTART is given as an RDATE too: RFC 5545 makes it the first occurrence
// even where the rule does not match it, rrule-go's Set does not.
func oracle(t *testing.T, s recurrence.Series, end time.Time) []time.Time {
	t.Helper()
	if len(s.Recurrence.Rules) > 1 {
		t.Fatal("the oracle takes one rule")
	}
	tz := s.Zone.String()
	ical := func(v string) string {
		return strings.NewReplacer("-", "", ":", "", " ", "T").Replace(v)
	}
	lines := []string{
		"DTSTART;TZID=" + tz + ":" + s.Start.Format("20060102T150405"),
		"RDATE;TZID=" + tz + ":" + s.Start.Format("20060102T150405"),
	}
	for _, r := range s.Recurrence.Rules {
		lines = append(lines, "RRULE:"+r)
	}
	for _, x := range s.Recurrence.Exclusions {
		lines = append(lines, "EXDATE;TZID="+tz+":"+ical(x))
	}
	for _, a := range s.Recurrence.Additions {
		lines = append(lines, "RDATE;TZID="+tz+":"+ical(a))
	}
	set, err := rrule.StrToRRuleSet(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, strings.Join(lines, "\n"))
	}
	return set.Between(s.Start.Add(-time.Second), end, true)
}

// TestExpandAgainstRRuleSet expands each series with Expand and with
// rrule-go's Set read from iCalendar text, from the start to the horizon,
// and compares every instant and local wall time.
func TestExpandAgainstRRuleSet(t *testing.T) {
	lim := recurrence.Limits{Now: now}
	cases := []struct {
		name, zone, start string
		rule              string
		excl, add         []string
	}{
		{"weekly Amsterdam across both DST changes", "Europe/Amsterdam", "2027-01-07 19:00:00", "FREQ=WEEKLY", nil, nil},
		{"weekly New York Tue Thu", "America/New_York", "2027-02-02 18:30:00", "FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20271231T235959Z", nil, nil},
		{"daily Sydney around April and October", "Australia/Sydney", "2027-03-20 10:00:00", "FREQ=DAILY;COUNT=250", nil, nil},
		{"first Monday", "Europe/Amsterdam", "2027-01-04 09:00:00", "FREQ=MONTHLY;BYDAY=1MO", nil, nil},
		{"last Friday", "America/New_York", "2027-01-29 20:00:00", "FREQ=MONTHLY;BYDAY=-1FR", nil, nil},
		{"BYMONTHDAY=31 skips short months", "Australia/Sydney", "2027-01-31 08:00:00", "FREQ=MONTHLY;BYMONTHDAY=31", nil, nil},
		{"UNTIL in UTC against a local start", "Europe/Amsterdam", "2027-03-02 19:00:00", "FREQ=WEEKLY;UNTIL=20270406T170000Z", nil, nil},
		{"exclusions and additions", "Europe/Amsterdam", "2027-01-05 19:00:00", "FREQ=WEEKLY;COUNT=10",
			[]string{"2027-01-12 19:00:00", "2027-02-02 19:00:00"}, []string{"2027-01-14 20:00:00", "2027-06-01 19:00:00"}},
		{"start off the rule is the first occurrence", "America/New_York", "2027-01-06 12:00:00", "FREQ=WEEKLY;BYDAY=FR;COUNT=5", nil, nil},
		{"every other week", "Australia/Sydney", "2027-09-01 18:00:00", "FREQ=WEEKLY;INTERVAL=2;BYDAY=WE", nil, nil},
		{"yearly last Sunday of March", "Europe/Amsterdam", "2027-03-28 02:30:00", "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", nil, nil},
		{"monthly BYSETPOS last weekday", "America/New_York", "2027-01-29 17:00:00", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := series(t, c.zone, c.start, 90*time.Minute, []string{c.rule}, c.excl, c.add)
			if err := recurrence.Validate(s, lim); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			want := oracle(t, s, lim.HorizonEnd())
			if len(got) != len(want) {
				t.Fatalf("Expand gave %d occurrences, the rrule-go Set %d\n got first %v\nwant first %v", len(got), len(want), head(got), want[:min(5, len(want))])
			}
			for i := range want {
				if !got[i].Start.Equal(want[i]) {
					t.Fatalf("occurrence %d: Expand %s, Set %s", i, got[i].Start, want[i])
				}
				if g, w := got[i].Start.Format(time.DateTime), want[i].In(s.Zone).Format(time.DateTime); g != w {
					t.Fatalf("occurrence %d local: %s, want %s", i, g, w)
				}
				if got[i].End.Sub(got[i].Start) != 90*time.Minute {
					t.Fatalf("occurrence %d lasts %s, want the first one's 1h30m", i, got[i].End.Sub(got[i].Start))
				}
				if got[i].Key != want[i].In(s.Zone).Format(recurrence.KeyLayout) {
					t.Fatalf("occurrence %d key %s", i, got[i].Key)
				}
			}
		})
	}
}

// manyAdditions returns n additions at 08:00 on n days from 2027-02-01.
func manyAdditions(n int) []string {
	var out []string
	d := time.Date(2027, 2, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		out = append(out, d.AddDate(0, 0, i).Format(time.DateTime))
	}
	return out
}

func head(o []recurrence.Occurrence) []string {
	var out []string
	for i := 0; i < len(o) && i < 5; i++ {
		out = append(out, o[i].Start.String())
	}
	return out
}

// TestExpandWrittenOut checks hand-computed occurrences: local wall time
// kept across DST in three zones (the UTC instant moves), ordinals,
// BYMONTHDAY=31, UNTIL in UTC, exclusions and additions.
func TestExpandWrittenOut(t *testing.T) {
	lim := recurrence.Limits{Now: now}
	cases := []struct {
		name, zone, start string
		rules, excl, add  []string
		want              []string // UTC instants, RFC 3339
	}{
		{"Amsterdam 19:00 weekly over the last Sunday of March", "Europe/Amsterdam", "2027-03-18 19:00:00",
			[]string{"FREQ=WEEKLY;COUNT=4"}, nil, nil,
			[]string{"2027-03-18T18:00:00Z", "2027-03-25T18:00:00Z", "2027-04-01T17:00:00Z", "2027-04-08T17:00:00Z"}},
		{"New York 09:00 Mondays over the second Sunday of March", "America/New_York", "2027-03-01 09:00:00",
			[]string{"FREQ=WEEKLY;BYDAY=MO;COUNT=3"}, nil, nil,
			[]string{"2027-03-01T14:00:00Z", "2027-03-08T14:00:00Z", "2027-03-15T13:00:00Z"}},
		{"Sydney 10:00 daily over the first Sunday of April", "Australia/Sydney", "2027-04-02 10:00:00",
			[]string{"FREQ=DAILY;COUNT=4"}, nil, nil,
			[]string{"2027-04-01T23:00:00Z", "2027-04-02T23:00:00Z", "2027-04-04T00:00:00Z", "2027-04-05T00:00:00Z"}},
		{"first Monday", "UTC", "2027-01-04 09:00:00", []string{"FREQ=MONTHLY;BYDAY=1MO;COUNT=3"}, nil, nil,
			[]string{"2027-01-04T09:00:00Z", "2027-02-01T09:00:00Z", "2027-03-01T09:00:00Z"}},
		{"last Friday", "UTC", "2027-01-29 20:00:00", []string{"FREQ=MONTHLY;BYDAY=-1FR;COUNT=3"}, nil, nil,
			[]string{"2027-01-29T20:00:00Z", "2027-02-26T20:00:00Z", "2027-03-26T20:00:00Z"}},
		{"31st of the month", "UTC", "2027-01-31 08:00:00", []string{"FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4"}, nil, nil,
			[]string{"2027-01-31T08:00:00Z", "2027-03-31T08:00:00Z", "2027-05-31T08:00:00Z", "2027-07-31T08:00:00Z"}},
		{"UNTIL in UTC equal to the last local start", "Europe/Amsterdam", "2027-06-01 19:00:00",
			[]string{"FREQ=WEEKLY;UNTIL=20270615T170000Z"}, nil, nil,
			[]string{"2027-06-01T17:00:00Z", "2027-06-08T17:00:00Z", "2027-06-15T17:00:00Z"}},
		{"UNTIL in UTC one second before it", "Europe/Amsterdam", "2027-06-01 19:00:00",
			[]string{"FREQ=WEEKLY;UNTIL=20270615T165959Z"}, nil, nil,
			[]string{"2027-06-01T17:00:00Z", "2027-06-08T17:00:00Z"}},
		{"date-only UNTIL includes the day", "Europe/Amsterdam", "2027-06-01 19:00:00",
			[]string{"FREQ=WEEKLY;UNTIL=20270615"}, nil, nil,
			[]string{"2027-06-01T17:00:00Z", "2027-06-08T17:00:00Z", "2027-06-15T17:00:00Z"}},
		{"exclusion and addition", "UTC", "2027-01-05 19:00:00", []string{"FREQ=WEEKLY;COUNT=3"},
			[]string{"2027-01-12 19:00:00"}, []string{"2027-01-13 10:00:00"},
			[]string{"2027-01-05T19:00:00Z", "2027-01-13T10:00:00Z", "2027-01-19T19:00:00Z"}},
		{"excluded first occurrence", "UTC", "2027-01-05 19:00:00", []string{"FREQ=WEEKLY;COUNT=2"},
			[]string{"2027-01-05 19:00:00"}, nil,
			[]string{"2027-01-12T19:00:00Z"}},
		{"additions only", "UTC", "2027-01-05 19:00:00", nil, nil, []string{"2027-01-07 19:00", "2027-01-06 19:00:00"},
			[]string{"2027-01-05T19:00:00Z", "2027-01-06T19:00:00Z", "2027-01-07T19:00:00Z"}},
		{"two rules, shared dates once", "UTC", "2027-01-04 12:00:00",
			[]string{"FREQ=WEEKLY;BYDAY=MO;COUNT=2", "FREQ=DAILY;COUNT=2"}, nil, nil,
			[]string{"2027-01-04T12:00:00Z", "2027-01-05T12:00:00Z", "2027-01-11T12:00:00Z"}},
		{"29 February on a Monday: accepted, next in 2044 beyond the horizon", "UTC", "2027-01-04 12:00:00", []string{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;COUNT=1"}, nil, nil,
			[]string{"2027-01-04T12:00:00Z"}},
		{"last day of February", "UTC", "2027-01-04 12:00:00", []string{"FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=-1;COUNT=2"}, nil, nil,
			[]string{"2027-01-04T12:00:00Z", "2027-02-28T12:00:00Z", "2028-02-29T12:00:00Z"}},
		{"lower-case rule", "UTC", "2027-01-04 12:00:00", []string{"freq=daily;count=2"}, nil, nil,
			[]string{"2027-01-04T12:00:00Z", "2027-01-05T12:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := series(t, c.zone, c.start, time.Hour, c.rules, c.excl, c.add)
			if err := recurrence.Validate(s, lim); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
			if err != nil {
				t.Fatal(err)
			}
			var g []string
			for _, o := range got {
				g = append(g, o.Start.UTC().Format(time.RFC3339))
			}
			if fmt.Sprint(g) != fmt.Sprint(c.want) {
				t.Fatalf("got  %v\nwant %v", g, c.want)
			}
		})
	}
}

// TestFixedOffsetZone expands in a UTC+N zone as a fixed offset.
func TestFixedOffsetZone(t *testing.T) {
	loc := time.FixedZone("UTC+5:30", 5*3600+1800)
	st := time.Date(2027, 3, 1, 19, 0, 0, 0, loc)
	s := recurrence.Series{Start: st, End: st.Add(time.Hour), Zone: loc,
		Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=3"}}}
	got, err := recurrence.Expand(s, time.Time{}, time.Time{}, recurrence.Limits{Now: now})
	if err != nil || len(got) != 3 {
		t.Fatalf("got %v, %v", got, err)
	}
	for i, o := range got {
		if want := st.AddDate(0, 0, 7*i); !o.Start.Equal(want) || o.Key != want.Format(recurrence.KeyLayout) {
			t.Fatalf("occurrence %d = %s (%s), want %s", i, o.Start, o.Key, want)
		}
	}
}

// TestOccurrenceHappeningNow lists the occurrence running at "from".
func TestOccurrenceHappeningNow(t *testing.T) {
	ams := zone(t, "Europe/Amsterdam")
	s := series(t, "Europe/Amsterdam", "2027-05-01 19:00:00", 2*time.Hour, []string{"FREQ=DAILY"}, nil, nil)
	cases := []struct {
		name string
		now  string
		want string // key of the first occurrence listed from now
	}{
		{"just started", "2027-05-05 19:00:00", "20270505T190000"},
		{"half way", "2027-05-05 20:00:00", "20270505T190000"},
		{"at its end", "2027-05-05 21:00:00", "20270505T190000"},
		{"just over", "2027-05-05 21:00:01", "20270506T190000"},
		{"before it", "2027-05-05 08:00:00", "20270505T190000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := local(t, c.now, ams)
			lim := recurrence.Limits{Now: n}
			got, err := recurrence.Expand(s, n, n.Add(48*time.Hour), lim)
			if err != nil || len(got) == 0 {
				t.Fatalf("got %v, %v", got, err)
			}
			if got[0].Key != c.want {
				t.Fatalf("first listed %s, want %s", got[0].Key, c.want)
			}
		})
	}
}

// TestHorizonAndLimit bounds open-ended series by the horizon and refuses
// series with too many upcoming occurrences, naming the limit.
func TestHorizonAndLimit(t *testing.T) {
	weekly := series(t, "UTC", "2027-01-04 10:00:00", time.Hour, []string{"FREQ=WEEKLY"}, nil, nil)
	got, err := recurrence.Expand(weekly, time.Time{}, time.Time{}, recurrence.Limits{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	end := now.Add(recurrence.DefaultHorizon)
	if last := got[len(got)-1].Start; last.After(end) || end.Sub(last) >= 7*24*time.Hour {
		t.Fatalf("last occurrence %s, horizon end %s", last, end)
	}
	if n := len(got); n < 100 || n > 106 {
		t.Fatalf("%d weekly occurrences in two years", n)
	}
	short := recurrence.Limits{Now: now, Horizon: 30 * 24 * time.Hour}
	got, _ = recurrence.Expand(weekly, time.Time{}, time.Time{}, short)
	if len(got) != 4 { // Jan 4, 11, 18, 25; the horizon ends Jan 31 12:00
		t.Fatalf("30-day horizon: %d occurrences, want 4", len(got))
	}

	daily := series(t, "UTC", "2027-01-04 10:00:00", time.Hour, []string{"FREQ=DAILY"}, nil, nil)
	small := recurrence.Limits{Now: now, MaxOccurrences: 100}
	err = recurrence.Validate(daily, small)
	var re *recurrence.Error
	if !errors.As(err, &re) || !strings.Contains(re.Message, "at most 100") {
		t.Fatalf("daily with no end, max 100: %v", err)
	}
	if err := recurrence.Validate(series(t, "UTC", "2027-01-04 10:00:00", time.Hour, []string{"FREQ=DAILY;COUNT=100"}, nil, nil), small); err != nil {
		t.Fatalf("exactly 100: %v", err)
	}
	if err := recurrence.Validate(daily, recurrence.Limits{Now: now}); err != nil {
		t.Fatalf("daily over the default horizon: %v", err)
	}
	// An old daily series with no end: past occurrences beyond the limit
	// drop out first, every upcoming one stays.
	old := series(t, "UTC", "2020-01-01 10:00:00", time.Hour, []string{"FREQ=DAILY"}, nil, nil)
	if err := recurrence.Validate(old, recurrence.Limits{Now: now}); err != nil {
		t.Fatalf("old daily series: %v", err)
	}
	got, _ = recurrence.Expand(old, time.Time{}, time.Time{}, recurrence.Limits{Now: now})
	if len(got) != recurrence.DefaultMaxOccurrences {
		t.Fatalf("old daily series: %d occurrences", len(got))
	}
	if last := got[len(got)-1].Start; end.Sub(last) > 24*time.Hour {
		t.Fatalf("old daily series ends %s, horizon %s", last, end)
	}
}

// TestOverrides moves, changes and cancels single occurrences; keys stay.
func TestOverrides(t *testing.T) {
	s := series(t, "Europe/Amsterdam", "2027-03-18 19:00:00", time.Hour, []string{"FREQ=WEEKLY;COUNT=4"}, nil, nil)
	moved := "2027-04-15 08:00:00"
	title := repository.Text{"en": "Moved"}
	s.Overrides = []repository.OccurrenceOverride{
		{Key: "20270325T190000", StartLocal: &moved, Title: title},
		{Key: "20270401T190000", Cancelled: true},
		{Key: "20990101T000000"}, // no such occurrence: ignored
	}
	lim := recurrence.Limits{Now: now}
	if err := recurrence.Validate(s, lim); err != nil {
		t.Fatal(err)
	}
	got, err := recurrence.Expand(s, time.Time{}, time.Time{}, lim)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range got {
		keys = append(keys, o.Key+"@"+o.Start.Format("01-02T15:04")+"-"+o.End.Format("15:04"))
	}
	want := "[20270318T190000@03-18T19:00-20:00 20270408T190000@04-08T19:00-20:00 20270325T190000@04-15T08:00-09:00]"
	if fmt.Sprint(keys) != want {
		t.Fatalf("got  %v\nwant %s", keys, want)
	}
	if got[2].Override == nil || got[2].Override.Title["en"] != "Moved" || !got[2].Original.Equal(local(t, "2027-03-25 19:00:00", s.Zone)) {
		t.Fatalf("moved occurrence: %+v", got[2])
	}
	o, ok, err := recurrence.Find(s, "20270325T190000", lim)
	if err != nil || !ok || o.Start.Format(time.DateTime) != moved {
		t.Fatalf("Find: %+v %v %v", o, ok, err)
	}
	for _, k := range []string{"20270401T190000", "20270326T190000", "bogus", ""} {
		if _, ok, _ := recurrence.Find(s, k, lim); ok {
			t.Fatalf("Find(%q) found an occurrence", k)
		}
	}
	// A window query sees the moved occurrence where it now is.
	w, _ := recurrence.Expand(s, local(t, "2027-04-10 00:00:00", s.Zone), local(t, "2027-04-20 00:00:00", s.Zone), lim)
	if len(w) != 1 || w[0].Key != "20270325T190000" {
		t.Fatalf("window: %+v", w)
	}
}

// TestValidateRefuses names the part at fault in every refusal.
func TestValidateRefuses(t *testing.T) {
	cases := []struct {
		name             string
		rules, excl, add []string
		field, message   string
	}{
		{"hourly", []string{"FREQ=HOURLY"}, nil, nil, "recurrence.rules[0]", "finer than daily"},
		{"minutely second rule", []string{"FREQ=DAILY;COUNT=2", "FREQ=MINUTELY"}, nil, nil, "recurrence.rules[1]", "FREQ=MINUTELY is finer than daily"},
		{"no FREQ", []string{"BYDAY=MO"}, nil, nil, "recurrence.rules[0]", "FREQ is required"},
		{"prefix", []string{"RRULE:FREQ=DAILY"}, nil, nil, "recurrence.rules[0]", "without the \"RRULE:\" prefix"},
		{"garbage", []string{"every monday"}, nil, nil, "recurrence.rules[0]", "not NAME=VALUE"},
		{"bad frequency", []string{"FREQ=FORTNIGHTLY"}, nil, nil, "recurrence.rules[0]", "not a valid RRULE"},
		{"bad day", []string{"FREQ=WEEKLY;BYDAY=XX"}, nil, nil, "recurrence.rules[0]", "not a valid RRULE"},
		{"month day 32", []string{"FREQ=MONTHLY;BYMONTHDAY=32"}, nil, nil, "recurrence.rules[0]", "bymonthday must be between"},
		{"byhour", []string{"FREQ=DAILY;BYHOUR=9,17"}, nil, nil, "recurrence.rules[0]", "BYHOUR is not supported"},
		{"dtstart", []string{"FREQ=DAILY;DTSTART=20270101T000000Z"}, nil, nil, "recurrence.rules[0]", "leave DTSTART out"},
		{"count and until", []string{"FREQ=DAILY;COUNT=3;UNTIL=20270301T000000Z"}, nil, nil, "recurrence.rules[0]", "COUNT and UNTIL"},
		{"count zero", []string{"FREQ=DAILY;COUNT=0"}, nil, nil, "recurrence.rules[0]", "COUNT must be a whole number"},
		{"interval huge", []string{"FREQ=DAILY;INTERVAL=100000"}, nil, nil, "recurrence.rules[0]", "INTERVAL is at most"},
		{"twice", []string{"FREQ=DAILY;FREQ=WEEKLY"}, nil, nil, "recurrence.rules[0]", "given twice"},
		{"unknown part", []string{"FREQ=DAILY;X-FOO=1"}, nil, nil, "recurrence.rules[0]", "unknown rule part X-FOO"},
		{"until in another format", []string{"FREQ=DAILY;UNTIL=2027-06-30"}, nil, nil, "recurrence.rules[0]", `UNTIL must be a date like 20270630 or a time like 20270630T235959Z (UTC) or 20270630T235959 (the event's zone), not "2027-06-30"`},
		{"until not a date", []string{"FREQ=DAILY;UNTIL=20271340"}, nil, nil, "recurrence.rules[0]", "UNTIL must be a date like 20270630"},
		{"until with a bad time", []string{"FREQ=DAILY;UNTIL=20270630T256000Z"}, nil, nil, "recurrence.rules[0]", "UNTIL must be a date like 20270630"},
		{"until before start", []string{"FREQ=DAILY;UNTIL=20260101T000000Z"}, nil, nil, "recurrence.rules[0]", "before the series' start"},
		{"empty rule", []string{" "}, nil, nil, "recurrence.rules[0]", "must not be empty"},
		{"long rule", []string{"FREQ=DAILY;BYMONTH=" + strings.Repeat("1,", 200) + "1"}, nil, nil, "recurrence.rules[0]", "at most 300 characters"},
		{"too many rules", []string{"FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY", "FREQ=DAILY"}, nil, nil, "recurrence.rules", "at most 5 rules"},
		{"never: 30 February", []string{"FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, nil, nil, "recurrence.rules[0]", "never occurs"},
		{"never: day 366 in January", []string{"FREQ=YEARLY;BYYEARDAY=366;BYMONTH=1"}, nil, nil, "recurrence.rules[0]", "never occurs"},
		{"never: 31 April", []string{"FREQ=WEEKLY;BYMONTH=4;BYMONTHDAY=-31,31"}, nil, nil, "recurrence.rules[0]", "never occurs"},
		{"nothing", nil, nil, nil, "recurrence", "at least one rule"},
		{"bad exclusion", []string{"FREQ=DAILY;COUNT=3"}, []string{"2027-02-30 19:00:00"}, nil, "recurrence.exclusions[0]", "YYYY-MM-DD HH:MM:SS"},
		{"bad addition", []string{"FREQ=DAILY;COUNT=3"}, nil, []string{"", "20270101T190000"}, "recurrence.additions[0]", "YYYY-MM-DD HH:MM:SS"},
		{"too many", []string{"FREQ=DAILY;UNTIL=20300101T000000Z"}, nil, manyAdditions(300), "recurrence", "at most 1000 are allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := series(t, "Europe/Amsterdam", "2027-01-04 10:00:00", time.Hour, c.rules, c.excl, c.add)
			err := recurrence.Validate(s, recurrence.Limits{Now: now})
			var re *recurrence.Error
			if !errors.As(err, &re) {
				t.Fatalf("Validate = %v, want a *recurrence.Error", err)
			}
			if re.Field != c.field || !strings.Contains(re.Message, c.message) {
				t.Fatalf("Validate = %q / %q, want %q / ...%q...", re.Field, re.Message, c.field, c.message)
			}
			if strings.Contains(re.Message, "2006") || strings.Contains(re.Message, "15:04") {
				t.Errorf("the message shows Go's date layout: %q", re.Message)
			}
			if c.name == "too many" {
				return // Expand bounds it instead (the latest 1,000)
			}
			if _, err := recurrence.Expand(s, time.Time{}, time.Time{}, recurrence.Limits{Now: now}); !errors.As(err, &re) {
				t.Fatalf("Expand of an invalid series = %v", err)
			}
		})
	}
	// No start, bad override key, and a single event.
	s := series(t, "UTC", "2027-01-04 10:00:00", time.Hour, []string{"FREQ=DAILY;COUNT=2"}, nil, nil)
	s.Start = time.Time{}
	if err := recurrence.Validate(s, recurrence.Limits{Now: now}); err == nil || !strings.Contains(err.Error(), "start_date") {
		t.Fatalf("no start: %v", err)
	}
	s = series(t, "UTC", "2027-01-04 10:00:00", time.Hour, []string{"FREQ=DAILY;COUNT=2"}, nil, nil)
	s.Overrides = []repository.OccurrenceOverride{{Key: "2027-01-04"}}
	if err := recurrence.Validate(s, recurrence.Limits{Now: now}); err == nil || !strings.Contains(err.Error(), "overrides[0].key") {
		t.Fatalf("bad override key: %v", err)
	}
	s.Recurrence, s.Overrides = nil, nil
	if err := recurrence.Validate(s, recurrence.Limits{Now: now}); err != nil {
		t.Fatalf("single event: %v", err)
	}
	if o, err := recurrence.Expand(s, time.Time{}, time.Time{}, recurrence.Limits{Now: now}); err != nil || len(o) != 0 {
		t.Fatalf("single event expands to %v, %v", o, err)
	}
}

// TestSeriesOf reads an event's first occurrence in its zone.
func TestSeriesOf(t *testing.T) {
	ny := zone(t, "America/New_York")
	e := &repository.EventFields{StartLocal: "2027-03-01 09:00:00", EndLocal: "2027-03-01 10:30:00",
		Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=3"}}}
	s := recurrence.SeriesOf(e, ny)
	if s.Start.Format(time.RFC3339) != "2027-03-01T09:00:00-05:00" || s.End.Sub(s.Start) != 90*time.Minute {
		t.Fatalf("SeriesOf = %v .. %v", s.Start, s.End)
	}
	keys, err := recurrence.Keys(s, recurrence.Limits{Now: now})
	if err != nil || len(keys) != 3 || !keys["20270315T090000"] {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
}
