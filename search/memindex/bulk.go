package memindex

import (
	"errors"
	"slices"
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
	x.version++
	x.facets = newFacetIndex()
	x.buildOrder()
	x.bulk = false
}

// buildOrder builds the facet buckets and the date order of every live
// document, from empty ones: the documents sorted in the date order are
// added to the buckets (so each bucket is written at once, in order), and
// those outside a group become the date order. The caller holds mu.
func (x *Index) buildOrder() {
	all := make([]entry, 0, x.docs)
	for _, slots := range x.byID {
		for _, slot := range slots {
			all = append(all, x.ents[slot])
		}
	}
	slices.SortFunc(all, x.compare)
	for i := range all {
		x.facets.add(x, all[i].slot, &all[i])
	}
	// The date order holds the documents outside a group.
	x.setOrder(slices.DeleteFunc(all, func(e entry) bool { return e.flags&flagGrouped != 0 }))
}
