package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/calendar/eventcal/repository"
)

var queryTests = []storeTest{
	{"EveryField", testFindPostsFields},
	{"Paging", testFindPostsPaging},
}

// matchPost is the reference implementation of a PostQuery filter, used to
// compute the expected results of FindPosts and CountPosts.
func matchPost(p *repository.Record, q repository.RecordQuery) bool {
	ev := p.Event
	anyOf := func(have, want []int64) bool {
		for _, id := range want {
			if slices.Contains(have, id) {
				return true
			}
		}
		return false
	}
	switch {
	case q.Kind != "" && p.Kind != q.Kind,
		len(q.Statuses) > 0 && !slices.Contains(q.Statuses, p.Status),
		slices.Contains(q.ExcludeStatuses, p.Status),
		len(q.IDs) > 0 && !slices.Contains(q.IDs, p.ID),
		len(q.VenueIDs) > 0 && (ev == nil || !anyOf(ev.Venues, q.VenueIDs)),
		len(q.OrganizerIDs) > 0 && (ev == nil || !anyOf(ev.Organizers, q.OrganizerIDs)),
		len(q.CategoryIDs) > 0 && (ev == nil || !anyOf(ev.Categories, q.CategoryIDs)),
		len(q.TagIDs) > 0 && (ev == nil || !anyOf(ev.Tags, q.TagIDs)),
		q.Title != "" && !asciiEqualFold(p.Title[q.TitleLang], q.Title),
		q.ImageURL != "" && (p.Kind != repository.KindImage || p.Image == nil || p.Image.URL != q.ImageURL),
		q.Parent != 0 && (ev == nil || ev.Parent != q.Parent),
		q.AfterID != 0 && p.ID <= q.AfterID:
		return false
	}
	return true
}

// expectPosts applies q to all (sorted by ID) the way the contract says.
func expectPosts(all []*repository.Record, q repository.RecordQuery) []*repository.Record {
	var out []*repository.Record
	for _, p := range all {
		if matchPost(p, q) {
			out = append(out, p)
		}
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// queryFixture is a store filled with posts that every PostQuery field can
// tell apart.
type queryFixture struct {
	all                    []*repository.Record // by ID
	v1, v2, v3, v4         *repository.Record
	o1, o2                 *repository.Record
	i1, i2                 *repository.Record
	e1, e2, e3, e4, e5, e6 *repository.Record
	c1, c2, t1, t2         *repository.Label
}

func newQueryFixture(t *testing.T, ctx context.Context, s repository.Store) *queryFixture {
	f := &queryFixture{}
	add := func(p *repository.Record) *repository.Record {
		mustCreatePost(t, ctx, s, p)
		f.all = append(f.all, p)
		return p
	}
	venue := func(en, fr, status string) *repository.Record {
		p := venueFixture(en)
		p.Title = repository.Text{"en": en, "fr": fr}
		p.Status = status
		return add(p)
	}
	f.v1 = venue("Concert Hall", "Salle de concert", repository.StatusPublish)
	f.v2 = venue("Jazz Club", "Club de jazz", repository.StatusDraft)
	f.v3 = venue("concert HALL", "Salle", repository.StatusPublish)
	f.v4 = venue("Concert Hall Annex", "Concert Hall", repository.StatusTrash)
	f.o1 = add(organizerFixture("Music Society"))
	f.o2 = add(organizerFixture("Jazz Club")) // same title as a venue, other kind
	f.i1 = add(imageFixture("https://img.example/a.jpg"))
	f.i2 = add(imageFixture("https://img.example/A.jpg"))
	f.c1 = mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Music", 0))
	f.c2 = mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Theatre", 0))
	f.t1 = mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "outdoor", 0))
	f.t2 = mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "free", 0))

	event := func(en, nl, status string, venues, orgs, cats, tags []int64, parent int64) *repository.Record {
		p := eventFixture(en)
		p.Title = repository.Text{"en": en, "nl": nl}
		p.Status = status
		p.Event.Venues, p.Event.Organizers = venues, orgs
		p.Event.Categories, p.Event.Tags = cats, tags
		p.Event.Parent = parent
		return add(p)
	}
	ids := func(ids ...int64) []int64 { return ids }
	f.e1 = event("Rock Night", "Rockavond", repository.StatusPublish,
		ids(f.v1.ID), ids(f.o1.ID), ids(f.c1.ID), ids(f.t1.ID), 0)
	f.e2 = event("Jazz Club", "Jazzclub", repository.StatusDraft,
		ids(f.v1.ID, f.v2.ID), ids(f.o1.ID, f.o2.ID), ids(f.c1.ID, f.c2.ID), nil, 0)
	f.e3 = event("Play", "Toneel", repository.StatusPublish,
		ids(f.v2.ID), nil, ids(f.c2.ID), ids(f.t1.ID, f.t2.ID), f.e1.ID)
	f.e4 = event("Binned", "Weg", repository.StatusTrash,
		nil, ids(f.o2.ID), nil, ids(f.t2.ID), f.e1.ID)
	f.e5 = event("ROCK NIGHT", "rock night", repository.StatusPrivate,
		ids(f.v3.ID, f.v1.ID), nil, ids(f.c1.ID), nil, f.e3.ID)
	f.e6 = event("Later", "Later", repository.StatusFuture,
		nil, nil, nil, nil, 0)
	// An image registered after the events, so that kinds interleave in ID order.
	add(imageFixture("https://img.example/b.png"))
	slices.SortFunc(f.all, func(a, b *repository.Record) int { return int(a.ID - b.ID) })
	return f
}

