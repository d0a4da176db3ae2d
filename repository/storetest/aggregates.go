package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

var eventLinksTests = []storeTest{
	{"Rules", testPlaceEventsRules},
	{"FollowsWrites", testPlaceEventsFollowsWrites},
	{"MatchesDefinition", testPlaceEventsMatchesDefinition},
	{"FindPostIDs", testFindPostIDs},
	{"CountByTerm", testCountByTerm},
}

// placeEvents calls PlaceEvents and fails the test on an error.
func placeEvents(t *testing.T, ctx context.Context, s repository.Store, kind repository.Kind, ids ...int64) map[int64]repository.PlaceEvents {
	t.Helper()
	got, err := s.PlaceEvents(ctx, kind, ids)
	if err != nil {
		t.Fatalf("PlaceEvents(%s, %v): %v", kind, ids, err)
	}
	return got
}

// linkedEvent returns an event at the venues and organizers with a status
// and a start.
func linkedEvent(slug, status string, start time.Time, venues, orgs []int64) *repository.Record {
	p := minimalEvent(slug)
	p.Status = status
	p.Event.StartUTC, p.Event.EndUTC = start, start.Add(time.Hour)
	p.Event.Venues, p.Event.Organizers = venues, orgs
	return p
}

// checkPlaceEvents compares PlaceEvents with want, place by place.
func checkPlaceEvents(t *testing.T, what string, got, want map[int64]repository.PlaceEvents) {
	t.Helper()
	norm := func(m map[int64]repository.PlaceEvents) map[int64]repository.PlaceEvents {
		out := map[int64]repository.PlaceEvents{}
		for id, pe := range m {
			if len(pe.LatestStart) == 0 && !pe.HasEvents {
				continue // "no linked events" may be absent or empty
			}
			out[id] = pe
		}
		return out
	}
	if g, w := norm(got), norm(want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// testPlaceEventsRules pins the rules written by hand: has_events counts
// trashed, published, future and private events but not drafts or pending
// ones (as in the original plugin), and the latest start is kept per
// status.
func testPlaceEventsRules(t *testing.T, ctx context.Context, s repository.Store) {
	var venues, orgs []int64
	for i := range 7 {
		venues = append(venues, mustCreatePost(t, ctx, s, venueFixture(fmt.Sprintf("Venue %d", i))).ID)
	}
	for i := range 2 {
		orgs = append(orgs, mustCreatePost(t, ctx, s, organizerFixture(fmt.Sprintf("Org %d", i))).ID)
	}
	day := func(d int) time.Time { return time.Date(2030, 1, d, 20, 0, 0, 0, time.UTC) }
	ids := func(v ...int64) []int64 { return v }
	events := []*repository.Record{
		// venues[0]: drafts and pending only.
		linkedEvent("d1", repository.StatusDraft, day(3), ids(venues[0]), nil),
		linkedEvent("d2", repository.StatusDraft, day(9), ids(venues[0]), ids(orgs[0])),
		linkedEvent("p1", repository.StatusPending, day(5), ids(venues[0]), nil),
		// venues[1]: one trashed event.
		linkedEvent("t1", repository.StatusTrash, day(4), ids(venues[1]), nil),
		// venues[2]: published ones, the latest is not the last created.
		linkedEvent("pub1", repository.StatusPublish, day(10), ids(venues[2]), ids(orgs[1])),
		linkedEvent("pub2", repository.StatusPublish, day(20), ids(venues[2]), nil),
		linkedEvent("pub3", repository.StatusPublish, day(15), ids(venues[2]), nil),
		// venues[3]: future and private.
		linkedEvent("f1", repository.StatusFuture, day(6), ids(venues[3]), nil),
		linkedEvent("pr1", repository.StatusPrivate, day(7), ids(venues[3], venues[4]), nil),
		// venues[5]: a start before 1970.
		linkedEvent("old", repository.StatusPublish, time.Date(1960, 5, 1, 0, 0, 0, 0, time.UTC), ids(venues[5]), nil),
		// venues[6] only as an organizer ID: it must not count for the venue.
		linkedEvent("wrongrel", repository.StatusPublish, day(1), nil, ids(venues[6])),
	}
	for _, e := range events {
		mustCreatePost(t, ctx, s, e)
	}
	u := func(d int) int64 { return day(d).Unix() }
	want := map[int64]repository.PlaceEvents{
		venues[0]: {HasEvents: false, LatestStart: map[string]int64{repository.StatusDraft: u(9), repository.StatusPending: u(5)}},
		venues[1]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusTrash: u(4)}},
		venues[2]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusPublish: u(20)}},
		venues[3]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusFuture: u(6), repository.StatusPrivate: u(7)}},
		venues[4]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusPrivate: u(7)}},
		venues[5]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusPublish: time.Date(1960, 5, 1, 0, 0, 0, 0, time.UTC).Unix()}},
	}
	got := placeEvents(t, ctx, s, repository.KindVenue, append(venues, 999999)...)
	checkPlaceEvents(t, "venues", got, want)
	if _, ok := got[999999]; ok {
		t.Errorf("PlaceEvents returned an entry for an unknown ID")
	}
	checkPlaceEvents(t, "organizers", placeEvents(t, ctx, s, repository.KindOrganizer, orgs...), map[int64]repository.PlaceEvents{
		orgs[0]: {HasEvents: false, LatestStart: map[string]int64{repository.StatusDraft: u(9)}},
		orgs[1]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusPublish: u(10)}},
	})
	checkPlaceEvents(t, "a venue ID asked as an organizer", placeEvents(t, ctx, s, repository.KindOrganizer, venues[6]),
		map[int64]repository.PlaceEvents{venues[6]: {HasEvents: true, LatestStart: map[string]int64{repository.StatusPublish: u(1)}}})
	if got := placeEvents(t, ctx, s, repository.KindVenue); len(got) != 0 {
		t.Errorf("PlaceEvents with no IDs = %v, want empty", got)
	}
}

