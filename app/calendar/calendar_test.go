package calendar_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"
)

// newService returns a calendar over a fresh SQLite store, its clock
// fixed at 2026-06-01 12:00 UTC.
func newService(t *testing.T) (*calendar.Service, repository.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "calendar.db")
	sqlitetest.Create(t, path)
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	return calendar.New(calendar.Deps{Config: config.Default(), Store: st, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }}), st
}

// counts returns how many venues, organizers, images, categories and
// tags the store holds.
func counts(t *testing.T, st repository.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, k := range []repository.Kind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer, repository.KindImage} {
		ps, err := st.FindRecords(t.Context(), repository.RecordQuery{Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		out[string(k)] = len(ps)
	}
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		ts, err := st.FindLabels(t.Context(), repository.LabelQuery{Taxonomy: tax})
		if err != nil {
			t.Fatal(err)
		}
		out[string(tax)] = len(ts)
	}
	return out
}

// date is a date field as a caller decodes it: the text read once
// (datetext.Read), here in UTC.
func date(text string) calendar.Opt[datetext.Value] {
	v, err := datetext.Read(text, "en", time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), time.UTC)
	if err != nil {
		panic(text + ": " + err.Error())
	}
	return calendar.Opt[datetext.Value]{Set: true, Value: v, Raw: text}
}

// event is a valid create command naming a new category, a new tag, an
// inline venue and an image URL.
func event() *calendar.EventInput {
	return &calendar.EventInput{
		RecordInput: calendar.RecordInput{Name: calendar.Some("Concert"),
			Image: calendar.Some(calendar.ImageRef{URL: "https://example.org/poster.png"})},
		StartDate:  date("2026-07-01 19:00:00"),
		EndDate:    date("2026-07-01 21:00:00"),
		Categories: calendar.Some([]calendar.LabelItem{{Name: "Music"}}),
		Tags:       calendar.Some([]calendar.LabelItem{{Name: "jazz"}}),
		Venues: calendar.Links{Set: true, Items: []calendar.Link{{Venue: &calendar.VenueInput{
			RecordInput: calendar.RecordInput{Name: calendar.Some("Hall")}, City: calendar.Some("Utrecht")}}}},
	}
}

