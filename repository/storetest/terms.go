package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/calendar/eventcal/repository"
)

var termTests = []storeTest{
	{"RoundTrip", testTermRoundTrip},
	{"Slugs", testTermSlugs},
	{"FindTerms", testFindTerms},
	{"Update", testTermUpdate},
	{"Delete", testTermDelete},
	{"Counts", testTermCounts},
}

func testTermRoundTrip(t *testing.T, ctx context.Context, s repository.Store) {
	music := termFixture(repository.LabelCategory, "Music", 0)
	music.Name["nl"] = "Muziek"
	music.Description["nl"] = "Over muziek"
	music.Slug["nl"] = "muziek"
	mustCreateTerm(t, ctx, s, music)
	rock := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Rock & Roll", music.ID))
	tag := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Family friendly", 0))
	bare := mustCreateTerm(t, ctx, s, &repository.Label{Taxonomy: repository.LabelTag, Name: repository.Text{"en": "bare"}})
	all := []*repository.Label{music, rock, tag, bare}
	checkDistinct(t, "term IDs", termIDs(all), 0)
	if !slices.IsSorted(termIDs(all)) {
		t.Errorf("term IDs %v are not increasing in creation order", termIDs(all))
	}
	for _, term := range all {
		if term.Revision <= 0 {
			t.Errorf("CreateTerm left Revision %d, want > 0", term.Revision)
		}
		checkTerm(t, "GetTerm", term, mustGetTerm(t, ctx, s, term.ID))
	}
	missing := bare.ID + 1000
	_, err := s.GetLabel(ctx, missing)
	wantNotFound(t, "GetTerm(missing)", err)

	got, err := s.GetLabels(ctx, []int64{tag.ID, missing, music.ID, rock.ID, tag.ID})
	if err != nil {
		t.Fatalf("GetTerms: %v", err)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []int64{music.ID, rock.ID, tag.ID}) {
		t.Errorf("GetTerms keys %v, want %v", keys, []int64{music.ID, rock.ID, tag.ID})
	}
	for _, term := range []*repository.Label{music, rock, tag} {
		checkTerm(t, "GetTerms", term, got[term.ID])
	}
	for _, ids := range [][]int64{nil, {missing}} {
		got, err := s.GetLabels(ctx, ids)
		if err != nil || len(got) != 0 {
			t.Errorf("GetTerms(%v) = %v, %v; want empty", ids, got, err)
		}
	}
}

