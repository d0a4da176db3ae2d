package memindex

import (
	"maps"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// This file is the write path: Apply prepares documents (their words and
// flags) outside the lock and links them in chunks; Remove and the slot
// bookkeeping (allocate, link, unlink, compact) keep rows, entries, lists
// and postings in step.

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
// the lock is held only to link (map and bitmap updates), and released
// every holdWords words: between documents, and between pieces of one
// document's words (see link). So a write's hold of the lock is bounded
// by holdWords words and one small document, never grows with the size of
// a document, the rest of the write or the size of the vocabulary, and
// queries run between holds and during the preparation. Between holds a
// query sees each document whole, in one version: a document replaced
// keeps its old version until the hold in which the new one replaces it
// (see replace), a removed one is gone at once.
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
		p := startPrepare(docs, grps, prepareRun)
		x.mu.Lock()
		defer x.mu.Unlock()
		x.matches.clear()
		x.load(p.preps, p.wait)
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
			if len(chunk) > 0 && words+next.words > x.chunkWords {
				break
			}
			chunk = append(chunk, *next)
			words += next.words
			prev, next = &chunk[len(chunk)-1], nil
			i++
		}
		merges := x.premerge(chunk)
		slots, built := x.build(chunk)
		if x.preparedHook != nil {
			x.preparedHook()
		}
		x.lockW()
		x.linkChunk(chunk, merges, slots, built)
		x.unlockW()
	}
	x.compact()
}

// lockW takes the write lock for a writer, counting the words it links or
// unlinks in this hold from zero.
func (x *wordIndex) lockW() {
	x.mu.Lock()
	x.held, x.touched = 0, 0
	x.seq++
}

// unlockW releases the write lock taken by lockW.
func (x *wordIndex) unlockW() {
	x.maxHeld = max(x.maxHeld, x.held)
	x.maxTouched = max(x.maxTouched, x.touched)
	x.mu.Unlock()
}

// yield lets the queries waiting for the write lock run: the writer
// releases it and takes it again. The caller holds it (lockW), with the
// index consistent for readers.
func (x *wordIndex) yield() {
	x.unlockW()
	if x.yieldHook != nil {
		x.yieldHook()
	}
	x.lockW()
}

// linkChunk installs the merged vocabularies and links the chunk's
// documents at the slots build chose, with the words it built. The caller
// holds mu (lockW), and releases it between documents once it linked
// holdWords words in one hold; a document of more words is linked
// releasing it between pieces of its words (see link), and a document
// replaced where either version has more is linked at a fresh slot and
// swapped with its old version in one hold (see replace).
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
	defer func() { x.built, x.likePrefixes = nil, nil }()
	// A bulk index (NewBulk) answers no query until Finish, so the
	// occurrences of a series get their words' and prefixes' bitmaps in
	// runs (sharedRun), flushed before anything else touches them: before
	// an unlink, and when the chunk ends (before the writer's unlockW).
	var run *sharedRun
	if x.bulk {
		run = &sharedRun{}
		defer run.flush()
	}
	for i := range chunk {
		if x.held >= x.holdWords {
			x.yield()
		}
		p := &chunk[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf(k)
		switch {
		case ok && slots[i] != slot:
			// A version of more than holdWords words replaced, or
			// replacing one: build chose a fresh slot (see replace).
			run.flush()
			x.replace(slot, x.take(slots[i]), p)
			continue
		case ok:
			// Both versions small: replaced in this hold.
			run.flush()
			x.unplace(slot)
			x.unlink(slot, nil)
		default:
			slot = x.take(slots[i])
		}
		x.link(slot, p, x.yield, run)
		if !ok {
			x.addDoc(k, slot)
		}
		x.place(slot, p.grp)
	}
}

// swaps reports whether the document at slot, replaced by p, is replaced
// by replace (at a fresh slot) rather than in place: when the words of
// either version take more than one hold.
func (x *wordIndex) swaps(p *prepared, slot uint32) bool {
	return p.words > x.holdWords || len(x.bodyOf(slot).words) > x.holdWords
}

