package present

import (
	"context"
	"testing"

	"github.com/calendar/eventcal/repository"
)

// countingStore counts the count queries forTerms makes.
type countingStore struct {
	repository.Store
	single, all int
}

func (c *countingStore) CountRecords(context.Context, repository.RecordQuery) (int, error) {
	c.single++
	return 1, nil
}

func (c *countingStore) LabelCounts(_ context.Context, tax repository.LabelKind) (map[int64]int, error) {
	c.all++
	m := map[int64]int{}
	for i := int64(1); i <= 5000; i++ {
		m[i] = int(i % 7)
	}
	return m, nil
}

// TestCountsForManyTerms pins the bound on count queries per read (issue 7,
// finding 6): a few terms are counted one by one, many terms with one
// grouped count per taxonomy.
func TestCountsForManyTerms(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cats, tags       int
		wantSingle, want int
	}{
		{"few", 2, 1, 3, 0},
		{"at the bound", fewCounts, 0, fewCounts, 0},
		{"just over the bound", fewCounts + 1, 0, 0, 1},
		{"many categories", 2000, 0, 0, 1},
		{"many of both", 1000, 1000, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &countingStore{}
			terms := map[int64]*repository.Label{}
			for i := 1; i <= tc.cats+tc.tags; i++ {
				tax := repository.LabelCategory
				if i > tc.cats {
					tax = repository.LabelTag
				}
				terms[int64(i)] = &repository.Label{ID: int64(i), Taxonomy: tax}
			}
			var c LabelCounts
			got, err := c.ForLabels(context.Background(), st, terms)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(terms) {
				t.Errorf("%d counts, want %d", len(got), len(terms))
			}
			if st.single != tc.wantSingle || st.all != tc.want {
				t.Errorf("%d single counts and %d grouped, want %d and %d", st.single, st.all, tc.wantSingle, tc.want)
			}
			if tc.want > 0 && len(terms) >= 10 && got[10] != 3 {
				t.Errorf("count of term 10 = %d, want 3", got[10])
			}
		})
	}
}