func testTermSlugs(t *testing.T, ctx context.Context, s repository.Store) {
	mk := func(tax repository.LabelKind, slugs repository.Text) *repository.Label {
		return mustCreateTerm(t, ctx, s, &repository.Label{Taxonomy: tax, Name: repository.Text{"en": "Live"}, Slug: slugs})
	}
	steps := []struct {
		tax     repository.LabelKind
		in, out repository.Text
	}{
		{repository.LabelCategory, repository.Text{"en": "live"}, repository.Text{"en": "live"}},
		{repository.LabelCategory, repository.Text{"en": "live"}, repository.Text{"en": "live-2"}},
		{repository.LabelTag, repository.Text{"en": "live"}, repository.Text{"en": "live"}},
		{repository.LabelCategory, repository.Text{"nl": "live"}, repository.Text{"nl": "live"}},
		{repository.LabelCategory, repository.Text{"en": "live", "nl": "live"}, repository.Text{"en": "live-3", "nl": "live-2"}},
		{repository.LabelTag, repository.Text{"en": "live"}, repository.Text{"en": "live-2"}},
	}
	// A post with the same slug does not count.
	mustCreatePost(t, ctx, s, minimalEvent("live"))
	var terms []*repository.Label
	for i, st := range steps {
		term := mk(st.tax, st.in.Clone())
		terms = append(terms, term)
		if !maps.Equal(term.Slug, st.out) {
			t.Errorf("step %d: CreateTerm(%s, %v) slug %v, want %v", i, st.tax, st.in, term.Slug, st.out)
		}
		if got := mustGetTerm(t, ctx, s, term.ID).Slug; !maps.Equal(got, st.out) {
			t.Errorf("step %d: stored slug %v, want %v", i, got, st.out)
		}
	}
	findSlug := func(tax repository.LabelKind, lang, slug string) []int64 {
		t.Helper()
		got, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax, Slug: slug, SlugLang: lang})
		if err != nil {
			t.Fatalf("FindTerms(slug %s): %v", slug, err)
		}
		return termIDs(got)
	}
	// Keeping one's own slug keeps it unchanged.
	got := mustUpdateTerm(t, ctx, s, terms[1].ID, func(tm *repository.Label) { tm.Name["en"] = "Live!" })
	if got.Slug["en"] != "live-2" {
		t.Errorf("slug after a name change: %q, want live-2", got.Slug["en"])
	}
	got = mustUpdateTerm(t, ctx, s, terms[1].ID, func(tm *repository.Label) { tm.Slug["en"] = "live-2" })
	if got.Slug["en"] != "live-2" {
		t.Errorf("slug after setting it again: %q, want live-2", got.Slug["en"])
	}
	// Changing to a taken slug gets a suffix; the old slug is free again.
	got = mustUpdateTerm(t, ctx, s, terms[0].ID, func(tm *repository.Label) { tm.Slug["en"] = "live-3" })
	if got.Slug["en"] != "live-3-2" {
		t.Errorf("slug after moving to a taken one: %q, want live-3-2", got.Slug["en"])
	}
	checkIDs(t, "old slug", nil, findSlug(repository.LabelCategory, "en", "live"))
	checkIDs(t, "new slug", []int64{terms[0].ID}, findSlug(repository.LabelCategory, "en", "live-3-2"))
	again := mk(repository.LabelCategory, repository.Text{"en": "live"})
	if again.Slug["en"] != "live" {
		t.Errorf("freed slug: got %q, want live", again.Slug["en"])
	}
	// Deleting frees the slug.
	if err := s.DeleteLabel(ctx, terms[2].ID); err != nil {
		t.Fatalf("DeleteTerm: %v", err)
	}
	checkIDs(t, "slug of a deleted tag", []int64{}, findSlug(repository.LabelTag, "en", "live"))
	tag := mk(repository.LabelTag, repository.Text{"en": "live"})
	if tag.Slug["en"] != "live" {
		t.Errorf("slug after delete: got %q, want live", tag.Slug["en"])
	}
}

// matchTerm is the reference implementation of a TermQuery filter.
func matchTerm(term *repository.Label, q repository.LabelQuery) bool {
	switch {
	case q.Taxonomy != "" && term.Taxonomy != q.Taxonomy,
		len(q.IDs) > 0 && !slices.Contains(q.IDs, term.ID),
		q.Name != "" && !asciiEqualFold(term.Name[q.NameLang], q.Name),
		q.Slug != "" && term.Slug[q.SlugLang] != q.Slug,
		q.HasParent && term.Parent != q.Parent:
		return false
	}
	return true
}

