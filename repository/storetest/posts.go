package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/calendar/eventcal/repository"
)

var postTests = []storeTest{
	{"OneSequenceAcrossKinds", testPostSequence},
	{"RoundTripEveryField", testPostRoundTrip},
	{"GetPosts", testGetPosts},
	{"GetPostBySlug", testGetPostBySlug},
	{"NotFound", testPostNotFound},
	{"ExplicitID", testPostExplicitID},
	{"IDsNeverReused", testPostIDsNeverReused},
}

func testPostSequence(t *testing.T, ctx context.Context, s repository.Store) {
	posts := []*repository.Record{
		eventFixture("First event"),
		venueFixture("First venue"),
		organizerFixture("First organizer"),
		imageFixture("https://img.example/1.jpg"),
		eventFixture("Second event"),
		venueFixture("Second venue"),
		organizerFixture("Second organizer"),
		imageFixture("https://img.example/2.jpg"),
	}
	var ids []int64
	for _, p := range posts {
		mustCreatePost(t, ctx, s, p)
		if p.Revision <= 0 {
			t.Errorf("CreatePost(%s) left Revision %d, want > 0", p.Kind, p.Revision)
		}
		ids = append(ids, p.ID)
	}
	checkDistinct(t, "post IDs across kinds", ids, 0)
	if !slices.IsSorted(ids) {
		t.Errorf("post IDs %v are not increasing in creation order", ids)
	}
}

func testPostRoundTrip(t *testing.T, ctx context.Context, s repository.Store) {
	img := mustCreatePost(t, ctx, s, imageFixture("https://img.example/photo.jpeg?size=large"))
	noGeo := venueFixture("Venue without geo")
	noGeo.Venue.GeoLat, noGeo.Venue.GeoLng = nil, nil
	bare := &repository.Record{
		Kind:   repository.KindVenue,
		Status: repository.StatusPending,
		Title:  repository.Text{"en": "Bare venue"},
		Slug:   repository.Text{"en": "bare-venue"},
		Venue:  &repository.VenueFields{},
	}
	zeroFlags := eventFixture("Zero flags")
	zeroFlags.Event.AllDay, zeroFlags.Event.ShowMap, zeroFlags.Event.ShowMapLink = false, false, false
	zeroFlags.Event.HideFromListings, zeroFlags.Event.Sticky = false, false
	zeroFlags.Event.Featured, zeroFlags.Event.Ticketed = false, false
	zeroFlags.Event.Website = ptr("")
	zeroFlags.Event.Cost = []string{"Free"}
	zeroFlags.Password = ""

	venue := mustCreatePost(t, ctx, s, venueFixture("Round trip venue"))
	org := mustCreatePost(t, ctx, s, organizerFixture("Round trip organizer"))
	cat := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Concerts", 0))
	tag := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Outdoor", 0))

	for _, p := range []*repository.Record{noGeo, bare, zeroFlags} {
		mustCreatePost(t, ctx, s, p)
	}
	full := eventFixture("Everything set")
	full.ImageID = img.ID
	full.Event.Venues = []int64{venue.ID, noGeo.ID}
	full.Event.Organizers = []int64{org.ID, bare.ID}
	full.Event.Categories = []int64{cat.ID}
	full.Event.Tags = []int64{tag.ID, cat.ID}
	full.Title["fr"] = "Tout: «accents» é à ü 日本語 \"quotes\" \\ back"
	mustCreatePost(t, ctx, s, full)

	child := minimalEvent("child-event")
	child.Event.Parent = full.ID
	mustCreatePost(t, ctx, s, child)

	for _, p := range []*repository.Record{img, venue, org, noGeo, bare, zeroFlags, full, child} {
		got := mustGetPost(t, ctx, s, p.ID)
		checkPost(t, "GetPost after CreatePost", p, got)
	}
}