// replace replaces the document at slot old by p, linked at the free slot
// slot (taken), so that readers see the old version whole until the hold
// in which they see the new one whole: the new version's words are linked
// in pieces while its slot is hidden from the word matches, then, in the
// hold of the last piece, its row is completed, the old version leaves the
// date order or its group, the document's key names the new slot and the
// new version takes its place; then the old version is unlinked (its
// lists, aliases and point in that same hold, its words in pieces, its
// slot hidden) and its slot freed. So an edited event never leaves a list
// or a search for the duration of the write, nor shows twice. The caller
// holds mu (lockW).
func (x *Index) replace(old, slot uint32, p *prepared) {
	x.link(slot, p, x.yield, nil)
	x.unplace(old)
	var buf [1]uint32
	slots := x.byID.get(p.d.ID, &buf)
	slots[slices.Index(slots, old)] = slot
	x.byID.set(p.d.ID, slots)
	x.place(slot, p.grp)
	x.unlink(old, x.yield)
	x.occNames.dropOcc(x.rows[old].occ)
	x.setRow(old, row{})
	x.ents[old] = entry{}
	x.free = append(x.free, old)
}

// lastOfEach returns docs without the documents that a later one of the
// same key replaces, in their order. Documents whose keys increase (by
// ID, then occurrence: start-up loads events.db so, 5.4 million
// documents at 50,000 series) repeat none, and are returned without
// building the map of their keys.
func lastOfEach(docs []search.EventDocument) []search.EventDocument {
	if keysIncrease(docs) {
		return docs
	}
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

// keysIncrease reports whether the keys of docs strictly increase, by ID
// then occurrence.
func keysIncrease(docs []search.EventDocument) bool {
	for i := 1; i < len(docs); i++ {
		a, b := &docs[i-1], &docs[i]
		if a.ID > b.ID || a.ID == b.ID && a.Occurrence >= b.Occurrence {
			return false
		}
	}
	return true
}

// removeStale removes the documents of the IDs of docs that docs do not
// hold (the occurrences a series no longer has, a series that became a
// single event or the reverse). When the index holds none of the IDs (a
// load, a reindex's new generation) it builds nothing. The caller holds
// writeMu.
func (x *Index) removeStale(docs []search.EventDocument) {
	x.mu.RLock()
	held := false
	for i := range docs {
		if held = x.byID.has(docs[i].ID); held {
			break
		}
	}
	x.mu.RUnlock()
	if !held {
		return
	}
	keep := make(map[docKey]struct{}, len(docs))
	for i := range docs {
		keep[keyOf(&docs[i])] = struct{}{}
	}
	var stale []uint32
	x.mu.RLock()
	var buf [1]uint32
	for id := range x.idsOf(docs) {
		for _, slot := range x.byID.get(id, &buf) {
			if _, ok := keep[docKey{id, x.occNames.occString(x.rows[slot].occ)}]; !ok {
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

// take returns slot, taken from the free slots or by growing rows (build
// chose it as allocate would have; a slot a replacement freed since is
// left for a later chunk).
func (x *Index) take(slot uint32) uint32 {
	if int(slot) == len(x.rows) {
		x.rows = append(x.rows, row{})
		x.ents = append(x.ents, entry{})
		return slot
	}
	if i := slices.Index(x.free, slot); i >= 0 {
		x.free = slices.Delete(x.free, i, i+1)
		return slot
	}
	panic("memindex: build chose a slot that is neither free nor next")
}

// load fills an empty index with prepared documents, building the date
// order in one sort and each vocabulary's order in one merge. ready(i)
// returns once preps[i] is prepared (startPrepare prepares the later
// documents while the earlier ones are linked).
func (x *Index) load(preps []prepared, ready func(i int)) {
	defer func() { x.likePrefixes = nil }()
	// The lock is held throughout: a series' occurrences get their
	// words' and prefixes' bitmaps in runs (sharedRun).
	run := &sharedRun{}
	for i := range preps {
		ready(i)
		p := &preps[i]
		k := keyOf(p.d)
		slot, ok := x.slotOf(k)
		if ok {
			// A repeated key: the later document wins.
			run.flush()
			if x.rows[slot].grp != 0 {
				x.leave(slot) // the date order is built below
			}
			x.unlink(slot, nil)
		} else {
			slot = x.allocate()
			x.addDoc(k, slot)
		}
		x.link(slot, p, nil, run)
		if p.grp != nil {
			x.join(slot, p.grp)
		}
	}
	run.flush()
	for _, l := range x.langs {
		for _, v := range l.parts {
			v.merge()
		}
	}
	if !x.bulk { // a bulk index builds them at Finish
		x.buildOrder()
	}
}

// Remove deletes events, every document (occurrence) of each; IDs not in
// the index are ignored, and so is an ID named again. Like Apply, it
// releases the lock every holdWords words.
func (x *Index) Remove(ids []int64) {
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	var slots []uint32
	x.mu.RLock()
	var buf [1]uint32
	seen := make(map[int64]struct{}, len(ids))
	for _, id := range ids {
		if _, ok := seen[id]; ok {
			continue // named twice: its slots once (removeSlots wants them distinct)
		}
		seen[id] = struct{}{}
		slots = append(slots, x.byID.get(id, &buf)...)
	}
	x.mu.RUnlock()
	x.removeSlots(slots)
	x.compact()
}

// removeSlots removes the documents at slots (distinct, live), releasing
// the lock between chunks of about holdWords words; a document of more
// words is removed alone, releasing it between pieces of its words (see
// unlink). The caller holds writeMu.
func (x *Index) removeSlots(slots []uint32) {
	for len(slots) > 0 {
		x.lockW()
		words := 0
		touched := map[int64]struct{}{}
		for len(slots) > 0 && words < x.holdWords {
			slot := slots[0]
			r := &x.rows[slot]
			nw := len(x.bodies.at(r.body).words)
			if words > 0 && nw > x.holdWords {
				break // alone, in a chunk of its own
			}
			slots = slots[1:]
			words += nw
			// The document leaves the date order or its group and its
			// key in this hold, before its words (maybe in pieces), so
			// that no query (an IDs one neither) finds it meanwhile.
			x.unplace(slot)
			var buf [1]uint32
			x.byID.set(r.id, slices.DeleteFunc(x.byID.get(r.id, &buf), func(s uint32) bool { return s == slot }))
			x.docs--
			touched[r.id] = struct{}{}
			x.unlink(slot, x.yield)
			x.occNames.dropOcc(r.occ)
			x.setRow(slot, row{})
			x.ents[slot] = entry{}
			x.free = append(x.free, slot)
		}
		for id := range touched {
			if !x.byID.has(id) {
				if n, ok := x.seriesOf[id]; ok {
					delete(x.seriesOf, id)
					x.seriesFree = append(x.seriesFree, n)
				}
			}
		}
		x.unlockW()
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
// bitmaps and points. Its words come first: with yield (nil: none), a
// document of more than holdWords words has its slot hidden from the word
// matches while its words are linked in pieces of at most holdWords,
// yield called between them (the row, its lists and its entry are set in
// the last hold, so a query sees all of the document or none of it).
// With run (nil: none), an occurrence of few words that shares its
// series' text gets its words' and prefixes' bitmaps through run, which
// the caller flushes before any query or unlink reads them.
func (x *Index) link(slot uint32, p *prepared, yield func(), run *sharedRun) {
	d := p.d
	r := &rowBody{
		pub: d.PublishDate, parent: d.ParentID, status: x.name(d.Status), eventStatus: x.name(d.EventStatusOf()),
	}
	e := entry{start: d.Start, end: d.End, slot: slot, point: -1, status: x.statusCode(d.Status), flags: p.flags}
	if d.Occurrence != "" {
		e.series = x.seriesNumber(d.ID)
	}
	var like *rowBody
	var likeBody uint32 // like's number in x.bodies
	if p.grp != nil && p.grp.body != 0 {
		// A member of a group: the same text, visibility and lists as the
		// group's first member, whatever came between them.
		likeBody = p.grp.body
	} else if p.shares {
		if s, ok := x.slotOf(p.like); ok && x.rows[s].isLive() && x.rows[s].id == d.ID {
			likeBody = x.rows[s].body
		}
	}
	if likeBody != 0 {
		like = x.bodies.at(likeBody)
	}
	pieces := newPieces(x, slot, p.words, yield)
	if like != nil {
		// An occurrence with its series' text: the same words, so the
		// same postings, in the same vocabularies (like holds them).
		r.words, r.nTitle = like.words, like.nTitle
		// A row of few words (linked in one hold) joins the distinct
		// prefix bitmaps of its words once each (sharedPrefixes), not
		// each word's prefixes by name.
		few := pieces.yield == nil
		if few && run != nil {
			pieces.take(len(r.words))
			for _, w := range r.words {
				x.matches.touchWord(x, w)
			}
			run.add(x, like, slot)
		}
		for i, w := range r.words {
			if few && run != nil {
				break
			}
			pieces.next()
			title := i < int(r.nTitle)
			b := &w.body
			if title {
				b = &w.title
			}
			(*b).Add(slot)
			x.matches.touchWord(x, w)
			if !few {
				w.vocab.joinPrefixes(w.text, slot, title)
			}
		}
		if few && run == nil {
			for _, b := range x.sharedPrefixes(like) {
				b.Add(slot)
			}
		}
	} else {
		// The title words of every language, then the body words.
		r.words = make([]*word, 0, p.words)
		for _, title := range []bool{true, false} {
			for _, t := range p.texts {
				if t.aliasOf != "" {
					continue
				}
				vis := p.visibility()
				v := x.vocabulary(t.lang, vis)
				built := func(w string) *word { return x.built[builtKey{t.lang, vis, w}] }
				words := t.body
				if title {
					words = t.title
				}
				for len(words) > 0 {
					n := pieces.take(len(words))
					from := len(r.words)
					r.words = v.add(r.words, slot, words[:n], title, built)
					x.matches.touchWords(x, r.words[from:])
					words = words[n:]
				}
			}
			if title {
				r.nTitle = uint32(len(r.words))
			}
		}
	}
	pieces.done()
	lists := [numLists][]int64{d.CategoryIDs, d.TagIDs, d.VenueIDs, d.OrganizerIDs}
	n := 0
	for l, values := range lists {
		n += len(values)
		if l < numLists-1 {
			r.ends[l] = uint32(n)
		}
	}
	if like != nil && like.ends == r.ends && func() bool {
		for l, values := range lists {
			if !slices.Equal(like.list(l), values) {
				return false
			}
		}
		return true
	}() {
		r.lists = like.lists // an occurrence: the series' lists
	} else if n > 0 {
		r.lists = make([]int64, 0, n)
		for _, values := range lists {
			r.lists = append(r.lists, values...)
		}
	}
	if d.HasGeo && d.Geo != nil {
		e.point = x.addPoint(*d.Geo)
	}
	for l := range numLists {
		for _, v := range r.list(l) {
			b := x.lists[l][v]
			if b == nil {
				b = roaring.New()
				x.lists[l][v] = b
			}
			b.Add(slot)
		}
	}
	if like != nil {
		r.aliases = like.aliases
	} else {
		r.aliases = x.aliasSet(p.texts)
	}
	for _, a := range r.aliases {
		a.Add(slot)
	}
	var body uint32
	if like != nil && r.same(like) {
		body = likeBody // an occurrence that differs in its dates only
	} else {
		body = x.bodies.add(r)
	}
	if p.grp != nil && p.grp.body == 0 {
		p.grp.body = body
		x.bodies.retain(body)
	}
	x.setRow(slot, row{id: d.ID, occ: x.occNames.keyOcc(d.Occurrence), body: body})
	x.ents[slot] = e
}

// pieces is how a writer links or unlinks the words of one row: counted
// (holds.count), and, for a row of more than holdWords words when the
// writer may yield, in pieces of at most holdWords words with the lock
// released between them, the row's slot hidden from the word matches
// until done.
//
// Hiding and showing the row change the match cache's entries without
// going through the row's words (tens of thousands for a large draft,
// each checked against every entry, in one hold): hiding it drops the
// entries that hold its slot (matchCache.touchSlot), the only ones it
// changes; each piece drops the entries that depend on its words
// (touchWord), so that when the row is shown only the entries made while
// it was hidden may lack it, and those are dropped (dropSince).
type pieces struct {
	x     *Index
	slot  uint32
	yield func()
	// since is the hold in which the row was hidden (holds.seq).
	since uint64
	// left is how many more words the current hold may take.
	left int
}

// newPieces starts linking or unlinking the words (how many) of the row
// at slot; yield nil: in this hold. With more than holdWords words it
// hides the row, in the hold it notes (since).
func newPieces(x *Index, slot uint32, words int, yield func()) pieces {
	if words <= x.holdWords {
		yield = nil
	}
	ps := pieces{x: x, slot: slot, yield: yield, left: max(x.holdWords-x.held, 0), since: x.seq}
	if yield != nil {
		x.hidden.Add(slot)
		x.matches.touchSlot(x, slot)
	}
	return ps
}

// take returns how many of n more words to link or unlink now (at least
// one), yielding first when the hold took its share.
func (ps *pieces) take(n int) int {
	if ps.yield != nil {
		if ps.left == 0 {
			ps.yield()
			ps.left = ps.x.holdWords
		}
		n = min(n, ps.left)
		ps.left -= n
	}
	ps.x.count(n)
	return n
}

// next is take for one word.
func (ps *pieces) next() { ps.take(1) }

// done ends the pieces: the row's words are all linked or unlinked.
func (ps *pieces) done() {
	if ps.yield != nil {
		ps.x.hidden.Remove(ps.slot)
		ps.x.matches.dropSince(ps.x, ps.since)
	}
}

// same reports whether b and c hold the same: equal numbers and the same
// slices (shared, not copies).
func (b *rowBody) same(c *rowBody) bool {
	return b.pub == c.pub && b.parent == c.parent && b.ends == c.ends && b.status == c.status && b.eventStatus == c.eventStatus && b.nTitle == c.nTitle &&
		sameSlice(b.lists, c.lists) && sameSlice(b.words, c.words) && sameSlice(b.aliases, c.aliases)
}

// sameSlice reports whether a and b are the same slice: the same length
// and, when not empty, the same first element.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// aliasSet returns the alias bitmaps of the texts that are another
// language's (see language.aliases), creating those missing: one slice
// for every row with the same aliases (most rows have the same), which
// the rows share (read only; an alias bitmap, once created, stays).
func (x *wordIndex) aliasSet(texts []preparedText) []*roaring.Bitmap {
	var key []byte
	for _, t := range texts {
		if t.aliasOf != "" {
			key = append(append(append(append(key, t.lang...), 0), t.aliasOf...), 0)
		}
	}
	if len(key) == 0 {
		return nil
	}
	if set, ok := x.aliasSets[string(key)]; ok {
		return set
	}
	var set []*roaring.Bitmap
	for _, t := range texts {
		if t.aliasOf == "" {
			continue
		}
		l := x.language(t.lang)
		a := l.aliases[t.aliasOf]
		if a == nil {
			a = roaring.New()
			l.aliases[t.aliasOf] = a
		}
		set = append(set, a)
	}
	set = slices.Clip(set)
	x.aliasSets[string(key)] = set
	return set
}

// name returns the number of s in names, numbering it when new.
func (x *codes) name(s string) uint32 {
	if c, ok := x.nameOf[s]; ok {
		return c
	}
	c := uint32(len(x.names))
	s = strings.Clone(s)
	x.names = append(x.names, s)
	x.nameOf[s] = c
	return c
}

// seriesNumber returns the number of series id, giving it one.
func (x *codes) seriesNumber(id int64) uint32 {
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

// statusCode returns the code of a status, numbering a new one.
func (x *codes) statusCode(s string) uint8 {
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

// unlink removes the row at slot (taken out of the date order or its
// group: unplace) from the bitmaps and points; a word no row holds any
// more leaves its vocabulary. Its words come last: with yield (nil: none),
// a row of more than holdWords words has its slot hidden from the word
// matches while they are unlinked in pieces of at most holdWords, yield
// called between them.
func (x *Index) unlink(slot uint32, yield func()) {
	r := x.bodyOf(slot)
	for _, a := range r.aliases {
		a.Remove(slot)
	}
	for l := range numLists {
		for _, v := range r.list(l) {
			if b := x.lists[l][v]; b != nil {
				b.Remove(slot)
				if b.IsEmpty() {
					delete(x.lists[l], v)
				}
			}
		}
	}
	if i := x.ents[slot].point; i >= 0 {
		if x.points[i].refs--; x.points[i].refs == 0 {
			if x.pointOf[x.points[i].p] == i {
				delete(x.pointOf, x.points[i].p)
			}
			x.freePts = append(x.freePts, i)
		}
	}
	pieces := newPieces(x, slot, len(r.words), yield)
	for i := 0; i < len(r.words); {
		// A piece of the words, whose match cache entries are dropped
		// in its hold, checked once per vocabulary (touchWords).
		n := pieces.take(len(r.words) - i)
		for j, e := range r.words[i : i+n] {
			title := i+j < int(r.nTitle)
			e.vocab.leavePrefixes(e.text, slot, title)
			b := &e.body
			if title {
				b = &e.title
			}
			if (*b).Remove(slot); (*b).IsEmpty() {
				*b = nil
			}
			if e.title == nil && e.body == nil {
				forget(e)
			}
		}
		x.matches.touchWords(x, r.words[i:i+n])
		i += n
	}
	pieces.done()
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

// sharedRun gathers the slots of consecutive rows that share one row
// body's words (a series' occurrences, linked one after the other at
// consecutive slots by a load or a bulk build), so that each bitmap they
// all join (each word's title or body postings, and the distinct short
// prefixes': sharedPrefixes) gets the whole run in one AddRange at
// flush, rather than one Add per row. A series of 105 occurrences of 30
// words made some 9,000 Adds, each a container lookup and a cache miss
// in another bitmap; now about 60 AddRanges. Until flush the rows are
// missing from those bitmaps: a writer uses a run only while no query
// reads them (a load holds the lock; a bulk index answers none) and
// flushes it before anything unlinks a row. Its methods do nothing on a
// nil run.
type sharedRun struct {
	like *rowBody
	// first and next bound the run's slots: [first, next).
	first, next uint32
	// bitmaps are those every row of like joins.
	bitmaps []*roaring.Bitmap
}

// add adds the row at slot, whose words are like's, to the run: it
// extends it when it holds like's rows up to slot, and starts another
// (flushing this one) otherwise.
func (r *sharedRun) add(x *Index, like *rowBody, slot uint32) {
	if r.like == like && slot == r.next {
		r.next++
		return
	}
	r.flush()
	r.like, r.first, r.next = like, slot, slot+1
	r.bitmaps = r.bitmaps[:0]
	for i, w := range like.words {
		if i < int(like.nTitle) {
			r.bitmaps = append(r.bitmaps, w.title)
		} else {
			r.bitmaps = append(r.bitmaps, w.body)
		}
	}
	r.bitmaps = append(r.bitmaps, x.sharedPrefixes(like)...)
}

// flush adds the run's slots to its bitmaps and empties it.
func (r *sharedRun) flush() {
	if r == nil || r.like == nil {
		return
	}
	for _, b := range r.bitmaps {
		b.AddRange(uint64(r.first), uint64(r.next))
	}
	r.like = nil
}
