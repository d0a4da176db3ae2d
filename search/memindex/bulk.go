package memindex

import (
	"errors"
	"runtime"
	"slices"
	"sync"
)

// This file is the bulk build: an index that nothing queries until it is
// full (a full reindex's new generation: see search/embedded's
// BeginRebuild) defers its date order and its facet buckets, which it
// builds once from every document at the end (Finish), as a load does,
// rather than a document at a time while it is written.
//
// Why: a reindex writes its documents in batches of about 2,000 (those of
// a page of the store), each placed in the date order (a binary search
// and an insert in a block) and in the facet buckets of its week (the
// bucket's dates, kinds and per list value its postings and cells). A
// series' occurrences fall in a different week each, so every document
// touched another bucket's values and cells at random: measured with
// BenchmarkBulkLoad (batches), facetIndex.add took 39 % of the engine's
// CPU, mostly cache misses in fvalues.add. Built at the end in the date
// order, as load builds them, each bucket is filled at once and in order.

// errBulk is the error of a query on a bulk index before Finish.
var errBulk = errors.New("memindex: the index is being built in bulk (Finish it first)")

// NewBulk returns an empty index that defers its date order and facet
// buckets until Finish: its writes (Apply, Remove) cost less, but it
// answers no query (Search fails) until Finish. Its keys (Keys) and count
// (Count) are kept as New's are.
func NewBulk() *Index {
	x := New()
	x.bulk = true
	return x
}

// bulkIndex holds the steps of a bulk build (see NewBulk) on the Index it
// embeds.
type bulkIndex struct{ *Index }

// Finish ends the bulk build of an index made by NewBulk: it builds the
// date order and the facet buckets from every document in one sort, and
// the index then answers queries and keeps them up to date on every write
// as any other does. On any other index, or a second time, it does
// nothing.
func (x *bulkIndex) Finish() {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.bulk {
		return
	}
	x.matches.clear() // empty (no query before Finish), kept so for safety
	x.facets = newFacetIndex(x.knobs)
	x.buildOrder()
	x.bulk = false
}

// buildOrder builds the facet buckets and the date order of every live
// document, from empty ones: the documents sorted in the date order are
// added to the buckets (so each bucket is written at once, in order), and
// those outside a group become the date order. The caller holds mu.
func (x *bulkIndex) buildOrder() {
	all := make([]entry, 0, x.docs)
	for slot := range x.byID.slots() {
		all = append(all, x.ents[slot])
	}
	all = x.sortEntries(all)
	x.facets.addSorted(x.Index, all)
	// The date order holds the documents outside a group.
	x.setOrder(slices.DeleteFunc(all, func(e entry) bool { return e.flags&flagGrouped != 0 }))
}

// sortEntries returns all sorted in the date order (x.compare, a total
// order of the documents). Many entries, with two cores or more, are
// sorted as two halves at once, then merged into a new slice, also on two
// goroutines (each writes one half of it): the sort of
// a load or a Finish is a tenth of its CPU (3.7 of 37 CPU-s of a start-up
// at 2.7 million documents) and ran on one core.
func (x *bulkIndex) sortEntries(all []entry) []entry {
	if len(all) < x.parallelSortMin || runtime.GOMAXPROCS(0) < 2 {
		slices.SortFunc(all, x.compare)
		return all
	}
	a, b := all[:len(all)/2], all[len(all)/2:]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(a, x.compare)
	}()
	slices.SortFunc(b, x.compare)
	wg.Wait()
	out := make([]entry, len(all))
	// The merge, in two halves at once too: the first half of out is
	// merged from a[:i] and b[:k-i] (mergeSplit), the rest from the rest.
	k := len(all) / 2
	i := mergeSplit(a, b, k, x.compare)
	wg.Add(1)
	go func() {
		defer wg.Done()
		mergeInto(out[:k], a[:i], b[:k-i], x.compare)
	}()
	mergeInto(out[k:], a[i:], b[k-i:], x.compare)
	wg.Wait()
	return out
}

// mergeSplit returns how many of the first k entries of the merge of a
// and b (each sorted by cmp, a total order) come from a: the merge's
// first k are a[:i] and b[:k-i]. k is at most len(a)+len(b).
func mergeSplit(a, b []entry, k int, cmp func(entry, entry) int) int {
	lo, hi := max(0, k-len(b)), min(k, len(a))
	for lo < hi {
		i := int(uint(lo+hi) >> 1)
		// Take more of a when a[i] comes before the last of b taken.
		if cmp(a[i], b[k-i-1]) <= 0 {
			lo = i + 1
		} else {
			hi = i
		}
	}
	return lo
}

// mergeInto merges a and b (each sorted by cmp) into out, which holds
// len(a)+len(b) entries; on equal entries a's first.
func mergeInto(out, a, b []entry, cmp func(entry, entry) int) {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		if cmp(a[0], b[0]) <= 0 {
			out[n], a = a[0], a[1:]
		} else {
			out[n], b = b[0], b[1:]
		}
		n++
	}
	n += copy(out[n:], a)
	copy(out[n:], b)
}
