package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/calendar/eventcal/repository"
)

// explicitIDTests cover what an import keeping its source's IDs needs:
// posts and terms created with explicit IDs, the sequences moved past
// them, taken IDs refused, and the Origin stored with the record.
func explicitIDTests(run int) []storeTest {
	return []storeTest{
		{"PostSequenceMovesPast", func(t *testing.T, ctx context.Context, s repository.Store) {
			testExplicitPostIDsMoveSequence(t, ctx, s, run)
		}},
		{"TermSequenceMovesPast", func(t *testing.T, ctx context.Context, s repository.Store) {
			testExplicitTermIDsMoveSequence(t, ctx, s, run)
		}},
		{"TakenIDRefused", testExplicitIDTaken},
		{"TakenIDKeepsSlugs", testExplicitIDTakenKeepsSlugs},
		{"IDOutOfRangeRefused", testExplicitIDOutOfRange},
		{"OriginRoundTrip", testOriginRoundTrip},
	}
}

// DefaultExplicitRun is how many consecutive explicit IDs the sequence
// tests create by default (Options.ExplicitRun): more than an engine
// that skips taken IDs one draw at a time (MongoDB's id_claims allow 100
// draws) could step over.
const DefaultExplicitRun = 120

// testExplicitPostIDsMoveSequence creates run posts with consecutive
// explicit IDs: the next post without one gets a larger ID.
func testExplicitPostIDsMoveSequence(t *testing.T, ctx context.Context, s repository.Store, run int) {
	first := mustCreatePost(t, ctx, s, minimalEvent("auto-first"))
	last := first.ID + int64(run)
	for id := first.ID + 1; id <= last; id++ {
		p := minimalEvent(fmt.Sprintf("imported-%d", id))
		p.ID = id
		mustCreatePost(t, ctx, s, p)
		if p.ID != id {
			t.Fatalf("CreatePost with ID %d stored ID %d", id, p.ID)
		}
	}
	// An image (another post kind) draws from the same sequence.
	next := mustCreatePost(t, ctx, s, imageFixture("https://img.example/after-import.png"))
	if next.ID <= last {
		t.Fatalf("after explicit IDs up to %d the next post got ID %d; want a larger one", last, next.ID)
	}
	// A gap below the largest explicit ID stays free for explicit use.
	gap := minimalEvent("imported-gap")
	gap.ID = last + 1000
	mustCreatePost(t, ctx, s, gap)
	after := mustCreatePost(t, ctx, s, minimalEvent("auto-after-gap"))
	if after.ID <= gap.ID {
		t.Fatalf("after explicit ID %d the next post got ID %d; want a larger one", gap.ID, after.ID)
	}
}

// testExplicitTermIDsMoveSequence creates run terms with consecutive
// explicit IDs: the next term without one gets a larger ID.
func testExplicitTermIDsMoveSequence(t *testing.T, ctx context.Context, s repository.Store, run int) {
	first := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Auto first", 0))
	last := first.ID + int64(run)
	parent, child := int64(0), int64(0)
	for id := first.ID + 1; id <= last; id++ {
		tax := repository.LabelCategory
		if id%2 == 0 {
			tax = repository.LabelTag
		}
		term := termFixture(tax, fmt.Sprintf("Imported %d", id), 0)
		if tax == repository.LabelCategory {
			term.Parent = parent // parents before children, as an import writes them
			if parent != 0 {
				child = id
			}
			parent = id
		}
		term.ID = id
		mustCreateTerm(t, ctx, s, term)
		if term.ID != id {
			t.Fatalf("CreateTerm with ID %d stored ID %d", id, term.ID)
		}
	}
	next := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Auto after import", 0))
	if next.ID <= last {
		t.Fatalf("after explicit term IDs up to %d the next term got ID %d; want a larger one", last, next.ID)
	}
	if got := mustGetTerm(t, ctx, s, child); got.Parent == 0 {
		t.Errorf("imported category %d lost its parent", child)
	}
}

