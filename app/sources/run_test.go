package sources_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
)

// label creates a category or tag named name.
func label(t *testing.T, e *env, tax repository.LabelKind, name string) int64 {
	t.Helper()
	l := &repository.Label{Taxonomy: tax}
	l.Name.Set("en", name)
	l.Slug.Set("en", repository.Slugify(name))
	if err := e.store.CreateLabel(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	return l.ID
}

// names returns the names of labels by ID, in order.
func names(t *testing.T, e *env, ids []int64) []string {
	t.Helper()
	got, err := e.store.GetLabels(t.Context(), ids)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		out = append(out, got[id].Name["en"])
	}
	return out
}

// record returns a stored record by ID.
func record(t *testing.T, e *env, id int64) *repository.Record {
	t.Helper()
	p, err := e.store.GetRecord(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCreateFromFeed: a feed's events are created with the feed's
// fields, the source's status, author, categories and tags, a venue and
// an organizer, and their link to the source.
func TestCreateFromFeed(t *testing.T) {
	t.Parallel()
	var music, feat, tag int64
	e := newEnv(t, nil, nil)
	music = label(t, e, repository.LabelCategory, "Music") // the feed's category, found by name
	feat = label(t, e, repository.LabelCategory, "Partners")
	tag = label(t, e, repository.LabelTag, "imported")
	author := &repository.User{Login: "editor", Role: repository.RoleEditor}
	if err := e.store.CreateUser(t.Context(), author); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(s *repository.Source) error {
		s.Categories, s.Tags, s.Author = []int64{feat}, []int64{tag}, author.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ams := zone(t, "Europe/Amsterdam")
	lat, lng := 52.09, 5.12
	e.feed(
		feed.Event{UID: "concert@example", Title: "Concert <b>live</b>", Description: "Doors at 7 & bring <friends>.\nSecond line",
			URL: "https://example.org/concert", Zone: "Europe/Amsterdam", Cost: "€10",
			Start: time.Date(2026, 7, 1, 20, 0, 0, 0, ams), End: time.Date(2026, 7, 1, 22, 30, 0, 0, ams),
			Location:   &feed.Place{Name: "Hall", Address: "Main St 1", City: "Utrecht", Lat: &lat, Lng: &lng},
			Organizer:  &feed.Person{Name: "Jo", Email: "jo@example.org"},
			Categories: []string{"music", "Jazz"}},
		feed.Event{UID: "fair@example", Title: "Fair", AllDay: true,
			Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)},
	)
	wantRun(t, "first run", e.run(), repository.RunSucceeded, counts{created: 2})

	c := e.get("concert@example")
	ev := c.Event
	for _, tc := range []struct{ field, got, want string }{
		{"title", c.Title["en"], "Concert live"},
		{"description", c.Content["en"], "Doors at 7 &amp; bring &lt;friends&gt;.<br>\nSecond line"},
		{"status", c.Status, repository.StatusDraft},
		{"timezone", ev.Timezone, "Europe/Amsterdam"},
		{"start", ev.StartLocal, "2026-07-01 20:00:00"},
		{"end", ev.EndLocal, "2026-07-01 22:30:00"},
		{"start utc", ev.StartUTC.Format(time.RFC3339), "2026-07-01T18:00:00Z"},
		{"website", *ev.Website, "https://example.org/concert"},
		{"cost", strings.Join(ev.Cost, ","), "€10"},
		{"categories", strings.Join(names(t, e, ev.Categories), ","), "Music,Jazz,Partners"},
		{"tags", strings.Join(names(t, e, ev.Tags), ","), "imported"},
		{"author", fmt.Sprint(c.Author), fmt.Sprint(author.ID)},
		{"link", fmt.Sprintf("%d %s %q", c.Source.SourceID, c.Source.UID, c.Source.RecurrenceID), fmt.Sprintf("%d concert@example \"\"", e.src.ID)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", tc.field, tc.got, tc.want)
		}
	}
	if ev.Categories[0] != music {
		t.Errorf("category Music: %d, want the existing %d", ev.Categories[0], music)
	}
	if len(ev.Venues) != 1 || len(ev.Organizers) != 1 {
		t.Fatalf("venues %v organizers %v, want one each", ev.Venues, ev.Organizers)
	}
	v := record(t, e, ev.Venues[0])
	if v.Title["en"] != "Hall" || v.Venue.Address != "Main St 1" || v.Venue.City != "Utrecht" || v.Venue.GeoLat == nil || *v.Venue.GeoLat != lat {
		t.Errorf("venue %q %+v", v.Title["en"], v.Venue)
	}
	o := record(t, e, ev.Organizers[0])
	if o.Title["en"] != "Jo" || o.Organizer.Email != "jo@example.org" {
		t.Errorf("organizer %q %+v", o.Title["en"], o.Organizer)
	}
	f := e.get("fair@example").Event
	if !f.AllDay || f.StartLocal != "2026-08-01 00:00:00" || f.EndLocal != "2026-08-02 23:59:59" || f.Timezone != "" {
		t.Errorf("all-day event: all_day %v %s to %s zone %q, want 2026-08-01 00:00:00 to 2026-08-02 23:59:59 in the site zone",
			f.AllDay, f.StartLocal, f.EndLocal, f.Timezone)
	}
	src, err := e.store.GetSource(t.Context(), e.src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if src.RunClaim != "" || src.LastRun == 0 || src.DetectedFormat != repository.SourceICS {
		t.Errorf("source after the run: claim %q last run %d format %q", src.RunClaim, src.LastRun, src.DetectedFormat)
	}
}

// TestNewEventStatus: new events get the source's status, draft when it
// has none (so they are in no anonymous list).
func TestNewEventStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ source, want string }{
		{"", repository.StatusDraft},
		{repository.StatusDraft, repository.StatusDraft},
		{repository.StatusPending, repository.StatusPending},
		{repository.StatusPublish, repository.StatusPublish},
	} {
		e := newEnv(t, nil, func(s *repository.Source) { s.Status = tc.source })
		e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
		e.run()
		if got := e.get("a").Status; got != tc.want {
			t.Errorf("source status %q: event %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestSecondRunWritesNothing: a second run of the same feed finds every
// event unchanged and writes no record, label or revision.
func TestSecondRunWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	ams := zone(t, "Europe/Amsterdam")
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)),
		feed.Event{UID: "s", Title: "Series", Zone: "Europe/Amsterdam", Rules: []string{"FREQ=WEEKLY;COUNT=5"},
			Start: time.Date(2026, 7, 2, 19, 0, 0, 0, ams), End: time.Date(2026, 7, 2, 20, 0, 0, 0, ams),
			Location:  &feed.Place{Name: "Hall"},
			Overrides: []feed.Override{{Of: time.Date(2026, 7, 9, 19, 0, 0, 0, ams), Title: ptr("Moved")}}})
	wantRun(t, "first run", e.run(), repository.RunSucceeded, counts{created: 2})
	before := e.store.writes.Load()
	revs := map[string]int64{}
	for uid, p := range e.imported() {
		revs[uid] = p.Revision
	}
	wantRun(t, "second run", e.run(), repository.RunSucceeded, counts{unchanged: 2})
	if got := e.store.writes.Load() - before; got != 0 {
		t.Errorf("the second run wrote %d times, want 0", got)
	}
	for uid, p := range e.imported() {
		if p.Revision != revs[uid] {
			t.Errorf("%s: revision %d, want %d", uid, p.Revision, revs[uid])
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestChangedEventUpdatedAlone: a feed that changes one event between
// runs updates exactly that event.
func TestChangedEventUpdatedAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a, b := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC))
	b.URL = "https://example.org/b"
	e.feed(a, b)
	e.run()
	if w := e.get("a").Event.Website; w != nil {
		t.Errorf("a has no URL: website %q, want none (the permalink)", *w)
	}
	revA, revB := e.get("a").Revision, e.get("b").Revision
	b.Title, b.Start, b.End, b.URL = "B moved", b.Start.Add(2*time.Hour), b.End.Add(2*time.Hour), ""
	e.feed(a, b)
	wantRun(t, "second run", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1})
	if got := e.get("a").Revision; got != revA {
		t.Errorf("a: revision %d, want %d (not written)", got, revA)
	}
	got := e.get("b")
	if got.Revision == revB || got.Title["en"] != "B moved" || got.Event.StartLocal != "2026-07-02 12:00:00" || got.Event.Website == nil || *got.Event.Website != "" {
		t.Errorf("b: revision %d (was %d), title %q, start %s, website %v", got.Revision, revB, got.Title["en"], got.Event.StartLocal, got.Event.Website)
	}
}

