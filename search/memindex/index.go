// Package memindex answers event queries (search.EventQuery) from an
// in-memory copy of the indexed event documents.
//
// Why it exists: the calendar's lists need exact totals, a date order and
// filters that match a large share of the events (the default list matches
// every upcoming event). Bleve answers such a query by visiting every hit:
// its collector reads the sort key's doc value of each one, and its numeric
// range and geo searchers walk their terms' postings, so a list costs
// O(matches) at a few hundred nanoseconds a hit. Measured with the load
// benchmark (2 cores, 8 clients, uncached): 19 ms at p50 for the default
// list and 57 ms for a 50 km geo list at 10,000 events, 357 ms for a text
// search at 100,000.
//
// The layout, chosen so that a query reads memory in order and touches a
// whole event only when it must:
//
//   - The date order: every document (a single event, or one occurrence
//     of a series: see search's "Recurring events") as a 32-byte entry
//     (start, end, status, flags, point, slot) ordered by (start, ID,
//     occurrence key), kept in blocks of at most
//     blockMax entries, so that a write moves one block and a list reads
//     the entries in order. The start bounds of a query are found by binary
//     search; every other cheap filter (statuses, flags, end bounds) is
//     decided on the entry.
//   - Bitmaps (roaring) of the events of each category, tag, venue and
//     organizer, and per language of each word of the title and of the
//     description and excerpt. An event whose text in a language is the
//     same as in another (the document falls back to the default language
//     for untranslated text, so with seven languages most events have one
//     text seven times) is indexed once, under the first of those
//     languages by name; the others record the alias in a bitmap, and a
//     query in one of them reads the postings of the language aliased to,
//     limited to the aliased events. A query's list filters and words become one
//     bitmap of candidates: when it is small its members are sorted,
//     otherwise it is expanded to a flat bit set that the ordered pass tests
//     with one load per entry. Without facets, a date-ordered page of many
//     candidates (a common word, a short prefix) is found by a walk of the
//     date order that stops at the page, and its total counted from the
//     cardinalities of the candidates among the entries of each status and
//     flags (less those outside the dates); a relevance order splits the
//     candidates into score tiers by bitmap operations and pages them the
//     same way (textpage.go, tiers.go). So a search's work grows with its
//     page, not with how many events share its words.
//   - A table of the distinct geo points (events share their venue's): a
//     radius query decides each point once, with the contract's rule
//     (search.GeoCircle.Contains), after a latitude band that no point
//     inside can leave. The facet buckets (see facetIndex) also hold the
//     date order's documents per point and week, so that a radius list
//     counts a week a step per point it holds, and reads only the weeks
//     of its page and those its dates cut (nearCounted).
//   - Groups of occurrences (see group): the occurrences of a series that
//     differ in their dates only (those without an override) are not in
//     the date order but in their group, in order, with a head (first and
//     last start, duration, status, flags, point) in one array. A query
//     decides a group once, on its head and one representative's
//     membership of the candidates, and counts its members in the date
//     bounds by binary search; a page merges the date order with the
//     groups' members. So a search over 5,000 weekly series of 105
//     occurrences reads the heads of the series it matches rather than
//     their 525,000 entries (measured with the load benchmark at 100,000
//     events of which 5,000 series, 650,000 documents: a one-word search
//     went from 19.5 to 4.1 ms at p50, a 50 km radius from 16.1 to 1.7
//     ms; bench/README.md). The facet buckets hold the members too, so a
//     list without words or IDs (no candidates, or list filters, or a
//     radius) is answered by the buckets alone, a step per week of its
//     window and its page, and decides no group: at 50,000 series, a
//     list deciding every group cost 15 to 20 ms of CPU where the buckets
//     take under 1 (plan.byBuckets). Only words, IDs and some collapsed
//     lists decide groups: a collapsed list without words, IDs, list
//     filters or a radius counts the groups with a member in its dates
//     from their first and last starts kept sorted, and reads its page
//     from the buckets (collapsedByBuckets); with them, or past
//     collapsedPageMax, it decides every group by its head and first
//     member in the dates.
//
// Every filter is thus decided exactly as the reference (search/searchtest)
// decides it, and totals and facet counts are exact.
//
// The index is derived data: the engine that owns it (search/embedded)
// persists every document and reloads them at start. It is safe for
// concurrent use: queries share a read lock; a write tokenizes its
// documents, builds the postings of the words they bring and re-sorts the
// vocabularies they grow without it, then holds the write lock only to
// link them, releasing it every holdWords words (see Apply). The words are kept per language and visibility (status,
// hidden, protected; see language), so that a search walks only the words
// of events it may match.
package memindex

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// Index is the in-memory event index. The zero value is not usable: call
// New. The word steps are declared on wordIndex (words.go), the groups'
// on groupIndex (groups.go) and the rows' bodies' on rowIndex
// (bodies.go), which Index embeds (each holding the Index back).
type Index struct {
	wordIndex
	groupIndex
	bulkIndex
	rowIndex

	// knobs are its sizes and thresholds (defaultKnobs unless a test
	// sets others), shared with facets and collapse.
	*knobs

	// bulk is set while an index made by NewBulk defers its date order
	// and facet buckets (until Finish): it answers no query meanwhile.
	bulk bool

	// writeMu orders the writers. A writer prepares its documents (their
	// words, and the vocabularies' new sorted orders) holding writeMu only,
	// so that queries keep running, then holds mu to swap the results in.
	writeMu sync.Mutex
	mu      sync.RWMutex
	// rows holds the events by slot; a slot of a removed event is free
	// (listed in free) until an added event takes it.
	rows []row
	free []uint32
	// bodies holds the rows' bodies, which rows and groups refer to by
	// number.
	bodies bodyStore
	// ents holds each row's entry again, by slot: candidates taken from a
	// bitmap (in slot order) are checked reading it in order, where the
	// rows would be read at random.
	ents []entry
	// byID holds the slots of each event ID (one for a single event,
	// one per occurrence for a series), in the order of their occurrence
	// keys, so that slotOf finds a document by binary search (a map by
	// document key cost about 64 bytes a document); docs counts them.
	byID idSlots
	docs int
	// codes numbers the series, statuses and names the rows refer to.
	codes
	// occNames interns the rows' occurrence keys not of the service's
	// form (see occKey).
	occNames occNames
	// groups holds the uniform occurrences of the series (see group),
	// which are not in order; reps holds each group's representative slot
	// and grouped every slot in a group (nGrouped of them).
	groups []*group
	// heads holds the head of each group, at the group's index in groups.
	heads []groupHead
	// collapse is what the collapsed lists keep about the groups beyond
	// their heads (see collapseState).
	collapse collapseState
	reps     *roaring.Bitmap
	// repSlots holds the representatives' slots in order and repAt the
	// index in groups of each one's group, so that a query finds the
	// group of each representative among its candidates (taken in slot
	// order) reading these two arrays in order, not the representative's
	// row and group (two cache misses each).
	repSlots []uint32
	repAt    []int32
	grouped  *roaring.Bitmap
	nGrouped int
	// order holds an entry of every event, by (start, ID).
	order blocks
	// kinds holds the slots of the date order's entries by status and
	// flags, so that a query counts its candidates among the entries of
	// the kinds it keeps from cardinalities (see countByKinds).
	kinds map[kindKey]*roaring.Bitmap
	// lists holds, per list filter, the events of each value.
	lists [numLists]map[int64]*roaring.Bitmap
	// facets holds the date order's documents by week, for the facets.
	facets *facetIndex
	// points holds the distinct geo points; pointOf finds one.
	points  []point
	pointOf map[search.GeoPoint]int32
	freePts []int32
	// aliasSets holds the distinct alias lists of the rows (see aliasSet).
	aliasSets map[string][]*roaring.Bitmap
	// langs holds the words of each language's text.
	langs map[string]*language
	// built holds, while a writer links a chunk, the words it built
	// outside the lock (build).
	built map[builtKey]*word
	// likePrefixes holds, while a writer links a chunk or a load, the
	// distinct prefix bitmaps of the words of each row body that later
	// rows of the same write share (see sharedPrefixes).
	likePrefixes map[*rowBody][]*roaring.Bitmap
	// holds is what a writer keeps across its holds of mu.
	holds
	// checked counts the vocabulary words that queries' prefix and typo
	// walks compared with a term: the work of a text search that grows
	// with the vocabulary (see Checked).
	checked atomic.Uint64
	// aliasTested counts the rows of aliased languages' matches that
	// queries tested against their alias rows (joinAliased: those
	// aliasesAll could not spare; the tests count it).
	aliasTested atomic.Uint64
	// visited counts the date order's entries and candidates that queries
	// read to find their pages and totals, and the kinds' bitmaps they
	// intersected: the work of a list that may grow with its matches (the
	// tests count it).
	visited atomic.Uint64
	// nearDeclined counts the radius queries that nearCheaper left to
	// plan.each (the tests count it).
	nearDeclined atomic.Uint64
	// searchedGroups counts the groups whose members queries searched
	// for their date bounds (plan.span): those the bounds cut that are not
	// evenly spaced (the tests count it).
	searchedGroups atomic.Uint64
	// regrouped is raised whenever a row joins or leaves a group (reps
	// and grouped change), so that what a query keeps of them for the
	// next ones (matchEntry's reps and singles) is made again.
	regrouped uint64
	// matches keeps the rows of recent query words (see matchCache).
	matches matchCache
	// decided counts the groups that queries decided (plan.groups): the
	// work of a list that grows with the number of series (the tests
	// count it).
	decided atomic.Uint64
}

