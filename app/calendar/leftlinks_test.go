package calendar_test

import (
	"slices"
	"testing"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/repository"
)

// TestUpdateMarksOnlyTheVenuesLeft: an update that names the event's
// venue again records no mark for the venue (the worker indexes an
// event's current venues with it, and a venue mark re-indexes every event
// at the venue); moving the event to another venue marks the venue it
// left.
func TestUpdateMarksOnlyTheVenuesLeft(t *testing.T) {
	t.Parallel()
	cal, st := newService(t)
	ctx := t.Context()
	in := event()
	ev, err := cal.CreateEvent(ctx, calendar.Operator, "en", in)
	if err != nil {
		t.Fatal(err)
	}
	hall := ev.Event.Venues[0]
	other, _, err := cal.CreateVenue(ctx, calendar.Operator, "en", &calendar.VenueInput{RecordInput: calendar.RecordInput{Name: calendar.Some("Club")}})
	if err != nil {
		t.Fatal(err)
	}
	markedAfter := func(in *calendar.EventInput) []int64 {
		t.Helper()
		marks, err := st.PendingMarks(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.ClearMarks(ctx, marks); err != nil {
			t.Fatal(err)
		}
		cur, err := st.GetRecord(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cal.UpdateEvent(ctx, calendar.Operator, "en", cur, in); err != nil {
			t.Fatal(err)
		}
		if marks, err = st.PendingMarks(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, m := range marks {
			if m.Kind == repository.MarkPost {
				ids = append(ids, m.ID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	same := &calendar.EventInput{RecordInput: calendar.RecordInput{Name: calendar.Some("Concert (sold out)")},
		Venues: calendar.Links{Set: true, Items: []calendar.Link{{ID: hall}}}}
	if got := markedAfter(same); !slices.Equal(got, []int64{ev.ID}) {
		t.Errorf("the same venue again: marks %v, want only the event %d", got, ev.ID)
	}
	moved := &calendar.EventInput{Venues: calendar.Links{Set: true, Items: []calendar.Link{{ID: other.ID}}}}
	want := []int64{hall, ev.ID}
	slices.Sort(want)
	if got := markedAfter(moved); !slices.Equal(got, want) {
		t.Errorf("moved to another venue: marks %v, want the venue left and the event %v", got, want)
	}
}