// TestEditorChangeKept: an editor's change to an imported event (its
// title, its status) stays until the feed changes that event; then the
// feed's fields overwrite the title, and the status stays the editor's.
func TestEditorChangeKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	e.feed(a)
	e.run()
	cur := e.get("a")
	if _, err := e.cal.UpdateEvent(t.Context(), calendar.Operator, "en", cur, &calendar.EventInput{
		RecordInput: calendar.RecordInput{Name: calendar.Some("Edited"), Status: calendar.Some(repository.StatusPublish)}}); err != nil {
		t.Fatal(err)
	}
	wantRun(t, "unchanged feed", e.run(), repository.RunSucceeded, counts{unchanged: 1})
	if got := e.get("a"); got.Title["en"] != "Edited" || got.Status != repository.StatusPublish {
		t.Errorf("after an unchanged feed: %q %s, want the editor's Edited publish", got.Title["en"], got.Status)
	}
	a.Title = "A, new"
	e.feed(a)
	wantRun(t, "changed feed", e.run(), repository.RunSucceeded, counts{updated: 1})
	if got := e.get("a"); got.Title["en"] != "A, new" || got.Status != repository.StatusPublish {
		t.Errorf("after the feed changed: %q %s, want the feed's title and the editor's status", got.Title["en"], got.Status)
	}
	// An editor trashes it while the feed still has it: it stays
	// trashed, also when the feed changes it.
	if _, err := e.cal.Delete(t.Context(), calendar.Operator, e.get("a"), false); err != nil {
		t.Fatal(err)
	}
	a.Title = "A, newer"
	e.feed(a)
	wantRun(t, "changed feed of a trashed event", e.run(), repository.RunSucceeded, counts{updated: 1})
	if got := e.get("a"); got.Title["en"] != "A, newer" || got.Status != repository.StatusTrash {
		t.Errorf("an event the editor trashed: %q %s, want the feed's title, still trashed", got.Title["en"], got.Status)
	}
}