// The list filters of a query, indexing Index.lists.
const (
	listCategories = iota
	listTags
	listVenues
	listOrganizers
	numLists
)

// maxStatusCode is the highest status code; there are far fewer statuses.
const maxStatusCode = 63

// codes numbers what the rows refer to by small numbers: series,
// statuses and names. Index embeds it.
type codes struct {
	// seriesOf numbers the events that have occurrences (1, 2, ...; see
	// entry.series), reusing the numbers of series that left
	// (seriesFree); seriesMax is the highest number given.
	seriesOf   map[int64]uint32
	seriesFree []uint32
	seriesMax  uint32
	// statuses numbers the statuses seen (codes 1 to maxStatusCode); a
	// status seen after those gets code 0 and is compared by name.
	statuses map[string]uint8
	// names holds the distinct statuses and event statuses of the rows
	// (row.status, row.eventStatus), numbered by nameOf.
	names  []string
	nameOf map[string]uint32
}

// docKey names one document: an event ID and its occurrence key ("" for
// a single event).
type docKey struct {
	id  int64
	occ string
}

// keyOf returns the document key of d.
func keyOf(d *search.EventDocument) docKey { return docKey{d.ID, d.Occurrence} }

// row is one document (a single event or one occurrence of a series):
// what the entry does not hold. Its ID and occurrence key are its own;
// the rest is in its body, which the occurrences of a series that differ
// only in their dates share (read only once linked), so such an
// occurrence costs its row (24 bytes), its entry, its postings and its
// keys, not another copy of the series' body. Occurrences that share
// their text and visibility but not the rest share the body's words,
// aliases and lists.
//
// The row and body are kept small (their sizes are pinned by
// TestRowSize), since every document has them: the entry is in
// Index.ents only, the statuses are numbers of Index.names, and the lists
// are one slice.
//
// A row holds no pointer (TestRowHoldsNoPointer): its body and group are
// numbers, so that Index.rows, one element per document (6.4 million at
// 1,000,000 events and 50,000 weekly series), is memory the garbage
// collector does not scan, where a body and a group pointer per row had
// it follow two pointers per document on every cycle.
type row struct {
	id int64
	// occ is the occurrence key (see occKey; Index.occNames).
	occ occKey
	// body is the number of the row's body in Index.bodies (0 for a free
	// slot).
	body uint32
	// grp is 1 + the index in Index.groups of the group that holds the
	// entry (0: the date order does; see Index.groupOf).
	grp uint32
}

