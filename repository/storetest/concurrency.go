package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// The defaults of Options.
const (
	DefaultWorkers   = 8  // goroutines writing at once
	DefaultPerWorker = 50 // creates per goroutine in the PostIDs test
)

// concurrency holds the scale of the concurrency tests (Options).
type concurrency struct {
	workers   int // goroutines writing at once
	perWorker int // creates per goroutine in the PostIDs test
}

// tests returns the concurrency tests at scale c.
func (c concurrency) tests() []storeTest {
	return []storeTest{
		{"PostIDs", c.testConcurrentPostIDs},
		{"PostSlugs", c.testConcurrentPostSlugs},
		{"TermIDsAndSlugs", c.testConcurrentTerms},
		{"UserIDs", c.testConcurrentUsers},
		{"PartialUpdates", c.testConcurrentUpdates},
		{"TermUpdates", c.testConcurrentTermUpdates},
	}
}

// parallel runs fn(worker, i) for i < n in each of c.workers goroutines
// and waits for all of them.
func (c concurrency) parallel(n int, fn func(worker, i int)) {
	var wg sync.WaitGroup
	for w := range c.workers {
		wg.Go(func() {
			for i := range n {
				fn(w, i)
			}
		})
	}
	wg.Wait()
}

// collector gathers values from several goroutines.
type collector[T any] struct {
	mu   sync.Mutex
	vals []T
}

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	c.vals = append(c.vals, v)
	c.mu.Unlock()
}

func (c concurrency) testConcurrentPostIDs(t *testing.T, ctx context.Context, s repository.Store) {
	var ids collector[int64]
	c.parallel(c.perWorker, func(w, i int) {
		var p *repository.Record
		switch (w + i) % 4 {
		case 0:
			p = minimalEvent(fmt.Sprintf("e-%d-%d", w, i))
		case 1:
			p = venueFixture(fmt.Sprintf("v %d %d", w, i))
		case 2:
			p = organizerFixture(fmt.Sprintf("o %d %d", w, i))
		default:
			p = imageFixture(fmt.Sprintf("https://img.example/%d/%d.jpg", w, i))
		}
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Errorf("CreatePost: %v", err)
			return
		}
		ids.add(p.ID)
	})
	if len(ids.vals) != c.workers*c.perWorker {
		t.Fatalf("%d posts created, want %d", len(ids.vals), c.workers*c.perWorker)
	}
	checkDistinct(t, "concurrently assigned post IDs", ids.vals, 0)
	n, err := s.CountRecords(ctx, repository.RecordQuery{})
	if err != nil || n != c.workers*c.perWorker {
		t.Errorf("CountPosts = %d, %v; want %d", n, err, c.workers*c.perWorker)
	}
	got, err := s.GetRecords(ctx, ids.vals)
	if err != nil || len(got) != len(ids.vals) {
		t.Errorf("GetPosts: %d posts, %v; want %d", len(got), err, len(ids.vals))
	}
}

// slugRounds is how many records (or terms) each writer of the slug
// races creates, all asking for one slug. Every create probes the
// candidates taken before it (same, same-2, ...), so a race costs the
// square of the records in it: 5 rounds of the 4 writers an embedded
// FerretDB runs (mongotest.StoreOptions) are 16 events, 4 venues and 10
// terms per taxonomy racing at once, past the two-digit candidates
// (same-10), and 5 rounds of DefaultWorkers twice as many.
const slugRounds = 5

