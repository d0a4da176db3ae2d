package memindex

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFirstK checks that firstK puts the k first elements in order at
// the front and keeps every element (the rest after them), both by the
// quickselect and by firstFew (a few of many), with duplicates and k
// past the length.
func TestFirstK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name      string
		n, k, max int
	}{
		{"few of many", 1000, 8, 1 << 20},
		{"few of many, duplicates", 1000, 8, 10},
		{"one of many", 500, 1, 100},
		{"the most firstFew takes", 2000, firstFewMax, 1 << 20},
		{"past firstFew", 2000, firstFewMax + 1, 1 << 20},
		{"half", 100, 50, 1000},
		{"more than there are", 10, 20, 5},
		{"few of few", 9, 8, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 20 {
				s := make([]int, c.n)
				for i := range s {
					s[i] = r.IntN(c.max)
				}
				want := slices.Sorted(slices.Values(s))
				got := slices.Clone(s)
				firstK(got, c.k, cmp.Compare[int])
				k := min(c.k, c.n)
				if !slices.Equal(got[:k], want[:k]) {
					t.Fatalf("first %d: %v, want %v", k, got[:k], want[:k])
				}
				if slices.Sort(got); !slices.Equal(got, want) {
					t.Fatal("the elements changed")
				}
			}
		})
	}
}