func testGetPosts(t *testing.T, ctx context.Context, s repository.Store) {
	posts := []*repository.Record{
		mustCreatePost(t, ctx, s, eventFixture("Many A")),
		mustCreatePost(t, ctx, s, venueFixture("Many B")),
		mustCreatePost(t, ctx, s, organizerFixture("Many C")),
		mustCreatePost(t, ctx, s, imageFixture("https://img.example/many.png")),
	}
	missing := posts[len(posts)-1].ID + 1000
	ids := append(postIDs(posts), missing, posts[0].ID)
	got, err := s.GetRecords(ctx, ids)
	if err != nil {
		t.Fatalf("GetPosts: %v", err)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, postIDs(posts)) {
		t.Fatalf("GetPosts(%v) keys %v, want %v", ids, keys, postIDs(posts))
	}
	for _, p := range posts {
		checkPost(t, "GetPosts", p, got[p.ID])
	}
	for _, ids := range [][]int64{nil, {}, {missing}} {
		got, err := s.GetRecords(ctx, ids)
		if err != nil || len(got) != 0 {
			t.Errorf("GetPosts(%v) = %v, %v; want empty, nil", ids, got, err)
		}
	}
}

func testGetPostBySlug(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Slug Lookup"))
	ve := mustCreatePost(t, ctx, s, venueFixture("Slug Lookup"))
	org := mustCreatePost(t, ctx, s, organizerFixture("Slug Lookup"))
	img := mustCreatePost(t, ctx, s, imageFixture("https://img.example/slug.jpg"))
	for _, tc := range []struct {
		kind       repository.Kind
		lang, slug string
		want       *repository.Record
	}{
		{repository.KindEvent, "en", "slug-lookup", ev},
		{repository.KindEvent, "nl", "slug-lookup-nl", ev},
		{repository.KindVenue, "en", "slug-lookup", ve},
		{repository.KindVenue, "fr", "slug-lookup-fr", ve},
		{repository.KindOrganizer, "en", "slug-lookup", org},
		{repository.KindImage, "en", "image", img},
		// Misses: wrong language, wrong kind, unknown slug, prefix.
		{repository.KindEvent, "fr", "slug-lookup", nil},
		{repository.KindEvent, "en", "slug-lookup-fr", nil},
		{repository.KindOrganizer, "nl", "slug-lookup-nl", nil},
		{repository.KindVenue, "en", "slug-lookup-nl", nil},
		{repository.KindEvent, "en", "slug", nil},
		{repository.KindEvent, "en", "", nil},
	} {
		got, err := s.GetRecordBySlug(ctx, tc.kind, tc.lang, tc.slug)
		if tc.want == nil {
			wantNotFound(t, "GetPostBySlug("+string(tc.kind)+", "+tc.lang+", "+tc.slug+")", err)
			continue
		}
		if err != nil {
			t.Errorf("GetPostBySlug(%s, %s, %s): %v", tc.kind, tc.lang, tc.slug, err)
			continue
		}
		checkPost(t, "GetPostBySlug", tc.want, got)
	}
}

func testPostNotFound(t *testing.T, ctx context.Context, s repository.Store) {
	p := mustCreatePost(t, ctx, s, eventFixture("Exists"))
	missing := p.ID + 12345
	_, err := s.GetRecord(ctx, missing)
	wantNotFound(t, "GetPost(missing)", err)
	_, err = s.GetRecordBySlug(ctx, repository.KindEvent, "en", "does-not-exist")
	wantNotFound(t, "GetPostBySlug(missing)", err)
	_, err = s.UpdateRecord(ctx, missing, func(*repository.Record) error { return nil })
	wantNotFound(t, "UpdatePost(missing)", err)
	wantNotFound(t, "DeletePost(missing)", s.DeleteRecord(ctx, missing))
}

func testPostExplicitID(t *testing.T, ctx context.Context, s repository.Store) {
	first := mustCreatePost(t, ctx, s, eventFixture("Auto ID"))
	explicit := eventFixture("Explicit ID")
	explicit.ID = first.ID + 500
	mustCreatePost(t, ctx, s, explicit)
	if explicit.ID != first.ID+500 {
		t.Fatalf("CreatePost with ID %d stored ID %d", first.ID+500, explicit.ID)
	}
	checkPost(t, "GetPost(explicit ID)", explicit, mustGetPost(t, ctx, s, explicit.ID))
	next := mustCreatePost(t, ctx, s, eventFixture("Auto after explicit"))
	checkDistinct(t, "IDs around an explicit ID", []int64{first.ID, explicit.ID, next.ID}, 0)
	checkPost(t, "explicit post after next create", explicit, mustGetPost(t, ctx, s, explicit.ID))
}

