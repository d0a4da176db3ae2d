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
//     with one load per entry.
//   - A table of the distinct geo points (events share their venue's): a
//     radius query decides each point once, with the contract's rule
//     (search.GeoCircle.Contains), after a latitude band that no point
//     inside can leave.
//   - Groups of occurrences (see group): the occurrences of a series that
//     differ in their dates only (those without an override) are not in
//     the date order but in their group, in order, with a head (first and
//     last start, duration, status, flags, point) in one array. A query
//     decides a group once, on its head and one representative's
//     membership of the candidates, and counts its members in the date
//     bounds by binary search; a page merges the date order with the
//     groups' members. So a list over 5,000 weekly series of 105
//     occurrences reads 5,000 heads rather than 525,000 entries (measured
//     with the load benchmark at 100,000 events of which 5,000 series,
//     650,000 documents: a one-word search went from 19.5 to 4.1 ms at
//     p50, a 50 km radius from 16.1 to 1.7 ms; bench/README.md).
//
// Every filter is thus decided exactly as the reference (search/searchtest)
// decides it, and totals and facet counts are exact.
//
// The index is derived data: the engine that owns it (search/bleve)
// persists every document and reloads them at start. It is safe for
// concurrent use: queries share a read lock; a write tokenizes its
// documents, builds the postings of the words they bring and re-sorts the
// vocabularies they grow without it, then holds the write lock only to
// link them, in chunks of about chunkWords words (see Apply). The words are kept per language and visibility (status,
// hidden, protected; see language), so that a search walks only the words
// of events it may match.
package memindex

