package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
)

// draftRows measures issue 19's hostile writers (items 3 and 4): the list
// and search rows, quiet and then while drafts with 200,000-character
// descriptions of random words (the description limit) keep arriving
// through the API, side by side; the sync lag of small published writes
// behind that backlog; and what one such document costs the engine to
// index. Drafts are invisible to the anonymous readers of the rows: the
// target is that they do not slow them (p99 within 2 × the quiet p99).
func (s *stack) draftRows(tw *tabwriter.Writer, eng *embedded.Engine, uncachedBase string, langs []string, conc int, dur time.Duration, today time.Time) error {
	rows := []struct {
		name string
		path func(r *rand.Rand) string
	}{
		{"GET /events (default)", func(r *rand.Rand) string { return "/events" }},
		{"GET /events?search=", func(r *rand.Rand) string { return "/events?search=" + words[r.IntN(len(words))] }},
		{"GET /events?search=<10 random letters>", func(r *rand.Rand) string { return "/events?search=" + randomWord(r, 10) }},
		{"typeahead", typeaheadPath},
	}
	quiet := make([]loadResult, len(rows))
	for i, row := range rows {
		quiet[i] = s.load(uncachedBase, row.path, conc, dur)
	}

	// The flood: one client posting large drafts, one every
	// -draft-interval (0: back to back), for the whole measurement (the
	// reads, then the lag probes).
	stop := make(chan struct{})
	pace := time.NewTicker(max(draftInterval, time.Microsecond))
	defer pace.Stop()
	var posted atomic.Int64
	var floodErr atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(19, 4))
		for {
			if draftInterval > 0 {
				select {
				case <-stop:
					return
				case <-pace.C:
				}
			}
			select {
			case <-stop:
				return
			default:
			}
			start := today.AddDate(0, 0, 1+r.IntN(300))
			if _, err := s.create("events", map[string]any{
				"title": "Draft " + randomWord(r, 8), "status": "draft", "description": hugeText(r, 199000),
				"start_date": start.Format("2006-01-02 15:04:05"), "end_date": start.Add(time.Hour).Format("2006-01-02 15:04:05"),
			}); err != nil {
				floodErr.Store(err)
				return
			}
			posted.Add(1)
		}
	}()
	flooded := make([]loadResult, len(rows))
	for i, row := range rows {
		flooded[i] = s.load(uncachedBase, row.path, conc, dur)
	}
	lag, lagErr := s.syncLag(20, today)
	close(stop)
	wg.Wait()
	if err, ok := floodErr.Load().(error); ok {
		return fmt.Errorf("posting large drafts: %w", err)
	}
	if lagErr != nil {
		return lagErr
	}
	every := "back to back"
	if draftInterval > 0 {
		every = "one every " + draftInterval.String()
	}
	fmt.Fprintf(tw, "while large drafts arrive (200,000 characters each, %s; %d posted):\t\t\t\t\t\n", every, posted.Load())
	for i, row := range rows {
		q, f := quiet[i], flooded[i]
		fmt.Fprintf(tw, "%s, quiet / with drafts\t%.0f / %.0f\t%.2f / %.2f\t%.2f / %.2f\t\t\n", row.name, q.rate, f.rate,
			q.lat.pct(50), f.lat.pct(50), q.lat.pct(99), f.lat.pct(99))
		if q.errors+f.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d / %d)\t\t\t\t\t\n", q.errors, f.errors)
		}
	}
	fmt.Fprintf(tw, "sync lag of small writes behind the drafts\t\t%.1f\t%.1f\t\t\n", lag.pct(50), lag.pct(99))

	// One document with a description at the limit, in every language
	// (untranslated, as the documents of a one-language post are), into
	// the live engine: its cost per document.
	const n = 5
	r := rand.New(rand.NewPCG(19, 5))
	var took time.Duration
	for i := range n {
		text := search.Text{Title: "Huge", Description: hugeText(r, 199000)}
		d := search.EventDocument{ID: 1<<40 + int64(i), Status: "draft", Start: today.Unix(), End: today.Unix() + 3600, Text: map[string]search.Text{},
			CategoryIDs: []int64{}, TagIDs: []int64{}, VenueIDs: []int64{}, OrganizerIDs: []int64{}}
		for _, l := range langs {
			d.Text[l] = text
		}
		t0 := time.Now()
		if err := eng.IndexEvents(context.Background(), []search.EventDocument{d}); err != nil {
			return err
		}
		took += time.Since(t0)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = 1<<40 + int64(i)
	}
	if err := eng.DeleteEvents(context.Background(), ids); err != nil {
		return err
	}
	fmt.Fprintf(tw, "indexing one 200,000-character description (ms/doc, %d docs)\t\t%.0f\t\t\t\n", n, float64(took.Milliseconds())/n)
	return nil
}

// draftInterval is the -draft-interval flag.
var draftInterval time.Duration

// randomWord returns n random lower-case letters.
func randomWord(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

// hugeText returns about n characters of random words of 3 to 12 letters.
func hugeText(r *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n + 13)
	for b.Len() < n-13 {
		b.WriteString(randomWord(r, 3+r.IntN(10)))
		b.WriteByte(' ')
	}
	return b.String()
}