func testExplicitIDTaken(t *testing.T, ctx context.Context, s repository.Store) {
	p := mustCreatePost(t, ctx, s, eventFixture("Already here"))
	dup := eventFixture("Imported over it")
	dup.ID = p.ID
	if err := s.CreateRecord(ctx, dup); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreatePost with the taken ID %d: error %v, want ErrDuplicate", p.ID, err)
	}
	checkPost(t, "post after a refused explicit create", p, mustGetPost(t, ctx, s, p.ID))

	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Taken", 0))
	dupTerm := termFixture(repository.LabelTag, "Imported tag", 0)
	dupTerm.ID = term.ID
	if err := s.CreateLabel(ctx, dupTerm); !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreateTerm with the taken ID %d: error %v, want ErrDuplicate", term.ID, err)
	}
	checkTerm(t, "term after a refused explicit create", term, mustGetTerm(t, ctx, s, term.ID))

	// A deleted ID stays taken: IDs are never reused, also not explicitly.
	mustCreatePost(t, ctx, s, eventFixture("Filler"))
	gone := mustCreatePost(t, ctx, s, eventFixture("Deleted"))
	if err := s.DeleteRecord(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	again := eventFixture("Imported into a deleted ID")
	again.ID = gone.ID
	err := s.CreateRecord(ctx, again)
	if err != nil && !errors.Is(err, repository.ErrDuplicate) {
		t.Errorf("CreatePost with a deleted ID: error %v, want nil or ErrDuplicate", err)
	}
}

// testExplicitIDTakenKeepsSlugs: a create refused because its explicit ID
// is taken (two overlapping imports, or an import racing a create) leaves
// the record holding the ID as it was, slugs included: by-slug still finds
// it, a later record cannot take its slug, and a slug the refused create
// asked for stays free.
func testExplicitIDTakenKeepsSlugs(t *testing.T, ctx context.Context, s repository.Store) {
	for _, tc := range []struct {
		name    string
		id      int64
		dupSlug string // the refused create's slug
	}{
		{"same slug", 5, "kept"},
		{"other slug", 6, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := minimalEvent("kept")
			p.ID = tc.id
			mustCreatePost(t, ctx, s, p)
			dup := minimalEvent(tc.dupSlug)
			dup.ID = tc.id
			if err := s.CreateRecord(ctx, dup); !errors.Is(err, repository.ErrDuplicate) {
				t.Fatalf("CreatePost with the taken ID %d: error %v, want ErrDuplicate", tc.id, err)
			}
			got, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", "kept")
			if err != nil || got.ID != tc.id {
				t.Fatalf("GetPostBySlug(kept) after the refused create = %v, %v; want post %d", got, err, tc.id)
			}
			checkPost(t, "the post after the refused create", p, mustGetPost(t, ctx, s, tc.id))
			next := mustCreatePost(t, ctx, s, minimalEvent("kept"))
			if next.Slug["en"] == "kept" {
				t.Errorf("a new post took the slug %q of post %d", next.Slug["en"], tc.id)
			}
			if got, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", "kept"); err != nil || got.ID != tc.id {
				t.Errorf("GetPostBySlug(kept) after a new post = %v, %v; want post %d", got, err, tc.id)
			}
			if tc.dupSlug != "kept" {
				if _, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", tc.dupSlug); !errors.Is(err, repository.ErrNotFound) {
					t.Errorf("GetPostBySlug(%s) of the refused create: %v, want ErrNotFound", tc.dupSlug, err)
				}
				free := mustCreatePost(t, ctx, s, minimalEvent(tc.dupSlug))
				if free.Slug["en"] != tc.dupSlug {
					t.Errorf("a new post asking for %q, which only the refused create wanted, got %q", tc.dupSlug, free.Slug["en"])
				}
				if err := s.DeleteRecord(ctx, free.ID); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.DeleteRecord(ctx, next.ID); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteRecord(ctx, tc.id); err != nil {
				t.Fatal(err)
			}
		})
	}

	term := termFixture(repository.LabelTag, "Kept tag", 0)
	term.ID = 7
	mustCreateTerm(t, ctx, s, term)
	dupTerm := termFixture(repository.LabelTag, "Kept tag", 0)
	dupTerm.ID = 7
	if err := s.CreateLabel(ctx, dupTerm); !errors.Is(err, repository.ErrDuplicate) {
		t.Fatalf("CreateTerm with the taken ID 7: error %v, want ErrDuplicate", err)
	}
	bySlug := func() []*repository.Label {
		t.Helper()
		found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: repository.LabelTag, Slug: "kept-tag", SlugLang: "en"})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if found := bySlug(); len(found) != 1 || found[0].ID != 7 {
		t.Errorf("terms with slug kept-tag after the refused create = %v; want term 7", found)
	}
	other := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Kept tag", 0))
	if other.Slug["en"] == "kept-tag" {
		t.Errorf("a new term took the slug %q of term 7", other.Slug["en"])
	}
	if found := bySlug(); len(found) != 1 || found[0].ID != 7 {
		t.Errorf("terms with slug kept-tag after a new term = %v; want term 7 alone", found)
	}
}