// TestRemovedEvents: an event that leaves the feed is trashed (trash) or
// left (keep), counted once, and restored when it returns.
func TestRemovedEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		onRemoved  string
		whileGone  string
		afterBack  string
		sourceStat string
	}{
		{repository.OnRemovedTrash, repository.StatusTrash, repository.StatusPublish, repository.StatusPublish},
		{repository.OnRemovedKeep, repository.StatusPublish, repository.StatusPublish, repository.StatusPublish},
		{repository.OnRemovedTrash, repository.StatusTrash, repository.StatusDraft, ""},
	} {
		t.Run(tc.onRemoved+"/"+tc.sourceStat, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil, func(s *repository.Source) { s.OnRemoved, s.Status = tc.onRemoved, tc.sourceStat })
			a, b := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC))
			e.feed(a, b)
			e.run()
			if tc.sourceStat == "" { // an editor publishes it
				cur := e.get("b")
				if _, err := e.cal.UpdateEvent(t.Context(), calendar.Operator, "en", cur, &calendar.EventInput{
					RecordInput: calendar.RecordInput{Status: calendar.Some(repository.StatusPublish)}}); err != nil {
					t.Fatal(err)
				}
			}
			e.feed(a)
			wantRun(t, "b gone", e.run(), repository.RunSucceeded, counts{unchanged: 1, removed: 1})
			if got := e.get("b").Status; got != tc.whileGone {
				t.Errorf("b while gone: %s, want %s", got, tc.whileGone)
			}
			wantRun(t, "b still gone", e.run(), repository.RunSucceeded, counts{unchanged: 1})
			e.feed(a, b)
			wantRun(t, "b back", e.run(), repository.RunSucceeded, counts{unchanged: 1, updated: 1})
			if got := e.get("b").Status; got != tc.afterBack {
				t.Errorf("b back: %s, want %s", got, tc.afterBack)
			}
			wantRun(t, "b stays", e.run(), repository.RunSucceeded, counts{unchanged: 2})
		})
	}
}

