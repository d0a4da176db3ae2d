package calendar

import (
	"context"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/config"
)

// TestDatesReadOncePerZone: check and apply (and UpdatePost's retries)
// take a date field's instant once per zone, from the value the caller
// read: a wall-clock date or an instant is never parsed again, a phrase
// only in another zone than the caller read it in.
func TestDatesReadOncePerZone(t *testing.T) {
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := New(Deps{Config: config.Default(), Now: func() time.Time { return base }})
	o := s.with(context.Background(), nil, "en")
	plan := &writePlan{}
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Fatal("no zone database:", err)
	}
	const phrase, wall = "+17 days", "2026-07-01 10:17:00"
	read := func(text string) Opt[datetext.Value] {
		v, err := datetext.Read(text, "en", base, time.UTC)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		return Some(v)
	}
	phraseReads, stopPhrase := datetext.WatchReads(phrase)
	defer stopPhrase()
	wallReads, stopWall := datetext.WatchReads(wall)
	defer stopWall()
	p, w := read(phrase), read(wall) // the caller's reads, in UTC
	tests := []struct {
		field     string
		d         Opt[datetext.Value]
		loc       *time.Location
		want      string
		wantReads int64 // of the text, the caller's included
	}{
		{"start_date", p, time.UTC, "2026-06-18 12:00:00 +0000", 1},
		{"start_date", p, time.UTC, "2026-06-18 12:00:00 +0000", 1}, // again: kept
		{"start_date", p, ams, "2026-06-18 14:00:00 +0200", 2},      // another zone: a phrase is read again there
		{"start_date", p, ams, "2026-06-18 14:00:00 +0200", 2},      // kept
		{"end_date", w, ams, "2026-07-01 10:17:00 +0200", 1},        // a wall-clock date: never parsed again
		{"end_date", w, time.UTC, "2026-07-01 10:17:00 +0000", 1},
	}
	for i, tt := range tests {
		got, err := o.dateIn(plan, tt.field, tt.d, tt.loc)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if s := got.Format("2006-01-02 15:04:05 -0700"); s != tt.want {
			t.Errorf("%d: %s in %s = %s, want %s", i, tt.field, tt.loc, s, tt.want)
		}
		reads := phraseReads()
		if tt.d.Value.Text() == wall {
			reads = wallReads()
		}
		if reads != tt.wantReads {
			t.Errorf("%d: %s in %s: the text was read %d times, want %d", i, tt.field, tt.loc, reads, tt.wantReads)
		}
	}
	if _, err := o.dateIn(plan, "date", read("99999999999999"), time.UTC); err == nil {
		t.Fatal("a date outside the stores' years was accepted")
	}
}