// TestCreateEventDecidesBeforeWriting: a command the calendar refuses at
// any step (a look-up, a permission, a rule of the record) writes
// nothing, though it names a new category, tag, venue and image; the same
// command without the fault writes them all.
func TestCreateEventDecidesBeforeWriting(t *testing.T) {
	editor := &repository.User{ID: 1, Login: "ed", Role: repository.RoleEditor}
	contributor := &repository.User{ID: 2, Login: "co", Role: repository.RoleContributor}
	tests := []struct {
		name     string
		by       *repository.User
		change   func(in *calendar.EventInput)
		status   int
		contains string
	}{
		{"end before start", editor, func(in *calendar.EventInput) { in.EndDate = date("2026-06-30 19:00:00") }, 400, "end_date"},
		{"unknown author", editor, func(in *calendar.EventInput) { in.Author = calendar.Some(int64(99)) }, 400, "There is no user with ID 99"},
		{"unknown linked organizer", editor, func(in *calendar.EventInput) {
			in.Organizers = calendar.Links{Set: true, Raw: "77", Items: []calendar.Link{{ID: 77}}}
		}, 400, "There is no organizer with ID 77"},
		{"bad form of a link", editor, func(in *calendar.EventInput) {
			in.Organizers = calendar.Links{Set: true, Raw: "x", Problem: "Must be organizer IDs."}
		}, 400, "organizer must be organizer IDs"},
		{"bad recurrence", editor, func(in *calendar.EventInput) {
			in.Recurrence = calendar.Some(&repository.Recurrence{Rules: []string{"FREQ=SOMETIMES"}})
		}, 400, "recurrence"},
		{"new tag by a contributor", contributor, func(in *calendar.EventInput) { in.Image = calendar.Opt[calendar.ImageRef]{} }, 403, "rest_cannot_create"},
		{"inline venue with a date outside the stores' years", editor, func(in *calendar.EventInput) {
			in.Venues.Items[0].Venue.Date = date("99999999999999")
		}, 400, "date"},
		{"unknown event status", editor, func(in *calendar.EventInput) { in.EventStatus = calendar.Some("cancelled") }, 400,
			"event_status must be one of scheduled, canceled, postponed, moved_online"},
		{"event status reason too long", editor, func(in *calendar.EventInput) {
			in.EventStatus, in.EventStatusReason = calendar.Some("canceled"), calendar.Some(strings.Repeat("é", calendar.MaxEventStatusReason+1))
		}, 400, "event_status_reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, st := newService(t)
			before := counts(t, st)
			in := event()
			tt.change(in)
			_, err := svc.CreateEvent(t.Context(), tt.by, "en", in)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != tt.status || !strings.Contains(ae.Code+" "+ae.Message, tt.contains) {
				t.Fatalf("error %v, want %d naming %q", err, tt.status, tt.contains)
			}
			if after := counts(t, st); !maps.Equal(before, after) {
				t.Fatalf("a refused command wrote: before %v, after %v", before, after)
			}
		})
	}
	t.Run("accepted", func(t *testing.T) {
		svc, st := newService(t)
		p, err := svc.CreateEvent(t.Context(), editor, "en", event())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"event": 1, "venue": 1, "organizer": 0, "image": 1,
			string(repository.LabelCategory): 1, string(repository.LabelTag): 1}
		got := counts(t, st)
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: %d records, want %d (%v)", k, got[k], n, got)
			}
		}
		if e := p.Event; len(e.Venues) != 1 || len(e.Categories) != 1 || len(e.Tags) != 1 || p.ImageID == 0 || e.StartLocal != "2026-07-01 19:00:00" {
			t.Fatalf("event as written: %+v %+v", p, e)
		}
	})
}

// importedEvent is an event as an importer maps it.
func importedEvent(id int64) *repository.Record {
	p := &repository.Record{ID: id, Kind: repository.KindEvent, Author: 3, Status: repository.StatusPublish,
		Date: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Title: repository.Text{"en": "Imported"}, Slug: repository.Text{"en": "kept-slug"},
		Event: &repository.EventFields{Timezone: "Europe/Amsterdam", StartLocal: "2026-07-01 19:00:00", EndLocal: "2026-07-01 21:00:00",
			StartUTC: time.Date(2026, 7, 1, 17, 0, 0, 0, time.UTC), EndUTC: time.Date(2026, 7, 1, 19, 0, 0, 0, time.UTC),
			Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}}
	return p
}

func TestCheckImported(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *repository.Record)
		field  string // "" when accepted
	}{
		{"event as mapped", func(*repository.Record) {}, ""},
		{"venue", func(p *repository.Record) { p.Kind, p.Event = repository.KindVenue, nil }, ""},
		{"no ID", func(p *repository.Record) { p.ID = 0 }, "id"},
		{"unknown kind", func(p *repository.Record) { p.Kind = "page" }, "kind"},
		{"unknown zone", func(p *repository.Record) { p.Event.Timezone = "Mars/Olympus" }, "timezone"},
		{"no start", func(p *repository.Record) { p.Event.StartLocal = "" }, "start_date"},
		{"local end before start", func(p *repository.Record) { p.Event.EndLocal = "2026-07-01 18:00:00" }, "end_date"},
		{"event status", func(p *repository.Record) {
			p.Event.EventStatus, p.Event.EventStatusReason = repository.EventCanceled, "Storm"
		}, ""},
		{"unknown event status", func(p *repository.Record) { p.Event.EventStatus = "rescheduled" }, "event_status"},
		{"event status reason too long", func(p *repository.Record) {
			p.Event.EventStatusReason = strings.Repeat("x", calendar.MaxEventStatusReason+1)
		}, "event_status_reason"},
		{"UTC end before start", func(p *repository.Record) { p.Event.EndUTC = p.Event.StartUTC.Add(-time.Hour) }, "end_date"},
		{"bad rule", func(p *repository.Record) {
			p.Event.Recurrence = &repository.Recurrence{Rules: []string{"FREQ=SOMETIMES"}, Exclusions: []string{}, Additions: []string{}}
		}, "recurrence"},
	}
	svc, _ := newService(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := importedEvent(500)
			tt.change(p)
			err := svc.CheckImported(p)
			var fe *calendar.FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
				t.Fatalf("error %v, want a refusal of %s", err, tt.field)
			}
		})
	}
}