func testFindTerms(t *testing.T, ctx context.Context, s repository.Store) {
	mk := func(tax repository.LabelKind, en, nl string, parent int64) *repository.Label {
		term := termFixture(tax, en, parent)
		term.Name["nl"] = nl
		term.Slug["nl"] = repository.Slugify(nl)
		return mustCreateTerm(t, ctx, s, term)
	}
	music := mk(repository.LabelCategory, "Music", "Muziek", 0)
	rock := mk(repository.LabelCategory, "Rock", "Rock", music.ID)
	jazz := mk(repository.LabelCategory, "Jazz", "jazz", music.ID)
	stage := mk(repository.LabelCategory, "Theatre", "Toneel", 0)
	musicTag := mk(repository.LabelTag, "music", "MUZIEK", 0)
	free := mk(repository.LabelTag, "Free", "Gratis", 0)
	punk := mk(repository.LabelCategory, "Punk", "Punk", rock.ID)
	all := []*repository.Label{music, rock, jazz, stage, musicTag, free, punk}
	ids := func(ts ...*repository.Label) []int64 { return termIDs(ts) }
	cases := []struct {
		name string
		q    repository.LabelQuery
		want []int64
	}{
		{"categories", repository.LabelQuery{Taxonomy: repository.LabelCategory}, ids(music, rock, jazz, stage, punk)},
		{"tags", repository.LabelQuery{Taxonomy: repository.LabelTag}, ids(musicTag, free)},
		{"IDs", repository.LabelQuery{Taxonomy: repository.LabelCategory, IDs: ids(punk, musicTag, music)}, ids(music, punk)},
		{"IDs tags", repository.LabelQuery{Taxonomy: repository.LabelTag, IDs: ids(punk, musicTag, music)}, ids(musicTag)},
		{"IDs missing", repository.LabelQuery{Taxonomy: repository.LabelTag, IDs: []int64{punk.ID + 100}}, []int64{}},
		{"name any case", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "MUSIC", NameLang: "en"}, ids(music)},
		{"name tag", repository.LabelQuery{Taxonomy: repository.LabelTag, Name: "Music", NameLang: "en"}, ids(musicTag)},
		{"name nl", repository.LabelQuery{Taxonomy: repository.LabelTag, Name: "muziek", NameLang: "nl"}, ids(musicTag)},
		{"name nl shared", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "rock", NameLang: "nl"}, ids(rock)},
		{"name wrong language", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Muziek", NameLang: "en"}, []int64{}},
		{"name not prefix", repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "Mus", NameLang: "en"}, []int64{}},
		{"slug", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "jazz", SlugLang: "en"}, ids(jazz)},
		{"slug nl", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "toneel", SlugLang: "nl"}, ids(stage)},
		{"slug is exact", repository.LabelQuery{Taxonomy: repository.LabelCategory, Slug: "JAZZ", SlugLang: "en"}, []int64{}},
		{"slug per taxonomy", repository.LabelQuery{Taxonomy: repository.LabelTag, Slug: "music", SlugLang: "en"}, ids(musicTag)},
		{"top level", repository.LabelQuery{Taxonomy: repository.LabelCategory, HasParent: true}, ids(music, stage)},
		{"children", repository.LabelQuery{Taxonomy: repository.LabelCategory, Parent: music.ID, HasParent: true}, ids(rock, jazz)},
		{"grandchildren", repository.LabelQuery{Taxonomy: repository.LabelCategory, Parent: rock.ID, HasParent: true}, ids(punk)},
		{"parent ignored without HasParent", repository.LabelQuery{Taxonomy: repository.LabelCategory, Parent: music.ID}, ids(music, rock, jazz, stage, punk)},
		{"tags top level", repository.LabelQuery{Taxonomy: repository.LabelTag, HasParent: true}, ids(musicTag, free)},
		{"combined", repository.LabelQuery{Taxonomy: repository.LabelCategory, IDs: ids(rock, jazz, punk), Name: "jazz", NameLang: "nl", Parent: music.ID, HasParent: true}, ids(jazz)},
	}
	for _, tc := range cases {
		var want []int64
		for _, term := range all {
			if matchTerm(term, tc.q) {
				want = append(want, term.ID)
			}
		}
		checkIDs(t, tc.name+": reference implementation", tc.want, want)
		got, err := s.FindLabels(ctx, tc.q)
		if err != nil {
			t.Errorf("%s: FindTerms(%+v): %v", tc.name, tc.q, err)
			continue
		}
		checkIDs(t, fmt.Sprintf("%s: FindTerms(%+v)", tc.name, tc.q), want, termIDs(got))
		for _, g := range got {
			for _, w := range all {
				if w.ID == g.ID {
					checkTerm(t, tc.name+": FindTerms result", w, g)
				}
			}
		}
	}
}

func testTermUpdate(t *testing.T, ctx context.Context, s repository.Store) {
	parent := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Parent", 0))
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Child", 0))
	rev := term.Revision
	got := mustUpdateTerm(t, ctx, s, term.ID, func(tm *repository.Label) {
		tm.Name.Set("en", "Renamed")
		tm.Name.Set("de", "Umbenannt")
		tm.Description.Set("en", "")
		tm.Parent = parent.ID
	})
	want := normTerm(term)
	want.Name = repository.Text{"en": "Renamed", "de": "Umbenannt"}
	want.Description = nil
	want.Parent = parent.ID
	if got.Revision <= rev {
		t.Errorf("UpdateTerm revision %d, want > %d", got.Revision, rev)
	}
	want.Revision = got.Revision
	checkTerm(t, "UpdateTerm result", want, got)
	checkTerm(t, "GetTerm after UpdateTerm", want, mustGetTerm(t, ctx, s, term.ID))
	found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Parent: parent.ID, HasParent: true})
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "children after reparenting", []int64{term.ID}, termIDs(found))
	found, err = s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "umbenannt", NameLang: "de"})
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "find by new name", []int64{term.ID}, termIDs(found))
	found, err = s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelCategory, Name: "child", NameLang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "find by old name", []int64{}, termIDs(found))
}

