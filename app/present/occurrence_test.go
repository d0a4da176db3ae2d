package present

import (
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// TestOccurrencePost shapes a series as one of its occurrences: its dates
// and the fields its override changes (text by language), leaving the
// series record itself (possibly shared by the record cache) unchanged.
func TestOccurrencePost(t *testing.T) {
	rn := &Renderer{cfg: config.Default()}
	rn.placeRenderer = placeRenderer{rn}
	title, moved, draft := repository.Text{"nl": "Verplaatst"}, "2027-04-02 20:00:00", repository.StatusDraft
	venues := []int64{9}
	p := &repository.Record{ID: 5, Status: repository.StatusPublish, Title: repository.Text{"en": "Class", "nl": "Les"},
		Event: &repository.EventFields{Timezone: "Europe/Amsterdam", StartLocal: "2027-03-18 19:00:00", EndLocal: "2027-03-18 21:00:00",
			Venues: []int64{1}, Recurrence: &repository.Recurrence{Rules: []string{"FREQ=WEEKLY;COUNT=4"}},
			Overrides: []repository.OccurrenceOverride{{Key: "20270401T190000", Title: title, StartLocal: &moved, Status: &draft, Venues: &venues}}}}
	loc, _ := time.LoadLocation("Europe/Amsterdam")
	occ, ok, err := recurrence.Find(recurrence.SeriesOf(p.Event, loc), "20270401T190000", recurrence.Limits{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil || !ok {
		t.Fatalf("Find: %v %v", ok, err)
	}
	q := rn.OccurrenceRecord(p, occ)
	if q.Event.StartLocal != moved || q.Event.EndLocal != "2027-04-02 22:00:00" || q.Event.StartUTC != time.Date(2027, 4, 2, 18, 0, 0, 0, time.UTC) {
		t.Errorf("dates %s .. %s (%s)", q.Event.StartLocal, q.Event.EndLocal, q.Event.StartUTC)
	}
	if q.Title["en"] != "Class" || q.Title["nl"] != "Verplaatst" || q.Status != draft || q.Event.Venues[0] != 9 {
		t.Errorf("override fields: %v %s %v", q.Title, q.Status, q.Event.Venues)
	}
	if p.Title["nl"] != "Les" || p.Status != repository.StatusPublish || p.Event.StartLocal != "2027-03-18 19:00:00" || p.Event.Venues[0] != 1 {
		t.Errorf("the series changed: %v %s %s %v", p.Title, p.Status, p.Event.StartLocal, p.Event.Venues)
	}
	if NewRecurrence(nil) != nil {
		t.Errorf("a single event's recurrence is not null")
	}
}
