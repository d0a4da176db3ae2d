package memindex

import (
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
	m       map[matchKey]*roaring.Bitmap
	// hits and misses count the lookups (the tests read them).
	hits, misses uint64
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

// get returns the rows of k at the index's version v (nil: not kept).
func (c *matchCache) get(v uint64, k matchKey) *roaring.Bitmap {
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
// of an older version first.
func (c *matchCache) put(v uint64, k matchKey, b *roaring.Bitmap) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != v || c.m == nil {
		if v < c.version {
			return // a query of an older version, finishing late
		}
		c.version, c.m = v, map[matchKey]*roaring.Bitmap{}
	}
	if len(c.m) >= matchCacheMax {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = b
}