func testPostIDsNeverReused(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, eventFixture("Short lived"))
	if err := s.DeleteRecord(ctx, a.ID); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	b := mustCreatePost(t, ctx, s, eventFixture("Short lived"))
	if b.ID <= a.ID {
		t.Errorf("ID after delete = %d, want > %d (IDs are never reused)", b.ID, a.ID)
	}
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "gone", 0))
	if err := s.DeleteLabel(ctx, term.ID); err != nil {
		t.Fatalf("DeleteTerm: %v", err)
	}
	term2 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "gone", 0))
	if term2.ID <= term.ID {
		t.Errorf("term ID after delete = %d, want > %d (IDs are never reused)", term2.ID, term.ID)
	}
}

// slugOf returns the post's current stored slug in lang.
func slugOf(t *testing.T, ctx context.Context, s repository.Store, id int64, lang string) string {
	t.Helper()
	return mustGetPost(t, ctx, s, id).Slug[lang]
}

// checkSlugOwner fails unless the slug resolves to post id (or to nothing
// when id is 0).
func checkSlugOwner(t *testing.T, ctx context.Context, s repository.Store, kind repository.Kind, lang, slug string, id int64) {
	t.Helper()
	got, err := s.GetRecordBySlug(ctx, kind, lang, slug)
	switch {
	case id == 0:
		wantNotFound(t, "GetPostBySlug("+string(kind)+", "+lang+", "+slug+")", err)
	case err != nil:
		t.Errorf("GetPostBySlug(%s, %s, %s): %v, want post %d", kind, lang, slug, err, id)
	case got.ID != id:
		t.Errorf("GetPostBySlug(%s, %s, %s) = post %d, want %d", kind, lang, slug, got.ID, id)
	}
}

var slugTests = []storeTest{
	{"UniquePerKindAndLanguage", testSlugUniqueness},
	{"SuffixedBase", testSlugSuffixedBase},
	{"UpdateKeepsOwnSlug", testSlugUpdateKeepsOwn},
	{"UpdateToTakenSlug", testSlugUpdateToTaken},
	{"RemovedTranslationFreesSlug", testSlugRemovedTranslation},
	{"DeleteFreesSlug", testSlugDeleteFrees},
	{"TrashKeepsSlug", testSlugTrashKeeps},
}

func testSlugUniqueness(t *testing.T, ctx context.Context, s repository.Store) {
	mk := func(kind repository.Kind, slugs repository.Text) *repository.Record {
		var p *repository.Record
		switch kind {
		case repository.KindEvent:
			p = eventFixture("Concert")
		case repository.KindVenue:
			p = venueFixture("Concert")
		default:
			p = organizerFixture("Concert")
		}
		p.Slug = slugs
		return mustCreatePost(t, ctx, s, p)
	}
	type want struct {
		kind repository.Kind
		in   repository.Text
		out  repository.Text
	}
	steps := []want{
		{repository.KindEvent, repository.Text{"en": "concert"}, repository.Text{"en": "concert"}},
		{repository.KindEvent, repository.Text{"en": "concert"}, repository.Text{"en": "concert-2"}},
		{repository.KindEvent, repository.Text{"en": "concert"}, repository.Text{"en": "concert-3"}},
		// Another kind and another language have their own slugs.
		{repository.KindVenue, repository.Text{"en": "concert"}, repository.Text{"en": "concert"}},
		{repository.KindOrganizer, repository.Text{"en": "concert"}, repository.Text{"en": "concert"}},
		{repository.KindEvent, repository.Text{"nl": "concert"}, repository.Text{"nl": "concert"}},
		// One post may use the same slug in two languages; each language
		// is made unique on its own.
		{repository.KindVenue, repository.Text{"en": "concert", "nl": "concert"}, repository.Text{"en": "concert-2", "nl": "concert"}},
		{repository.KindEvent, repository.Text{"en": "concert", "nl": "concert", "fr": "concert"}, repository.Text{"en": "concert-4", "nl": "concert-2", "fr": "concert"}},
		{repository.KindEvent, repository.Text{"en": "other"}, repository.Text{"en": "other"}},
	}
	var created []*repository.Record
	for i, st := range steps {
		p := mk(st.kind, st.in.Clone())
		created = append(created, p)
		if !maps.Equal(p.Slug, st.out) {
			t.Errorf("step %d: CreatePost(%s, slug %v) set slug %v, want %v", i, st.kind, st.in, p.Slug, st.out)
		}
		if got := mustGetPost(t, ctx, s, p.ID).Slug; !maps.Equal(got, st.out) {
			t.Errorf("step %d: stored slug %v, want %v", i, got, st.out)
		}
	}
	for i, st := range steps {
		for lang, slug := range st.out {
			checkSlugOwner(t, ctx, s, st.kind, lang, slug, created[i].ID)
		}
	}
}