func testFindPostsFields(t *testing.T, ctx context.Context, s repository.Store) {
	f := newQueryFixture(t, ctx, s)
	ids := func(ps ...*repository.Record) []int64 { return postIDs(ps) }
	// want, when set, is written by hand and cross-checks the reference
	// implementation; otherwise the reference implementation decides.
	cases := []struct {
		name string
		q    repository.RecordQuery
		want []int64
	}{
		{"everything", repository.RecordQuery{}, postIDs(f.all)},
		{"kind event", repository.RecordQuery{Kind: repository.KindEvent}, ids(f.e1, f.e2, f.e3, f.e4, f.e5, f.e6)},
		{"kind venue", repository.RecordQuery{Kind: repository.KindVenue}, ids(f.v1, f.v2, f.v3, f.v4)},
		{"kind organizer", repository.RecordQuery{Kind: repository.KindOrganizer}, ids(f.o1, f.o2)},
		{"kind image", repository.RecordQuery{Kind: repository.KindImage}, nil},
		{"statuses publish", repository.RecordQuery{Statuses: []string{repository.StatusPublish}}, nil},
		{"statuses draft+trash events", repository.RecordQuery{Kind: repository.KindEvent, Statuses: []string{repository.StatusDraft, repository.StatusTrash}}, ids(f.e2, f.e4)},
		{"statuses unknown", repository.RecordQuery{Statuses: []string{"nope"}}, []int64{}},
		{"exclude trash", repository.RecordQuery{ExcludeStatuses: []string{repository.StatusTrash}}, nil},
		{"exclude trash venues", repository.RecordQuery{Kind: repository.KindVenue, ExcludeStatuses: []string{repository.StatusTrash}}, ids(f.v1, f.v2, f.v3)},
		{"exclude several", repository.RecordQuery{Kind: repository.KindEvent, ExcludeStatuses: []string{repository.StatusTrash, repository.StatusPrivate, repository.StatusDraft}}, ids(f.e1, f.e3, f.e6)},
		{"statuses and exclude", repository.RecordQuery{Statuses: []string{repository.StatusPublish, repository.StatusDraft}, ExcludeStatuses: []string{repository.StatusDraft}}, nil},
		{"IDs", repository.RecordQuery{IDs: ids(f.e3, f.v1, f.i2)}, ids(f.v1, f.i2, f.e3)},
		{"IDs with missing", repository.RecordQuery{IDs: []int64{f.e6.ID + 1000, f.e1.ID}}, ids(f.e1)},
		{"IDs and kind", repository.RecordQuery{IDs: ids(f.e3, f.v1, f.i2), Kind: repository.KindVenue}, ids(f.v1)},
		{"venue v1", repository.RecordQuery{VenueIDs: ids(f.v1)}, ids(f.e1, f.e2, f.e5)},
		{"venues v2 or v3", repository.RecordQuery{VenueIDs: ids(f.v2, f.v3)}, ids(f.e2, f.e3, f.e5)},
		{"venue unused", repository.RecordQuery{VenueIDs: ids(f.v4)}, []int64{}},
		{"venue published events", repository.RecordQuery{VenueIDs: ids(f.v1), Statuses: []string{repository.StatusPublish}}, ids(f.e1)},
		{"organizer o1", repository.RecordQuery{OrganizerIDs: ids(f.o1)}, ids(f.e1, f.e2)},
		{"organizers o1 or o2", repository.RecordQuery{OrganizerIDs: ids(f.o1, f.o2)}, ids(f.e1, f.e2, f.e4)},
		{"category c1", repository.RecordQuery{CategoryIDs: []int64{f.c1.ID}}, ids(f.e1, f.e2, f.e5)},
		{"categories c1 or c2", repository.RecordQuery{CategoryIDs: []int64{f.c1.ID, f.c2.ID}}, ids(f.e1, f.e2, f.e3, f.e5)},
		{"tag t2", repository.RecordQuery{TagIDs: []int64{f.t2.ID}}, ids(f.e3, f.e4)},
		{"category and tag", repository.RecordQuery{CategoryIDs: []int64{f.c1.ID}, TagIDs: []int64{f.t1.ID}}, ids(f.e1)},
		{"venue and organizer", repository.RecordQuery{VenueIDs: ids(f.v1), OrganizerIDs: ids(f.o2)}, ids(f.e2)},
		// Term IDs and post IDs come from different sequences: a category
		// filter must not look at venues or organizers.
		{"category ID equal to a venue ID", repository.RecordQuery{CategoryIDs: ids(f.v1, f.v2, f.v3)}, nil},
		{"title venue any case", repository.RecordQuery{Kind: repository.KindVenue, Title: "CONCERT hall", TitleLang: "en"}, ids(f.v1, f.v3)},
		{"title other language", repository.RecordQuery{Kind: repository.KindVenue, Title: "concert hall", TitleLang: "fr"}, ids(f.v4)},
		{"title all kinds", repository.RecordQuery{Title: "jazz club", TitleLang: "en"}, ids(f.v2, f.o2, f.e2)},
		{"title events", repository.RecordQuery{Kind: repository.KindEvent, Title: "rock night", TitleLang: "en"}, ids(f.e1, f.e5)},
		{"title nl", repository.RecordQuery{Title: "ROCK NIGHT", TitleLang: "nl"}, ids(f.e5)},
		{"title is not a prefix match", repository.RecordQuery{Title: "Rock", TitleLang: "en"}, []int64{}},
		{"title missing language", repository.RecordQuery{Title: "Rock Night", TitleLang: "de"}, []int64{}},
		{"title and status", repository.RecordQuery{Title: "concert hall", TitleLang: "en", Statuses: []string{repository.StatusPublish}, ExcludeStatuses: []string{repository.StatusTrash}}, ids(f.v1, f.v3)},
		{"image URL", repository.RecordQuery{ImageURL: "https://img.example/a.jpg"}, ids(f.i1)},
		{"image URL exact case", repository.RecordQuery{ImageURL: "https://img.example/A.jpg"}, ids(f.i2)},
		{"image URL unknown", repository.RecordQuery{ImageURL: "https://img.example/"}, []int64{}},
		{"parent e1", repository.RecordQuery{Parent: f.e1.ID}, ids(f.e3, f.e4)},
		{"parent e3", repository.RecordQuery{Parent: f.e3.ID, Kind: repository.KindEvent}, ids(f.e5)},
		{"parent without children", repository.RecordQuery{Parent: f.e6.ID}, []int64{}},
		{"after ID", repository.RecordQuery{AfterID: f.e2.ID}, nil},
		{"after ID events", repository.RecordQuery{Kind: repository.KindEvent, AfterID: f.e3.ID}, ids(f.e4, f.e5, f.e6)},
		{"after last", repository.RecordQuery{AfterID: f.all[len(f.all)-1].ID}, []int64{}},
		{"limit", repository.RecordQuery{Limit: 3}, postIDs(f.all[:3])},
		{"limit events", repository.RecordQuery{Kind: repository.KindEvent, Limit: 2}, ids(f.e1, f.e2)},
		{"limit after", repository.RecordQuery{Kind: repository.KindEvent, AfterID: f.e2.ID, Limit: 2}, ids(f.e3, f.e4)},
		{"limit larger than matches", repository.RecordQuery{Kind: repository.KindOrganizer, Limit: 50}, ids(f.o1, f.o2)},
		{"everything at once", repository.RecordQuery{
			Kind: repository.KindEvent, Statuses: []string{repository.StatusPublish, repository.StatusPrivate},
			ExcludeStatuses: []string{repository.StatusDraft}, IDs: ids(f.e1, f.e3, f.e5),
			VenueIDs: ids(f.v1), CategoryIDs: []int64{f.c1.ID}, Title: "rock night", TitleLang: "en",
			Parent: f.e3.ID, AfterID: f.e1.ID, Limit: 5,
		}, ids(f.e5)},
	}
	for _, tc := range cases {
		want := postIDs(expectPosts(f.all, tc.q))
		if tc.want != nil {
			checkIDs(t, tc.name+": reference implementation", tc.want, want)
		}
		got, err := s.FindRecords(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: FindPosts(%+v): %v", tc.name, tc.q, err)
			continue
		}
		checkIDs(t, fmt.Sprintf("%s: FindPosts(%+v)", tc.name, tc.q), want, postIDs(got))
		byID := make(map[int64]*repository.Record)
		for _, p := range f.all {
			byID[p.ID] = p
		}
		for _, p := range got {
			if w := byID[p.ID]; w != nil {
				checkPost(t, tc.name+": FindPosts result", w, p)
			}
		}

		cq := tc.q
		cq.AfterID, cq.Limit = 0, 0
		wantCount := len(expectPosts(f.all, cq))
		n, err := s.CountRecords(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: CountPosts(%+v): %v", tc.name, tc.q, err)
		} else if n != wantCount {
			t.Errorf("%s: CountPosts(%+v) = %d, want %d (AfterID and Limit ignored)", tc.name, tc.q, n, wantCount)
		}
	}
}

