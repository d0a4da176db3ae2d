package calendar

import (
	"context"
	"testing"
	"time"

	"github.com/calendar/eventcal/config"
)

// TestDatesReadOncePerZone: check and apply (and UpdatePost's retries)
// read a date field once per zone; the clock a relative date reads is
// read once with it.
func TestDatesReadOncePerZone(t *testing.T) {
	reads := 0
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := New(Deps{Config: config.Default(), Now: func() time.Time {
		reads++
		return base.Add(time.Duration(reads) * time.Hour) // moves at every read
	}})
	o := s.with(context.Background(), nil, "en")
	plan := &writePlan{}
	ams, err := time.LoadLocation("Europe/Amsterdam")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	tests := []struct {
		field, text string
		loc         *time.Location
		wantReads   int
	}{
		{"start_date", "+1 day", time.UTC, 1},
		{"start_date", "+1 day", time.UTC, 1},       // again: kept
		{"start_date", "+1 day", ams, 2},            // another zone: read again
		{"end_date", "2026-07-01 10:00:00", ams, 3}, // another field
		{"end_date", "2026-07-01 10:00:00", ams, 3},
	}
	var first time.Time
	for i, tt := range tests {
		got, err := o.parseDate(plan, tt.field, tt.text, tt.text, tt.loc)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if reads != tt.wantReads {
			t.Fatalf("%d: %s in %s: %d clock reads, want %d", i, tt.field, tt.loc, reads, tt.wantReads)
		}
		if i == 0 {
			first = got
		}
		if i == 1 && !got.Equal(first) {
			t.Fatalf("the same date read twice differs: %v, %v", first, got)
		}
	}
	if _, err := o.parseDate(plan, "date", "not a date", "not a date", time.UTC); err == nil {
		t.Fatal("an unreadable date was accepted")
	}
}