func testSlugSuffixedBase(t *testing.T, ctx context.Context, s repository.Store) {
	for i, want := range []string{"party", "party-2"} {
		p := minimalEvent("party")
		mustCreatePost(t, ctx, s, p)
		if p.Slug["en"] != want {
			t.Fatalf("create #%d: slug %q, want %q", i, p.Slug["en"], want)
		}
	}
	// Asking for a slug that is itself taken appends to it
	// (repository.SlugCandidate("party-2", 2) = "party-2-2").
	p := mustCreatePost(t, ctx, s, minimalEvent("party-2"))
	if want := repository.SlugCandidate("party-2", 2); p.Slug["en"] != want {
		t.Errorf("slug %q, want %q", p.Slug["en"], want)
	}
	// A free suffixed slug is taken as is.
	q := mustCreatePost(t, ctx, s, minimalEvent("party-7"))
	if q.Slug["en"] != "party-7" {
		t.Errorf("slug %q, want party-7", q.Slug["en"])
	}
	r := mustCreatePost(t, ctx, s, minimalEvent("party"))
	if r.Slug["en"] != "party-3" {
		t.Errorf("slug %q, want party-3", r.Slug["en"])
	}
}

func testSlugUpdateKeepsOwn(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, minimalEvent("fest"))
	b := mustCreatePost(t, ctx, s, minimalEvent("fest"))
	if b.Slug["en"] != "fest-2" {
		t.Fatalf("second slug %q, want fest-2", b.Slug["en"])
	}
	for _, tc := range []struct {
		name string
		id   int64
		fn   func(p *repository.Record)
		want string
	}{
		{"title change", a.ID, func(p *repository.Record) { p.Title["en"] = "Fest renamed" }, "fest"},
		{"title change on suffixed", b.ID, func(p *repository.Record) { p.Title["en"] = "Fest 2 renamed" }, "fest-2"},
		{"same slug again", a.ID, func(p *repository.Record) { p.Slug["en"] = "fest" }, "fest"},
		{"own suffixed slug again", b.ID, func(p *repository.Record) { p.Slug["en"] = "fest-2" }, "fest-2"},
		// b asks for the base, which a owns: the first free candidate is
		// b's own fest-2.
		{"base owned by other", b.ID, func(p *repository.Record) { p.Slug["en"] = "fest" }, "fest-2"},
		{"status change", a.ID, func(p *repository.Record) { p.Status = repository.StatusPrivate }, "fest"},
	} {
		got := mustUpdatePost(t, ctx, s, tc.id, tc.fn)
		if got.Slug["en"] != tc.want {
			t.Errorf("%s: returned slug %q, want %q", tc.name, got.Slug["en"], tc.want)
		}
		if stored := slugOf(t, ctx, s, tc.id, "en"); stored != tc.want {
			t.Errorf("%s: stored slug %q, want %q", tc.name, stored, tc.want)
		}
	}
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "fest", a.ID)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "fest-2", b.ID)
}

