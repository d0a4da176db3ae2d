package searchtest

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/calendar/eventcal/search"
)

// Reference is a set of event documents prepared for many queries of the
// reference (the agreement tests draw hundreds over tens of thousands of
// documents): sorted by start once (SortEvents), each document's words
// found once per language. Its answers are ExpectedEvents' and
// ExpectedFacets' over the same documents, given in any order: it checks
// every document whose start may be within q's start bounds with the
// same matchEvent, and sorts and pages the matches the same way; the
// documents sorted by start only spare it the documents outside the
// start bounds and make the sort of the matches one pass.
type Reference struct {
	docs []search.EventDocument // sorted by SortEvents(ByStart)

	mu    sync.Mutex
	words map[string][][3][]string // by language, parallel to docs
}

// NewReference returns the Reference of docs (a copy of the slice, in
// another order: docs is left as it is; the documents' own slices and
// maps are shared, so a write to them shows in both).
func NewReference(docs []search.EventDocument) *Reference {
	// Sorted as pointers, then copied once (SortEvents moves each
	// document several times).
	ptrs := make([]*search.EventDocument, len(docs))
	for i := range docs {
		ptrs[i] = &docs[i]
	}
	slices.SortFunc(ptrs, eventOrder(search.ByStart))
	sorted := make([]search.EventDocument, len(docs))
	for i, d := range ptrs {
		sorted[i] = *d
	}
	return &Reference{docs: sorted, words: map[string][][3][]string{}}
}

// Len returns the number of documents.
func (r *Reference) Len() int { return len(r.docs) }

// EventsAndFacets returns ExpectedEventsAndFacets of q over the
// documents.
func (r *Reference) EventsAndFacets(q search.EventQuery) (search.Result, map[string]map[string]int) {
	matches := r.matching(q)
	facets := facetsOf(matches, q.Facets)
	return pageOf(listed(matches, q), q.Offset, q.Limit), facets
}

// Events returns ExpectedEvents of q over the documents.
func (r *Reference) Events(q search.EventQuery) search.Result {
	return pageOf(listed(r.matching(q), q), q.Offset, q.Limit)
}

// matching returns pointers to the documents that match q (matchEvent),
// in start order: those from the first whose start is within q's lower
// start bound to the last within its upper one, each checked whole.
func (r *Reference) matching(q search.EventQuery) []*search.EventDocument {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // start in [lo, hi]
	if q.StartGTE.Set {
		lo = max(lo, q.StartGTE.Value)
	}
	if q.StartGT.Set {
		if q.StartGT.Value == math.MaxInt64 {
			return nil
		}
		lo = max(lo, q.StartGT.Value+1)
	}
	if q.StartLT.Set {
		if q.StartLT.Value == math.MinInt64 {
			return nil
		}
		hi = min(hi, q.StartLT.Value-1)
	}
	from, _ := slices.BinarySearchFunc(r.docs, lo, func(d search.EventDocument, v int64) int { return cmp.Compare(d.Start, v) })
	to := len(r.docs)
	if hi < math.MaxInt64 {
		to, _ = slices.BinarySearchFunc(r.docs, hi+1, func(d search.EventDocument, v int64) int { return cmp.Compare(d.Start, v) })
	}
	terms := search.ParseQuery(q.Query)
	var words [][3][]string
	if len(terms) > 0 {
		words = r.wordsIn(q.Lang)
	}
	var matches []*search.EventDocument
	for i := from; i < to; i++ {
		var w *[3][]string
		if words != nil {
			w = &words[i]
		}
		if matchEventWith(&r.docs[i], &q, terms, w) {
			matches = append(matches, &r.docs[i])
		}
	}
	return matches
}

// wordsIn returns the words of every document in lang (wordsOf), parallel
// to r.docs, found on the first query in lang.
func (r *Reference) wordsIn(lang string) [][3][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.words[lang]
	if !ok {
		w = make([][3][]string, len(r.docs))
		for i := range r.docs {
			w[i] = wordsOf(&r.docs[i], lang)
		}
		r.words[lang] = w
	}
	return w
}