// isLive reports whether the row holds a document (its slot is not free).
func (r *row) isLive() bool { return r.body != 0 }

// rowBody is what a row holds beside its ID and occurrence key.
type rowBody struct {
	pub    int64
	parent int64
	// lists holds the event's values of every list filter, those of list
	// l at lists[ends[l-1]:ends[l]] (see list; the last list ends at the
	// end).
	lists []int64
	// words lists the word entries whose bitmaps hold this row, those
	// whose title bitmaps first (nTitle of them), then those whose body
	// bitmaps; aliases lists the alias bitmaps (see Index.aliasSet). So a
	// replaced or removed event leaves no posting behind.
	words   []*word
	aliases []*roaring.Bitmap
	nTitle  uint32
	ends    [numLists - 1]uint32
	// status and eventStatus (the document's EventStatus) are numbers of
	// Index.names.
	status, eventStatus uint32
}

// list returns the row's values of list filter l.
func (r *rowBody) list(l int) []int64 {
	lo, hi := uint32(0), uint32(len(r.lists))
	if l > 0 {
		lo = r.ends[l-1]
	}
	if l < numLists-1 {
		hi = r.ends[l]
	}
	return r.lists[lo:hi]
}

// group is the occurrences of one series that differ in their dates
// only: the same text, lists, statuses, flags, point, parent and publish
// date, and the same duration (end minus start, not negative). The
// occurrences a series writes without an override are one group, so a
// query decides every filter but the dates once for the group, on its
// representative (rep, any member), and finds the members in its date
// bounds by binary search in occ, instead of reading every occurrence in
// the date order: a list over half a million occurrences of 5,000
// series reads 5,000 groups. An occurrence with an override (another
// title, venue, status...) is in the date order like a single event.
type group struct {
	// series is the series number (Index.seriesOf) of its event.
	series uint32
	rep    uint32
	dur    int64
	// occ holds the members' starts and slots in the date order's order
	// (their entries are in Index.ents: a member costs its date and slot
	// here).
	occ []member
	// at is the group's index in Index.groups, -1 while not installed.
	at int
	// body is the number in Index.bodies of the row body its members
	// share (0 until the first is linked); the group holds a reference to
	// it (bodyStore.retain) until it has no member left.
	body uint32
	// spanned is what the groups' spans (collapseState) hold of it.
	spanned spanned
	// step, when above 0, is the spacing of the members' starts: member
	// k starts at occ[0].start + k*step (a weekly series' members, say),
	// so that a query counts the members in its dates without reading
	// them (see plan.span). 0: not known to be evenly spaced (see
	// group.restep).
	step int64
}