func testSlugUpdateToTaken(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, minimalEvent("alpha"))
	b := mustCreatePost(t, ctx, s, minimalEvent("beta"))
	got := mustUpdatePost(t, ctx, s, b.ID, func(p *repository.Record) { p.Slug["en"] = "alpha" })
	if got.Slug["en"] != "alpha-2" {
		t.Errorf("UpdatePost to a taken slug returned %q, want alpha-2", got.Slug["en"])
	}
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "alpha", a.ID)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "alpha-2", b.ID)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "beta", 0)

	// The old slug is free again.
	c := mustCreatePost(t, ctx, s, minimalEvent("beta"))
	if c.Slug["en"] != "beta" {
		t.Errorf("slug after the owner moved away: %q, want beta", c.Slug["en"])
	}
	// A change to a free slug is taken as is.
	got = mustUpdatePost(t, ctx, s, a.ID, func(p *repository.Record) { p.Slug["en"] = "gamma" })
	if got.Slug["en"] != "gamma" {
		t.Errorf("UpdatePost to a free slug returned %q, want gamma", got.Slug["en"])
	}
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "gamma", a.ID)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "alpha", 0)
	// A slug in a new language joins the others.
	got = mustUpdatePost(t, ctx, s, a.ID, func(p *repository.Record) { p.Slug.Set("de", "beta") })
	if !maps.Equal(got.Slug, repository.Text{"en": "gamma", "de": "beta"}) {
		t.Errorf("slugs after adding de: %v", got.Slug)
	}
	checkSlugOwner(t, ctx, s, repository.KindEvent, "de", "beta", a.ID)
}

func testSlugRemovedTranslation(t *testing.T, ctx context.Context, s repository.Store) {
	a := eventFixture("Removal")
	a.Slug = repository.Text{"en": "removal", "nl": "verwijdering"}
	mustCreatePost(t, ctx, s, a)
	mustUpdatePost(t, ctx, s, a.ID, func(p *repository.Record) { p.Slug.Set("nl", "") })
	checkSlugOwner(t, ctx, s, repository.KindEvent, "nl", "verwijdering", 0)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "removal", a.ID)
	b := minimalEvent("x")
	b.Slug = repository.Text{"nl": "verwijdering"}
	mustCreatePost(t, ctx, s, b)
	if b.Slug["nl"] != "verwijdering" {
		t.Errorf("slug %q, want verwijdering (freed by the update)", b.Slug["nl"])
	}
}

func testSlugDeleteFrees(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, venueFixture("Gala"))
	b := mustCreatePost(t, ctx, s, venueFixture("Gala"))
	if b.Slug["en"] != "gala-2" {
		t.Fatalf("second slug %q, want gala-2", b.Slug["en"])
	}
	if err := s.DeleteRecord(ctx, a.ID); err != nil {
		t.Fatalf("DeletePost: %v", err)
	}
	checkSlugOwner(t, ctx, s, repository.KindVenue, "en", "gala", 0)
	checkSlugOwner(t, ctx, s, repository.KindVenue, "fr", "gala-fr", 0)
	c := mustCreatePost(t, ctx, s, venueFixture("Gala"))
	if c.Slug["en"] != "gala" || c.Slug["fr"] != "gala-fr" {
		t.Errorf("slugs after delete: %v, want gala / gala-fr", c.Slug)
	}
	checkSlugOwner(t, ctx, s, repository.KindVenue, "en", "gala", c.ID)
	checkSlugOwner(t, ctx, s, repository.KindVenue, "en", "gala-2", b.ID)
}

func testSlugTrashKeeps(t *testing.T, ctx context.Context, s repository.Store) {
	a := mustCreatePost(t, ctx, s, organizerFixture("Binned"))
	mustUpdatePost(t, ctx, s, a.ID, func(p *repository.Record) { p.Status = repository.StatusTrash })
	got, err := s.GetRecordBySlug(ctx, repository.KindOrganizer, "en", "binned")
	if err != nil || got.ID != a.ID || got.Status != repository.StatusTrash {
		t.Fatalf("GetPostBySlug(trashed) = %v, %v; want post %d in trash", got, err, a.ID)
	}
	b := mustCreatePost(t, ctx, s, organizerFixture("Binned"))
	if b.Slug["en"] != "binned-2" {
		t.Errorf("slug next to a trashed post: %q, want binned-2", b.Slug["en"])
	}
}