func testTermDelete(t *testing.T, ctx context.Context, s repository.Store) {
	music := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Music", 0))
	rock := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Rock", music.ID))
	punk := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Punk", rock.ID))
	metal := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Metal", rock.ID))
	other := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Other", 0))
	loud := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "loud", 0))
	quiet := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "quiet", 0))

	event := func(title string, cats, tags []int64) *repository.Record {
		p := eventFixture(title)
		p.Event.Categories, p.Event.Tags = cats, tags
		return mustCreatePost(t, ctx, s, p)
	}
	e1 := event("Both", []int64{music.ID, rock.ID, punk.ID}, []int64{loud.ID})
	e2 := event("Rock only", []int64{rock.ID}, []int64{quiet.ID, loud.ID})
	e3 := event("No rock", []int64{music.ID}, nil)
	venue := mustCreatePost(t, ctx, s, venueFixture("Rock venue"))
	clearAllMarks(t, ctx, s)

	if err := s.DeleteLabel(ctx, rock.ID); err != nil {
		t.Fatalf("DeleteTerm(category): %v", err)
	}
	_, err := s.GetLabel(ctx, rock.ID)
	wantNotFound(t, "GetTerm after DeleteTerm", err)
	wantNotFound(t, "second DeleteTerm", s.DeleteLabel(ctx, rock.ID))
	// Children move up to the deleted term's parent; others stay.
	for _, tc := range []struct {
		term   *repository.Label
		parent int64
	}{{punk, music.ID}, {metal, music.ID}, {music, 0}, {other, 0}} {
		if got := mustGetTerm(t, ctx, s, tc.term.ID); got.Parent != tc.parent {
			t.Errorf("term %q parent %d after deleting its parent, want %d", tc.term.Name["en"], got.Parent, tc.parent)
		}
	}
	for id, want := range map[int64][]int64{e1.ID: {music.ID, punk.ID}, e2.ID: {}, e3.ID: {music.ID}} {
		checkIDs(t, fmt.Sprintf("categories of event %d", id), want, normIDs(mustGetPost(t, ctx, s, id).Event.Categories))
	}
	checkIDs(t, "tags kept", []int64{quiet.ID, loud.ID}, mustGetPost(t, ctx, s, e2.ID).Event.Tags)
	if n, err := s.CountRecords(ctx, repository.RecordQuery{CategoryIDs: []int64{rock.ID}}); err != nil || n != 0 {
		t.Errorf("CountPosts(category deleted) = %d, %v; want 0", n, err)
	}
	found, err := s.FindRecords(ctx, repository.RecordQuery{CategoryIDs: []int64{punk.ID}})
	if err != nil {
		t.Fatal(err)
	}
	checkIDs(t, "events of a sibling category", []int64{e1.ID}, postIDs(found))
	marks := pendingMarks(t, ctx, s)
	for _, k := range []markKey{
		{repository.MarkTerm, rock.ID}, {repository.MarkTerm, punk.ID}, {repository.MarkTerm, metal.ID},
		{repository.MarkPost, e1.ID}, {repository.MarkPost, e2.ID},
	} {
		if _, ok := marks[k]; !ok {
			t.Errorf("DeleteTerm left no mark for %v (marks %v)", k, marks)
		}
	}
	for _, k := range []markKey{{repository.MarkPost, e3.ID}, {repository.MarkPost, venue.ID}, {repository.MarkTerm, other.ID}} {
		if _, ok := marks[k]; ok {
			t.Errorf("DeleteTerm marked untouched %v", k)
		}
	}

	// Tags go the same way.
	if err := s.DeleteLabel(ctx, loud.ID); err != nil {
		t.Fatalf("DeleteTerm(tag): %v", err)
	}
	checkIDs(t, "tags after delete", []int64{}, normIDs(mustGetPost(t, ctx, s, e1.ID).Event.Tags))
	checkIDs(t, "tags after delete", []int64{quiet.ID}, mustGetPost(t, ctx, s, e2.ID).Event.Tags)
	checkIDs(t, "categories kept", []int64{music.ID, punk.ID}, mustGetPost(t, ctx, s, e1.ID).Event.Categories)
	wantNotFound(t, "DeleteTerm(missing)", s.DeleteLabel(ctx, quiet.ID+1000))
}