func (c concurrency) testConcurrentPostSlugs(t *testing.T, ctx context.Context, s repository.Store) {
	const n = slugRounds
	type created struct {
		id    int64
		slugs repository.Text
	}
	var res collector[created]
	c.parallel(n, func(w, i int) {
		kind := repository.KindEvent
		var p *repository.Record
		if i%5 == 4 { // a few venues compete among themselves only
			kind = repository.KindVenue
			p = venueFixture("Same")
		} else {
			p = minimalEvent("same")
		}
		p.Slug = repository.Text{"en": "same", "nl": "zelfde"}
		if err := s.CreateRecord(ctx, p); err != nil {
			t.Errorf("CreatePost(%s): %v", kind, err)
			return
		}
		res.add(created{p.ID, p.Slug})
	})
	if len(res.vals) != c.workers*n {
		t.Fatalf("%d posts created, want %d", len(res.vals), c.workers*n)
	}
	for _, kind := range []repository.Kind{repository.KindEvent, repository.KindVenue} {
		posts, err := s.FindRecords(ctx, repository.RecordQuery{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range []string{"en", "nl"} {
			base := map[string]string{"en": "same", "nl": "zelfde"}[lang]
			var slugs []string
			for _, p := range posts {
				slug := p.Slug[lang]
				slugs = append(slugs, slug)
				if slug != base && !strings.HasPrefix(slug, base+"-") {
					t.Errorf("%s %d: slug %q is not a candidate of %q", kind, p.ID, slug, base)
				}
				checkSlugOwner(t, ctx, s, kind, lang, slug, p.ID)
			}
			checkDistinct(t, fmt.Sprintf("%s slugs in %s", kind, lang), slugs, "")
			// With nothing deleted, the candidates are used without gaps.
			var want []string
			for i := range len(posts) {
				want = append(want, repository.SlugCandidate(base, i+1))
			}
			slices.Sort(slugs)
			slices.Sort(want)
			if !slices.Equal(slugs, want) {
				t.Errorf("%s slugs in %s: %v, want %v", kind, lang, slugs, want)
			}
		}
	}
	byID := map[int64]repository.Text{}
	for _, c := range res.vals {
		byID[c.id] = c.slugs
	}
	for id, slugs := range byID {
		if got := mustGetPost(t, ctx, s, id).Slug; !maps.Equal(got, slugs) {
			t.Errorf("post %d: CreatePost reported slugs %v, stored %v", id, slugs, got)
		}
	}
}

func (c concurrency) testConcurrentTerms(t *testing.T, ctx context.Context, s repository.Store) {
	const n = slugRounds
	var terms collector[*repository.Label]
	var posts collector[int64]
	c.parallel(n, func(w, i int) {
		tax := repository.LabelCategory
		if w%2 == 1 {
			tax = repository.LabelTag
		}
		term := &repository.Label{Taxonomy: tax, Name: repository.Text{"en": "Same"}, Slug: repository.Text{"en": "same"}}
		if err := s.CreateLabel(ctx, term); err != nil {
			t.Errorf("CreateTerm: %v", err)
			return
		}
		terms.add(term)
		if i%2 == 0 { // posts interleave with terms: separate sequences
			p := minimalEvent("interleaved")
			if err := s.CreateRecord(ctx, p); err != nil {
				t.Errorf("CreatePost: %v", err)
				return
			}
			posts.add(p.ID)
		}
	})
	if len(terms.vals) != c.workers*n {
		t.Fatalf("%d terms created, want %d", len(terms.vals), c.workers*n)
	}
	checkDistinct(t, "concurrently assigned term IDs", termIDs(terms.vals), 0)
	checkDistinct(t, "post IDs assigned among terms", posts.vals, 0)
	for _, tax := range []repository.LabelKind{repository.LabelCategory, repository.LabelTag} {
		found, err := s.FindLabels(ctx, repository.LabelQuery{Taxonomy: tax})
		if err != nil {
			t.Fatal(err)
		}
		var slugs, want []string
		for i, term := range found {
			slugs = append(slugs, term.Slug["en"])
			want = append(want, repository.SlugCandidate("same", i+1))
		}
		slices.Sort(slugs)
		slices.Sort(want)
		if len(found) != c.workers*n/2 || !slices.Equal(slugs, want) {
			t.Errorf("%s slugs: %v, want %v", tax, slugs, want)
		}
	}
}

func (c concurrency) testConcurrentUsers(t *testing.T, ctx context.Context, s repository.Store) {
	const n = 5
	var ids collector[int64]
	c.parallel(n, func(w, i int) {
		u := &repository.User{Login: fmt.Sprintf("user-%d-%d", w, i), Role: repository.RoleAuthor, Created: baseTime}
		if err := s.CreateUser(ctx, u); err != nil {
			t.Errorf("CreateUser: %v", err)
			return
		}
		ids.add(u.ID)
	})
	checkDistinct(t, "concurrently assigned user IDs", ids.vals, 0)
	// Everybody races for the same login: exactly one wins.
	var won, dup collector[int]
	c.parallel(1, func(w, _ int) {
		err := s.CreateUser(ctx, &repository.User{Login: "contested", Role: repository.RoleAdmin, Created: baseTime})
		switch {
		case err == nil:
			won.add(w)
		case errorsIsDuplicate(err):
			dup.add(w)
		default:
			t.Errorf("CreateUser(contested): %v", err)
		}
	})
	if len(won.vals) != 1 || len(dup.vals) != c.workers-1 {
		t.Errorf("contested login: %d created, %d ErrDuplicate; want 1 and %d", len(won.vals), len(dup.vals), c.workers-1)
	}
}

func (c concurrency) testConcurrentUpdates(t *testing.T, ctx context.Context, s repository.Store) {
	const n = 5
	ev := minimalEvent("contended")
	ev.Content = repository.Text{"en": "start"}
	mustCreatePost(t, ctx, s, ev)
	start := ev.Revision
	var revs collector[int64]
	c.parallel(n, func(w, i int) {
		lang := fmt.Sprintf("l%d", w)
		p, err := s.UpdateRecord(ctx, ev.ID, func(p *repository.Record) error {
			p.Content.Set(lang, fmt.Sprintf("v%d", i))
			p.Event.Cost = append(p.Event.Cost, fmt.Sprintf("w%d-%d", w, i))
			if i == 0 {
				p.Event.Tags = append(p.Event.Tags, int64(100+w))
			}
			if i == n-1 {
				p.Event.Organizers = append(p.Event.Organizers, int64(200+w))
			}
			return nil
		})
		if err != nil {
			t.Errorf("UpdatePost: %v", err)
			return
		}
		revs.add(p.Revision)
	})
	got := mustGetPost(t, ctx, s, ev.ID)
	wantContent := repository.Text{"en": "start"}
	var wantCost []string
	var wantTags, wantOrgs []int64
	for w := range c.workers {
		wantContent[fmt.Sprintf("l%d", w)] = fmt.Sprintf("v%d", n-1)
		for i := range n {
			wantCost = append(wantCost, fmt.Sprintf("w%d-%d", w, i))
		}
		wantTags = append(wantTags, int64(100+w))
		wantOrgs = append(wantOrgs, int64(200+w))
	}
	if !maps.Equal(got.Content, wantContent) {
		t.Errorf("content after concurrent updates: %v, want %v", got.Content, wantContent)
	}
	gotCost := slices.Sorted(slices.Values(got.Event.Cost))
	slices.Sort(wantCost)
	if !slices.Equal(gotCost, wantCost) {
		t.Errorf("lost updates: cost has %d of %d entries: %v", len(gotCost), len(wantCost), gotCost)
	}
	checkIDs(t, "tags after concurrent updates", wantTags, sortedIDs(got.Event.Tags))
	checkIDs(t, "organizers after concurrent updates", wantOrgs, sortedIDs(got.Event.Organizers))
	checkDistinct(t, "revisions returned by concurrent updates", revs.vals, 0)
	if got.Revision < start+int64(c.workers*n) {
		t.Errorf("revision %d after %d updates from %d", got.Revision, c.workers*n, start)
	}
	for _, r := range revs.vals {
		if r <= start || r > got.Revision {
			t.Errorf("update returned revision %d, outside (%d, %d]", r, start, got.Revision)
		}
	}
	// The link index saw every update.
	for w := range c.workers {
		found, err := s.FindRecords(ctx, repository.RecordQuery{TagIDs: []int64{int64(100 + w)}, OrganizerIDs: []int64{int64(200 + w)}})
		if err != nil || len(found) != 1 {
			t.Errorf("FindPosts(tag %d, organizer %d) = %d posts, %v; want 1", 100+w, 200+w, len(found), err)
		}
	}
}

func (c concurrency) testConcurrentTermUpdates(t *testing.T, ctx context.Context, s repository.Store) {
	const n = 5
	term := mustCreateTerm(t, ctx, s, termFixture(repository.LabelCategory, "Contended", 0))
	c.parallel(n, func(w, i int) {
		_, err := s.UpdateLabel(ctx, term.ID, func(tm *repository.Label) error {
			tm.Description.Set(fmt.Sprintf("l%d-%d", w, i), "x")
			return nil
		})
		if err != nil {
			t.Errorf("UpdateTerm: %v", err)
		}
	})
	got := mustGetTerm(t, ctx, s, term.ID)
	if len(got.Description) != 1+c.workers*n {
		t.Errorf("lost term updates: %d descriptions, want %d", len(got.Description), 1+c.workers*n)
	}
	if got.Revision < term.Revision+int64(c.workers*n) {
		t.Errorf("term revision %d after %d updates from %d", got.Revision, c.workers*n, term.Revision)
	}
}