var updateTests = []storeTest{
	{"AppliesAndReturns", testUpdateApplies},
	{"ErrorAborts", testUpdateErrorAborts},
	{"Missing", testUpdateMissing},
	{"Trash", testUpdateTrash},
}

func testUpdateApplies(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Before"))
	want := normPost(ev)
	rev := ev.Revision
	got := mustUpdatePost(t, ctx, s, ev.ID, func(p *repository.Record) {
		p.Title.Set("en", "After")
		p.Title.Set("nl", "")
		p.Content.Set("de", "Inhalt")
		p.Status = repository.StatusDraft
		p.Password = ""
		p.Modified = baseTime.Add(72 * 3600e9)
		p.Event.AllDay = false
		p.Event.Cost = nil
		p.Event.Website = nil
		p.Event.Categories = []int64{9, 3, 5}
		p.Event.Tags = []int64{}
		p.Event.Parent = 77
	})
	want.Title = repository.Text{"en": "After"}
	want.Content["de"] = "Inhalt"
	want.Status = repository.StatusDraft
	want.Password = ""
	want.Modified = baseTime.Add(72 * 3600e9)
	want.Event.AllDay = false
	want.Event.Cost = nil
	want.Event.Website = nil
	want.Event.Categories = []int64{9, 3, 5}
	want.Event.Parent = 77
	if got.Revision <= rev {
		t.Errorf("UpdatePost revision %d, want > %d", got.Revision, rev)
	}
	want.Revision = got.Revision
	checkPost(t, "UpdatePost result", want, got)
	checkPost(t, "GetPost after UpdatePost", want, mustGetPost(t, ctx, s, ev.ID))

	// Venue, organizer and image fields update too.
	for _, p := range []*repository.Record{
		venueFixture("Update venue"), organizerFixture("Update organizer"), imageFixture("https://img.example/u.gif"),
	} {
		edit := func(p *repository.Record) {
			switch {
			case p.Venue != nil:
				p.Venue.City = "Utrecht"
				p.Venue.GeoLat = ptr(-33.5)
				p.Venue.GeoLng = nil
			case p.Organizer != nil:
				p.Organizer.Email = ""
				p.Organizer.Phone = "112"
			case p.Image != nil:
				p.Image.Extension = "gif"
			}
			p.ImageID = 4242
		}
		mustCreatePost(t, ctx, s, p)
		got := mustUpdatePost(t, ctx, s, p.ID, edit)
		want := normPost(p)
		edit(want)
		want.Revision = got.Revision
		checkPost(t, "UpdatePost "+string(p.Kind), want, mustGetPost(t, ctx, s, p.ID))
		checkPost(t, "UpdatePost result "+string(p.Kind), want, got)
	}
}

var errBoom = errors.New("storetest: boom")

