package memindex

import (
	"fmt"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/calendar/eventcal/search"
)

// matchCache keeps the rows that recent query words matched (match,
// unscored), per word and the visibilities a query keeps, for the
// index's version: search-as-you-type asks for the same few prefixes
// again and again (`j`, `ja`, `jaz`...), and with many series a common
// prefix matches millions of rows, whose bitmaps cost milliseconds to
// join (the vocabularies' postings, the languages' aliases). Any write
// makes a new version (Index.version, raised whenever a writer takes the
// write lock), which empties it. The bitmaps it hands out are shared:
// their users must not change them (see Index.plan).
type matchCache struct {
	mu      sync.Mutex
	version uint64
	m       map[matchKey]*matchEntry
	// hits and misses count the lookups (the tests read them).
	hits, misses uint64
}

// matchEntry is the rows a word matched (rows), and, once a query
// without other candidate filters asked for them, those that are groups'
// representatives (reps) and those outside groups (singles): what
// plan.groups takes from the candidates, each an operation over every
// row the word matched (millions, with many series).
type matchEntry struct {
	rows, reps, singles *roaring.Bitmap
}

// derived returns e's reps and singles, from the index x (of the
// entry's version: the caller holds x.mu for reading), making them the
// first time.
func (c *matchCache) derived(x *Index, e *matchEntry) (reps, singles *roaring.Bitmap) {
	c.mu.Lock()
	reps, singles = e.reps, e.singles
	c.mu.Unlock()
	if reps != nil {
		return reps, singles
	}
	reps, singles = roaring.And(e.rows, x.reps), roaring.AndNot(e.rows, x.grouped)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.reps == nil {
		e.reps, e.singles = reps, singles
	}
	return e.reps, e.singles
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

// get returns the entry of k at the index's version v (nil: not kept).
func (c *matchCache) get(v uint64, k matchKey) *matchEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.m[k]
	if c.version != v || b == nil {
		c.misses++
		return nil
	}
	c.hits++
	return b
}

// put keeps the rows b of k at the index's version v, emptying the cache
// of an older version first, and returns their entry.
func (c *matchCache) put(v uint64, k matchKey, b *roaring.Bitmap) *matchEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != v || c.m == nil {
		if v < c.version {
			return &matchEntry{rows: b} // a query of an older version, finishing late
		}
		c.version, c.m = v, map[matchKey]*matchEntry{}
	}
	if len(c.m) >= matchCacheMax {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	e := &matchEntry{rows: b}
	c.m[k] = e
	return e
}