import (
	"cmp"
	"container/heap"
	"context"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// Index is the in-memory event index. The zero value is not usable: call
// New.
type Index struct {
	// writeMu orders the writers. A writer prepares its documents (their
	// words, and the vocabularies' new sorted orders) holding writeMu only,
	// so that queries keep running, then holds mu to swap the results in.
	writeMu gosync.Mutex
	mu      gosync.RWMutex
	// rows holds the events by slot; a slot of a removed event is free
	// (listed in free) until an added event takes it.
	rows []row
	free []uint32
	// ents holds each row's entry again, by slot: candidates taken from a
	// bitmap (in slot order) are checked reading it in order, where the
	// rows would be read at random.
	ents []entry
	// slotOf maps a document (an event ID and occurrence key) to its
	// slot; byID holds the slots of each event ID (one for a single event,
	// one per occurrence for a series).
	slotOf map[docKey]uint32
	byID   map[int64][]uint32
	// seriesOf numbers the events that have occurrences (1, 2, ...; see
	// entry.series), reusing the numbers of series that left
	// (seriesFree); seriesMax is the highest number given.
	seriesOf   map[int64]uint32
	seriesFree []uint32
	seriesMax  uint32
	// groups holds the uniform occurrences of the series (see group),
	// which are not in order; reps holds each group's representative slot
	// and grouped every slot in a group (nGrouped of them).
	groups []*group
	// heads holds the head of each group, at the group's index in groups.
	heads    []groupHead
	reps     *roaring.Bitmap
	grouped  *roaring.Bitmap
	nGrouped int
	// order holds an entry of every event, by (start, ID).
	order blocks
	// lists holds, per list filter, the events of each value.
	lists [numLists]map[int64]*roaring.Bitmap
	// statuses numbers the statuses seen (codes 1 to maxStatusCode); a
	// status seen after those gets code 0 and is compared by name.
	statuses map[string]uint8
	// points holds the distinct geo points; pointOf finds one.
	points  []point
	pointOf map[search.GeoPoint]int32
	freePts []int32
	// langs holds the words of each language's text.
	langs map[string]*language
	// built holds, while a writer links a chunk, the words it built
	// outside the lock (build).
	built map[builtKey]*word
	// checked counts the vocabulary words that queries' prefix and typo
	// walks compared with a term: the work of a text search that grows
	// with the vocabulary (see Checked).
	checked atomic.Uint64
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

// docKey names one document: an event ID and its occurrence key ("" for
// a single event).
type docKey struct {
	id  int64
	occ string
}

// keyOf returns the document key of d.
func keyOf(d *search.EventDocument) docKey { return docKey{d.ID, d.Occurrence} }

// row is one document (a single event or one occurrence of a series):
// what the entry does not hold. The occurrences of a series that share
// their text and visibility share the slices words, aliases and lists
// (read only once linked), so an occurrence costs its postings and its
// row, not another copy of the series' word list.
type row struct {
	live   bool
	id     int64
	occ    string
	pub    int64
	parent int64
	status string
	// lists holds the event's values of each list filter.
	lists [numLists][]int64
	// words lists the word entries whose bitmaps hold this row, and
	// aliases the alias bitmaps, so that a replaced or removed event leaves
	// no posting behind.
	words   []wordRef
	aliases []*roaring.Bitmap
	// e is the event's entry in the date order.
	e entry
	// grp is the group that holds the entry (nil: the date order does).
	grp *group
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
	// occ holds the members' entries in the date order's order.
	occ []entry
	// at is the group's index in Index.groups, -1 while not installed.
	at int
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
	n           int32
	point       int32
	series      uint32
	status      uint8
	flags       uint8
}

// head returns the head of g (installed) from its members.
func (g *group) head() groupHead {
	e := &g.occ[0]
	return groupHead{first: e.start, last: g.occ[len(g.occ)-1].start, dur: g.dur, n: int32(len(g.occ)),
		point: e.point, series: g.series, status: e.status, flags: e.flags}
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
)

// point is a distinct geo point and the number of events at it.
type point struct {
	p    search.GeoPoint
	refs int
}

// wordRef is one posting of a row: a word entry and the part of the text
// (title or body) it occurs in.
type wordRef struct {
	w     *word
	title bool
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
}

// recentMax bounds the unsorted new words of a vocabulary: a merge
// (O(vocabulary), outside the lock) once recentMax new words wait, and at
// most recentMax words checked one by one in a walk. A variable so that the
// tests can merge often.
var recentMax = 1024

// chunkWords bounds the words a writer links in one hold of the lock: a
// write of many documents releases it between chunks of about this many
// words (a document's words are linked in one hold, so a 200,000-character
// description, about 30,000 words at most, holds it for a few
// milliseconds). A variable so that the tests can take small chunks.
var chunkWords = 8192

// preparedHook, when set (tests), is called by a writer after it prepared
// a chunk, holding writeMu but not mu.
var preparedHook func()

// New returns an empty index.
func New() *Index {
	x := &Index{
		slotOf: map[docKey]uint32{}, byID: map[int64][]uint32{}, seriesOf: map[int64]uint32{}, statuses: map[string]uint8{},
		pointOf: map[search.GeoPoint]int32{}, langs: map[string]*language{}, reps: roaring.New(), grouped: roaring.New(),
	}
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
	return len(x.slotOf)
}

// Keys returns the document keys (search.DocumentKey) of every document
// of the events ids, in no particular order; IDs not in the index have
// none.
func (x *Index) Keys(ids []int64) []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []string
	for _, id := range ids {
		for _, slot := range x.byID[id] {
			out = append(out, search.DocumentKey(id, x.rows[slot].occ))
		}
	}
	return out
}

// Checked returns the number of vocabulary words that the prefix and typo
// walks of all queries so far compared with a query term: what a text
// search costs beyond its exact words.
func (x *Index) Checked() uint64 { return x.checked.Load() }

// prepared is a document made ready to link, outside the lock: its
// visibility and the distinct words of its text in each language.
type prepared struct {
	d     *search.EventDocument
	flags uint8
	texts []preparedText
	words int
	// like, when shares is set, is an earlier document of the same write
	// with the same ID, text and visibility (an earlier occurrence of the
	// series): this one reuses its tokens, and its row shares the word
	// list of like's row (linked before it).
	like   docKey
	shares bool
	// grp is the group the document joins (nil: the date order).
	grp *group
}

// preparedText is a document's text in one language: aliasOf names the
// earlier language (by name) with the same text, or, when empty, title and
// body hold the distinct words of the title and of the description and
// excerpt.
type preparedText struct {
	lang, aliasOf string
	title, body   []string
}

// visibility returns the visibility of the prepared document.
func (p *prepared) visibility() visibility {
	return visibility{status: p.d.Status, flags: p.flags & visibilityFlags}
}

// prepare tokenizes d: the costly part of a write, done without the lock.
// prev is the document prepared before d in the same write (nil: none):
// when it is of the same event with the same text and visibility (two
// occurrences of a series), d reuses its tokens.
func prepare(d *search.EventDocument, prev *prepared) prepared {
	p := prepared{d: d, flags: docFlags(d)}
	if prev != nil && prev.d.ID == d.ID && prev.visibility() == p.visibility() && maps.Equal(prev.d.Text, d.Text) {
		p.texts, p.words, p.like, p.shares = prev.texts, prev.words, keyOf(prev.d), true
		if prev.shares {
			p.like = prev.like
		}
		return p
	}
	langs := slices.Sorted(maps.Keys(d.Text))
	for i, lang := range langs {
		t := d.Text[lang]
		if j := slices.IndexFunc(langs[:i], func(l string) bool { return d.Text[l] == t }); j >= 0 {
			p.texts = append(p.texts, preparedText{lang: lang, aliasOf: langs[j]})
			continue
		}
		pt := preparedText{lang: lang, title: distinct(textWords(t.Title))}
		pt.body = distinct(append(textWords(t.Description), textWords(t.Excerpt)...))
		p.words += len(pt.title) + len(pt.body)
		p.texts = append(p.texts, pt)
	}
	return p
}

// distinct returns the words without repeats, in first-seen order.
func distinct(words []string) []string {
	seen := make(map[string]struct{}, len(words))
	out := words[:0]
	for _, w := range words {
		if _, ok := seen[w]; !ok {
			seen[w] = struct{}{}
			out = append(out, w)
		}
	}
	return slices.Clip(out)
}

// docFlags returns the flags of d's entry.
func docFlags(d *search.EventDocument) uint8 {
	var flags uint8
	for _, f := range [...]struct {
		on   bool
		flag uint8
	}{
		{d.Featured, flagFeatured}, {d.Ticketed, flagTicketed}, {d.HideFromListings, flagHidden},
		{d.HasPassword, flagProtected}, {d.HasGeo, flagHasGeo},
	} {
		if f.on {
			flags |= f.flag
		}
	}
	return flags
}

// Apply adds or replaces event documents. For every event ID in docs,
// the documents given replace all the documents of that ID (occurrences
// not in docs are removed first); within one call a later document of the
// same key (ID and occurrence) wins.
//
// The documents are tokenized, the words they bring built with their
// postings, and the vocabularies that gain many words re-sorted, before
// the lock is taken, in chunks of about chunkWords words;
// the lock is held only to link a chunk (map and bitmap updates), so a
// write's hold of the lock grows with the chunk's words, never with the
// rest of the write or the size of the vocabulary, and queries run between
// chunks and during their preparation.
func (x *Index) Apply(docs []search.EventDocument) {
	if len(docs) == 0 {
		return
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	docs = lastOfEach(docs)
	x.removeStale(docs)
	grps := groupsOf(docs)
	if x.Count() == 0 && len(docs) > blockMax {
		preps := make([]prepared, len(docs))
		for i := range docs {
			var prev *prepared
			if i > 0 {
				prev = &preps[i-1]
			}
			preps[i] = prepare(&docs[i], prev)
			preps[i].grp = grps[i]
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		x.load(preps)
		return
	}
	var next, prev *prepared
	for i := 0; i < len(docs); {
		// A chunk: at least one document, then more while they fit.
		var chunk []prepared
		words := 0
		for i < len(docs) {
			if next == nil {
				p := prepare(&docs[i], prev)
				p.grp = grps[i]
				next = &p
				prev = next
			}
			if len(chunk) > 0 && words+next.words > chunkWords {
				break
			}
			chunk = append(chunk, *next)
			words += next.words
			prev, next = &chunk[len(chunk)-1], nil
			i++
		}
		merges := x.premerge(chunk)
		slots, built := x.build(chunk)
		if preparedHook != nil {
			preparedHook()
		}
		x.mu.Lock()
		x.linkChunk(chunk, merges, slots, built)
		x.mu.Unlock()
	}
	x.compact()
}

// linkChunk installs the merged vocabularies and links the chunk's
// documents at the slots build chose, with the words it built. The caller
// holds mu.
func (x *Index) linkChunk(chunk []prepared, merges []merged, slots []uint32, built map[builtKey]*word) {
	for _, m := range merges {
		v := x.vocabulary(m.lang, m.vis)
		v.sorted, v.recent, v.stale, v.pending = m.sorted, nil, len(m.added), m.added
	}
	defer func() {
		for _, m := range merges {
			x.vocabulary(m.lang, m.vis).pending = nil
		}
	}()
	x.built = built
	defer func() { x.built = nil }()
	for i := range chunk {
		p := &chunk[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf[k]
		if ok {
			x.unplace(slot)
			x.unlink(slot)
		} else {
			slot = x.take(slots[i])
			x.slotOf[k] = slot
			x.byID[k.id] = append(x.byID[k.id], slot)
		}
		x.link(slot, p)
		x.place(slot, p.grp)
	}
}

// place puts the entry of the row at slot in its group g, or, when g is
// nil, in the date order. The caller holds mu.
func (x *Index) place(slot uint32, g *group) {
	e := x.rows[slot].e
	if g == nil {
		x.order.insert(x, e)
		return
	}
	if g.at < 0 {
		g.series, g.rep, g.at = e.series, slot, len(x.groups)
		x.groups = append(x.groups, g)
		x.heads = append(x.heads, groupHead{})
		x.reps.Add(slot)
	}
	i := sort.Search(len(g.occ), func(i int) bool { return x.compare(g.occ[i], e) >= 0 })
	g.occ = slices.Insert(g.occ, i, e)
	x.heads[g.at] = g.head()
	x.rows[slot].grp = g
	x.grouped.Add(slot)
	x.nGrouped++
}

// unplace takes the entry of the row at slot out of its group or the
// date order; a group left empty leaves the index. The caller holds mu.
func (x *Index) unplace(slot uint32) {
	r := &x.rows[slot]
	g := r.grp
	if g == nil {
		x.order.remove(x, r.e)
		return
	}
	r.grp = nil
	x.grouped.Remove(slot)
	x.nGrouped--
	switch i := sort.Search(len(g.occ), func(i int) bool { return x.compare(g.occ[i], r.e) >= 0 }); {
	case i == 0 && len(g.occ) > 0 && g.occ[0].slot == slot:
		// The first: a series rewritten (in the date order) leaves its
		// old group from the front, so no member moves.
		g.occ = g.occ[1:]
	case i < len(g.occ) && g.occ[i].slot == slot:
		g.occ = slices.Delete(g.occ, i, i+1)
	}
	if g.rep == slot {
		x.reps.Remove(slot)
		if len(g.occ) > 0 {
			g.rep = g.occ[0].slot
			x.reps.Add(g.rep)
		}
	}
	if len(g.occ) == 0 {
		end := len(x.groups) - 1
		last := x.groups[end]
		x.groups[g.at], x.heads[g.at], last.at = last, x.heads[end], g.at
		x.groups, x.heads = x.groups[:end], x.heads[:end]
		g.at = -1
		return
	}
	x.heads[g.at] = g.head()
}

// groupsOf returns, for each document of docs, the new group it joins
// (nil: none, it goes to the date order): the occurrences of one series
// that differ from a template occurrence in their dates only (see group).
// The template is the occurrence of the series, of at most three tried
// (the first, the middle and the last), that the most others share; a
// group needs two members.
func groupsOf(docs []search.EventDocument) []*group {
	out := make([]*group, len(docs))
	byID := map[int64][]int{}
	for i := range docs {
		if docs[i].Occurrence != "" {
			byID[docs[i].ID] = append(byID[docs[i].ID], i)
		}
	}
	for _, idx := range byID {
		if len(idx) < 2 {
			continue
		}
		var members []int
		for _, t := range []int{idx[0], idx[len(idx)/2], idx[len(idx)-1]} {
			tmpl := &docs[t]
			if !groupable(tmpl) {
				continue
			}
			var m []int
			for _, i := range idx {
				if i == t || sameButDates(tmpl, &docs[i]) {
					m = append(m, i)
				}
			}
			if len(m) > len(members) {
				members = m
			}
			if 2*len(members) > len(idx) {
				break // a majority: no other template has more
			}
		}
		if len(members) < 2 {
			continue
		}
		g := &group{dur: docs[members[0]].End - docs[members[0]].Start, at: -1}
		for _, i := range members {
			out[i] = g
		}
	}
	return out
}

// groupable reports whether an occurrence can be in a group: its end is
// not before its start (so a bound on the end is one on the start).
func groupable(d *search.EventDocument) bool {
	return d.End >= d.Start && d.End-d.Start >= 0
}

// sameButDates reports whether occurrence b differs from a in its dates
// only, with the same duration: everything but the dates that a query
// decides on a document is the same.
func sameButDates(a, b *search.EventDocument) bool {
	return groupable(b) && a.ID == b.ID && b.End-b.Start == a.End-a.Start && a.Status == b.Status &&
		a.PublishDate == b.PublishDate && a.ParentID == b.ParentID && docFlags(a) == docFlags(b) &&
		samePoint(a, b) && slices.Equal(a.CategoryIDs, b.CategoryIDs) && slices.Equal(a.TagIDs, b.TagIDs) &&
		slices.Equal(a.VenueIDs, b.VenueIDs) && slices.Equal(a.OrganizerIDs, b.OrganizerIDs) && maps.Equal(a.Text, b.Text)
}

// samePoint reports whether a and b have the same geo point entry: both
// none, or equal points (a NaN point equals nothing: it gets an entry of
// its own).
func samePoint(a, b *search.EventDocument) bool {
	pa, pb := a.HasGeo && a.Geo != nil, b.HasGeo && b.Geo != nil
	if !pa || !pb {
		return pa == pb
	}
	return *a.Geo == *b.Geo
}

// lastOfEach returns docs without the documents that a later one of the
// same key replaces, in their order.
func lastOfEach(docs []search.EventDocument) []search.EventDocument {
	last := make(map[docKey]int, len(docs))
	for i := range docs {
		last[keyOf(&docs[i])] = i
	}
	if len(last) == len(docs) {
		return docs
	}
	out := make([]search.EventDocument, 0, len(last))
	for i := range docs {
		if last[keyOf(&docs[i])] == i {
			out = append(out, docs[i])
		}
	}
	return out
}

// removeStale removes the documents of the IDs of docs that docs do not
// hold (the occurrences a series no longer has, a series that became a
// single event or the reverse). The caller holds writeMu.
func (x *Index) removeStale(docs []search.EventDocument) {
	keep := make(map[docKey]struct{}, len(docs))
	for i := range docs {
		keep[keyOf(&docs[i])] = struct{}{}
	}
	var stale []uint32
	x.mu.RLock()
	for id := range x.idsOf(docs) {
		for _, slot := range x.byID[id] {
			if _, ok := keep[docKey{id, x.rows[slot].occ}]; !ok {
				stale = append(stale, slot)
			}
		}
	}
	x.mu.RUnlock()
	x.removeSlots(stale)
}

// idsOf returns the distinct IDs of docs.
func (x *Index) idsOf(docs []search.EventDocument) map[int64]struct{} {
	ids := make(map[int64]struct{}, len(docs))
	for i := range docs {
		ids[docs[i].ID] = struct{}{}
	}
	return ids
}

// builtKey names a word of one language and visibility.
type builtKey struct {
	lang string
	vis  visibility
	w    string
}

// build chooses the slot of each document of chunk (as linkChunk will
// take them: its own, or a free one, or a new one) and makes, outside the
// lock, the words that no vocabulary holds yet, with their postings of the
// chunk's documents, so that linking them under the lock only puts them in
// their vocabulary. A document whose ID the chunk holds twice gets no
// built words (its first version is unlinked by the second). The caller
// holds writeMu only.
func (x *Index) build(chunk []prepared) ([]uint32, map[builtKey]*word) {
	count := map[docKey]int{}
	for i := range chunk {
		count[keyOf(chunk[i].d)]++
	}
	slots := make([]uint32, len(chunk))
	assigned := map[docKey]uint32{}
	free, next := len(x.free), uint32(len(x.rows))
	built := map[builtKey]*word{}
	for i := range chunk {
		p := &chunk[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf[k]
		if !ok {
			if slot, ok = assigned[k]; !ok {
				if free > 0 {
					free--
					slot = x.free[free]
				} else {
					slot = next
					next++
				}
				assigned[k] = slot
			}
		}
		slots[i] = slot
		if count[k] > 1 || p.shares {
			// A shared word list gets the slot when linked.
			continue
		}
		vis := p.visibility()
		for _, t := range p.texts {
			if t.aliasOf != "" {
				continue
			}
			v := x.existing(t.lang, vis)
			for part, words := range [2][]string{t.title, t.body} {
				for _, w := range words {
					if v != nil && v.byText[w] != nil {
						continue
					}
					k := builtKey{t.lang, vis, w}
					e := built[k]
					if e == nil {
						e = &word{text: w}
						built[k] = e
					}
					b := &e.body
					if part == 0 {
						b = &e.title
					}
					if *b == nil {
						*b = roaring.New()
					}
					(*b).Add(slot)
				}
			}
		}
	}
	return slots, built
}

// take returns slot, taken from the free slots or by growing rows (build
// chose it as allocate would have).
func (x *Index) take(slot uint32) uint32 {
	if int(slot) == len(x.rows) {
		return x.allocate()
	}
	if i := slices.Index(x.free, slot); i >= 0 {
		x.free = slices.Delete(x.free, i, i+1)
		return slot
	}
	panic("memindex: build chose a slot that is neither free nor next")
}

// merged is the new sorted order of one vocabulary, built outside the
// lock: its live sorted and recent words and added new words (not yet in
// byText).
type merged struct {
	lang   string
	vis    visibility
	sorted []string
	added  map[string]struct{}
}

// premerge returns the new sorted order of every vocabulary whose new
// words (those of chunk not in it yet), with the ones already waiting,
// would exceed recentMax. The caller holds writeMu only: no other writer
// changes the vocabularies it reads.
func (x *Index) premerge(chunk []prepared) []merged {
	type key struct {
		lang string
		vis  visibility
	}
	news := map[key]map[string]struct{}{}
	for i := range chunk {
		p := &chunk[i]
		if p.shares {
			continue // the words of an earlier document
		}
		for _, t := range p.texts {
			if t.aliasOf != "" {
				continue
			}
			k := key{t.lang, p.visibility()}
			v := x.existing(k.lang, k.vis)
			for _, ws := range [][]string{t.title, t.body} {
				for _, w := range ws {
					if v != nil && v.byText[w] != nil {
						continue
					}
					if news[k] == nil {
						news[k] = map[string]struct{}{}
					}
					news[k][w] = struct{}{}
				}
			}
		}
	}
	var out []merged
	for k, set := range news {
		v := x.existing(k.lang, k.vis)
		waiting := 0
		if v != nil {
			waiting = len(v.recent)
		}
		if waiting+len(set) <= recentMax {
			continue
		}
		add := slices.Collect(maps.Keys(set))
		var live []string
		if v != nil {
			add = append(add, v.recent...)
			live = v.sorted
			if v.stale > 0 {
				live = make([]string, 0, len(v.sorted)-v.stale)
				for _, w := range v.sorted {
					if v.byText[w] != nil {
						live = append(live, w)
					}
				}
			}
		}
		slices.Sort(add)
		out = append(out, merged{lang: k.lang, vis: k.vis, sorted: mergeSorted(live, add), added: set})
	}
	return out
}

// mergeSorted merges two sorted lists of distinct words.
func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] < b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// load fills an empty index with prepared documents, building the date
// order in one sort and each vocabulary's order in one merge.
func (x *Index) load(preps []prepared) {
	for i := range preps {
		p := &preps[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf[k]
		if ok {
			// A repeated key: the later document wins.
			if x.rows[slot].grp != nil {
				x.unplace(slot)
			}
			x.unlink(slot)
		} else {
			slot = x.allocate()
			x.slotOf[k] = slot
			x.byID[k.id] = append(x.byID[k.id], slot)
		}
		x.link(slot, p)
		if p.grp != nil {
			x.place(slot, p.grp)
		}
	}
	for _, l := range x.langs {
		for _, v := range l.parts {
			v.merge()
		}
	}
	all := make([]entry, 0, len(x.slotOf)-x.nGrouped)
	for _, slot := range x.slotOf {
		if x.rows[slot].grp == nil {
			all = append(all, x.rows[slot].e)
		}
	}
	slices.SortFunc(all, x.compare)
	x.order = blocks{}
	for len(all) > 0 {
		n := min(len(all), blockMax/2)
		x.order = append(x.order, newBlock(slices.Clone(all[:n])))
		all = all[n:]
	}
}

// Remove deletes events, every document (occurrence) of each; IDs not in
// the index are ignored. Like Apply, it releases the lock between chunks
// of about chunkWords words.
func (x *Index) Remove(ids []int64) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	var slots []uint32
	x.mu.RLock()
	for _, id := range ids {
		slots = append(slots, x.byID[id]...)
	}
	x.mu.RUnlock()
	x.removeSlots(slots)
	x.compact()
}

// removeSlots removes the documents at slots (distinct, live), releasing
// the lock between chunks of about chunkWords words. The caller holds
// writeMu.
func (x *Index) removeSlots(slots []uint32) {
	for len(slots) > 0 {
		x.mu.Lock()
		words := 0
		touched := map[int64]struct{}{}
		for len(slots) > 0 && words < chunkWords {
			slot := slots[0]
			slots = slots[1:]
			r := &x.rows[slot]
			words += len(r.words)
			x.unplace(slot)
			x.unlink(slot)
			delete(x.slotOf, docKey{r.id, r.occ})
			touched[r.id] = struct{}{}
			x.rows[slot] = row{}
			x.ents[slot] = entry{}
			x.free = append(x.free, slot)
		}
		for id := range touched {
			if rest := slices.DeleteFunc(x.byID[id], func(s uint32) bool { return !x.rows[s].live }); len(rest) > 0 {
				x.byID[id] = rest
			} else {
				delete(x.byID, id)
				if n, ok := x.seriesOf[id]; ok {
					delete(x.seriesOf, id)
					x.seriesFree = append(x.seriesFree, n)
				}
			}
		}
		x.mu.Unlock()
	}
}

// compact drops the words that left from the sorted order of every
// vocabulary where they are more than half of it, building the new order
// outside the lock. The caller holds writeMu (so nothing it reads
// changes).
func (x *Index) compact() {
	for _, l := range x.langs {
		for _, v := range l.parts {
			if v.stale == 0 || v.stale <= len(v.sorted)/2 {
				continue
			}
			live := make([]string, 0, len(v.sorted)-v.stale)
			for _, w := range v.sorted {
				if v.byText[w] != nil {
					live = append(live, w)
				}
			}
			x.mu.Lock()
			v.sorted, v.stale = live, 0
			x.mu.Unlock()
		}
	}
}

// allocate returns a free slot, growing rows when none is.
func (x *Index) allocate() uint32 {
	if n := len(x.free); n > 0 {
		slot := x.free[n-1]
		x.free = x.free[:n-1]
		return slot
	}
	x.rows = append(x.rows, row{})
	x.ents = append(x.ents, entry{})
	return uint32(len(x.rows) - 1)
}

// link sets the row of the prepared document at slot and adds it to the
// bitmaps and points.
func (x *Index) link(slot uint32, p *prepared) {
	d := p.d
	r := row{
		live: true, id: d.ID, occ: d.Occurrence, pub: d.PublishDate, parent: d.ParentID, status: d.Status,
		e: entry{start: d.Start, end: d.End, slot: slot, point: -1, status: x.statusCode(d.Status), flags: p.flags},
	}
	if d.Occurrence != "" {
		r.e.series = x.seriesNumber(d.ID)
	}
	var like *row
	if p.shares {
		if s, ok := x.slotOf[p.like]; ok && x.rows[s].live && x.rows[s].id == d.ID {
			like = &x.rows[s]
		}
	}
	lists := [numLists][]int64{d.CategoryIDs, d.TagIDs, d.VenueIDs, d.OrganizerIDs}
	for l, values := range lists {
		if like != nil && slices.Equal(like.lists[l], values) {
			r.lists[l] = like.lists[l] // an occurrence: the series' lists
		} else {
			r.lists[l] = slices.Clone(values)
		}
	}
	if d.HasGeo && d.Geo != nil {
		r.e.point = x.addPoint(*d.Geo)
	}
	for l, values := range r.lists {
		for _, v := range values {
			b := x.lists[l][v]
			if b == nil {
				b = roaring.New()
				x.lists[l][v] = b
			}
			b.Add(slot)
		}
	}
	if like != nil {
		// An occurrence with its series' text: the same words, so the
		// same postings, in the same vocabularies (like holds them).
		r.words, r.aliases = like.words, like.aliases
		for _, ref := range r.words {
			b := &ref.w.body
			if ref.title {
				b = &ref.w.title
			}
			(*b).Add(slot)
		}
		for _, a := range r.aliases {
			a.Add(slot)
		}
		x.rows[slot] = r
		x.ents[slot] = r.e
		return
	}
	r.words = make([]wordRef, 0, p.words)
	for _, t := range p.texts {
		if t.aliasOf != "" {
			l := x.language(t.lang)
			a := l.aliases[t.aliasOf]
			if a == nil {
				a = roaring.New()
				l.aliases[t.aliasOf] = a
			}
			a.Add(slot)
			r.aliases = append(r.aliases, a)
			continue
		}
		vis := p.visibility()
		v := x.vocabulary(t.lang, vis)
		built := func(w string) *word { return x.built[builtKey{t.lang, vis, w}] }
		r.words = v.add(r.words, slot, t.title, true, built)
		r.words = v.add(r.words, slot, t.body, false, built)
	}
	x.rows[slot] = r
	x.ents[slot] = r.e
}

// seriesNumber returns the number of series id, giving it one.
func (x *Index) seriesNumber(id int64) uint32 {
	if n, ok := x.seriesOf[id]; ok {
		return n
	}
	var n uint32
	if k := len(x.seriesFree); k > 0 {
		n, x.seriesFree = x.seriesFree[k-1], x.seriesFree[:k-1]
	} else {
		x.seriesMax++
		n = x.seriesMax
	}
	x.seriesOf[id] = n
	return n
}

// language returns the words of lang, creating them.
func (x *Index) language(lang string) *language {
	l := x.langs[lang]
	if l == nil {
		l = &language{parts: map[visibility]*vocabulary{}, aliases: map[string]*roaring.Bitmap{}}
		x.langs[lang] = l
	}
	return l
}

// vocabulary returns the vocabulary of lang and vis, creating it.
func (x *Index) vocabulary(lang string, vis visibility) *vocabulary {
	l := x.language(lang)
	v := l.parts[vis]
	if v == nil {
		v = &vocabulary{byText: map[string]*word{}}
		l.parts[vis] = v
	}
	return v
}

// existing returns the vocabulary of lang and vis, or nil.
func (x *Index) existing(lang string, vis visibility) *vocabulary {
	if l := x.langs[lang]; l != nil {
		return l.parts[vis]
	}
	return nil
}

// add records that the row at slot holds words (distinct, in its title or
// body), appending the postings to refs; the slot is in no bitmap of the
// vocabulary yet, except those of the words the writer built for it
// (built: nil when none). A new word not sorted yet waits in recent (the
// writer merges, see premerge).
func (v *vocabulary) add(refs []wordRef, slot uint32, words []string, title bool, built func(string) *word) []wordRef {
	for _, w := range words {
		e := v.byText[w]
		if e == nil {
			if e = built(w); e == nil {
				e = &word{text: w}
			}
			e.vocab = v
			v.byText[w] = e
			if _, ok := v.pending[w]; ok {
				delete(v.pending, w) // merged in ahead
				v.stale--
			} else if v.stale > len(v.pending) && sortedHas(v.sorted, w) {
				v.stale-- // left there when it went
			} else {
				v.recent = append(v.recent, w)
			}
		}
		b := &e.body
		if title {
			b = &e.title
		}
		if *b == nil {
			*b = roaring.New()
		}
		(*b).Add(slot)
		refs = append(refs, wordRef{w: e, title: title})
	}
	return refs
}

// sortedHas reports whether the sorted words hold w.
func sortedHas(sorted []string, w string) bool {
	_, ok := slices.BinarySearch(sorted, w)
	return ok
}

// textWords returns the words of an indexed text by the contract's rules.
func textWords(s string) []string { return search.IndexedWords(search.PlainText(s)) }

// statusCode returns the code of a status, numbering a new one.
func (x *Index) statusCode(s string) uint8 {
	if c, ok := x.statuses[s]; ok {
		return c
	}
	if len(x.statuses) >= maxStatusCode {
		return 0
	}
	c := uint8(len(x.statuses) + 1)
	x.statuses[s] = c
	return c
}

// addPoint returns the index of p in the point table, adding it.
func (x *Index) addPoint(p search.GeoPoint) int32 {
	// A point with a NaN coordinate never equals itself, so it is never
	// found again: it gets an entry of its own.
	shared := !math.IsNaN(p.Lat) && !math.IsNaN(p.Lng)
	if i, ok := x.pointOf[p]; ok && shared {
		x.points[i].refs++
		return i
	}
	var i int32
	if n := len(x.freePts); n > 0 {
		i = x.freePts[n-1]
		x.freePts = x.freePts[:n-1]
		x.points[i] = point{p: p, refs: 1}
	} else {
		x.points = append(x.points, point{p: p, refs: 1})
		i = int32(len(x.points) - 1)
	}
	if shared {
		x.pointOf[p] = i
	}
	return i
}

// unlink removes the row at slot from the bitmaps and points; a word no
// row holds any more leaves its vocabulary.
func (x *Index) unlink(slot uint32) {
	r := &x.rows[slot]
	for _, ref := range r.words {
		e := ref.w
		b := &e.body
		if ref.title {
			b = &e.title
		}
		if (*b).Remove(slot); (*b).IsEmpty() {
			*b = nil
		}
		if e.title == nil && e.body == nil {
			forget(e)
		}
	}
	for _, a := range r.aliases {
		a.Remove(slot)
	}
	for l, values := range r.lists {
		for _, v := range values {
			if b := x.lists[l][v]; b != nil {
				b.Remove(slot)
				if b.IsEmpty() {
					delete(x.lists[l], v)
				}
			}
		}
	}
	if i := r.e.point; i >= 0 {
		if x.points[i].refs--; x.points[i].refs == 0 {
			if x.pointOf[x.points[i].p] == i {
				delete(x.pointOf, x.points[i].p)
			}
			x.freePts = append(x.freePts, i)
		}
	}
}

// forget drops an unused word from its vocabulary: from recent, or, left
// in sorted, it counts as stale until the writer compacts (compact).
func forget(e *word) {
	v := e.vocab
	delete(v.byText, e.text)
	if _, ok := slices.BinarySearch(v.sorted, e.text); ok {
		v.stale++
		return
	}
	if i := slices.Index(v.recent, e.text); i >= 0 {
		v.recent = slices.Delete(v.recent, i, i+1)
	}
}

// merge sorts the recent words into sorted and drops the stale ones.
func (v *vocabulary) merge() {
	slices.Sort(v.recent)
	out := make([]string, 0, len(v.byText))
	i := 0
	for _, w := range v.sorted {
		if v.byText[w] == nil {
			continue
		}
		for ; i < len(v.recent) && v.recent[i] < w; i++ {
			out = append(out, v.recent[i])
		}
		out = append(out, w)
	}
	v.sorted, v.recent, v.stale = append(out, v.recent[i:]...), nil, 0
}

// compare orders entries by start, then by event ID, then by occurrence
// key.
func (x *Index) compare(a, b entry) int {
	if c := cmp.Compare(a.start, b.start); c != 0 || a.slot == b.slot {
		return c
	}
	ra, rb := &x.rows[a.slot], &x.rows[b.slot]
	return cmp.Or(cmp.Compare(ra.id, rb.id), cmp.Compare(ra.occ, rb.occ))
}

// blocks is the date order: sorted runs of entries, each non-empty and of
// at most blockMax entries, in order, with a summary of each.
type blocks []*block

// block is one run of the date order and its summary: the range of its
// entries' ends, and how many entries it holds of each status and flags.
// A list counts a block that its date bounds hold whole from the summary,
// without reading the entries (Search's blockCount).
type block struct {
	e              []entry
	minEnd, maxEnd int64
	kinds          []kindCount
	// occurrences counts the entries of series (occurrences with an
	// override): a collapsed list counts a block from its summary only
	// without them.
	occurrences int32
}

// kindCount is the number of entries of a block with one status and flags.
type kindCount struct {
	status, flags uint8
	n             int32
}

// blockMax bounds a block: a write moves at most this many entries (8 KiB).
const blockMax = 256

// newBlock returns the block of entries with its summary.
func newBlock(es []entry) *block {
	b := &block{e: es}
	b.summarize()
	return b
}

// summarize computes the block's summary from its entries.
func (b *block) summarize() {
	b.minEnd, b.maxEnd, b.kinds, b.occurrences = math.MaxInt64, math.MinInt64, b.kinds[:0], 0
	for i := range b.e {
		b.count(&b.e[i], 1)
	}
}

// count adds (delta 1) or removes (-1) an entry in the summary; the end
// range only grows here (summarize narrows it).
func (b *block) count(e *entry, delta int32) {
	b.minEnd, b.maxEnd = min(b.minEnd, e.end), max(b.maxEnd, e.end)
	if e.series != 0 {
		b.occurrences += delta
	}
	for i := range b.kinds {
		if k := &b.kinds[i]; k.status == e.status && k.flags == e.flags {
			if k.n += delta; k.n == 0 {
				b.kinds = slices.Delete(b.kinds, i, i+1)
			}
			return
		}
	}
	if delta > 0 {
		b.kinds = append(b.kinds, kindCount{status: e.status, flags: e.flags, n: delta})
	}
}

// find returns the block and position where e is or belongs.
func (bs blocks) find(x *Index, e entry) (int, int) {
	b := sort.Search(len(bs), func(i int) bool { return x.compare(bs[i].e[len(bs[i].e)-1], e) >= 0 })
	if b == len(bs) {
		if b == 0 {
			return 0, 0
		}
		return b - 1, len(bs[b-1].e)
	}
	i := sort.Search(len(bs[b].e), func(i int) bool { return x.compare(bs[b].e[i], e) >= 0 })
	return b, i
}

func (bs *blocks) insert(x *Index, e entry) {
	if len(*bs) == 0 {
		*bs = blocks{newBlock([]entry{e})}
		return
	}
	b, i := bs.find(x, e)
	blk := (*bs)[b]
	blk.e = slices.Insert(blk.e, i, e)
	if len(blk.e) <= blockMax {
		blk.count(&e, 1)
		return
	}
	half := len(blk.e) / 2
	left, right := newBlock(slices.Clone(blk.e[:half])), newBlock(slices.Clone(blk.e[half:]))
	(*bs)[b] = left
	*bs = slices.Insert(*bs, b+1, right)
}

func (bs *blocks) remove(x *Index, e entry) {
	b, i := bs.find(x, e)
	if b >= len(*bs) || i >= len((*bs)[b].e) || (*bs)[b].e[i].slot != e.slot {
		return // not in the order (cannot happen: every live row is)
	}
	blk := (*bs)[b]
	blk.e = slices.Delete(blk.e, i, i+1)
	if len(blk.e) == 0 {
		*bs = slices.Delete(*bs, b, b+1)
		return
	}
	if e.end == blk.minEnd || e.end == blk.maxEnd {
		blk.summarize() // the end range may narrow
		return
	}
	blk.count(&e, -1)
}

// maxPage bounds Offset and Limit so that their sum cannot overflow.
const maxPage = math.MaxInt32

// Search runs q: the page of IDs in q's order, the exact total, and the
// facets q asks for.
//
// The documents of the date order (single events, and occurrences with
// an override) are read there; each group of uniform occurrences (see
// group) is decided once, on its representative, and brings its members
// within the date bounds, found by binary search; a page merges the two
// in the date order.
func (x *Index) Search(ctx context.Context, q search.EventQuery) (search.Result, error) {
	if err := ctx.Err(); err != nil {
		return search.Result{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	p := x.plan(q)
	s := &searcher{x: x, p: p, res: search.Result{IDs: []int64{}}, counts: newFacetCounts(x, q.Facets)}
	s.offset, s.limit = min(max(q.Offset, 0), maxPage), min(max(q.Limit, 0), maxPage)
	if !p.none {
		gs := p.groups(x)
		switch {
		case p.ranked():
			s.ranked(gs)
		case q.CollapseSeries:
			s.collapsed(gs)
		case len(gs) == 0:
			s.ordered()
		default:
			s.merged(gs)
		}
	}
	s.res.Facets = s.counts.result(x)
	s.res.Occurrences = s.occs
	return s.res, nil
}

// searcher is one run of Search: the page and total it builds.
type searcher struct {
	x             *Index
	p             *plan
	res           search.Result
	occs          []string
	counts        *facetCounts
	offset, limit int
	// seen holds a bit per series number, for CollapseSeries.
	seen []uint64
}

// put appends the document at slot to the page.
func (s *searcher) put(slot uint32) {
	r := &s.x.rows[slot]
	s.res.IDs = append(s.res.IDs, r.id)
	if r.occ != "" && s.occs == nil {
		s.occs = make([]string, len(s.res.IDs)-1, cap(s.res.IDs))
	}
	if s.occs != nil {
		s.occs = append(s.occs, r.occ)
	}
}

// first reports whether the document of entry e is the first of its
// series seen (always true for a single event, or without
// CollapseSeries): a bit per series number, read from the entry.
func (s *searcher) first(e *entry) bool {
	n := e.series
	if !s.p.q.CollapseSeries || n == 0 {
		return true
	}
	if s.seen == nil {
		s.seen = make([]uint64, s.x.seriesMax/64+1)
	}
	if s.seen[n>>6]&(1<<(n&63)) != 0 {
		return false
	}
	s.seen[n>>6] |= 1 << (n & 63)
	return true
}

// ranked runs a query ordered by something other than the date order:
// best match first (a relevance order), then by the query's date (start
// or publish date), then by ID and occurrence key. Every match of the
// date order is scored, and a group once (its members match the same
// words). In a start order a group's members are in that order already:
// within one score the matches are in the date order, so a page is cut
// from the scores' runs as a date-ordered page is (scorePage), at a cost
// that does not grow with its offset. In a publish-date order a group's
// members tie on everything but their key and are ranked one by one, as
// are the series' first matches of a collapsed query.
func (s *searcher) ranked(gs []groupHit) {
	x, p := s.x, s.p
	byStart := p.q.Sort != search.ByPublishDate
	var hits []rankHit
	p.each(x, 0, func(e *entry) {
		date := e.start
		if !byStart {
			date = x.rows[e.slot].pub
		}
		hits = append(hits, rankHit{score: p.score(e.slot), date: date, slot: e.slot, gi: -1})
		s.counts.add(e.slot, e)
	}, nil)
	total := len(hits)
	for i := range gs {
		h := &gs[i]
		total += h.hi - h.lo
		s.counts.addGroup(x, h.g, h.hi-h.lo)
		score := p.score(h.g.rep)
		if byStart {
			// The first member stands for the group.
			hits = append(hits, rankHit{score: score, date: h.start, slot: h.g.occ[h.lo].slot, gi: int32(i)})
			continue
		}
		for k := h.lo; k < h.hi; k++ {
			slot := h.g.occ[k].slot
			hits = append(hits, rankHit{score: score, date: x.rows[slot].pub, slot: slot, gi: -1})
		}
	}
	if p.q.CollapseSeries {
		// Each series once, by its best match (a group's first member is
		// its best).
		hits = s.collapseRanked(hits)
		total = len(hits)
	}
	s.res.Total = total
	if s.limit == 0 || s.offset >= total {
		return
	}
	if !byStart || p.q.CollapseSeries {
		selectK(hits, s.offset, s.compareRanked)
		page := hits[s.offset:]
		firstK(page, s.limit, s.compareRanked)
		for _, h := range page[:min(s.limit, len(page))] {
			s.put(h.slot)
		}
		return
	}
	s.scorePage(hits, gs)
}

// scorePage puts the page of a ranked query in a start order: the
// matches by score, best first, each score's matches in the date order
// (the date order's hits and the groups' members), the page cut from the
// runs of the scores it overlaps (datePage).
func (s *searcher) scorePage(hits []rankHit, gs []groupHit) {
	sizes := map[float64]int{}
	for _, h := range hits {
		n := 1
		if h.gi >= 0 {
			n = gs[h.gi].hi - gs[h.gi].lo
		}
		sizes[h.score] += n
	}
	scores := slices.Sorted(maps.Keys(sizes))
	slices.Reverse(scores)
	pos, left := s.offset, s.limit
	for _, score := range scores {
		n := sizes[score]
		if pos >= n {
			pos -= n
			continue
		}
		var main []uint32
		var groups []groupHit
		for _, h := range hits {
			switch {
			case h.score != score:
			case h.gi >= 0:
				groups = append(groups, gs[h.gi])
			default:
				main = append(main, h.slot)
			}
		}
		take := min(left, n-pos)
		s.datePage(main, groups, pos, take)
		if left -= take; left == 0 {
			return
		}
		pos = 0
	}
}

// datePage puts on the page the matches from position from, take of them,
// of the date-ordered merge of main (slots, in no order) and the members
// of gs. Past deepOffset it finds the start of the page first.
func (s *searcher) datePage(main []uint32, gs []groupHit, from, take int) {
	x := s.x
	if from > deepOffset {
		starts := make([]int64, len(main))
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for i, slot := range main {
			starts[i] = x.ents[slot].start
			lo, hi = min(lo, starts[i]), max(hi, starts[i])
		}
		mainUpTo := func(t int64) int {
			n := 0
			for _, st := range starts {
				if st <= t {
					n++
				}
			}
			return n
		}
		t, before := pageStart(gs, from, mainUpTo, lo, hi)
		from -= before
		main = slices.DeleteFunc(main, func(slot uint32) bool { return x.ents[slot].start < t })
		gs = membersFrom(gs, t)
	}
	need := from + take
	x.sortFirst(main, need)
	firstK(gs, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
	s.merge(main[:min(need, len(main))], newCursors(x, gs[:min(need, len(gs))]), from, need)
}

// rankHit is a match in a ranked query: its score and date, and, for a
// group's first member standing for the group (gi >= 0), the group hit.
type rankHit struct {
	score float64
	date  int64
	slot  uint32
	gi    int32
}

// compareRanked orders ranked hits: best score first, then by date, ID
// and occurrence key.
func (s *searcher) compareRanked(a, b rankHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := cmp.Compare(a.date, b.date); c != 0 {
		return c
	}
	ra, rb := &s.x.rows[a.slot], &s.x.rows[b.slot]
	return cmp.Or(cmp.Compare(ra.id, rb.id), cmp.Compare(ra.occ, rb.occ))
}

// collapseRanked keeps, of the hits of each series, the first in the
// ranked order (single events all stay).
func (s *searcher) collapseRanked(hits []rankHit) []rankHit {
	best := map[uint32]int{}
	keep := hits[:0]
	for _, h := range hits {
		n := s.x.ents[h.slot].series
		if n == 0 {
			keep = append(keep, h)
			continue
		}
		if i, ok := best[n]; !ok {
			best[n] = len(keep)
			keep = append(keep, h)
		} else if s.compareRanked(h, keep[i]) < 0 {
			keep[i] = h
		}
	}
	return keep
}

// score returns the relevance score of the document at slot: for each
// query word, the score of the best way it matches (0 without words).
func (p *plan) score(slot uint32) float64 {
	total := 0.0
	for _, classes := range p.words {
		for _, c := range classes {
			if c.rows.Contains(slot) {
				total += c.score
				break
			}
		}
	}
	return total
}

// ordered runs a query in the date order when no group matches: the date
// order alone, where a block wholly before or after the page is only
// counted (when its summary can count it, and no facet is asked for).
func (s *searcher) ordered() {
	offset, limit := s.offset, s.limit
	var skip func(n int) bool
	if len(s.p.q.Facets) == 0 {
		skip = func(n int) bool {
			if s.res.Total+n <= offset || s.res.Total >= offset+limit {
				s.res.Total += n
				return true
			}
			return false
		}
	}
	ordered := offset + limit
	if limit == 0 {
		ordered = 0 // the total only: no order needed
	}
	s.p.each(s.x, ordered, func(e *entry) {
		if s.res.Total >= offset && s.res.Total < offset+limit {
			s.put(e.slot)
		}
		s.res.Total++
		s.counts.add(e.slot, e)
	}, skip)
}

// merged runs a query in the date order with matching groups: the first
// offset+limit matches of the date order (the rest counted, from the
// blocks' summaries when they can), merged with the groups' members.
func (s *searcher) merged(gs []groupHit) {
	x := s.x
	need := s.offset + s.limit
	if s.limit == 0 {
		need = 0
	}
	deep := s.offset > deepOffset
	collect := need
	if deep {
		collect = 0
	}
	main, total := s.mainFirst(s.p, collect, true)
	for _, h := range gs {
		total += h.hi - h.lo
		s.counts.addGroup(x, h.g, h.hi-h.lo)
	}
	s.res.Total = total
	if need == 0 || s.offset >= total {
		return
	}
	from := s.offset
	if deep {
		// The page's first match starts at t: the matches before it are
		// skipped whole, and the page is merged from the matches at t on.
		p := s.p
		mainUpTo := func(t int64) int {
			q := *p
			q.startMax = min(q.startMax, t)
			_, n := s.mainFirst(&q, 0, false)
			return n
		}
		// The date order's starts lie within its first and last entries'.
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		if len(x.order) > 0 {
			last := x.order[len(x.order)-1]
			lo, hi = x.order[0].e[0].start, last.e[len(last.e)-1].start
		}
		t, before := pageStart(gs, s.offset, mainUpTo, max(lo, p.startMin), min(hi, p.startMax))
		from -= before
		need = from + s.limit
		q := *p
		q.startMin = max(q.startMin, t)
		main, _ = s.mainFirst(&q, need, false)
		gs = membersFrom(gs, t)
	}
	// Only the groups whose first member in the bounds is among the need
	// first such can have a member on the page: need members come before
	// any member of the others.
	firstK(gs, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
	s.merge(main, newCursors(x, gs[:min(need, len(gs))]), from, need)
}

// deepOffset is the offset past which a merged page is found by its
// start (pageStart) rather than by merging every match before it: a page
// at offset n would otherwise cost n steps of the merge (300,000 matches
// into a page: 130 ms), where pageStart costs about 30 counts of the
// matches up to a date, each reading the date order's block summaries and
// one binary search per group. A variable so that the tests can find
// every page by its start.
var deepOffset = 2048

// mainFirst reads the date order's matches of p: the first collect of
// them in order, and their number (counting whole blocks from their
// summaries when it can). With facets, it counts every match in them.
func (s *searcher) mainFirst(p *plan, collect int, facets bool) ([]uint32, int) {
	var main []uint32
	n := 0
	var skip func(k int) bool
	if !facets || len(p.q.Facets) == 0 {
		skip = func(k int) bool {
			if len(main) >= collect {
				n += k
				return true
			}
			return false
		}
	}
	p.each(s.x, collect, func(e *entry) {
		if len(main) < collect {
			main = append(main, e.slot)
		}
		n++
		if facets {
			s.counts.add(e.slot, e)
		}
	}, skip)
	return main, n
}

// pageStart returns the start t of the match at position offset of a
// date-ordered merge and the number of its matches that start before t,
// by bisection on t. The merge is of a stream whose matches mainUpTo
// counts (those starting at or before a time; their starts lie within
// [lo, hi]) and of the members gs holds. The caller made sure that offset
// is below the merge's size.
func pageStart(gs []groupHit, offset int, mainUpTo func(t int64) int, lo, hi int64) (int64, int) {
	// upTo returns the number of matches starting at or before t.
	upTo := func(t int64) int {
		n := mainUpTo(t)
		for i := range gs {
			h := &gs[i]
			occ := h.g.occ[h.lo:h.hi]
			switch {
			case occ[len(occ)-1].start <= t:
				n += len(occ)
			case occ[0].start <= t:
				n += sort.Search(len(occ), func(k int) bool { return occ[k].start > t })
			}
		}
		return n
	}
	for i := range gs {
		h := &gs[i]
		lo, hi = min(lo, h.g.occ[h.lo].start), max(hi, h.g.occ[h.hi-1].start)
	}
	// The smallest t with more than offset matches at or before it.
	for lo < hi {
		mid := int64(uint64(lo) + (uint64(hi)-uint64(lo))/2)
		if upTo(mid) > offset {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == math.MinInt64 {
		return lo, 0
	}
	return lo, upTo(lo - 1)
}

// membersFrom returns the group hits with their members starting at or after t
// (those left with none dropped), reusing gs.
func membersFrom(gs []groupHit, t int64) []groupHit {
	kept := gs[:0]
	for _, h := range gs {
		occ := h.g.occ[:h.hi]
		if h.lo += sort.Search(h.hi-h.lo, func(k int) bool { return occ[h.lo+k].start >= t }); h.lo < h.hi {
			h.start = occ[h.lo].start
			kept = append(kept, h)
		}
	}
	return kept
}

// merge puts on the page the matches from from to need of two streams in
// the date order: main (slots) and the groups' cursors.
func (s *searcher) merge(main []uint32, c *cursors, from, need int) {
	x := s.x
	for k, i := 0, 0; k < need; k++ {
		var slot uint32
		switch {
		case i < len(main) && (c.Len() == 0 || c.after(x.ents[main[i]])):
			slot = main[i]
			i++
		case c.Len() > 0:
			slot = c.pop()
		default:
			return
		}
		if k >= from {
			s.put(slot)
		}
	}
}

// collapsed runs a CollapseSeries query in the date order: each series is
// listed once, by its first match, which is the first member in the date
// bounds of its groups or a match of the date order (an occurrence with
// an override), whichever comes first; the date order is read whole (a
// series' first match there decides where it is listed).
func (s *searcher) collapsed(gs []groupHit) {
	x := s.x
	need := s.offset + s.limit
	if s.limit == 0 {
		need = 0
	}
	// gfirst holds, per series number, the index in gs of the group hit
	// with the first member in the bounds (-1: none, or a match of the
	// date order comes first).
	var gfirst []int32
	if len(gs) > 0 {
		gfirst = make([]int32, x.seriesMax+1)
		for i := range gfirst {
			gfirst[i] = -1
		}
	}
	for i := range gs {
		h := &gs[i]
		if k := gfirst[h.series]; k < 0 || x.compareHits(h, &gs[k]) < 0 {
			gfirst[h.series] = int32(i)
		}
		s.counts.addGroup(x, h.g, h.hi-h.lo)
	}
	var main []uint32
	listed := 0
	var skip func(n int) bool
	if len(s.p.q.Facets) == 0 {
		// A block without occurrences (each checks) after the page is
		// only counted: its single events are all listed.
		skip = func(n int) bool {
			if len(main) >= need {
				listed += n
				return true
			}
			return false
		}
	}
	s.p.each(x, math.MaxInt, func(e *entry) {
		s.counts.add(e.slot, e)
		if !s.first(e) {
			return
		}
		if n := e.series; gfirst != nil && n != 0 && gfirst[n] >= 0 {
			if x.before(*e, &gs[gfirst[n]]) {
				gfirst[n] = -1
			} else {
				return // the series is listed by its group's member
			}
		}
		if len(main) < need {
			main = append(main, e.slot)
		}
		listed++
	}, skip)
	var reps []groupHit
	for _, k := range gfirst {
		if k >= 0 {
			h := gs[k]
			h.hi = h.lo + 1 // the series is listed once
			reps = append(reps, h)
		}
	}
	s.res.Total = listed + len(reps)
	if need > 0 && s.offset < s.res.Total {
		firstK(reps, need, func(a, b groupHit) int { return x.compareHits(&a, &b) })
		s.merge(main, newCursors(x, reps[:min(need, len(reps))]), s.offset, need)
	}
}

// groupHit is a group that a query matches and the range [lo, hi) of its
// members within the query's date bounds.
type groupHit struct {
	g      *group
	lo, hi int
	// start is the start of member lo; series is g's series number.
	start  int64
	series uint32
}

// compareHits orders group hits by their members lo in the date order.
func (x *Index) compareHits(a, b *groupHit) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	return x.compare(a.g.occ[a.lo], b.g.occ[b.lo])
}

// groups decides the groups: those whose representative passes every
// filter but the dates, with their members in the date bounds. When q
// has candidates, they are narrowed to the date order's documents (the
// groups' members are decided here).
func (p *plan) groups(x *Index) []groupHit {
	if len(x.groups) == 0 {
		return nil
	}
	var out []groupHit
	rest := p.byName || p.q.ParentID.Set
	try := func(i int) {
		h := &x.heads[i]
		if h.flags&p.flagMask != p.flagWant || p.statuses != 0 && p.statuses&(1<<h.status) == 0 ||
			p.inside != nil && p.inside[h.point+1] == 0 {
			return
		}
		g := x.groups[i]
		if rest && !p.passesRest(x, &g.occ[0]) { // every member has the representative's status and parent
			return
		}
		if lo, hi, start := p.span(g, h); lo < hi {
			out = append(out, groupHit{g: g, lo: lo, hi: hi, start: start, series: h.series})
		}
	}
	if p.cands == nil {
		for i := range x.heads {
			try(i)
		}
		return out
	}
	it := roaring.And(p.cands, x.reps).ManyIterator()
	buf := make([]uint32, 256)
	for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
		for _, slot := range buf[:n] {
			try(x.rows[slot].grp.at)
		}
	}
	if x.nGrouped > 0 {
		p.cands = roaring.AndNot(p.cands, x.grouped)
		p.mainNone = p.cands.IsEmpty()
	}
	return out
}

// span returns the range [lo, hi) of g's members within p's date bounds
// and the start of member lo: a member's end is its start plus g.dur, so
// the bounds on the end are bounds on the start. The members are read
// only when the bounds cut the group (its head says).
func (p *plan) span(g *group, h *groupHead) (int, int, int64) {
	lo, hi := p.startMin, p.startMax
	if p.endMin != math.MinInt64 {
		if b := p.endMin - h.dur; b <= p.endMin { // else below int64: no bound
			lo = max(lo, b)
		}
	}
	if p.endMax != math.MaxInt64 {
		b := p.endMax - h.dur
		if b > p.endMax {
			return 0, 0, 0 // below int64: no start is low enough
		}
		hi = min(hi, b)
	}
	if lo > hi || h.last < lo || h.first > hi {
		return 0, 0, 0
	}
	if lo <= h.first && h.last <= hi {
		return 0, int(h.n), h.first
	}
	occ := g.occ
	i, j := 0, len(occ)
	if h.first < lo {
		i = sort.Search(len(occ), func(i int) bool { return occ[i].start >= lo })
	}
	if h.last > hi {
		j = i + sort.Search(len(occ)-i, func(k int) bool { return occ[i+k].start > hi })
	}
	if i >= j {
		return 0, 0, 0
	}
	return i, j, occ[i].start
}

// cursors is a heap of groups' members in the date order: each group hit
// at its next member (lo).
type cursors struct {
	x  *Index
	hs []groupHit
}

// newCursors returns the heap of the group hits (which it reorders).
func newCursors(x *Index, hs []groupHit) *cursors {
	c := &cursors{x: x, hs: hs}
	heap.Init(c)
	return c
}

func (c *cursors) Len() int           { return len(c.hs) }
func (c *cursors) Less(i, j int) bool { return c.x.compareHits(&c.hs[i], &c.hs[j]) < 0 }
func (c *cursors) Swap(i, j int)      { c.hs[i], c.hs[j] = c.hs[j], c.hs[i] }
func (c *cursors) Push(v any)         { c.hs = append(c.hs, v.(groupHit)) }
func (c *cursors) Pop() any {
	h := c.hs[len(c.hs)-1]
	c.hs = c.hs[:len(c.hs)-1]
	return h
}

// after reports whether e comes before the first member of the heap
// (Len > 0).
func (c *cursors) after(e entry) bool { return c.x.before(e, &c.hs[0]) }

// before reports whether e comes before member lo of group hit h.
func (x *Index) before(e entry, h *groupHit) bool {
	if e.start != h.start {
		return e.start < h.start
	}
	return x.compare(e, h.g.occ[h.lo]) < 0
}

// pop takes the first member of the heap (Len > 0) and returns its slot.
func (c *cursors) pop() uint32 {
	h := &c.hs[0]
	slot := h.g.occ[h.lo].slot
	if h.lo++; h.lo == h.hi {
		heap.Pop(c)
	} else {
		h.start = h.g.occ[h.lo].start
		heap.Fix(c, 0)
	}
	return slot
}

// plan is a query made ready to run over the index.
type plan struct {
	q search.EventQuery
	// none: nothing can match (a word without a match, an unknown
	// language or status, a negative radius, no listed value).
	none bool
	// statuses: the codes of q.Statuses as bits; byName: q.Statuses holds
	// a status without a code, compared by name on code 0.
	statuses uint64
	byName   bool
	// flagMask and flagWant: an entry passes when flags&mask == want.
	flagMask, flagWant uint8
	// The date bounds of q as inclusive ranges.
	startMin, startMax, endMin, endMax int64
	// cands holds the candidates of the list filters, IDs and words
	// (nil: every event).
	cands *roaring.Bitmap
	// mainNone: no document of the date order can match (the candidates,
	// narrowed to it, are none), while a group may.
	mainNone bool
	// set holds cands as a bit set once each built it (copies of the plan
	// with other date bounds share it).
	set []uint64
	// words holds the scored ways each word matches, for a relevance
	// order.
	words [][]scoredClass
	// inside says for each point whether it is inside q.Near (1) or not
	// (0), at the point's index plus one, so that an entry without a
	// point (-1) reads 0 (nil: no radius).
	inside []uint8
}

// ranked reports whether the hits are ordered by something other than
// the date order: relevance, or the publish date.
func (p *plan) ranked() bool { return p.words != nil || p.q.Sort == search.ByPublishDate }

// scoredClass is the rows where a query word matches in one way (title or
// body; exact, prefix or typo) and the score that way is worth.
type scoredClass struct {
	rows  *roaring.Bitmap
	score float64
}

// The scores of the relevance order: a title outweighs the description and
// excerpt, an exact word outweighs a prefix, and a prefix a typo. An
// event's score is the sum over the query's words of the best way each
// matches. The ratios are wide, so a record whose title holds every word
// exactly ranks before one that matches only through typos in its
// description, whatever the other words.
const (
	scoreTitle  = 4.0
	scoreExact  = 1.0
	scorePrefix = 0.4
	scoreTypo   = 0.1
)

func (x *Index) plan(q search.EventQuery) *plan {
	p := &plan{q: q}
	p.startMin, p.startMax = bounds(q.StartGTE, q.StartGT, search.Opt[int64]{}, q.StartLT)
	p.endMin, p.endMax = bounds(search.Opt[int64]{}, q.EndGT, q.EndLTE, q.EndLT)
	if p.startMin > p.startMax || p.endMin > p.endMax {
		p.none = true
		return p
	}
	if len(q.Statuses) > 0 {
		for _, s := range q.Statuses {
			if c, ok := x.statuses[s]; ok {
				p.statuses |= 1 << c
			} else if len(x.statuses) >= maxStatusCode {
				p.byName, p.statuses = true, p.statuses|1
			}
		}
		if p.statuses == 0 {
			p.none = true
			return p
		}
	}
	for _, f := range []struct {
		o    search.Opt[bool]
		flag uint8
	}{{q.Featured, flagFeatured}, {q.Ticketed, flagTicketed}, {q.HasGeo, flagHasGeo}} {
		if f.o.Set {
			p.flagMask |= f.flag
			if f.o.Value {
				p.flagWant |= f.flag
			}
		}
	}
	if q.ExcludeHidden {
		p.flagMask |= flagHidden
	}
	if q.ExcludeProtected {
		p.flagMask |= flagProtected
	}
	and := func(b *roaring.Bitmap) {
		if p.cands == nil {
			p.cands = b
		} else {
			p.cands.And(b)
		}
		if p.cands.IsEmpty() {
			p.none = true
		}
	}
	if len(q.IDs) > 0 {
		b := roaring.New()
		for _, id := range q.IDs {
			b.AddMany(x.byID[id])
		}
		if and(b); p.none {
			return p
		}
	}
	for l, want := range [numLists][]int64{q.CategoryIDs, q.TagIDs, q.VenueIDs, q.OrganizerIDs} {
		if len(want) == 0 {
			continue
		}
		var parts []*roaring.Bitmap
		for _, v := range want {
			if b := x.lists[l][v]; b != nil {
				parts = append(parts, b)
			}
		}
		if and(roaring.FastOr(parts...)); p.none {
			return p
		}
	}
	if q.Near.Set {
		if p.near(x, q.Near.Value); p.none {
			return p
		}
	}
	terms := search.ParseQuery(q.Query)
	if len(terms) == 0 {
		return p
	}
	l := x.langs[q.Lang]
	if l == nil {
		p.none = true
		return p
	}
	for _, t := range terms {
		matched, classes := x.match(p, l, t, q.Relevance)
		if and(matched); p.none {
			return p
		}
		if q.Relevance {
			p.words = append(p.words, classes)
		}
	}
	return p
}

// near decides, for every point, whether it is inside the circle c by
// search.GeoCircle.Contains, as the reference does.
func (p *plan) near(x *Index, c search.GeoCircle) {
	if !(c.RadiusKm >= 0) {
		p.none = true // negative or NaN radius; +Inf is everything
		return
	}
	// A point farther in latitude than the radius is farther in distance:
	// the great-circle distance is at least the earth radius times the
	// latitude difference. The band is widened by a metre and a millionth,
	// far more than the distance's rounding (to the millimetre) and its
	// float error, so that no point inside is ever left out; a point
	// outside the real latitudes (which the API never stores) gets the
	// exact check alone.
	band := (c.RadiusM() + 1) / search.EarthRadiusM * (1 + 1e-6) * 180 / math.Pi
	p.inside = make([]uint8, len(x.points)+1)
	any := false
	for i, pt := range x.points {
		if pt.refs == 0 {
			continue
		}
		lat := pt.p.Lat
		if math.Abs(lat-c.Center.Lat) > band && lat >= -90 && lat <= 90 {
			continue
		}
		if c.Contains(pt.p) {
			p.inside[i+1], any = 1, true
		}
	}
	p.none = !any
}

// match returns the rows where term t matches a word (in the title or the
// body) of their text in l's language, and, when scored, the same rows
// split by how they match: the words of l, and of each language l aliases
// to for the aliased rows. Only the vocabularies of the visibilities p
// keeps are read.
func (x *Index) match(p *plan, l *language, t search.Term, scored bool) (*roaring.Bitmap, []scoredClass) {
	matched, classes := x.matchParts(p, l, t, scored)
	for lang, rows := range l.aliases {
		if rows.IsEmpty() {
			continue
		}
		m, cs := x.matchParts(p, x.langs[lang], t, scored)
		m.And(rows)
		matched.Or(m)
		if scored {
			for k := range classes {
				cs[k].And(rows)
				classes[k].Or(cs[k])
			}
		}
	}
	if !scored {
		return matched, nil
	}
	weights := [6]float64{
		scoreTitle * scoreExact, scoreTitle * scorePrefix, scoreTitle * scoreTypo,
		scoreExact, scorePrefix, scoreTypo,
	}
	var out []scoredClass
	for k, b := range classes {
		if !b.IsEmpty() {
			out = append(out, scoredClass{rows: b, score: weights[k]})
		}
	}
	// Best first, so a row's score for this word is its first class.
	slices.SortStableFunc(out, func(a, b scoredClass) int { return cmp.Compare(b.score, a.score) })
	return matched, out
}

// keeps reports whether p can match an event of visibility vis: its
// status is one p keeps (a status without a code is compared by name
// here too), and its hidden and protected flags pass p's.
func (p *plan) keeps(vis visibility) bool {
	if len(p.q.Statuses) > 0 && !slices.Contains(p.q.Statuses, vis.status) {
		return false
	}
	mask := p.flagMask & visibilityFlags
	return vis.flags&mask == p.flagWant&mask
}

// matchParts returns the rows where t matches a word of l's vocabularies
// of the visibilities p keeps, and when scored the six classes of
// scoredClass (title exact, prefix, typo, then body exact, prefix, typo)
// as bitmaps.
func (x *Index) matchParts(p *plan, l *language, t search.Term, scored bool) (*roaring.Bitmap, [6]*roaring.Bitmap) {
	var parts []*roaring.Bitmap
	var classes [6][]*roaring.Bitmap
	checked := 0
	for vis, v := range l.parts {
		if !p.keeps(vis) {
			continue
		}
		checked += v.walk(t, func(e *word) {
			k := 2
			switch {
			case e.text == t.Word:
				k = 0
			case t.Prefix && strings.HasPrefix(e.text, t.Word):
				k = 1
			}
			for g, b := range []*roaring.Bitmap{e.title, e.body} {
				if b != nil {
					parts = append(parts, b)
					if scored {
						classes[3*g+k] = append(classes[3*g+k], b)
					}
				}
			}
		})
	}
	x.checked.Add(uint64(checked))
	var out [6]*roaring.Bitmap
	if scored {
		for k, bs := range classes {
			out[k] = roaring.FastOr(bs...)
		}
	}
	return roaring.FastOr(parts...), out
}

// walk calls fn for every word of the vocabulary that t matches
// (search.Term.Matches), each once. The walk reads only the words that can
// match: the one word for an exact term, the words starting with it for a
// prefix, the words with its first letter for one typo. With two typos
// (nine letters or more) another first letter counts as both typos, so
// such a word is within one edit of the term and the edit is at its start:
// the word (or, for a prefix term, a prefix of it) is c+term[1:], c+term,
// term[1:] or term[1]+term[0]+term[2:] for some letter c. The walk then
// reads the words with the term's first letter, and, of every other first
// letter c, those starting with c+term[1] or c+term[0], and those starting
// with term[1:] or term[1]+term[0]. New words not yet sorted are all
// checked. It returns the number of words it read (each word it compared
// with the term, each recent word, each first letter it jumped to).
func (v *vocabulary) walk(t search.Term, fn func(*word)) int {
	if len(t.Word) > search.MaxWordBytes {
		return 0
	}
	if t.Typos == 0 && !t.Prefix {
		if e := v.byText[t.Word]; e != nil {
			fn(e)
		}
		return 1
	}
	seen := map[string]bool{}
	checked := 0
	visit := func(w string) {
		checked++
		if e := v.byText[w]; e != nil && !seen[w] && t.Matches(w) {
			seen[w] = true
			fn(e)
		}
	}
	walkPrefix := func(prefix string) {
		for i := sort.SearchStrings(v.sorted, prefix); i < len(v.sorted) && strings.HasPrefix(v.sorted[i], prefix); i++ {
			visit(v.sorted[i])
		}
	}
	r0, n0 := utf8.DecodeRuneInString(t.Word)
	switch {
	case t.Typos == 0:
		walkPrefix(t.Word)
		walkRecent(v, t.Word, visit)
		return checked + len(v.recent)
	case t.Typos < 2:
		walkPrefix(string(r0))
		walkRecent(v, string(r0), visit)
		return checked + len(v.recent)
	}
	walkRecent(v, "", visit)
	rest := t.Word[n0:]
	r1, _ := utf8.DecodeRuneInString(rest)
	walkPrefix(string(r0))
	walkPrefix(rest)
	walkPrefix(string(r1) + string(r0))
	// Every other first letter: jump from one to the next.
	for i := 0; i < len(v.sorted); {
		c, n := utf8.DecodeRuneInString(v.sorted[i])
		first := v.sorted[i][:n]
		if c != r0 {
			walkPrefix(first + string(r1))
			walkPrefix(first + string(r0))
		}
		i += sort.Search(len(v.sorted)-i, func(j int) bool { return !strings.HasPrefix(v.sorted[i+j], first) })
		checked++
	}
	return checked + len(v.recent)
}

// walkRecent visits the words not yet sorted that start with prefix.
func walkRecent(v *vocabulary, prefix string, visit func(string)) {
	for _, w := range v.recent {
		if strings.HasPrefix(w, prefix) {
			visit(w)
		}
	}
}

// sparse: below one candidate in this many events, the candidates are
// sorted rather than the date order read.
const sparse = 16

// each calls fn for every matching row: the first ordered of them in the
// date order and the others after them in any order, or all in no
// particular order when p is ranked. When skip is not nil, each may count
// the matches of a block from its summary instead: it calls skip with
// their number, and calls fn for them only when skip returns false. It
// can for a block that the date bounds hold whole, in a query whose other
// filters are all decided by the summary (statuses and flags), or, with
// candidates or a radius, when every entry of the block passes those.
func (p *plan) each(x *Index, ordered int, fn func(e *entry), skip func(n int) bool) {
	if p.mainNone {
		return
	}
	if p.cands != nil && p.cands.GetCardinality()*sparse < uint64(len(x.slotOf)-x.nGrouped) {
		cands := p.cands.ToArray()
		cands = slices.DeleteFunc(cands, func(slot uint32) bool { return !p.passes(x, &x.ents[slot]) })
		if !p.ranked() {
			x.sortFirst(cands, ordered)
		}
		for _, slot := range cands {
			fn(&x.ents[slot])
		}
		return
	}
	if p.cands != nil && p.set == nil {
		p.set = make([]uint64, (len(x.rows)+63)/64)
		it := p.cands.ManyIterator()
		buf := make([]uint32, 256)
		for n := it.NextMany(buf); n > 0; n = it.NextMany(buf) {
			for _, slot := range buf[:n] {
				p.set[slot>>6] |= 1 << (slot & 63)
			}
		}
	}
	set := p.set
	// The cheap filters are decided here, on the entry, in one expression;
	// passesRest decides the others only when the query has them.
	rest := p.byName || p.q.ParentID.Set
	statuses, mask, want, endMin, endMax, inside := p.statuses, p.flagMask, p.flagWant, p.endMin, p.endMax, p.inside

	if rest {
		skip = nil
	}
	b, i := x.order.lowerBound(p.startMin)
	for ; b < len(x.order); b, i = b+1, 0 {
		blk := x.order[b]
		if skip != nil && i == 0 && blk.e[len(blk.e)-1].start <= p.startMax && blk.minEnd >= endMin && blk.maxEnd <= endMax &&
			(blk.occurrences == 0 || !p.q.CollapseSeries) {
			// The dates hold the block whole: count its matches from the
			// summary, or, with candidates or a radius, when every entry
			// passes the statuses and flags, as the entries that are
			// candidates and inside the circle.
			n, all := 0, true
			for _, k := range blk.kinds {
				if k.flags&mask == want && (statuses == 0 || statuses&(1<<k.status) != 0) {
					n += int(k.n)
				} else {
					all = false
				}
			}
			if set != nil || inside != nil {
				if n = -1; all {
					n = countIn(blk.e, set, inside)
				}
			}
			if n >= 0 && skip(n) {
				continue
			}
		}
		es := blk.e[i:]
		for k := range es {
			e := &es[k]
			if e.start > p.startMax {
				return
			}
			if e.end < endMin || e.end > endMax || e.flags&mask != want ||
				statuses != 0 && statuses&(1<<e.status) == 0 ||
				set != nil && set[e.slot>>6]&(1<<(e.slot&63)) == 0 ||
				inside != nil && inside[e.point+1] == 0 ||
				rest && !p.passesRest(x, e) {
				continue
			}
			fn(e)
		}
	}
}

// bounds turns lower (>=, >) and upper (<=, <) bounds into one inclusive
// range; an exclusive bound at the end of int64 leaves the range empty.
func bounds(gte, gt, lte, lt search.Opt[int64]) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if gte.Set {
		lo = max(lo, gte.Value)
	}
	if gt.Set {
		if gt.Value == math.MaxInt64 {
			return 1, 0
		}
		lo = max(lo, gt.Value+1)
	}
	if lte.Set {
		hi = min(hi, lte.Value)
	}
	if lt.Set {
		if lt.Value == math.MinInt64 {
			return 1, 0
		}
		hi = min(hi, lt.Value-1)
	}
	return lo, hi
}

// sortFirst puts the k first slots of c by the date order at its front, in
// order (the rest after them, in no order), by firstK.
func (x *Index) sortFirst(c []uint32, k int) {
	firstK(c, k, func(a, b uint32) int { return x.compare(x.ents[a], x.ents[b]) })
}

// firstK puts the k first elements of c by cmpFn at its front, in order
// (the rest after them, in no order): a quickselect, then a sort of the
// k, so that a page of a few thousand candidates costs no full sort.
func firstK[T any](c []T, k int, cmpFn func(a, b T) int) {
	if k <= 0 {
		return
	}
	selectK(c, k, cmpFn)
	slices.SortFunc(c[:min(k, len(c))], cmpFn)
}

// selectK puts the k first elements of c by cmpFn at its front, in no
// order (the rest after them): a quickselect.
func selectK[T any](c []T, k int, cmpFn func(a, b T) int) {
	if k > 0 && k < len(c) {
		lo, hi := 0, len(c)-1
		for lo < hi {
			// Median of three as the pivot, then a Lomuto partition.
			mid := lo + (hi-lo)/2
			if cmpFn(c[mid], c[lo]) < 0 {
				c[mid], c[lo] = c[lo], c[mid]
			}
			if cmpFn(c[hi], c[lo]) < 0 {
				c[hi], c[lo] = c[lo], c[hi]
			}
			if cmpFn(c[mid], c[hi]) < 0 {
				c[mid], c[hi] = c[hi], c[mid]
			}
			pivot, store := c[hi], lo
			for i := lo; i < hi; i++ {
				if cmpFn(c[i], pivot) < 0 {
					c[i], c[store] = c[store], c[i]
					store++
				}
			}
			c[store], c[hi] = c[hi], c[store]
			switch {
			case store == k-1 || store == k:
				lo = hi // the k first are in front
			case store < k:
				lo = store + 1
			default:
				hi = store - 1
			}
		}
	}
}

// countIn counts the entries that are in set (nil: every one) and whose
// point is inside (nil: every one), with one loop per case and no branch
// on the entries (the dates order them, so a set or circle takes them in a
// pattern no branch predictor can learn).
func countIn(es []entry, set []uint64, inside []uint8) int {
	n := 0
	switch {
	case inside == nil:
		for _, e := range es {
			n += int(set[e.slot>>6] >> (e.slot & 63) & 1)
		}
	case set == nil:
		for _, e := range es {
			n += int(inside[e.point+1])
		}
	default:
		for _, e := range es {
			n += int(set[e.slot>>6]>>(e.slot&63)&1) & int(inside[e.point+1])
		}
	}
	return n
}

// lowerBound returns the block and position of the first entry starting
// at or after start.
func (bs blocks) lowerBound(start int64) (int, int) {
	b := sort.Search(len(bs), func(i int) bool { return bs[i].e[len(bs[i].e)-1].start >= start })
	if b == len(bs) {
		return b, 0
	}
	return b, sort.Search(len(bs[b].e), func(i int) bool { return bs[b].e[i].start >= start })
}

// passes decides the filters of the entry (all but the candidates' own):
// statuses, dates, flags, parent and radius, as searchtest.MatchEvent does.
func (p *plan) passes(x *Index, e *entry) bool {
	if p.statuses != 0 && p.statuses&(1<<e.status) == 0 || e.flags&p.flagMask != p.flagWant ||
		e.start < p.startMin || e.start > p.startMax || e.end < p.endMin || e.end > p.endMax {
		return false
	}
	return p.passesRest(x, e)
}

// passesRest decides what passes leaves after the entry's own fields: a
// status without a code (by name), the radius and the parent.
func (p *plan) passesRest(x *Index, e *entry) bool {
	q := &p.q
	if e.status == 0 && p.statuses != 0 && (!p.byName || !slices.Contains(q.Statuses, x.rows[e.slot].status)) {
		return false
	}
	if p.inside != nil && p.inside[e.point+1] == 0 {
		return false
	}
	return !q.ParentID.Set || x.rows[e.slot].parent == q.ParentID.Value
}

// facetCounts counts the matches per value of each requested facet: the
// flags as the matches go by, the list values at the end, by intersecting
// the set of matches with each value's bitmap (a few microseconds a value,
// where counting each match's values would read every matching row).
type facetCounts struct {
	names []string
	// lists[l] says whether list filter l's values are counted.
	lists [numLists]bool
	// matches holds the matching slots as a bit set (nil: no list facet),
	// and few the first fewMax of them, which are counted one by one when
	// they are all the matches and many values are asked for.
	matches []uint64
	few     []uint32
	n       int
	// featured and ticketed count false and true (nil: not asked for).
	featured, ticketed *[2]int
	// grouped counts, per list filter, the values of the groups' matching
	// members (addGroup).
	grouped [numLists]map[int64]int
}

// fewMax and fewValues choose how list facets are counted: with at most
// fewMax matches and more than fewValues values asked for, match by match
// (a few thousand map increments), else value by value (an intersection
// of bitmaps each, whose cost grows with the matches when they are few
// and spread).
// (Variables so that the tests can take both ways.)
var (
	fewMax    = 4096
	fewValues = 64
)

// facetLists maps the ID facets to their list filter.
var facetLists = map[string]int{
	search.FacetCategories: listCategories, search.FacetTags: listTags,
	search.FacetVenue: listVenues, search.FacetOrganizer: listOrganizers,
}

func newFacetCounts(x *Index, names []string) *facetCounts {
	c := &facetCounts{names: names}
	for _, f := range names {
		if l, ok := facetLists[f]; ok {
			c.lists[l] = true
			if c.matches == nil {
				c.matches = make([]uint64, (len(x.rows)+63)/64)
			}
		}
		switch f {
		case search.FacetFeatured:
			c.featured = &[2]int{}
		case search.FacetTicketed:
			c.ticketed = &[2]int{}
		}
	}
	return c
}

func (c *facetCounts) add(slot uint32, e *entry) {
	if c.matches != nil {
		c.matches[slot>>6] |= 1 << (slot & 63)
		if c.n++; c.n <= fewMax {
			c.few = append(c.few, slot)
		}
	}
	if c.featured != nil {
		c.featured[e.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)]++
	}
	if c.ticketed != nil {
		c.ticketed[e.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)]++
	}
}

// addGroup counts n matching members of group g: as many times its
// representative's values and flags.
func (c *facetCounts) addGroup(x *Index, g *group, n int) {
	e := &x.ents[g.rep]
	if c.featured != nil {
		c.featured[e.flags&flagFeatured>>bits.TrailingZeros8(flagFeatured)] += n
	}
	if c.ticketed != nil {
		c.ticketed[e.flags&flagTicketed>>bits.TrailingZeros8(flagTicketed)] += n
	}
	for l, asked := range c.lists {
		if !asked {
			continue
		}
		if c.grouped[l] == nil {
			c.grouped[l] = map[int64]int{}
		}
		vs := x.rows[g.rep].lists[l]
		for i, v := range vs {
			if !slices.Contains(vs[:i], v) {
				c.grouped[l][v] += n
			}
		}
	}
}

// result returns the counts as the contract has them: an event counts once
// for each value it has (values as strings, values without a match absent;
// a name that is not a facet counts nothing, as in
// searchtest.ExpectedFacets); nil when no facet was asked for.
func (c *facetCounts) result(x *Index) map[string]map[string]int {
	if len(c.names) == 0 {
		return nil
	}
	// Few matches and many values: each match's values are counted (an
	// event counts once per value, as the bitmaps count it); otherwise the
	// matches are intersected with each value's bitmap.
	values := 0
	for l, asked := range c.lists {
		if asked {
			values += len(x.lists[l])
		}
	}
	var byValue [numLists]map[int64]int
	var matches *roaring.Bitmap
	if c.matches != nil && c.n <= fewMax && values > fewValues {
		for l, asked := range c.lists {
			if !asked {
				continue
			}
			byValue[l] = map[int64]int{}
			for _, slot := range c.few {
				vs := x.rows[slot].lists[l]
				for i, v := range vs {
					if !slices.Contains(vs[:i], v) {
						byValue[l][v]++
					}
				}
			}
		}
	} else if c.matches != nil {
		matches = roaring.FromDense(c.matches, false)
	}
	out := make(map[string]map[string]int, len(c.names))
	for _, f := range c.names {
		m := map[string]int{}
		l, ok := facetLists[f]
		if ok && byValue[l] != nil {
			for v, n := range byValue[l] {
				m[strconv.FormatInt(v, 10)] = n
			}
		} else if ok && !matches.IsEmpty() {
			for v, b := range x.lists[l] {
				if n := matches.AndCardinality(b); n > 0 {
					m[strconv.FormatInt(v, 10)] = int(n)
				}
			}
		}
		if ok {
			for v, n := range c.grouped[l] {
				m[strconv.FormatInt(v, 10)] += n
			}
		}
		var flags *[2]int
		switch f {
		case search.FacetFeatured:
			flags = c.featured
		case search.FacetTicketed:
			flags = c.ticketed
		}
		if flags != nil {
			if flags[0] > 0 {
				m["false"] = flags[0]
			}
			if flags[1] > 0 {
				m["true"] = flags[1]
			}
		}
		out[f] = m
	}
	return out
}