// TestSeriesAcrossDST: a weekly series in Europe/Amsterdam across the
// October change, with a moved instance, a renamed one, an exclusion and
// an addition: every occurrence at its exact instant.
func TestSeriesAcrossDST(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	ams := zone(t, "Europe/Amsterdam")
	at := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 0, 0, 0, ams) }
	e.feed(feed.Event{UID: "weekly", Title: "Weekly", Zone: "Europe/Amsterdam",
		Start: at(10, 14, 19), End: at(10, 14, 21), Rules: []string{"FREQ=WEEKLY;COUNT=5"},
		Exclusions: []time.Time{at(11, 4, 19)}, Additions: []time.Time{at(11, 20, 10)},
		Overrides: []feed.Override{
			{Of: at(10, 21, 19), Start: at(10, 26, 18), End: at(10, 26, 20)}, // before the change, moved after it
			{Of: at(10, 28, 19), Title: ptr("After the change")},
		}})
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 1})
	p := e.get("weekly")
	ev := p.Event
	if ev.Recurrence == nil || !slices.Equal(ev.Recurrence.Rules, []string{"FREQ=WEEKLY;COUNT=5"}) ||
		!slices.Equal(ev.Recurrence.Exclusions, []string{"2026-11-04 19:00:00"}) || !slices.Equal(ev.Recurrence.Additions, []string{"2026-11-20 10:00:00"}) {
		t.Fatalf("recurrence %+v", ev.Recurrence)
	}
	if p.Source.Hash == "pending" || p.Source.Hash == "" {
		t.Errorf("link hash %q after every change was written", p.Source.Hash)
	}
	occ, err := e.cal.FindOccurrence(p, ams, "20261021T190000")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 10, 26, 17, 0, 0, 0, time.UTC); !occ.Start.Equal(want) || !occ.End.Equal(want.Add(2*time.Hour)) {
		t.Errorf("moved occurrence %s to %s, want %s to 19:00 UTC (18:00 CET, after the change)", occ.Start.UTC(), occ.End.UTC(), want)
	}
	occ, err = e.cal.FindOccurrence(p, ams, "20261028T190000")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 10, 28, 18, 0, 0, 0, time.UTC); !occ.Start.Equal(want) {
		t.Errorf("occurrence after the change starts %s, want %s (19:00 CET)", occ.Start.UTC(), want)
	}
	if ov := ev.Override("20261028T190000"); ov == nil || ov.Title["en"] != "After the change" {
		t.Errorf("override of the 28th: %+v", ov)
	}
	first, err := e.cal.FindOccurrence(p, ams, "20261014T190000")
	if err != nil || !first.Start.Equal(time.Date(2026, 10, 14, 17, 0, 0, 0, time.UTC)) {
		t.Errorf("first occurrence %s (%v), want 17:00 UTC (19:00 CEST)", first.Start.UTC(), err)
	}
	if _, err := e.cal.FindOccurrence(p, ams, "20261104T190000"); err == nil {
		t.Errorf("the excluded occurrence of 4 November is listed")
	}
	// The feed drops the rename: the series is written again with its
	// one remaining change.
	cur := e.store.writes.Load()
	e.feed(feed.Event{UID: "weekly", Title: "Weekly", Zone: "Europe/Amsterdam",
		Start: at(10, 14, 19), End: at(10, 14, 21), Rules: []string{"FREQ=WEEKLY;COUNT=5"},
		Exclusions: []time.Time{at(11, 4, 19)}, Additions: []time.Time{at(11, 20, 10)},
		Overrides: []feed.Override{{Of: at(10, 21, 19), Start: at(10, 22, 18), End: at(10, 22, 20)}}})
	wantRun(t, "rename dropped", e.run(), repository.RunSucceeded, counts{updated: 1})
	if e.store.writes.Load() == cur {
		t.Errorf("nothing written")
	}
	ev = e.get("weekly").Event
	if len(ev.Overrides) != 1 || ev.Overrides[0].Key != "20261021T190000" {
		t.Errorf("overrides after the rename was dropped: %+v", ev.Overrides)
	}
}

// TestLoneInstance: a RECURRENCE-ID instance whose series the feed does
// not hold is an event of its own, identified by UID and RECURRENCE-ID.
func TestLoneInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	lone := single("series@x", "One date of a series", time.Date(2026, 7, 3, 18, 0, 0, 0, time.UTC))
	lone.RecurrenceID = "20260703T180000Z"
	e.feed(single("series@x", "Another event, same UID", time.Date(2026, 7, 1, 18, 0, 0, 0, time.UTC)), lone)
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 2})
	p := e.get("series@x@20260703T180000Z")
	if p.Title["en"] != "One date of a series" || p.Source.RecurrenceID != "20260703T180000Z" || p.Event.Recurrence != nil {
		t.Errorf("lone instance: %q link %+v recurrence %v", p.Title["en"], p.Source, p.Event.Recurrence)
	}
	wantRun(t, "again", e.run(), repository.RunSucceeded, counts{unchanged: 2})
}

// TestCancelled: a cancelled single event is kept as event status
// canceled; a cancelled instance of a series is an occurrence with
// event status canceled; the feed taking a cancellation back restores
// scheduled.
func TestCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	gone := single("gone", "Called off", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	gone.Cancelled = true
	start := time.Date(2026, 7, 6, 9, 0, 0, 0, time.UTC)
	series := feed.Event{UID: "daily", Title: "Daily", Zone: "UTC", Start: start, End: start.Add(time.Hour),
		Rules: []string{"FREQ=DAILY;COUNT=3"}, Overrides: []feed.Override{{Of: start.AddDate(0, 0, 1), Cancelled: true}}}
	e.feed(gone, series)
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 2})
	if got := e.get("gone").Event.EventStatus; got != repository.EventCanceled {
		t.Errorf("cancelled event: event status %q", got)
	}
	ov := e.get("daily").Event.Override("20260707T090000")
	if ov == nil || ov.EventStatus == nil || *ov.EventStatus != repository.EventCanceled {
		t.Errorf("cancelled instance: override %+v", ov)
	}
	gone.Cancelled = false
	e.feed(gone, series)
	wantRun(t, "taken back", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1})
	if got := e.get("gone").Event.EventStatus; got != "" {
		t.Errorf("cancellation taken back: event status %q, want scheduled", got)
	}
}

