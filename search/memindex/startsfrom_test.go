package memindex

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestStartsFromAsBinarySearch checks startsFrom against a binary search
// over groups of every shape: evenly spaced, clustered, with ties, with
// starts at the ends of int64, and bounds before, between, on and after
// the members.
func TestStartsFromAsBinarySearch(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []func(n int) []member{
		func(n int) []member { // weekly
			occ := make([]member, n)
			for i := range occ {
				occ[i].start = 1_800_000_000 + int64(i)*604800
			}
			return occ
		},
		func(n int) []member { // clustered, with ties
			occ := make([]member, n)
			at := int64(0)
			for i := range occ {
				if r.IntN(3) > 0 {
					at += int64(r.IntN(5))
				} else {
					at += int64(r.IntN(1 << 30))
				}
				occ[i].start = at
			}
			return occ
		},
		func(n int) []member { // the ends of int64
			occ := make([]member, n)
			for i := range occ {
				switch {
				case i < n/3:
					occ[i].start = math.MinInt64 + int64(i)
				case i < 2*n/3:
					occ[i].start = int64(i)
				default:
					occ[i].start = math.MaxInt64 - int64(n-i)
				}
			}
			return occ
		},
	}
	for _, shape := range shapes {
		for _, n := range []int{1, 2, 3, 7, 105, 1000} {
			occ := shape(n)
			var ts []int64
			for _, m := range occ {
				ts = append(ts, m.start-1, m.start, m.start+1)
			}
			ts = append(ts, math.MinInt64, math.MaxInt64, 0)
			for range 200 {
				ts = append(ts, int64(r.Uint64()))
			}
			for _, at := range ts {
				want := sort.Search(len(occ), func(i int) bool { return occ[i].start >= at })
				if got := startsFrom(occ, at); got != want {
					t.Fatalf("%d members %v...: startsFrom(%d) = %d, want %d", n, occ[:min(n, 5)], at, got, want)
				}
			}
		}
	}
}
