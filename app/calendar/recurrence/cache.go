package recurrence

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Cache bounds: entries and original starts kept (a start is 24 bytes, so
// DefaultCacheStarts is some 24 MiB at most).
const (
	DefaultCacheEntries = 4096
	DefaultCacheStarts  = 1 << 20
)

// Cache keeps the expansions of series, so that reading a series'
// occurrences again (GET /events/{id}/occurrences, one occurrence, the
// series' feed) does not expand it again. An entry is keyed by what the
// expansion depends on: the zone, start and end, rules, exclusions and
// additions, the occurrence bound and the horizon's end rounded up to the
// hour. A change to any of those is another key (the old entry ages out);
// overrides are applied to the kept starts on each read, so editing one
// occurrence keeps the expansion. Concurrent reads of a series not yet
// kept wait for one expansion. The zero value is not usable; see NewCache.
type Cache struct {
	maxEntries, maxStarts int

	mu      sync.Mutex
	entries map[[32]byte]*list.Element // of *cacheEntry, most recently used first
	lru     *list.List
	held    int // original starts held

	expansions atomic.Int64
	// Work counts the work of the expansions made.
	Work Work
}

type cacheEntry struct {
	key    [32]byte
	done   chan struct{}
	starts []time.Time
	err    error
	// counted: starts are counted in Cache.held (guarded by Cache.mu).
	counted bool
}

// NewCache returns a cache of at most maxEntries expansions holding at
// most maxStarts original starts together (0: the defaults).
func NewCache(maxEntries, maxStarts int) *Cache {
	if maxEntries <= 0 {
		maxEntries = DefaultCacheEntries
	}
	if maxStarts <= 0 {
		maxStarts = DefaultCacheStarts
	}
	return &Cache{maxEntries: maxEntries, maxStarts: maxStarts, entries: map[[32]byte]*list.Element{}, lru: list.New()}
}

// Expansions returns how many expansions the cache made (reads it could
// not answer from what it keeps).
func (c *Cache) Expansions() int64 { return c.expansions.Load() }

// Expand is Expand through the cache. The horizon's end is rounded up to
// the hour (an occurrence up to an hour beyond the horizon may be given).
// A nil Cache expands every time.
func (c *Cache) Expand(s Series, from, to time.Time, lim Limits) ([]Occurrence, error) {
	if c == nil {
		return Expand(s, from, to, lim)
	}
	if s.Recurrence == nil {
		return nil, nil
	}
	starts, err := c.starts(s, lim)
	if err != nil {
		return nil, err
	}
	return occurrences(s, starts, from, to), nil
}

// Keep expands a series into the cache now unless it is kept already: a
// write of a series calls it, so that the reads after it find the
// expansion made. A nil Cache does nothing.
func (c *Cache) Keep(s Series, lim Limits) {
	if c != nil && s.Recurrence != nil {
		_, _ = c.starts(s, lim)
	}
}

// Find is Find through the cache (a nil Cache expands afresh).
func (c *Cache) Find(s Series, key string, lim Limits) (Occurrence, bool, error) {
	if _, err := ParseKey(key, zoneOf(s)); err != nil {
		return Occurrence{}, false, nil
	}
	all, err := c.Expand(s, time.Time{}, time.Time{}, lim)
	if err != nil {
		return Occurrence{}, false, err
	}
	for _, o := range all {
		if o.Key == key {
			return o, true, nil
		}
	}
	return Occurrence{}, false, nil
}

// starts returns the series' original starts, kept or expanded once.
func (c *Cache) starts(s Series, lim Limits) ([]time.Time, error) {
	end := lim.HorizonEnd()
	if r := end.Truncate(time.Hour); r.Before(end) {
		end = r.Add(time.Hour)
	} else {
		end = r
	}
	max := lim.max()
	key := cacheKey(s, end, max)
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		<-e.done
		return e.starts, e.err
	}
	e := &cacheEntry{key: key, done: make(chan struct{})}
	c.entries[key] = c.lru.PushFront(e)
	c.mu.Unlock()

	c.expansions.Add(1)
	p, err := parse(s)
	if err == nil && p != nil {
		e.starts, _ = p.originals(end, max, &c.Work, false)
	}
	e.err = err
	close(e.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok && el.Value.(*cacheEntry) == e {
		c.held += len(e.starts)
		e.counted = true
		// Evict from the least recently used end; an entry still
		// expanding is passed over (it is counted once done).
		for old := c.lru.Back(); old != nil && c.lru.Len() > 1 && (c.lru.Len() > c.maxEntries || c.held > c.maxStarts); {
			oe := old.Value.(*cacheEntry)
			prev := old.Prev()
			select {
			case <-oe.done:
				if oe != e {
					c.lru.Remove(old)
					delete(c.entries, oe.key)
					if oe.counted {
						c.held -= len(oe.starts)
					}
				}
			default:
			}
			old = prev
		}
	}
	return e.starts, e.err
}

// cacheKey digests what a series' expansion depends on.
func cacheKey(s Series, end time.Time, max int) [32]byte {
	h := sha256.New()
	var b [8]byte
	num := func(n int64) {
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	str := func(v string) {
		num(int64(len(v)))
		h.Write([]byte(v))
	}
	str(zoneOf(s).String())
	str(s.wall().Format(KeyLayout))
	num(s.Start.UnixNano())
	num(s.End.UnixNano())
	num(end.Unix())
	num(int64(max))
	for _, list := range [][]string{s.Recurrence.Rules, s.Recurrence.Exclusions, s.Recurrence.Additions} {
		str(strconv.Itoa(len(list)))
		for _, v := range list {
			str(v)
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