// TestVenuesAndOrganizers: a venue or organizer of an existing name is
// linked as it is (not overwritten by the feed's address); a new name
// is created once for all the events naming it.
func TestVenuesAndOrganizers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	hall, _, err := e.cal.CreateVenue(t.Context(), calendar.Operator, "en", &calendar.VenueInput{
		RecordInput: calendar.RecordInput{Name: calendar.Some("Town Hall")}, Address: calendar.Some("Square 1")})
	if err != nil {
		t.Fatal(err)
	}
	var evs []feed.Event
	for i := range 3 {
		ev := single(fmt.Sprint("e", i), "E", time.Date(2026, 7, 1+i, 10, 0, 0, 0, time.UTC))
		ev.Location = &feed.Place{Name: "town hall", Address: "Elsewhere 9"}
		if i > 0 {
			ev.Location = &feed.Place{Name: "Club", Address: "Night St 2"}
		}
		ev.Organizer = &feed.Person{Name: "jo@example.org", Email: "jo@example.org"}
		evs = append(evs, ev)
	}
	e.feed(evs...)
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 3})
	if got := e.get("e0").Event.Venues; !slices.Equal(got, []int64{hall.ID}) {
		t.Errorf("e0 venues %v, want the existing Town Hall %d", got, hall.ID)
	}
	if v := record(t, e, hall.ID); v.Venue.Address != "Square 1" {
		t.Errorf("Town Hall's address became %q", v.Venue.Address)
	}
	club1, club2 := e.get("e1").Event.Venues, e.get("e2").Event.Venues
	if len(club1) != 1 || !slices.Equal(club1, club2) || club1[0] == hall.ID {
		t.Errorf("club venues %v %v, want one new venue", club1, club2)
	}
	if v := record(t, e, club1[0]); v.Title["en"] != "Club" || v.Venue.Address != "Night St 2" {
		t.Errorf("new venue %q %+v", v.Title["en"], v.Venue)
	}
	orgs, err := e.store.FindRecords(t.Context(), repository.RecordQuery{Kind: repository.KindOrganizer})
	if err != nil || len(orgs) != 1 || orgs[0].Organizer.Email != "jo@example.org" {
		t.Errorf("organizers %v (%v), want one, jo@example.org", orgs, err)
	}
}

// TestRefusedEventsFail: events the calendar refuses count as failed with
// its reason; the rest of the feed imports and the run succeeds. The
// reader's own problems count too.
func TestRefusedEventsFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	hourly := single("hourly", "Every hour", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	hourly.Rules = []string{"FREQ=HOURLY"}
	backwards := single("backwards", "Ends before it starts", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	backwards.End = backwards.Start.Add(-time.Hour)
	badZone := single("zone", "Unknown zone", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	badZone.Zone = "Mars/Olympus"
	strayStart := time.Date(2026, 7, 6, 9, 0, 0, 0, time.UTC)
	stray := feed.Event{UID: "stray", Title: "Daily", Zone: "UTC", Start: strayStart, End: strayStart.Add(time.Hour),
		Rules: []string{"FREQ=DAILY;COUNT=3"}, Overrides: []feed.Override{{Of: strayStart.Add(time.Hour), Title: ptr("Not a date of the series")}}}
	e.reader.set(&feed.Calendar{Events: []feed.Event{hourly, single("ok", "Fine", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC)), backwards, badZone, stray},
		Problems: []feed.Problem{{UID: "broken", Problem: "DTSTART: not a date"}}})
	run := e.run()
	wantRun(t, "run", run, repository.RunSucceeded, counts{created: 1, failed: 5})
	got := map[string]string{}
	for _, p := range run.Problems {
		got[p.UID] = p.Problem
	}
	for uid, want := range map[string]string{"hourly": "recurrence", "backwards": "end_date", "zone": "Mars/Olympus", "broken": "DTSTART: not a date",
		"stray": "20260706T100000 (RECURRENCE-ID)"} {
		if !strings.Contains(got[uid], want) {
			t.Errorf("problem of %s: %q, want it to mention %q", uid, got[uid], want)
		}
	}
	if imp := e.imported(); len(imp) != 2 || imp["ok"] == nil || imp["stray"] == nil || imp["stray"].Source.Hash != "pending" {
		t.Errorf("imported %v, want ok, and the series stray with its changes pending", slices.Collect(mapsKeys(imp)))
	}
	// The next run tries the failed events again.
	wantRun(t, "again", e.run(), repository.RunSucceeded, counts{unchanged: 1, updated: 0, failed: 5})
	src, _ := e.store.GetSource(t.Context(), e.src.ID)
	if src.ContentHash != "" || src.ETag != "" {
		t.Errorf("a run with failures kept the validators (%q, %q): the failed events would not be tried again", src.ContentHash, src.ETag)
	}
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// dump is the store's records, labels and pending marks as JSON.
func dump(t *testing.T, e *env) string {
	t.Helper()
	ps, err := e.store.FindRecords(t.Context(), repository.RecordQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, p := range ps {
		out = append(out, p)
	}
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		ls, err := e.store.FindLabels(t.Context(), repository.LabelQuery{Taxonomy: tax})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ls)
	}
	marks, err := e.store.PendingMarks(t.Context(), 100000)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, len(marks))
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFailingReadChangesNothing: a read that fails fails the run with
// its reason and leaves the store as it was (no event removed).
func TestFailingReadChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	e.run()
	before := dump(t, e)
	e.reader.fail(errFeed)
	run := e.run()
	wantRun(t, "failed read", run, repository.RunFailed, counts{})
	if run.Error != errFeed.Error() || run.Finished.IsZero() {
		t.Errorf("error %q finished %v, want %q", run.Error, run.Finished, errFeed)
	}
	if after := dump(t, e); after != before {
		t.Errorf("a failed read changed the store:\nbefore %s\nafter  %s", before, after)
	}
	src, _ := e.store.GetSource(t.Context(), e.src.ID)
	if src.RunClaim != "" || src.LastRun != run.ID {
		t.Errorf("source after a failed run: claim %q last run %d, want none and %d", src.RunClaim, src.LastRun, run.ID)
	}
}

