package memindex

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// matchCache keeps the rows that recent query words matched (match,
// unscored), per word and the visibilities a query keeps: search-as-you-
// type asks for the same few prefixes again and again (`j`, `ja`,
// `jaz`...), and with many series a common prefix matches millions of
// rows, whose bitmaps cost milliseconds to join (the vocabularies'
// postings, the languages' aliases). An entry stays across writes until
// a write changes what it holds: the writers tell the cache of every
// word whose rows they change (a posting added or removed, the row
// hidden or shown while linked in pieces, the row's aliases: see
// touchWord), and it drops the entries whose terms match that word in a
// vocabulary they read (dependsOn). So a write of other words leaves the
// cache as it was. The bitmaps it hands out are shared: their users must
// not change them (see Index.plan).
//
// The queries get and put entries holding Index.mu for reading (mu
// guards the map among them); the writers drop entries holding Index.mu
// for writing, when no query runs.
type matchCache struct {
	mu sync.Mutex
	m  map[matchKey]*matchEntry
	// hits and misses count the lookups, dropped the entries a write
	// dropped (the tests read them).
	hits, misses, dropped uint64
}

// matchEntry is the rows a word matched (rows), and, once a query
// without other candidate filters asked for them, those that are groups'
// representatives (reps) and those outside groups (singles): what
// plan.groups takes from the candidates, each an operation over every
// row the word matched (millions, with many series).
type matchEntry struct {
	rows, reps, singles *roaring.Bitmap
	// regrouped is Index.regrouped when reps and singles were made:
	// they are made again once the groups changed.
	regrouped uint64
	// classes is the ways the rows match, for a relevance order
	// (wordIndex.match, scored; nil until a relevance query asked, and
	// for an entry of several words).
	classes []scoredClass
	// tiers is the score tiers of a relevance query whose candidates
	// were tiersOf (these rows, or their singles), and the words'
	// classes of the entry's terms (plan.tiers; tiersOK false when it
	// declined). Nil until such a query asked.
	tiers   []tier
	tiersOf *roaring.Bitmap
	tiersOK bool
	// What the rows depend on: the terms (every one of which a row
	// matches), the language, and the visibilities the query keeps.
	terms      []search.Term
	lang       string
	statuses   []string
	mask, want uint8
	// seq is the last of the writers' holds before the rows were
	// matched (holds.seq).
	seq uint64
}

// derived returns e's reps, from the index x (the caller holds x.mu for
// reading), making them the first time and again when the groups changed
// since, and its singles when made (nil: not yet, see singlesOf): a
// query that does not read them whole (one that counts its matches
// outside groups from cardinalities: firstCounted) makes no copy of
// them.
func (c *matchCache) derived(x *Index, e *matchEntry) (reps, singles *roaring.Bitmap) {
	c.mu.Lock()
	reps, singles = e.reps, e.singles
	ok := reps != nil && e.regrouped == x.regrouped
	c.mu.Unlock()
	if ok {
		return reps, singles
	}
	reps = roaring.And(e.rows, x.reps)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.reps == nil || e.regrouped != x.regrouped {
		e.reps, e.singles, e.regrouped = reps, nil, x.regrouped
	}
	return e.reps, e.singles
}

// singlesOf returns e's singles, from the index x (the caller holds x.mu
// for reading), making them the first time and again when the groups
// changed since (derived makes its reps).
func (c *matchCache) singlesOf(x *Index, e *matchEntry) *roaring.Bitmap {
	c.mu.Lock()
	singles := e.singles
	ok := singles != nil && e.regrouped == x.regrouped
	c.mu.Unlock()
	if ok {
		return singles
	}
	singles = roaring.AndNot(e.rows, x.grouped)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.reps != nil && e.regrouped == x.regrouped {
		e.singles = singles
	}
	return singles
}

// classesOf returns the ways e's rows match (nil: not made yet).
func (c *matchCache) classesOf(e *matchEntry) []scoredClass {
	c.mu.Lock()
	defer c.mu.Unlock()
	return e.classes
}