func testFindPostsPaging(t *testing.T, ctx context.Context, s repository.Store) {
	f := newQueryFixture(t, ctx, s)
	for _, q := range []repository.RecordQuery{
		{},
		{Kind: repository.KindEvent},
		{ExcludeStatuses: []string{repository.StatusTrash}},
	} {
		for _, size := range []int{1, 2, 5} {
			var got []int64
			q := q
			q.Limit = size
			for range len(f.all) + 1 {
				page, err := s.FindRecords(ctx, q)
				if err != nil {
					t.Fatalf("FindPosts(%+v): %v", q, err)
				}
				if len(page) > size {
					t.Fatalf("FindPosts(%+v) returned %d posts, more than the limit", q, len(page))
				}
				got = append(got, postIDs(page)...)
				if len(page) < size {
					break
				}
				q.AfterID = page[len(page)-1].ID
			}
			q.AfterID, q.Limit = 0, 0
			checkIDs(t, fmt.Sprintf("pages of %d over %+v", size, q), postIDs(expectPosts(f.all, q)), got)
		}
	}
}

var unlinkTests = []storeTest{
	{"Venue", func(t *testing.T, ctx context.Context, s repository.Store) {
		testUnlink(t, ctx, s, repository.KindVenue)
	}},
	{"Organizer", func(t *testing.T, ctx context.Context, s repository.Store) {
		testUnlink(t, ctx, s, repository.KindOrganizer)
	}},
}