// TestFailedRunForgetsContentHash: a run that fails (here interrupted
// midway, after it wrote part of a new feed) leaves no content hash, so
// that a feed equal to the last successful run's is still read in full
// and puts back what the failed run changed.
func TestFailedRunForgetsContentHash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	a, b := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC))
	e.feed(a, b)
	e.reader.hash = "body-1"
	wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 2})
	if src, _ := e.store.GetSource(t.Context(), e.src.ID); src.ContentHash != "body-1" {
		t.Fatalf("content hash %q after a successful run", src.ContentHash)
	}
	// The second feed renames both; the run is stopped after the first
	// write.
	a2, b2 := a, b
	a2.Title, b2.Title = "A renamed", "B renamed"
	e.feed(a2, b2)
	e.reader.hash = "body-2"
	slow := sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: e.reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: 0.001})
	if _, err := slow.Start(t.Context(), e.src.ID, sources.TriggerAPI); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rename", func() bool { return e.get("a").Title["en"] == "A renamed" })
	slow.Close()
	if src, _ := e.store.GetSource(t.Context(), e.src.ID); src.ContentHash != "" {
		t.Errorf("content hash %q after a failed run, want none", src.ContentHash)
	}
	// The first feed again: a gets its title back.
	e.feed(a, b)
	e.reader.hash = "body-1"
	wantRun(t, "first feed again", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: 1})
	if got, gotB := e.get("a").Title["en"], e.get("b").Title["en"]; got != "A" || gotB != "B" {
		t.Errorf("a, b: %q, %q; want A, B", got, gotB)
	}
}

// TestOneRunAtATime: while a run of a source goes on, a second Start (or
// Run) of it is ErrRunning; once it ended, the source runs again.
func TestOneRunAtATime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	gate := make(chan struct{})
	e.reader.gate = gate
	// Starts at once: exactly one claims the source.
	const starts = 4
	started := make(chan *repository.SourceRun, starts)
	errs := make(chan error, starts)
	var ready sync.WaitGroup
	ready.Add(starts)
	for range starts {
		go func() {
			ready.Done()
			ready.Wait()
			run, err := e.runner.Start(t.Context(), e.src.ID, "api")
			if err != nil {
				errs <- err
				return
			}
			started <- run
		}()
	}
	var first *repository.SourceRun
	for range starts {
		select {
		case run := <-started:
			if first != nil {
				t.Fatalf("two starts at once both ran: %+v and %+v", first, run)
			}
			first = run
		case err := <-errs:
			if !errors.Is(err, sources.ErrRunning) {
				t.Errorf("a start at the same time: %v, want ErrRunning", err)
			}
		}
	}
	if first == nil || first.Status != repository.RunRunning || first.ID == 0 {
		t.Fatalf("first start: %+v", first)
	}
	if _, err := e.runner.Start(t.Context(), e.src.ID, "api"); !errors.Is(err, sources.ErrRunning) {
		t.Errorf("second start: %v, want ErrRunning", err)
	}
	if _, err := e.runner.Run(t.Context(), e.src.ID, "schedule"); !errors.Is(err, sources.ErrRunning) {
		t.Errorf("run during a run: %v, want ErrRunning", err)
	}
	close(gate)
	waitFor(t, "the first run to finish", func() bool {
		runs, _ := e.store.ListSourceRuns(t.Context(), e.src.ID, 1)
		return len(runs) == 1 && runs[0].Status == repository.RunSucceeded
	})
	waitFor(t, "the claim to be released", func() bool {
		s, _ := e.store.GetSource(t.Context(), e.src.ID)
		return s.RunClaim == ""
	})
	wantRun(t, "after", e.run(), repository.RunSucceeded, counts{unchanged: 1})
}