func testTermCounts(t *testing.T, ctx context.Context, s repository.Store) {
	c1 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "C1", 0))
	c2 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "C2", c1.ID))
	c3 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "C3 unused", 0))
	c4 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "C4 drafts only", 0))
	t1 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "T1", 0))
	t2 := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "T2", 0))
	event := func(status string, cats, tags []int64) *repository.Record {
		p := eventFixture("Counted " + status)
		p.Status = status
		p.Event.Categories, p.Event.Tags = cats, tags
		return mustCreatePost(t, ctx, s, p)
	}
	event(repository.StatusPublish, []int64{c1.ID, c2.ID}, []int64{t1.ID})
	event(repository.StatusPublish, []int64{c2.ID}, []int64{t1.ID, t2.ID})
	event(repository.StatusPublish, []int64{c1.ID}, nil)
	event(repository.StatusDraft, []int64{c1.ID, c4.ID}, []int64{t2.ID})
	event(repository.StatusTrash, []int64{c2.ID, c4.ID}, []int64{t2.ID})
	event(repository.StatusPrivate, []int64{c1.ID}, nil)
	event(repository.StatusFuture, []int64{c4.ID}, []int64{t1.ID})
	moving := event(repository.StatusDraft, []int64{c3.ID}, []int64{t2.ID})
	// A term listed twice counts the event once.
	twice := event(repository.StatusDraft, []int64{c2.ID, c2.ID}, []int64{t1.ID, t1.ID})
	check := func(when string, tax repository.LabelKind, want map[int64]int) {
		t.Helper()
		got, err := s.LabelCounts(ctx, tax)
		if err != nil {
			t.Fatalf("TermCounts(%s): %v", tax, err)
		}
		if len(got) != len(want) || !maps.Equal(got, want) {
			t.Errorf("%s: TermCounts(%s) = %v, want %v", when, tax, got, want)
		}
	}
	check("start", repository.LabelCategory, map[int64]int{c1.ID: 2, c2.ID: 2})
	check("start", repository.LabelTag, map[int64]int{t1.ID: 2, t2.ID: 1})

	// Publishing, trashing and relinking change the counts.
	mustUpdatePost(t, ctx, s, moving.ID, func(p *repository.Record) { p.Status = repository.StatusPublish })
	check("after publish", repository.LabelCategory, map[int64]int{c1.ID: 2, c2.ID: 2, c3.ID: 1})
	check("after publish", repository.LabelTag, map[int64]int{t1.ID: 2, t2.ID: 2})
	mustUpdatePost(t, ctx, s, moving.ID, func(p *repository.Record) { p.Event.Categories = []int64{c2.ID} })
	check("after relink", repository.LabelCategory, map[int64]int{c1.ID: 2, c2.ID: 3})
	mustUpdatePost(t, ctx, s, moving.ID, func(p *repository.Record) { p.Status = repository.StatusTrash })
	check("after trash", repository.LabelCategory, map[int64]int{c1.ID: 2, c2.ID: 2})
	check("after trash", repository.LabelTag, map[int64]int{t1.ID: 2, t2.ID: 1})
	if err := s.DeleteRecord(ctx, moving.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLabel(ctx, c1.ID); err != nil {
		t.Fatal(err)
	}
	check("after DeleteTerm", repository.LabelCategory, map[int64]int{c2.ID: 2})
	mustUpdatePost(t, ctx, s, twice.ID, func(p *repository.Record) { p.Status = repository.StatusPublish })
	check("a term listed twice", repository.LabelCategory, map[int64]int{c2.ID: 3})
	check("a term listed twice", repository.LabelTag, map[int64]int{t1.ID: 3, t2.ID: 1})
	mustUpdatePost(t, ctx, s, twice.ID, func(p *repository.Record) { p.Status = repository.StatusDraft })
	check("a term listed twice, unpublished", repository.LabelCategory, map[int64]int{c2.ID: 2})
}