// setClasses keeps the ways e's rows match, made from the index as e's
// rows are (no write between: it would have dropped e).
func (c *matchCache) setClasses(e *matchEntry, classes []scoredClass) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.classes == nil {
		e.classes = classes
	}
}

// tiersOf returns the score tiers of plan p (plan.tiers), a relevance
// query whose candidates and words' classes are those of e (p.cached),
// made the first time and again when p's candidates are other rows (the
// singles made again once the groups changed). The tiers' bitmaps are
// shared: their users must not change them.
func (c *matchCache) tiersOf(e *matchEntry, p *plan) ([]tier, bool) {
	c.mu.Lock()
	ts, of, ok := e.tiers, e.tiersOf, e.tiersOK
	c.mu.Unlock()
	if of != nil && of == p.cands {
		return ts, ok
	}
	ts, ok = p.tiers()
	c.mu.Lock()
	defer c.mu.Unlock()
	e.tiers, e.tiersOf, e.tiersOK = ts, p.cands, ok
	return ts, ok
}

// matchCacheMax bounds the words a matchCache keeps: past it, one is
// dropped for each one added (a bitmap of a common prefix over millions
// of rows holds up to about a megabyte).
const matchCacheMax = 32

// matchKey is what the rows of a word match depend on besides the
// index: the language, the term, and the visibilities the plan keeps
// (plan.keeps: its statuses and its hidden and protected flags).
type matchKey struct {
	lang, word string
	prefix     bool
	typos      int
	statuses   string
	mask, want uint8
	// joined is joinedPrefixes (the tests compare both ways).
	joined bool
}

// keyOfMatch returns the key of term t of plan p in language lang.
func keyOfMatch(p *plan, lang string, t search.Term) matchKey {
	return matchKey{lang: lang, word: t.Word, prefix: t.Prefix, typos: t.Typos, statuses: strings.Join(p.q.Statuses, "\x00"),
		mask: p.flagMask & visibilityFlags, want: p.flagWant & visibilityFlags, joined: joinedPrefixes}
}

// keyOfWords returns the key of the rows that match every term of
// terms (several) of plan p in language lang: its word holds every
// term's, and its typos are -1 (no single term's key).
func keyOfWords(p *plan, lang string, terms []search.Term) matchKey {
	k := keyOfMatch(p, lang, search.Term{Typos: -1})
	var b strings.Builder
	for _, t := range terms {
		fmt.Fprintf(&b, "%s\x00%v\x00%d\x01", t.Word, t.Prefix, t.Typos)
	}
	k.word = b.String()
	return k
}

// get returns the entry of k (nil: not kept).
func (c *matchCache) get(k matchKey) *matchEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[k]
	if b == nil {
		c.misses++
		return nil
	}
	c.hits++
	return b
}

// put keeps the rows b of k, those of plan p that match every term of
// terms in language lang, matched after the writers' hold seq
// (holds.seq), and returns their entry.
func (c *matchCache) put(p *plan, seq uint64, lang string, terms []search.Term, k matchKey, b *roaring.Bitmap) *matchEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[matchKey]*matchEntry{}
	}
	if len(c.m) >= matchCacheMax {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	e := &matchEntry{rows: b, terms: slices.Clone(terms), lang: lang, statuses: slices.Clone(p.q.Statuses),
		mask: p.flagMask & visibilityFlags, want: p.flagWant & visibilityFlags, seq: seq}
	c.m[k] = e
	return e
}

// clear drops every entry. The caller holds Index.mu for writing.
func (c *matchCache) clear() {
	c.dropped += uint64(len(c.m))
	clear(c.m)
}

// touchWord drops the entries whose rows may change when the rows of
// word w change in the index x: a row gains or loses w (link, unlink),
// or a row holding w is hidden or shown (pieces). The caller holds x.mu
// for writing and calls it in the hold of the change, so that no query
// reads an entry of the rows before it. A row's aliases change in a hold
// that touches all its words too (in the last hold of link, its words
// linked there or the row shown; in the first of unlink, its words
// unlinked there or the row hidden), so they need no call of their own.
func (c *matchCache) touchWord(x *Index, w *word) {
	if len(c.m) == 0 {
		return
	}
	x.touched += len(c.m)
	for k, e := range c.m {
		if e.dependsOn(x, w) {
			delete(c.m, k)
			c.dropped++
		}
	}
}