func testUpdateErrorAborts(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Stable"))
	before := mustGetPost(t, ctx, s, ev.ID)
	got, err := s.UpdateRecord(ctx, ev.ID, func(p *repository.Record) error {
		p.Title["en"] = "Changed"
		p.Slug["en"] = "changed"
		p.Event.Venues = append(p.Event.Venues, 5)
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("UpdatePost error %v, want the fn's error", err)
	}
	if got != nil {
		t.Errorf("UpdatePost returned a post with an error: %v", dump(got))
	}
	checkPost(t, "post after aborted update", before, mustGetPost(t, ctx, s, ev.ID))
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "changed", 0)
	checkSlugOwner(t, ctx, s, repository.KindEvent, "en", "stable", ev.ID)
	if n, err := s.CountRecords(ctx, repository.RecordQuery{VenueIDs: []int64{5}}); err != nil || n != 0 {
		t.Errorf("CountPosts(venue 5) after aborted update = %d, %v; want 0", n, err)
	}

	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Stable", 0))
	_, err = s.UpdateLabel(ctx, term.ID, func(tm *repository.Label) error {
		tm.Name["en"] = "Changed"
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("UpdateTerm error %v, want the fn's error", err)
	}
	checkTerm(t, "term after aborted update", term, mustGetTerm(t, ctx, s, term.ID))
}

func testUpdateMissing(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("Here"))
	_, err := s.UpdateRecord(ctx, ev.ID+999, func(p *repository.Record) error { p.Status = repository.StatusDraft; return nil })
	wantNotFound(t, "UpdatePost(missing)", err)
	if err := s.DeleteRecord(ctx, ev.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.UpdateRecord(ctx, ev.ID, func(p *repository.Record) error { p.Status = repository.StatusDraft; return nil })
	wantNotFound(t, "UpdatePost(deleted)", err)
	_, err = s.UpdateLabel(ctx, 987654, func(*repository.Label) error { return nil })
	wantNotFound(t, "UpdateTerm(missing)", err)
}

func testUpdateTrash(t *testing.T, ctx context.Context, s repository.Store) {
	ev := mustCreatePost(t, ctx, s, eventFixture("To the bin"))
	got := mustUpdatePost(t, ctx, s, ev.ID, func(p *repository.Record) { p.Status = repository.StatusTrash })
	if got.Status != repository.StatusTrash {
		t.Errorf("status %q, want trash", got.Status)
	}
	stored := mustGetPost(t, ctx, s, ev.ID)
	if stored.Status != repository.StatusTrash {
		t.Errorf("stored status %q, want trash", stored.Status)
	}
	n, err := s.CountRecords(ctx, repository.RecordQuery{ExcludeStatuses: []string{repository.StatusTrash}})
	if err != nil || n != 0 {
		t.Errorf("CountPosts(not trash) = %d, %v; want 0", n, err)
	}
	n, err = s.CountRecords(ctx, repository.RecordQuery{Statuses: []string{repository.StatusTrash}})
	if err != nil || n != 1 {
		t.Errorf("CountPosts(trash) = %d, %v; want 1", n, err)
	}
	// Restoring works like any update.
	got = mustUpdatePost(t, ctx, s, ev.ID, func(p *repository.Record) { p.Status = repository.StatusPublish })
	want := normPost(ev)
	want.Revision = got.Revision
	checkPost(t, "restored post", want, mustGetPost(t, ctx, s, ev.ID))
}

var deleteTests = []storeTest{
	{"Permanent", testDeletePermanent},
}

func testDeletePermanent(t *testing.T, ctx context.Context, s repository.Store) {
	keep := mustCreatePost(t, ctx, s, eventFixture("Keeper"))
	for _, p := range []*repository.Record{
		eventFixture("Doomed"), venueFixture("Doomed"), organizerFixture("Doomed"), imageFixture("https://img.example/doomed.jpg"),
	} {
		mustCreatePost(t, ctx, s, p)
		if err := s.DeleteRecord(ctx, p.ID); err != nil {
			t.Fatalf("DeletePost(%s): %v", p.Kind, err)
		}
		_, err := s.GetRecord(ctx, p.ID)
		wantNotFound(t, "GetPost after DeletePost", err)
		wantNotFound(t, "second DeletePost", s.DeleteRecord(ctx, p.ID))
		for lang, slug := range p.Slug {
			checkSlugOwner(t, ctx, s, p.Kind, lang, slug, 0)
		}
		got, err := s.GetRecords(ctx, []int64{p.ID, keep.ID})
		if err != nil || len(got) != 1 || got[keep.ID] == nil {
			t.Errorf("GetPosts after DeletePost = %v, %v; want only %d", got, err, keep.ID)
		}
		found, err := s.FindRecords(ctx, repository.RecordQuery{IDs: []int64{p.ID}})
		if err != nil || len(found) != 0 {
			t.Errorf("FindPosts(deleted ID) = %v, %v; want none", postIDs(found), err)
		}
		if n, err := s.CountRecords(ctx, repository.RecordQuery{Kind: p.Kind}); err != nil || n != map[bool]int{true: 1, false: 0}[p.Kind == repository.KindEvent] {
			t.Errorf("CountPosts(%s) after DeletePost = %d, %v", p.Kind, n, err)
		}
	}
	checkPost(t, "untouched post", keep, mustGetPost(t, ctx, s, keep.ID))
}