func testUnlink(t *testing.T, ctx context.Context, s repository.Store, kind repository.Kind) {
	mk := func() *repository.Record {
		if kind == repository.KindVenue {
			return mustCreatePost(t, ctx, s, venueFixture("Linked"))
		}
		return mustCreatePost(t, ctx, s, organizerFixture("Linked"))
	}
	a, b, c := mk(), mk(), mk()
	links := func(p *repository.Record) *[]int64 {
		if kind == repository.KindVenue {
			return &p.Event.Venues
		}
		return &p.Event.Organizers
	}
	event := func(title, status string, ids ...int64) *repository.Record {
		p := eventFixture(title)
		p.Status = status
		*links(p) = ids
		return mustCreatePost(t, ctx, s, p)
	}
	e1 := event("Only a", repository.StatusPublish, a.ID)
	e2 := event("a between", repository.StatusDraft, b.ID, a.ID, c.ID)
	e3 := event("a first", repository.StatusTrash, a.ID, c.ID, b.ID)
	e4 := event("No a", repository.StatusPublish, c.ID, b.ID)
	e5 := event("Nothing", repository.StatusPublish)
	clearAllMarks(t, ctx, s)
	before := map[int64]int64{}
	for _, e := range []*repository.Record{e1, e2, e3, e4, e5} {
		before[e.ID] = e.Revision
	}

	changed, err := s.UnlinkRecord(ctx, a.ID)
	if err != nil {
		t.Fatalf("UnlinkPost: %v", err)
	}
	checkIDs(t, "UnlinkPost changed events", []int64{e1.ID, e2.ID, e3.ID}, sortedIDs(changed))
	want := map[int64][]int64{e1.ID: {}, e2.ID: {b.ID, c.ID}, e3.ID: {c.ID, b.ID}, e4.ID: {c.ID, b.ID}, e5.ID: {}}
	for id, wantLinks := range want {
		got := mustGetPost(t, ctx, s, id)
		checkIDs(t, fmt.Sprintf("%s links of event %d", kind, id), wantLinks, normIDs(*links(got)))
		changedEvent := slices.Contains(changed, id)
		if changedEvent && got.Revision <= before[id] {
			t.Errorf("event %d revision %d after UnlinkPost, want > %d", id, got.Revision, before[id])
		}
		if !changedEvent && got.Revision != before[id] {
			t.Errorf("untouched event %d revision %d, want %d", id, got.Revision, before[id])
		}
	}
	other := func(p *repository.Record) []int64 {
		if kind == repository.KindVenue {
			return p.Event.Organizers
		}
		return p.Event.Venues
	}
	for _, e := range []*repository.Record{e1, e2, e3} {
		got := mustGetPost(t, ctx, s, e.ID)
		checkIDs(t, "other links kept", normIDs(other(e)), normIDs(other(got)))
		if got.Title["en"] != e.Title["en"] || got.Status != e.Status {
			t.Errorf("UnlinkPost changed more than the links of %d: %s", e.ID, dump(got))
		}
	}
	q := repository.RecordQuery{VenueIDs: []int64{a.ID}}
	if kind == repository.KindOrganizer {
		q = repository.RecordQuery{OrganizerIDs: []int64{a.ID}}
	}
	if n, err := s.CountRecords(ctx, q); err != nil || n != 0 {
		t.Errorf("CountPosts(linking %d) after UnlinkPost = %d, %v; want 0", a.ID, n, err)
	}
	marks := pendingMarks(t, ctx, s)
	for _, id := range []int64{e1.ID, e2.ID, e3.ID} {
		if _, ok := marks[markKey{repository.MarkPost, id}]; !ok {
			t.Errorf("no index mark for unlinked event %d (marks %v)", id, marks)
		}
	}
	for _, id := range []int64{e4.ID, e5.ID} {
		if _, ok := marks[markKey{repository.MarkPost, id}]; ok {
			t.Errorf("index mark for untouched event %d", id)
		}
	}
	// The unlinked post itself still exists.
	mustGetPost(t, ctx, s, a.ID)

	// Nothing links it any more.
	changed, err = s.UnlinkRecord(ctx, a.ID)
	if err != nil || len(changed) != 0 {
		t.Errorf("second UnlinkPost = %v, %v; want none", changed, err)
	}
}