// touchSlot drops the entries whose rows hold slot: those that change
// when a writer hides the row at slot from the word matches (pieces).
// The caller holds x.mu for writing.
func (c *matchCache) touchSlot(x *Index, slot uint32) {
	x.touched += len(c.m)
	for k, e := range c.m {
		if e.rows.Contains(slot) {
			delete(c.m, k)
			c.dropped++
		}
	}
}

// dropSince drops the entries made since the writer's hold seq
// (holds.seq): when a writer shows a row it hid in that hold, those
// made meanwhile lack it (the others were dropped as its words were
// linked, if they depend on them: see pieces). The caller holds x.mu
// for writing.
func (c *matchCache) dropSince(x *Index, seq uint64) {
	x.touched += len(c.m)
	for k, e := range c.m {
		if e.seq >= seq {
			delete(c.m, k)
			c.dropped++
		}
	}
}

// touchWords is touchWord for each of words, checking each entry once
// against each vocabulary of words (reads) and only the entries that read
// it against the words' texts: a large draft's tens of thousands of words,
// in the draft vocabulary that the anonymous queries' entries do not read,
// cost an entry a check per piece of the draft, not one per word (the
// writer holds the lock meanwhile). The caller holds x.mu for writing.
func (c *matchCache) touchWords(x *Index, words []*word) {
	for len(words) > 0 && len(c.m) > 0 {
		v := words[0].vocab
		n := 1
		for n < len(words) && words[n].vocab == v {
			n++
		}
		c.touchVocabulary(x, v, words[:n])
		words = words[n:]
	}
}

// touchVocabulary drops the entries whose rows may change when the rows
// of words, all of vocabulary v, change in the index x: those that read
// v and have a term that reads one of the words (what dependsOn checks
// word by word). It counts the checks in x.touched: one per entry, and
// one per word for an entry that reads v.
func (c *matchCache) touchVocabulary(x *Index, v *vocabulary, words []*word) {
	x.touched += len(c.m)
	for k, e := range c.m {
		if !e.reads(x, v) {
			continue
		}
		x.touched += len(words)
		if slices.ContainsFunc(words, func(w *word) bool { return e.readsText(w.text) }) {
			delete(c.m, k)
			c.dropped++
		}
	}
}

// dependsOn reports whether e's rows may change with the rows of word w:
// w is in a vocabulary that e's query reads (reads), and one of e's terms
// reads w (readsText: a row holding w may match e's other terms through
// its other words).
func (e *matchEntry) dependsOn(x *Index, w *word) bool {
	return e.reads(x, w.vocab) && e.readsText(w.text)
}

// reads reports whether e's query reads vocabulary v: one of e's
// language, or of a language it has aliases to, and of a visibility it
// keeps.
func (e *matchEntry) reads(x *Index, v *vocabulary) bool {
	if v.lang != e.lang {
		l := x.langs[e.lang]
		if l == nil || l.aliases[v.lang] == nil {
			return false
		}
	}
	return keepsVisibility(e.statuses, e.mask, e.want, v.vis)
}

// readsText reports whether one of e's terms reads a word of text w
// (termReads).
func (e *matchEntry) readsText(w string) bool {
	return slices.ContainsFunc(e.terms, func(t search.Term) bool { return termReads(t, w) })
}

// termReads reports whether a query of term t may read the rows of word
// w: w matches t (search.Term.Matches), or is t's word, or starts with t
// when t is a prefix (the walk's ways and prefixRows'), all of them so
// that an entry is never kept past a change it depends on.
func termReads(t search.Term, w string) bool {
	return w == t.Word || t.Prefix && strings.HasPrefix(w, t.Word) || t.Typos > 0 && t.Matches(w)
}