// member is a member of a group: its start and slot.
type member struct {
	start int64
	slot  uint32
}

// groupHead is what a query reads of a group to decide it and, most
// often, to count its members in the date bounds without reading them:
// kept in one array (Index.heads), so that deciding every group of the
// index reads memory in order.
type groupHead struct {
	// first and last are the starts of the first and last members, n
	// their number.
	first, last int64
	dur         int64
	// step is the group's step (see group.step).
	step   int64
	n      int32
	point  int32
	series uint32
	status uint8
	flags  uint8
}

// head returns the head of g (installed) from its members.
func (g *group) head(x *Index) groupHead {
	e := &x.ents[g.occ[0].slot]
	return groupHead{first: e.start, last: g.occ[len(g.occ)-1].start, dur: g.dur, step: g.step, n: int32(len(g.occ)),
		point: e.point, series: g.series, status: e.status, flags: e.flags &^ flagGrouped}
}

// entry is an event in the date order.
type entry struct {
	start, end int64
	slot       uint32
	// point indexes Index.points; -1 without a point.
	point  int32
	status uint8
	flags  uint8
	// series is the number of the entry's series (Index.seriesOf), 0 for
	// a single event: a collapsed list (CollapseSeries) tells the later
	// occurrences of a series by it without reading their rows. It fits
	// in the entry's padding (32 bytes with or without it).
	series uint32
}

// The flags of an entry.
const (
	flagFeatured = 1 << iota
	flagTicketed
	flagHidden
	flagProtected
	flagHasGeo
	// flagGrouped marks a member of a group (see group) in the facet
	// buckets: a plan that decides the groups (plan.grouped) leaves the
	// members out there by it; any other reads them like any other
	// document.
	flagGrouped
)

// point is a distinct geo point and the number of events at it.
type point struct {
	p    search.GeoPoint
	refs int
}

// word is one distinct word of one language's text, with the rows whose
// title and whose description or excerpt hold it (nil: none).
type word struct {
	text        string
	vocab       *vocabulary
	title, body *roaring.Bitmap
}

// language holds the words of one language's text in one vocabulary per
// visibility of the events that hold them (see visibility), and the
// events whose text in this language is their text in another.
//
// Why per visibility: a prefix or typo term walks the words of a
// vocabulary, so a vocabulary filled by drafts (60 drafts of 3,500 random
// words each made every anonymous typo search walk 200,000 words, 0.25 to
// 0.65 s) would make every search slow, while none of those words can
// match an event an anonymous caller may see. A query walks only the
// vocabularies of the visibilities its filters keep (an anonymous search:
// published, listed, not protected), so the words of events it cannot
// match cost it nothing; the rows a word matches are the same, so results
// do not change.
type language struct {
	parts map[visibility]*vocabulary
	// aliases holds, per other language, the events whose text in this
	// language is their text in that one (indexed there only).
	aliases map[string]*roaring.Bitmap
}

// visibility is what decides whether a query may match an event without
// reading it: its status and its hidden and protected flags (the other
// flags are not visibility, and are left out so that vocabularies stay
// few and large).
type visibility struct {
	status string
	flags  uint8
}

// visibilityFlags are the flags of an entry that a visibility keeps.
const visibilityFlags = flagHidden | flagProtected

