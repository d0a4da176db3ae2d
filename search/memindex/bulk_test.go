package memindex

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/searchtest"
)

// TestBulkAgrees: an index built in bulk (NewBulk, its documents written
// as a full reindex writes them, some of them rewritten, moved or removed
// before Finish as the worker's dual writes do) answers generated queries
// as an index built event by event with the same writes does, and as the
// reference; it refuses queries before Finish, and after it keeps
// agreeing through more writes.
func TestBulkAgrees(t *testing.T) {
	t.Parallel() // its knobs are its indexes' own
	const events, queries = 3000, 250
	all, now := agreeDocs(events)
	// Finish's sort in two halves, merged (sortEntries), and its facet
	// buckets built in parts (addSorted), at this size.
	tune := func(k *knobs) { k.parallelSortMin, k.parallelFacetMin = 64, 64 }
	for _, c := range []struct {
		name  string
		write func(x *Index, docs []search.EventDocument)
	}{
		{"batches", func(x *Index, docs []search.EventDocument) {
			for _, b := range eventBatches(docs, 400) {
				x.Apply(b)
			}
		}},
		{"one write", func(x *Index, docs []search.EventDocument) { x.Apply(docs) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			byEvent, bulk := newLiveSeries(all), newLiveSeries(all)
			tune(byEvent.x.knobs)
			for _, id := range byEvent.order {
				byEvent.x.Apply(byEvent.live[id])
			}
			bulk.x = NewBulk()
			tune(bulk.x.knobs)
			c.write(bulk.x, all)
			// The same writes to both (the same draws).
			agreeWrites(rand.New(rand.NewPCG(9, 10)), byEvent)
			agreeWrites(rand.New(rand.NewPCG(9, 10)), bulk)
			if _, err := bulk.x.Search(t.Context(), search.EventQuery{Limit: 10}); !errors.Is(err, errBulk) {
				t.Fatalf("a query before Finish: err %v, want %v", err, errBulk)
			}
			bulk.x.Finish()
			bulk.x.Finish() // a second time does nothing
			r := rand.New(rand.NewPCG(11, 12))
			agreeBoth(t, "finished", byEvent.x, bulk.x, byEvent.all(), r, now, queries)
			agreeWrites(rand.New(rand.NewPCG(13, 14)), byEvent)
			agreeWrites(rand.New(rand.NewPCG(13, 14)), bulk)
			agreeBoth(t, "written after", byEvent.x, bulk.x, byEvent.all(), r, now, queries/5)
		})
	}
}

// agreeBoth runs n queries that r draws on want (an index built event by
// event) and got (built in bulk), and fails t unless got answers each as
// want does (total, page, occurrences, facets) and as the reference over
// docs.
func agreeBoth(t *testing.T, round string, want, got *Index, docs []search.EventDocument, r *rand.Rand, now int64, n int) {
	t.Helper()
	if got.Count() != want.Count() || got.Count() != len(docs) {
		t.Fatalf("%s: Count %d, want %d (%d documents)", round, got.Count(), want.Count(), len(docs))
	}
	if len(got.groups) != len(want.groups) || got.nGrouped != want.nGrouped {
		t.Fatalf("%s: %d groups of %d members, want %d of %d", round, len(got.groups), got.nGrouped, len(want.groups), want.nGrouped)
	}
	ref := searchtest.NewReference(docs)
	for i := range n {
		q, kind := agreeQuery(r, now)
		name := fmt.Sprintf("%s: query %d (%s)", round, i, kind)
		checkAgainstReference(t, got, ref, q, name)
		a, errA := want.Search(t.Context(), q)
		b, errB := got.Search(t.Context(), q)
		if errA != nil || errB != nil {
			t.Fatalf("%s: errors %v, %v", name, errA, errB)
		}
		if a.Total != b.Total || !slices.Equal(a.IDs, b.IDs) || !slices.Equal(occurrencesOf(a), occurrencesOf(b)) ||
			fmt.Sprint(a.Facets) != fmt.Sprint(b.Facets) {
			t.Fatalf("%s %+v:\nbulk     %d %v %q %v\nby event %d %v %q %v", name, q,
				b.Total, b.IDs, occurrencesOf(b), b.Facets, a.Total, a.IDs, occurrencesOf(a), a.Facets)
		}
	}
}

// TestMergeSplit: sortEntries' merge in two halves (mergeSplit, then
// mergeInto on each) gives, for every split point, the entries the merge
// of the two sorted halves one entry after another gives, ties (equal
// starts) included, whatever the halves' sizes.
func TestMergeSplit(t *testing.T) {
	byStart := func(a, b entry) int { return int(a.start - b.start) }
	rng := rand.New(rand.NewPCG(4, 6))
	for _, c := range []struct {
		name   string
		na, nb int
		span   int64 // starts drawn below span: small for many ties
	}{
		{"both empty", 0, 0, 10},
		{"a empty", 0, 7, 10},
		{"b empty", 9, 0, 10},
		{"even", 50, 50, 1000},
		{"ties", 40, 33, 4},
		{"uneven", 3, 80, 100},
		{"a longer", 90, 5, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			side := func(n int, tag uint32) []entry {
				s := make([]entry, n)
				for i := range s {
					s[i] = entry{start: rng.Int64N(c.span), slot: tag + uint32(i)}
				}
				slices.SortStableFunc(s, byStart)
				return s
			}
			a, b := side(c.na, 0), side(c.nb, 1000)
			want := make([]entry, c.na+c.nb)
			mergeInto(want, a, b, byStart)
			for k := 0; k <= c.na+c.nb; k++ {
				i := mergeSplit(a, b, k, byStart)
				got := make([]entry, c.na+c.nb)
				mergeInto(got[:k], a[:i], b[:k-i], byStart)
				mergeInto(got[k:], a[i:], b[k-i:], byStart)
				if !slices.Equal(got, want) {
					t.Fatalf("split at %d (%d of a): %v, want %v", k, i, got, want)
				}
			}
		})
	}
}