// TestImportKeepsWhatTheSourceHas: an imported record keeps its ID, slug,
// dates and author; a replace keeps the stored revision sequence; a
// refused record is not written.
func TestImportKeepsWhatTheSourceHas(t *testing.T) {
	svc, st := newService(t)
	p, err := svc.Import(t.Context(), importedEvent(500), false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.GetRecord(t.Context(), 500)
	if err != nil {
		t.Fatal(err)
	}
	if got.Slug["en"] != "kept-slug" || got.Author != 3 || !got.Date.Equal(p.Date) || got.Event.StartLocal != "2026-07-01 19:00:00" {
		t.Fatalf("stored %+v", got)
	}
	changed := importedEvent(500)
	changed.Title = repository.Text{"en": "Renamed"}
	q, err := svc.Import(t.Context(), changed, true)
	if err != nil {
		t.Fatal(err)
	}
	if q.Title["en"] != "Renamed" || q.Revision <= got.Revision {
		t.Fatalf("replaced %+v (stored revision was %d)", q, got.Revision)
	}
	bad := importedEvent(501)
	bad.Event.EndUTC = bad.Event.StartUTC.Add(-time.Hour)
	if _, err := svc.Import(t.Context(), bad, false); err == nil {
		t.Fatal("an event ending before it starts was imported")
	}
	if _, err := st.GetRecord(t.Context(), 501); !errors.Is(err, repository.ErrNotFound) {
		t.Fatalf("the refused event: %v, want not found", err)
	}
	if _, err := svc.Import(t.Context(), importedEvent(502), true); !errors.Is(err, repository.ErrNotFound) {
		t.Fatalf("replacing a record that is not stored: %v, want ErrNotFound", err)
	}
}

// TestEventStatus: the event status is written on create and update
// (scheduled, the default, stored as ""), its reason trimmed; an update
// that does not send them keeps them.
func TestEventStatus(t *testing.T) {
	editor := &repository.User{ID: 1, Login: "ed", Role: repository.RoleEditor}
	svc, _ := newService(t)
	in := event()
	in.EventStatus, in.EventStatusReason = calendar.Some(" postponed "), calendar.Some("  Ill  ")
	p, err := svc.CreateEvent(t.Context(), editor, "en", in)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name           string
		in             calendar.EventInput
		stored, reason string
	}{
		{"created", calendar.EventInput{}, repository.EventPostponed, "Ill"},
		{"other fields keep it", calendar.EventInput{RecordInput: calendar.RecordInput{Name: calendar.Some("Renamed")}}, repository.EventPostponed, "Ill"},
		{"cancelled", calendar.EventInput{EventStatus: calendar.Some("canceled")}, repository.EventCanceled, "Ill"},
		{"scheduled is stored empty", calendar.EventInput{EventStatus: calendar.Some("scheduled"), EventStatusReason: calendar.Some("")}, "", ""},
		{"moved online", calendar.EventInput{EventStatus: calendar.Some("moved_online")}, repository.EventMovedOnline, ""},
		{"empty value", calendar.EventInput{EventStatus: calendar.Some("")}, "", ""},
	}
	for i, step := range steps {
		if i > 0 {
			in := step.in
			if p, err = svc.UpdateEvent(t.Context(), editor, "en", p, &in); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		if p.Event.EventStatus != step.stored || p.Event.EventStatusReason != step.reason {
			t.Errorf("%s: stored %q %q, want %q %q", step.name, p.Event.EventStatus, p.Event.EventStatusReason, step.stored, step.reason)
		}
	}
}