// testExplicitIDOutOfRange: an explicit ID above MaxExplicitID (2^63 − 1,
// the largest an int64 holds, among them) is refused with ErrIDRange and
// leaves nothing behind, and creates after it still get IDs; the largest
// explicit ID allowed leaves the sequence room for more creates.
func testExplicitIDOutOfRange(t *testing.T, ctx context.Context, s repository.Store) {
	for _, id := range []int64{repository.MaxExplicitID + 1, repository.MaxID, 1<<63 - 1, -5} {
		p := eventFixture(fmt.Sprintf("Out of range %d", id))
		p.ID = id
		if err := s.CreateRecord(ctx, p); !errors.Is(err, repository.ErrIDRange) {
			t.Errorf("CreatePost with ID %d: error %v, want ErrIDRange", id, err)
		}
		if id > 0 {
			if _, err := s.GetRecord(ctx, id); !errors.Is(err, repository.ErrNotFound) {
				t.Errorf("GetPost(%d) after the refused create: %v, want ErrNotFound", id, err)
			}
		}
		term := termFixture(repository.LabelTag, fmt.Sprintf("Out of range %d", id), 0)
		term.ID = id
		if err := s.CreateLabel(ctx, term); !errors.Is(err, repository.ErrIDRange) {
			t.Errorf("CreateTerm with ID %d: error %v, want ErrIDRange", id, err)
		}
		if _, err := s.GetRecordBySlug(ctx, repository.KindEvent, "en", repository.Slugify(p.Title["en"])); !errors.Is(err, repository.ErrNotFound) {
			t.Errorf("the refused create of ID %d left its slug: %v", id, err)
		}
	}
	after := mustCreatePost(t, ctx, s, eventFixture("Created after the refusals"))
	if after.ID <= 0 || after.ID > repository.MaxID {
		t.Errorf("a create after the refusals got ID %d", after.ID)
	}
	top := eventFixture("Largest explicit ID")
	top.ID = repository.MaxExplicitID
	mustCreatePost(t, ctx, s, top)
	next := mustCreatePost(t, ctx, s, eventFixture("Created after the largest explicit ID"))
	if next.ID <= repository.MaxExplicitID || next.ID > repository.MaxID {
		t.Errorf("a create after explicit ID %d got ID %d; want one above it, at most %d", top.ID, next.ID, repository.MaxID)
	}
	topTerm := termFixture(repository.LabelCategory, "Largest explicit term ID", 0)
	topTerm.ID = repository.MaxExplicitID
	mustCreateTerm(t, ctx, s, topTerm)
	nextTerm := mustCreateTerm(t, ctx, s, termFixture(repository.LabelTag, "Term after the largest", 0))
	if nextTerm.ID <= repository.MaxExplicitID || nextTerm.ID > repository.MaxID {
		t.Errorf("a term created after explicit ID %d got ID %d", topTerm.ID, nextTerm.ID)
	}
}

func testOriginRoundTrip(t *testing.T, ctx context.Context, s repository.Store) {
	site := "https://example.org/wp-json/tribe/events/v1"
	mod := time.Date(2026, 11, 25, 16, 54, 35, 0, time.UTC)
	p := eventFixture("Imported event")
	p.ID = 4242
	p.Origin = &repository.Origin{Site: site, ID: 4242, Modified: mod, Hash: "0123abcd"}
	mustCreatePost(t, ctx, s, p)
	got := mustGetPost(t, ctx, s, 4242)
	checkPost(t, "GetPost(imported)", p, got)
	if !got.Origin.SameSource(&repository.Origin{Site: site, ID: 4242}) {
		t.Fatalf("origin after GetPost = %+v", got.Origin)
	}
	upd := mustUpdatePost(t, ctx, s, 4242, func(p *repository.Record) {
		p.Title.Set("en", "Edited locally")
	})
	if upd.Origin == nil || upd.Origin.Hash != "0123abcd" || !normTime(upd.Origin.Modified).Equal(mod) {
		t.Errorf("origin after an update that did not touch it = %+v, want kept", upd.Origin)
	}
	found, err := s.FindRecords(ctx, repository.RecordQuery{IDs: []int64{4242}})
	if err != nil || len(found) != 1 || found[0].Origin == nil || found[0].Origin.ID != 4242 {
		t.Errorf("FindPosts(imported) = %v, %v; want it with its origin", found, err)
	}

	term := termFixture(repository.LabelTag, "2027", 0)
	term.ID = 46
	term.Origin = &repository.Origin{Site: site, ID: 46, Hash: "feed"}
	mustCreateTerm(t, ctx, s, term)
	gotTerm := mustGetTerm(t, ctx, s, 46)
	checkTerm(t, "GetTerm(imported)", term, gotTerm)
	if gotTerm.Origin == nil || gotTerm.Origin.Hash != "feed" || !gotTerm.Origin.Modified.IsZero() {
		t.Errorf("term origin = %+v", gotTerm.Origin)
	}
}
