package datetext

import (
	"strings"
	"sync"
	"time"
)

// cacheSize bounds the phrase cache; it is emptied when full.
const cacheSize = 4096

type cacheKey struct {
	text, lang, zone string
	minute           int64
}

// phraseCache holds the phrases read (cached).
var phraseCache boundedCache[cacheKey, result]

// boundedCache is a map safe for concurrent use that is emptied when it
// holds cacheSize entries. The zero value is an empty cache.
type boundedCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// get returns the value of k, if the cache holds one.
func (c *boundedCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// put sets the value of k, emptying the cache first when it is full.
// The caller clones strings of k that live in buffers reused later.
func (c *boundedCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = make(map[K]V)
	}
	c.m[k] = v
}

// result is a phrase read at the start of a minute: t, and whether it moves
// with the clock ("+2 weeks") or stays put ("tomorrow", "16:00").
type result struct {
	t       time.Time
	follows bool
	err     error
}

// cached reads a phrase once per text, language, zone and minute: a list
// request names the same few phrases in several parameters, frontends send
// the same list queries over and over, and the library needs about 2 ms of
// CPU for a phrase (BenchmarkParseLibrary). Within a minute a phrase's
// instant either moves with the clock or stays put (days, hours and zone
// transitions change on minute boundaries), so reading it at the minute's
// start and one second later tells which, and every call in that minute is
// answered exactly.
func cached(text, lang string, now time.Time) (time.Time, error) {
	start := now.Truncate(time.Minute)
	k := cacheKey{text: text, lang: lang, zone: now.Location().String(), minute: start.Unix()}
	r, ok := phraseCache.get(k)
	if !ok {
		r.t, r.err = parsePhrase(text, lang, start)
		if r.err == nil {
			t1, err := parsePhrase(text, lang, start.Add(time.Second))
			r.follows = err == nil && t1.Sub(r.t) == time.Second
		}
		// The text may live in a request buffer that is reused later.
		k.text, k.lang = strings.Clone(k.text), strings.Clone(k.lang)
		phraseCache.put(k, r)
	}
	if r.err != nil {
		return time.Time{}, r.err
	}
	if r.follows {
		return r.t.Add(now.Sub(start)), nil
	}
	return r.t, nil
}

type verdictKey struct{ text, lang, zone string }

// verdicts remembers, per phrase, language and zone, whether the library
// used every part of it: the answer does not depend on the clock, and it is
// the costly part of reading a phrase (one parse per number and word).
var verdicts boundedCache[verdictKey, bool]