// vocabulary is the words of one language and visibility: by text, and in
// order for prefix and typo walks. New words wait in recent (unsorted, at
// most about recentMax) until a writer merges them into sorted, so a new
// word costs no move of the whole vocabulary; a word that leaves stays in
// sorted, skipped, until the next merge. A word is in exactly one of
// sorted and recent.
type vocabulary struct {
	byText map[string]*word
	sorted []string
	recent []string
	// stale counts the words of sorted that are not in byText: words that
	// left, and pending ones.
	stale int
	// pending holds the words a writer merged into sorted ahead of linking
	// them (premerge), while it links them.
	pending map[string]struct{}
	// lang and vis are the language and visibility of its words.
	lang string
	vis  visibility
	// prefixes holds, for each prefix of one or two letters of its words,
	// the rows whose title and whose body hold a word with it (see
	// prefixRows).
	prefixes map[string]*prefixRows
}

// holds is what a writer keeps across its holds of the write lock (mu):
// the slots whose words it links or unlinks over several holds, which the
// word matches leave out meanwhile (wordIndex.match), and the words it
// linked or unlinked in the current hold and in its longest hold so far,
// the work readers wait for (the tests read them).
type holds struct {
	hidden        *roaring.Bitmap
	held, maxHeld int
	// seq numbers the writers' holds (lockW): a query keeps with its
	// match cache entries the hold it saw last (matchEntry.seq), so that
	// a writer showing a row it linked in pieces drops only the entries
	// made since it hid it (matchCache.dropSince).
	seq uint64
	// touched and maxTouched are the match cache entries the writer
	// checked against a changed word or row in this hold and in its
	// longest hold so far (matchCache.touchWord), the other work readers
	// wait for (the tests read them).
	touched, maxTouched int
}

// count records that the writer linked or unlinked n words in this hold.
func (h *holds) count(n int) { h.held += n }

// New returns an empty index.
func New() *Index {
	k := defaultKnobs
	x := &Index{knobs: &k, collapse: collapseState{knobs: &k},
		byID: newIDSlots(), codes: codes{seriesOf: map[int64]uint32{}, statuses: map[string]uint8{}, nameOf: map[string]uint32{}}, aliasSets: map[string][]*roaring.Bitmap{},
		pointOf: map[search.GeoPoint]int32{}, langs: map[string]*language{}, reps: roaring.New(), grouped: roaring.New(),
		facets: newFacetIndex(&k), holds: holds{hidden: roaring.New()},
	}
	x.wordIndex, x.groupIndex, x.bulkIndex, x.rowIndex = wordIndex{x}, groupIndex{x}, bulkIndex{x}, rowIndex{x}
	for i := range x.lists {
		x.lists[i] = map[int64]*roaring.Bitmap{}
	}
	return x
}

// Count returns the number of documents in the index (an occurrence of a
// series is one).
func (x *Index) Count() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.docs
}

// slotOf returns the slot of document k, if the index holds it.
func (x *Index) slotOf(k docKey) (uint32, bool) {
	var buf [1]uint32
	slots := x.byID.get(k.id, &buf)
	if i, ok := x.occIndex(slots, k.occ); ok {
		return slots[i], true
	}
	return 0, false
}

// occIndex finds occurrence key occ among slots (in the order of their
// rows' keys, as byID holds them): its index, or where it would go.
func (x *Index) occIndex(slots []uint32, occ string) (int, bool) {
	if len(slots) == 1 { // a single event, most often
		if c := x.occNames.compareOccString(x.rows[slots[0]].occ, occ); c != 0 {
			return max(0, -c), false
		}
		return 0, true
	}
	return slices.BinarySearchFunc(slots, occ, func(s uint32, occ string) int { return x.occNames.compareOccString(x.rows[s].occ, occ) })
}

// addDoc records slot (whose row is not linked yet) as document k's.
func (x *Index) addDoc(k docKey, slot uint32) {
	var buf [1]uint32
	if slots := x.byID.get(k.id, &buf); len(slots) > 0 {
		i, _ := x.occIndex(slots, k.occ)
		x.byID.set(k.id, slices.Insert(slots, i, slot))
	} else {
		x.byID.one[k.id] = slot // a first document: no slice
	}
	x.docs++
}

// Keys returns the document keys (search.DocumentKey) of every document
// of the events ids, in no particular order; IDs not in the index have
// none.
func (x *Index) Keys(ids []int64) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []string
	for _, id := range ids {
		var buf [1]uint32
		for _, slot := range x.byID.get(id, &buf) {
			out = append(out, search.DocumentKey(id, x.occNames.occString(x.rows[slot].occ)))
		}
	}
	return out
}

// Checked returns the number of vocabulary words that the prefix and typo
// walks of all queries so far compared with a query term: what a text
// search costs beyond its exact words.
func (x *Index) Checked() uint64 { return x.checked.Load() }
