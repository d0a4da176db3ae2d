package storetest

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
)

var recurrenceTests = []storeTest{
	{"RoundTrip", testRecurrenceRoundTrip},
	{"UpdateAndBackToSingle", testRecurrenceUpdate},
}

// seriesFixture is an event with a recurrence and overrides using every
// optional field (set to zero values where a zero is meaningful).
func seriesFixture(title string) *repository.Record {
	p := eventFixture(title)
	start, end, status, web := "2031-03-20 08:00:00", "2031-03-20 09:30:00", repository.StatusDraft, ""
	featured := false
	canceled, reason, scheduled, noReason := repository.EventCanceled, "Storm warning", repository.EventScheduled, ""
	p.Event.Recurrence = &repository.Recurrence{
		Rules:      []string{"FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20310630T235959Z", "FREQ=MONTHLY;BYDAY=-1FR"},
		Exclusions: []string{"2031-03-18 19:30:05"},
		Additions:  []string{"2031-04-02 10:00:00", "2031-04-03 10:00:00"},
	}
	p.Event.Overrides = []repository.OccurrenceOverride{
		{Key: "20310320T193005", Title: repository.Text{"en": "Moved «é»", "nl": "Verplaatst"},
			Content: repository.Text{"en": "<p>Elsewhere</p>"}, Excerpt: repository.Text{"de": "Kurz"},
			StartLocal: &start, EndLocal: &end, Status: &status,
			Venues: &[]int64{11, 12}, Organizers: &[]int64{}, Cost: &[]string{"Free"},
			Website: &web, Featured: &featured},
		{Key: "20310325T193005", Cancelled: true},
		{Key: "20310327T193005", EventStatus: &canceled, EventStatusReason: &reason},
		{Key: "20310401T193005", EventStatus: &scheduled, EventStatusReason: &noReason},
	}
	return p
}

func testRecurrenceRoundTrip(t *testing.T, ctx context.Context, s repository.Store) {
	series := mustCreatePost(t, ctx, s, seriesFixture("Weekly class"))
	empty := eventFixture("Empty lists")
	empty.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=DAILY;COUNT=3"}, Exclusions: []string{}, Additions: []string{}}
	mustCreatePost(t, ctx, s, empty)
	single := mustCreatePost(t, ctx, s, eventFixture("Single"))
	for _, p := range []*repository.Record{series, empty, single} {
		got := mustGetPost(t, ctx, s, p.ID)
		checkPost(t, "GetPost of a series", p, got)
	}
	got := mustGetPost(t, ctx, s, single.ID)
	if got.Event.Recurrence != nil || got.Event.Overrides != nil {
		t.Errorf("single event read back with recurrence %+v, overrides %+v", got.Event.Recurrence, got.Event.Overrides)
	}
	all, err := s.GetRecords(ctx, []int64{series.ID})
	if err != nil {
		t.Fatal(err)
	}
	checkPost(t, "GetPosts of a series", series, all[series.ID])
}

func testRecurrenceUpdate(t *testing.T, ctx context.Context, s repository.Store) {
	p := mustCreatePost(t, ctx, s, seriesFixture("Changing series"))
	clearAllMarks(t, ctx, s)
	moved := "2031-03-21 08:00:00"
	updated, err := s.UpdateRecord(ctx, p.ID, func(q *repository.Record) error {
		q.Event.Recurrence.Exclusions = append(q.Event.Recurrence.Exclusions, "2031-03-27 19:30:05")
		q.Event.Overrides = []repository.OccurrenceOverride{{Key: "20310401T193005", StartLocal: &moved}}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustGetPost(t, ctx, s, p.ID)
	checkPost(t, "GetPost after changing the recurrence", updated, got)
	if n := len(got.Event.Overrides); n != 1 || got.Event.Overrides[0].Title != nil || *got.Event.Overrides[0].StartLocal != moved {
		t.Errorf("overrides after replacing them: %s", dump(got.Event.Overrides))
	}
	if len(pendingMarks(t, ctx, s)) == 0 {
		t.Errorf("changing a recurrence left no index mark")
	}
	_, err = s.UpdateRecord(ctx, p.ID, func(q *repository.Record) error {
		q.Event.Recurrence, q.Event.Overrides = nil, nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got = mustGetPost(t, ctx, s, p.ID)
	if got.Event.Recurrence != nil || got.Event.Overrides != nil {
		t.Errorf("series made single again still has recurrence %s, overrides %s", dump(got.Event.Recurrence), dump(got.Event.Overrides))
	}
}