// TestLapsedClaimTakenOver: a claim whose time passed (its process died)
// is taken over, and the run it left as running is marked failed,
// interrupted.
func TestLapsedClaimTakenOver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	dead := &repository.SourceRun{SourceID: e.src.ID, Status: repository.RunRunning, Trigger: "schedule", Started: now.Add(-time.Hour)}
	if err := e.store.CreateSourceRun(t.Context(), dead); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		until time.Time
		want  error
	}{
		{now.Add(time.Minute), sources.ErrRunning}, // still live
		{now.Add(-time.Second), nil},               // lapsed
	} {
		if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(s *repository.Source) error {
			s.RunClaim, s.RunClaimUntil = "dead-process", tc.until
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		run, err := e.runner.Run(t.Context(), e.src.ID, "schedule")
		if !errors.Is(err, tc.want) {
			t.Fatalf("claim until %s: %v, want %v", tc.until, err, tc.want)
		}
		if err == nil {
			wantRun(t, "take-over", run, repository.RunSucceeded, counts{created: 1})
		}
	}
	runs, err := e.store.ListSourceRuns(t.Context(), e.src.ID, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if old := runs[1]; old.ID != dead.ID || old.Status != repository.RunFailed || !strings.HasPrefix(old.Error, "interrupted") {
		t.Errorf("the dead run: %+v, want failed, interrupted", old)
	}
}

// TestRunsPruned: a source keeps its newest repository.MaxRunsKept runs.
func TestRunsPruned(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	e.reader.fail(errFeed)
	var last int64
	for range repository.MaxRunsKept + 3 {
		last = e.run().ID
	}
	runs, err := e.store.ListSourceRuns(t.Context(), e.src.ID, 0)
	if err != nil || len(runs) != repository.MaxRunsKept || runs[0].ID != last {
		t.Errorf("%d runs kept (%v), newest %d; want %d, newest %d", len(runs), err, runs[0].ID, repository.MaxRunsKept, last)
	}
}

// waitFor polls cond until it holds, failing the test at its deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testdeadline.Poll(t, 5*time.Millisecond, what, cond)
}

// TestFloatingAndAllDay: floating times and dates are read in the site's
// zone (here America/New_York): a floating 19:00 is 19:00 there, an
// all-day series' instances are days, and a changed instance of it is
// keyed by its date.
func TestFloatingAndAllDay(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string { return map[string]string{"TIMEZONE": "America/New_York"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvIn(t, nil, cfg, nil)
	floating := feed.Event{UID: "floating", Title: "Floating", Start: time.Date(2026, 7, 1, 19, 0, 0, 0, time.UTC),
		End: time.Date(2026, 7, 1, 21, 0, 0, 0, time.UTC), Rules: []string{"FREQ=DAILY;COUNT=3"},
		Exclusions: []time.Time{time.Date(2026, 7, 2, 19, 0, 0, 0, time.UTC)},
		Overrides:  []feed.Override{{Of: time.Date(2026, 7, 3, 19, 0, 0, 0, time.UTC), Start: time.Date(2026, 7, 3, 20, 0, 0, 0, time.UTC)}}}
	day := func(d int) time.Time { return time.Date(2026, 8, d, 0, 0, 0, 0, time.UTC) }
	days := feed.Event{UID: "days", Title: "Days", AllDay: true, Start: day(1), End: day(2), Rules: []string{"FREQ=WEEKLY;COUNT=3"},
		Exclusions: []time.Time{day(8)}, Overrides: []feed.Override{{Of: day(15), Title: ptr("Third week"), Start: day(16), End: day(18)}}}
	e.feed(floating, days)
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 2})
	ny := zone(t, "America/New_York")
	p := e.get("floating")
	if ev := p.Event; ev.Timezone != "" || ev.StartLocal != "2026-07-01 19:00:00" || !ev.StartUTC.Equal(time.Date(2026, 7, 1, 23, 0, 0, 0, time.UTC)) ||
		!slices.Equal(ev.Recurrence.Exclusions, []string{"2026-07-02 19:00:00"}) {
		t.Errorf("floating: zone %q start %s (%s UTC) exclusions %v", ev.Timezone, ev.StartLocal, ev.StartUTC, ev.Recurrence.Exclusions)
	}
	occ, err := e.cal.FindOccurrence(p, ny, "20260703T190000")
	if err != nil || !occ.Start.Equal(time.Date(2026, 7, 4, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("moved floating instance %s (%v), want 20:00 in New York", occ.Start.UTC(), err)
	}
	p = e.get("days")
	if ev := p.Event; !ev.AllDay || ev.StartLocal != "2026-08-01 00:00:00" || ev.EndLocal != "2026-08-01 23:59:59" ||
		!slices.Equal(ev.Recurrence.Exclusions, []string{"2026-08-08 00:00:00"}) {
		t.Errorf("all-day series: %v %s to %s exclusions %v", ev.AllDay, ev.StartLocal, ev.EndLocal, ev.Recurrence.Exclusions)
	}
	ov := p.Event.Override("20260815T000000")
	if ov == nil || ov.Title["en"] != "Third week" || ov.StartLocal == nil || *ov.StartLocal != "2026-08-16 00:00:00" || *ov.EndLocal != "2026-08-17 23:59:59" {
		t.Errorf("all-day instance: %+v", ov)
	}
}

// TestAuthorGone: a source whose author was deleted still imports; its
// new events have no author.
func TestAuthorGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, func(s *repository.Source) { s.Author = 9999 })
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	wantRun(t, "run", e.run(), repository.RunSucceeded, counts{created: 1})
	if got := e.get("a").Author; got != 0 {
		t.Errorf("author %d, want none", got)
	}
}