// testPlaceEventsFollowsWrites checks that updates, unlinking and deletes
// of events show in the aggregate at once.
func testPlaceEventsFollowsWrites(t *testing.T, ctx context.Context, s repository.Store) {
	v := mustCreatePost(t, ctx, s, venueFixture("Hall")).ID
	w := mustCreatePost(t, ctx, s, venueFixture("Other hall")).ID
	start := time.Date(2030, 6, 1, 18, 0, 0, 0, time.UTC)
	e := mustCreatePost(t, ctx, s, linkedEvent("e", repository.StatusPublish, start, []int64{v}, nil))
	check := func(what string, want map[int64]repository.PlaceEvents) {
		t.Helper()
		checkPlaceEvents(t, what, placeEvents(t, ctx, s, repository.KindVenue, v, w), want)
	}
	check("created", map[int64]repository.PlaceEvents{v: {HasEvents: true, LatestStart: map[string]int64{"publish": start.Unix()}}})
	update := func(fn func(p *repository.Record)) {
		t.Helper()
		if _, err := s.UpdateRecord(ctx, e.ID, func(p *repository.Record) error { fn(p); return nil }); err != nil {
			t.Fatalf("UpdatePost: %v", err)
		}
	}
	update(func(p *repository.Record) { p.Status = repository.StatusDraft })
	check("made a draft", map[int64]repository.PlaceEvents{v: {LatestStart: map[string]int64{"draft": start.Unix()}}})
	later := start.Add(48 * time.Hour)
	update(func(p *repository.Record) {
		p.Status = repository.StatusTrash
		p.Event.StartUTC = later
		p.Event.Venues = []int64{w}
	})
	check("moved and trashed", map[int64]repository.PlaceEvents{w: {HasEvents: true, LatestStart: map[string]int64{"trash": later.Unix()}}})
	if _, err := s.UnlinkRecord(ctx, w); err != nil {
		t.Fatalf("UnlinkPost: %v", err)
	}
	check("unlinked", nil)
	update(func(p *repository.Record) { p.Event.Venues = []int64{v} })
	check("linked again", map[int64]repository.PlaceEvents{v: {HasEvents: true, LatestStart: map[string]int64{"trash": later.Unix()}}})
	if err := s.DeleteRecord(ctx, e.ID); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	check("deleted", nil)
}

