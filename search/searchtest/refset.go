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
// start bounds and the sort of matches listed by start (they are found
// in that order).
//
// Each document's end, status and flags are also kept apart, in a small
// record per document (refKey): most documents a query reads fail on
// them, and reading them there spares loading the whole document (the
// reference is bound by memory reads at tens of thousands of documents).
// A document that passes them is still checked whole by matchEvent.
type Reference struct {
	docs []search.EventDocument // sorted by SortEvents(ByStart)
	keys []refKey               // parallel to docs
	// statuses holds each distinct status of the documents once; a
	// refKey's status is its index.
	statuses []string

	mu    sync.Mutex
	words map[string][][3][]string // by language, parallel to docs

	// scratch holds *refScratch: the slice of a query's matches and the
	// map that collapses them, reused from query to query (a query may
	// match most of the documents; the page is all that is kept).
	scratch sync.Pool
}

// refScratch is what one query of a Reference uses and leaves behind.
type refScratch struct {
	matches []*search.EventDocument
	seen    map[int64]bool
}

// withScratch runs f with a refScratch of r, emptied, and keeps it for the
// next query.
func (r *Reference) withScratch(f func(s *refScratch)) {
	s, _ := r.scratch.Get().(*refScratch)
	if s == nil {
		s = &refScratch{seen: map[int64]bool{}}
	}
	s.matches = s.matches[:0]
	clear(s.seen)
	f(s)
	clear(s.matches[:cap(s.matches)]) // no pointer kept past the query
	s.matches = s.matches[:0]
	r.scratch.Put(s)
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
	r := &Reference{docs: sorted, keys: make([]refKey, len(sorted)), words: map[string][][3][]string{}}
	for i := range sorted {
		d := &sorted[i]
		st := slices.Index(r.statuses, d.Status)
		if st < 0 {
			st = len(r.statuses)
			r.statuses = append(r.statuses, d.Status)
		}
		r.keys[i] = refKey{end: d.End, status: st, featured: d.Featured, hidden: d.HideFromListings, protected: d.HasPassword}
	}
	return r
}

// refKey is what Reference keeps of a document apart from it, to pass
// over the documents that fail on it without reading them (refFilter).
type refKey struct {
	end                         int64
	status                      int // index in Reference.statuses
	featured, hidden, protected bool
}

// refFilter is the part of a query's conditions that refKey holds: a
// document that fails it fails matchEvent (a document that passes it may
// fail matchEvent still).
type refFilter struct {
	q *search.EventQuery
	// statuses is nil when q takes any status, else whether q takes each
	// of Reference.statuses.
	statuses []bool
}

// filterOf returns the refFilter of q over r's documents.
func (r *Reference) filterOf(q *search.EventQuery) refFilter {
	f := refFilter{q: q}
	if len(q.Statuses) > 0 {
		f.statuses = make([]bool, len(r.statuses))
		for i, s := range r.statuses {
			f.statuses[i] = slices.Contains(q.Statuses, s)
		}
	}
	return f
}

// passes reports whether a document of key k passes f: matchEvent's
// conditions on statuses, end bounds, featured, hidden and protected.
func (f *refFilter) passes(k *refKey) bool {
	q := f.q
	if f.statuses != nil && !f.statuses[k.status] {
		return false
	}
	if q.EndLTE.Set && !(k.end <= q.EndLTE.Value) ||
		q.EndLT.Set && !(k.end < q.EndLT.Value) ||
		q.EndGT.Set && !(k.end > q.EndGT.Value) {
		return false
	}
	if q.Featured.Set && k.featured != q.Featured.Value {
		return false
	}
	return !(q.ExcludeHidden && k.hidden || q.ExcludeProtected && k.protected)
}

// Len returns the number of documents.
func (r *Reference) Len() int { return len(r.docs) }

// EventsAndFacets returns ExpectedEventsAndFacets of q over the
// documents.
func (r *Reference) EventsAndFacets(q search.EventQuery) (res search.Result, facets map[string]map[string]int) {
	r.withScratch(func(s *refScratch) {
		matches := r.matching(q, s.matches)
		facets = facetsOf(matches, q.Facets)
		res = pageOf(r.listed(matches, q, s.seen), q.Offset, q.Limit)
		s.matches = matches
	})
	return res, facets
}

// Events returns ExpectedEvents of q over the documents.
func (r *Reference) Events(q search.EventQuery) (res search.Result) {
	r.withScratch(func(s *refScratch) {
		matches := r.matching(q, s.matches)
		res = pageOf(r.listed(matches, q, s.seen), q.Offset, q.Limit)
		s.matches = matches
	})
	return res
}

// listed is listedWith of matches found by matching, which are in start
// order (eventOrder(search.ByStart), as r.docs): sorted again only when
// q sorts by another key.
func (r *Reference) listed(matches []*search.EventDocument, q search.EventQuery, seen map[int64]bool) []*search.EventDocument {
	if q.Sort == search.ByPublishDate {
		return listedWith(matches, q, seen)
	}
	return collapsedWith(matches, q, seen)
}

// matching appends to matches pointers to the documents that match q
// (matchEvent), in start order: those from the first whose start is
// within q's lower start bound to the last within its upper one, each
// checked whole; it returns the slice.
func (r *Reference) matching(q search.EventQuery, matches []*search.EventDocument) []*search.EventDocument {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // start in [lo, hi]
	if q.StartGTE.Set {
		lo = max(lo, q.StartGTE.Value)
	}
	if q.StartGT.Set {
		if q.StartGT.Value == math.MaxInt64 {
			return matches
		}
		lo = max(lo, q.StartGT.Value+1)
	}
	if q.StartLT.Set {
		if q.StartLT.Value == math.MinInt64 {
			return matches
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
	f := r.filterOf(&q)
	for i := from; i < to; i++ {
		if !f.passes(&r.keys[i]) {
			continue
		}
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