// TestLabelsLookedUpOncePerRun checks that a run resolves each category
// and tag name of the feed once, not once per event: the look-ups stay
// the same whether the feed holds few events or many, and every event
// gets the same terms, the existing one for a known name and one new
// term for an unknown name.
func TestLabelsLookedUpOncePerRun(t *testing.T) {
	t.Parallel()
	lookups := map[int]int64{}
	for _, n := range []int{3, 30} {
		e := newEnv(t, nil, nil)
		music := label(t, e, repository.LabelCategory, "Music")
		var evs []feed.Event
		for i := range n {
			start := time.Date(2026, 7, 1+i%28, 20, 0, 0, 0, time.UTC)
			evs = append(evs, feed.Event{UID: fmt.Sprintf("e%d@example", i), Title: fmt.Sprintf("Event %d", i),
				Start: start, End: start.Add(time.Hour), Categories: []string{"music", "Jazz"}, Tags: []string{"partner"}})
		}
		e.feed(evs...)
		before := e.store.lookups.Load()
		wantRun(t, fmt.Sprintf("%d events", n), e.run(), repository.RunSucceeded, counts{created: n})
		lookups[n] = e.store.lookups.Load() - before
		var jazz, partner int64
		for i := range n {
			ev := e.get(fmt.Sprintf("e%d@example", i)).Event
			if len(ev.Categories) != 2 || len(ev.Tags) != 1 {
				t.Fatalf("%d events: event %d: categories %v, tags %v", n, i, ev.Categories, ev.Tags)
			}
			if i == 0 {
				jazz, partner = ev.Categories[1], ev.Tags[0]
			}
			if ev.Categories[0] != music || ev.Categories[1] != jazz || ev.Tags[0] != partner {
				t.Errorf("%d events: event %d: categories %v, tags %v, want [%d %d] [%d]", n, i, ev.Categories, ev.Tags, music, jazz, partner)
			}
		}
		if got := names(t, e, []int64{jazz, partner}); strings.Join(got, ",") != "Jazz,partner" {
			t.Errorf("%d events: new terms %v", n, got)
		}
	}
	if lookups[30] != lookups[3] {
		t.Errorf("label look-ups: %d for 3 events, %d for 30; want the same (once per name and run)", lookups[3], lookups[30])
	}
}

// TestNewLabelsCappedPerRun: a feed naming more new categories and tags
// than MaxNewLabelsPerRun creates that many; the rest are left off their
// events (which still import), each noted in the run's problems; names
// that exist are not counted against the cap; a second run creates at
// most that many more.
func TestNewLabelsCappedPerRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	music := label(t, e, repository.LabelCategory, "Music")
	const events, perEvent = 5, 60 // 300 new names, besides "Music"
	var evs []feed.Event
	for i := range events {
		start := time.Date(2026, 7, 1+i, 20, 0, 0, 0, time.UTC)
		cats := []string{"Music"}
		for j := range perEvent {
			cats = append(cats, fmt.Sprintf("cat-%d-%d", i, j))
		}
		evs = append(evs, feed.Event{UID: fmt.Sprintf("e%d@example", i), Title: fmt.Sprintf("Event %d", i),
			Start: start, End: start.Add(time.Hour), Categories: cats})
	}
	e.feed(evs...)
	run := e.run()
	wantRun(t, "first", run, repository.RunSucceeded, counts{created: events})
	all, err := e.store.FindLabels(t.Context(), repository.LabelQuery{Taxonomy: repository.LabelCategory})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(all) - 1; got != sources.MaxNewLabelsPerRun {
		t.Errorf("%d categories created, want %d", got, sources.MaxNewLabelsPerRun)
	}
	left := events*perEvent - sources.MaxNewLabelsPerRun
	if want := min(left, repository.MaxRunProblems); len(run.Problems) != want {
		t.Errorf("%d problems, want %d", len(run.Problems), want)
	} else if p := run.Problems[0]; !strings.Contains(p.Problem, "left off") || p.UID == "" {
		t.Errorf("problem %+v", p)
	}
	for i := range events {
		ev := e.get(fmt.Sprintf("e%d@example", i)).Event
		if len(ev.Categories) == 0 || ev.Categories[0] != music {
			t.Errorf("event %d: categories %v, want Music (%d) first", i, ev.Categories, music)
		}
	}
}
