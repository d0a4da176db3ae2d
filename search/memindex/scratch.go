package memindex

import "sync"

// This file pools the large scratch slices of a query: a bit set over
// every slot (plan.set), a slot per series number (collapsed), a word per
// group hit (pageStart). At 100,000 events and 25,000 weekly series (2.7
// million documents) a bit set over the slots is 340 KB and a series
// table 100 KB; made anew for every query, they were a good part of what
// a query allocates, and so of how often the garbage collector runs with
// a heap of gigabytes to mark.

// minPooled is the smallest capacity a slicePool keeps: smaller slices
// cost the collector less than the pool costs.
const minPooled = 256

// slicePool holds slices of T given back by the queries done (put), for
// the next ones to reuse (get).
type slicePool[T any] struct{ p sync.Pool }

// get returns a slice of n zero values, reusing a pooled one when one of
// that capacity is there.
func (sp *slicePool[T]) get(n int) []T {
	if v, ok := sp.p.Get().(*[]T); ok && cap(*v) >= n {
		s := (*v)[:n]
		clear(s)
		return s
	}
	return make([]T, n)
}

// put gives s back; the caller no longer reads nor writes it.
func (sp *slicePool[T]) put(s []T) {
	if cap(s) >= minPooled {
		sp.p.Put(&s)
	}
}

// The pools of the scratch slices.
var (
	bitsPool  slicePool[uint64]
	int32Pool slicePool[int32]
	int64Pool slicePool[int64]
	// memberPool holds the matches of a facet bucket that a collapsed
	// list sorts (searcher.walkFrom).
	memberPool slicePool[member]
)

// scratch is what a query (its plan and the plans copied from it)
// took from the pools, to give back when the query is done (release).
type scratch struct {
	bits [][]uint64
}

// bitSet returns a zeroed bit set of n words, given back by release (a
// new one, not given back, on a nil scratch).
func (s *scratch) bitSet(n int) []uint64 {
	if s == nil {
		return make([]uint64, n)
	}
	b := bitsPool.get(n)
	s.bits = append(s.bits, b)
	return b
}

// release gives back what the query took; nothing of it may be read
// after.
func (s *scratch) release() {
	if s == nil {
		return
	}
	for _, b := range s.bits {
		bitsPool.put(b)
	}
	s.bits = nil
}
