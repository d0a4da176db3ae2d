package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/repository"
)

// The series mode (-series N): N of the seeded events are weekly series
// without an end, so each is expanded to the recurrence horizon (two
// years by default: about 105 occurrences, one index document each);
// -events 100000 -series 5000 gives about half a million occurrences. The
// usual rows then list, search and filter occurrences, and seriesRows adds
// a collapsed list (hide_subsequent_recurrences) and the cost of writing
// a series: a create and an edit through the API, each until every one of
// its occurrences is searchable.

// seriesCount is the -series flag.
var seriesCount int

// makeSeries turns the generated event p (number i) into a weekly series
// when it is one of the -series ones: its first occurrence within the
// coming week, every week after until the horizon.
func (k *seedKit) makeSeries(p *repository.Record, i int, rng *rand.Rand) {
	if k.seriesEvery <= 0 || i%k.seriesEvery != 0 {
		return
	}
	start := k.today.Add(time.Duration(rng.IntN(7*24)) * time.Hour)
	local := start.In(k.loc)
	e := p.Event
	e.StartUTC, e.EndUTC = start, start.Add(2*time.Hour)
	e.StartLocal, e.EndLocal = local.Format(time.DateTime), local.Add(2*time.Hour).Format(time.DateTime)
	e.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=WEEKLY"}}
}

// seriesRows measures the collapsed list and the writes of series.
func (s *stack) seriesRows(tw *tabwriter.Writer, uncachedBase string, conc int, dur time.Duration, today time.Time) error {
	res := s.load(uncachedBase, func(r *rand.Rand) string { return "/events?hide_subsequent_recurrences=true" }, conc, dur)
	fmt.Fprintf(tw, "GET /events?hide_subsequent_recurrences=true\t%.0f\t%.2f\t%.2f\t\t\t\n", res.rate, res.lat.pct(50), res.lat.pct(99))
	if res.errors > 0 {
		fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\n", res.errors)
	}
	fmt.Fprintln(os.Stderr, "measuring series writes...")
	const n = 30
	var createLat, createLag, editLat, editLag latencies
	occurrences := 0
	for i := range n {
		word := fmt.Sprintf("seriesprobe%d", probeSeq.Add(1))
		start := today.AddDate(0, 0, 1+i%7).Add(19 * time.Hour)
		t0 := time.Now()
		id, err := s.create("events", map[string]any{"title": "Weekly " + word, "start_date": start.Format(time.DateTime),
			"end_date": start.Add(2 * time.Hour).Format(time.DateTime), "recurrence": map[string]any{"rules": []any{"FREQ=WEEKLY"}}})
		if err != nil {
			return err
		}
		createLat.add(time.Since(t0))
		total, err := s.waitSearchable(word, 0)
		if err != nil {
			return err
		}
		createLag.add(time.Since(t0))
		occurrences = total

		edited := fmt.Sprintf("seriesedit%d", probeSeq.Add(1))
		t1 := time.Now()
		if err := s.send("PATCH", "/events/"+strconv.FormatInt(id, 10), map[string]any{"title": "Weekly " + edited}); err != nil {
			return err
		}
		editLat.add(time.Since(t1))
		if _, err := s.waitSearchable(edited, total); err != nil {
			return err
		}
		editLag.add(time.Since(t1))
	}
	fmt.Fprintf(tw, "POST /events (weekly series, %d occurrences), request\t\t%.2f\t%.2f\t\t\t\n", occurrences, createLat.pct(50), createLat.pct(99))
	fmt.Fprintf(tw, "  until every occurrence is searchable\t\t%.1f\t%.1f\t\t\t\n", createLag.pct(50), createLag.pct(99))
	fmt.Fprintf(tw, "PATCH /events/{series} (title), request\t\t%.2f\t%.2f\t\t\t\n", editLat.pct(50), editLat.pct(99))
	fmt.Fprintf(tw, "  until every occurrence is searchable\t\t%.1f\t%.1f\t\t\t\n", editLag.pct(50), editLag.pct(99))
	return s.costliestSeriesRows(tw, uncachedBase, conc, dur, today)
}

// costliestRules is the costliest series the API accepts as expansion
// work counts it (app/calendar/recurrence budgets): five rules, each
// examining every day of its period, three with BYSETPOS, two rarely
// giving a date.
var costliestRules = []any{
	"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=1,-1",
	"FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
	"FREQ=YEARLY;BYMONTH=2;BYDAY=5MO",
	"FREQ=YEARLY;BYYEARDAY=366",
	"FREQ=DAILY;BYMONTHDAY=13;BYDAY=FR",
}

// costliestSeriesRows measures GET /events/{id}/occurrences of the
// costliest accepted series, uncached (no response cache, no kept
// expansion: each request expands the series) and cached (the service as
// it runs: the response cache and the kept expansion), each request a
// page size of 1 to 30.
func (s *stack) costliestSeriesRows(tw *tabwriter.Writer, uncachedBase string, conc int, dur time.Duration, today time.Time) error {
	start := today.AddDate(0, 0, 1).Add(19 * time.Hour)
	id, err := s.create("events", map[string]any{"title": "Costliest series", "status": "publish", "start_date": start.Format(time.DateTime),
		"end_date": start.Add(2 * time.Hour).Format(time.DateTime), "recurrence": map[string]any{"rules": costliestRules}})
	if err != nil {
		return err
	}
	path := func(r *rand.Rand) string {
		return "/events/" + strconv.FormatInt(id, 10) + "/occurrences?per_page=" + strconv.Itoa(1+r.IntN(30))
	}
	for _, row := range []struct{ name, base string }{
		{"GET /events/{id}/occurrences (costliest rules), uncached", uncachedBase},
		{"GET /events/{id}/occurrences (costliest rules), cached", s.base},
	} {
		res := s.load(row.base, path, conc, dur)
		fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.2f\t\t\t\n", row.name, res.rate, res.lat.pct(50), res.lat.pct(99))
		if res.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\n", res.errors)
		}
	}
	return nil
}

// waitSearchable polls a search for word until it finds want documents
// (0: any) and returns the total.
func (s *stack) waitSearchable(word string, want int) (int, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		var page struct {
			Total int `json:"total"`
		}
		if err := s.getJSON("/events?per_page=1&search="+word, &page); err != nil {
			return 0, err
		}
		if page.Total > 0 && (want == 0 || page.Total >= want) {
			return page.Total, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("series %s not searchable after 60 s (total %d)", word, page.Total)
		}
		time.Sleep(2 * time.Millisecond) // polling interval of the probe, not a wait for a result
	}
}

// send sends a JSON write and expects 200.
func (s *stack) send(method, path string, body map[string]any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.base+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return nil
}