// testPlaceEventsMatchesDefinition writes generated events (creates,
// updates, deletes; random statuses, starts and links) and compares
// PlaceEvents with repository.PlaceEventsOf over every stored event. The
// data is kept small: the suite also runs on slow engines.
func testPlaceEventsMatchesDefinition(t *testing.T, ctx context.Context, s repository.Store) {
	rng := rand.New(rand.NewPCG(10, 7))
	var venues, orgs []int64
	for i := range 5 {
		venues = append(venues, mustCreatePost(t, ctx, s, venueFixture(fmt.Sprintf("Gen venue %d", i))).ID)
	}
	for i := range 3 {
		orgs = append(orgs, mustCreatePost(t, ctx, s, organizerFixture(fmt.Sprintf("Gen org %d", i))).ID)
	}
	pick := func(from []int64) []int64 {
		var out []int64
		for _, id := range from {
			if rng.IntN(3) == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	randomize := func(p *repository.Record) {
		p.Status = repository.Statuses[rng.IntN(len(repository.Statuses))]
		start := time.Unix(rng.Int64N(4_000_000_000)-1_000_000_000, 0).UTC()
		p.Event.StartUTC, p.Event.EndUTC = start, start.Add(time.Hour)
		p.Event.Venues, p.Event.Organizers = pick(venues), pick(orgs)
	}
	var events []int64
	for i := range 30 {
		p := minimalEvent(fmt.Sprintf("gen-%d", i))
		randomize(p)
		events = append(events, mustCreatePost(t, ctx, s, p).ID)
	}
	for _, id := range events[:10] {
		if _, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error { randomize(p); return nil }); err != nil {
			t.Fatalf("UpdatePost: %v", err)
		}
	}
	for _, id := range events[10:14] {
		if err := s.DeleteRecord(ctx, id); err != nil {
			t.Fatalf("DeletePost: %v", err)
		}
	}
	stored, err := s.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil {
		t.Fatalf("FindPosts: %v", err)
	}
	for _, kind := range []repository.Kind{repository.KindVenue, repository.KindOrganizer} {
		ids := venues
		if kind == repository.KindOrganizer {
			ids = orgs
		}
		want := map[int64]repository.PlaceEvents{}
		for _, id := range ids {
			want[id] = repository.PlaceEventsOf(kind, id, stored)
		}
		checkPlaceEvents(t, string(kind)+"s", placeEvents(t, ctx, s, kind, ids...), want)
	}
}

// testFindPostIDs checks that FindPostIDs selects and pages like FindPosts.
func testFindPostIDs(t *testing.T, ctx context.Context, s repository.Store) {
	f := newQueryFixture(t, ctx, s)
	for _, q := range []repository.RecordQuery{
		{},
		{Kind: repository.KindEvent},
		{Kind: repository.KindEvent, VenueIDs: []int64{f.v1.ID}},
		{Kind: repository.KindEvent, CategoryIDs: []int64{f.c1.ID, f.c2.ID}},
		{Kind: repository.KindEvent, TagIDs: []int64{f.t2.ID}},
		{Kind: repository.KindEvent, ExcludeStatuses: []string{repository.StatusTrash}, OrganizerIDs: []int64{f.o2.ID}},
		{Kind: repository.KindEvent, VenueIDs: []int64{999999}},
	} {
		want := postIDs(expectPosts(f.all, q))
		got, err := s.FindRecordIDs(ctx, q)
		if err != nil {
			t.Fatalf("FindPostIDs(%+v): %v", q, err)
		}
		checkIDs(t, fmt.Sprintf("FindPostIDs(%+v)", q), want, got)
		var paged []int64
		pq := q
		pq.Limit = 2
		for range len(f.all) + 1 {
			page, err := s.FindRecordIDs(ctx, pq)
			if err != nil {
				t.Fatalf("FindPostIDs(%+v): %v", pq, err)
			}
			if len(page) > pq.Limit || !slices.IsSorted(page) {
				t.Fatalf("FindPostIDs(%+v) = %v: over the limit or not ascending", pq, page)
			}
			paged = append(paged, page...)
			if len(page) < pq.Limit {
				break
			}
			pq.AfterID = page[len(page)-1]
		}
		checkIDs(t, fmt.Sprintf("pages of FindPostIDs(%+v)", q), want, paged)
	}
}

// testCountByTerm writes generated events (creates, updates, deletes) with
// random statuses, categories and tags, and checks CountPosts of the
// shapes term counts use (one or several terms, with and without
// statuses) against the reference filter.
func testCountByTerm(t *testing.T, ctx context.Context, s repository.Store) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cats, tags []int64
	for i := range 3 {
		cats = append(cats, mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, fmt.Sprintf("Cat %d", i), 0)).ID)
		tags = append(tags, mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, fmt.Sprintf("tag %d", i), 0)).ID)
	}
	pick := func(from []int64) []int64 {
		var out []int64
		for _, id := range from {
			if rng.IntN(2) == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	randomize := func(p *repository.Record) {
		p.Status = repository.Statuses[rng.IntN(len(repository.Statuses))]
		p.Event.Categories, p.Event.Tags = pick(cats), pick(tags)
	}
	var ids []int64
	for i := range 24 {
		p := minimalEvent(fmt.Sprintf("term-gen-%d", i))
		randomize(p)
		ids = append(ids, mustCreatePost(t, ctx, s, p).ID)
	}
	for _, id := range ids[:8] {
		if _, err := s.UpdateRecord(ctx, id, func(p *repository.Record) error { randomize(p); return nil }); err != nil {
			t.Fatalf("UpdatePost: %v", err)
		}
	}
	for _, id := range ids[8:11] {
		if err := s.DeleteRecord(ctx, id); err != nil {
			t.Fatalf("DeletePost: %v", err)
		}
	}
	if err := s.DeleteLabel(ctx, cats[2]); err != nil {
		t.Fatalf("DeleteTerm: %v", err)
	}
	all, err := s.FindRecords(ctx, repository.RecordQuery{})
	if err != nil {
		t.Fatalf("FindPosts: %v", err)
	}
	pub := []string{repository.StatusPublish}
	for _, q := range []repository.RecordQuery{
		{Kind: repository.KindEvent, Statuses: pub, CategoryIDs: cats[:1]},
		{Kind: repository.KindEvent, Statuses: pub, CategoryIDs: cats[1:2]},
		{Kind: repository.KindEvent, Statuses: pub, CategoryIDs: cats[2:3]},
		{Kind: repository.KindEvent, Statuses: pub, TagIDs: tags[:1]},
		{Kind: repository.KindEvent, Statuses: []string{repository.StatusDraft, repository.StatusTrash}, TagIDs: tags[1:2]},
		{Kind: repository.KindEvent, CategoryIDs: cats},
		{Kind: repository.KindEvent, TagIDs: tags},
		{Kind: repository.KindEvent, Statuses: pub, CategoryIDs: cats[:1], TagIDs: tags[:1]},
		{Kind: repository.KindEvent, ExcludeStatuses: pub, TagIDs: tags[2:]},
	} {
		want := len(expectPosts(all, q))
		got, err := s.CountRecords(ctx, q)
		if err != nil {
			t.Fatalf("CountPosts(%+v): %v", q, err)
		}
		if got != want {
			t.Errorf("CountPosts(%+v) = %d, want %d", q, got, want)
		}
	}
}
