package present

import (
	"context"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
)

// linkedRecords keeps the decoded venues, organizers, images and terms that
// list pages link to. A calendar page links the same few venues and terms
// over and over; reading and decoding them from the store was a tenth of an
// uncached list's cost. Everything is dropped when the response cache's
// generation moves (every write route bumps it, before and after the
// write) and after ttl, which bounds the staleness of writes by other
// replicas exactly as the response cache's TTL does. Records are shared
// between requests: renderers only read them.
type linkedRecords struct {
	gen func() int64
	ttl time.Duration

	mu    sync.Mutex
	at    time.Time
	was   int64
	posts map[int64]*repository.Record
	terms map[int64]*repository.Label
	// renders keeps the rendered venues, organizers and terms that events
	// embed (a page renders the same few again and again), and the
	// post-only fields of listed events (rendered).
	renders map[renderedKey]renderedEntry
	// refs keeps the term references list filters resolved (0: the
	// reference names no term); see ResolveTermRef.
	refs map[TermRefKey]int64
}

// renderedKind says what a kept rendering is.
type renderedKind uint8

const (
	renderedVenue     renderedKind = iota // a venue (LinkedPlace)
	renderedOrganizer                     // an organizer (LinkedPlace)
	renderedTerm                          // an embedded term (renderEmbeddedTerms)
	renderedEvent                         // an event's head (ListedEvent)
)

// renderedKey names a kept rendering: the record, the language and the
// View.
type renderedKey struct {
	id     int64
	lang   string
	single bool
	kind   renderedKind
}

// renderedEntry is a kept rendering and what it was rendered from.
type renderedEntry struct {
	src, img any
	count    int
	v        any
}

// maxLinkedRecords bounds each map; past it the cache starts over.
const maxLinkedRecords = 20000

// current resets the maps when the generation moved or ttl passed; it
// returns the generation the maps hold (call with mu held).
func (c *linkedRecords) current() int64 {
	g := c.gen()
	if c.posts == nil || g != c.was || time.Since(c.at) >= c.ttl {
		c.posts, c.terms = map[int64]*repository.Record{}, map[int64]*repository.Label{}
		c.renders = map[renderedKey]renderedEntry{}
		c.refs = map[TermRefKey]int64{}
		c.was, c.at = g, time.Now()
	}
	return g
}

// cachedRecords returns the records among ids found in m, fetching the
// missing ones with fetch and keeping them unless a write intervened.
func cachedRecords[T any](ctx context.Context, c *linkedRecords, ids []int64, m func() map[int64]*T, fetch func(context.Context, []int64) (map[int64]*T, error)) (map[int64]*T, error) {
	out := make(map[int64]*T, len(ids))
	var missing []int64
	c.mu.Lock()
	gen := c.current()
	have := m()
	for _, id := range ids {
		if v, ok := have[id]; ok {
			out[id] = v
		} else {
			missing = append(missing, id)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	got, err := fetch(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	keep := c.current() == gen && len(m()) < maxLinkedRecords
	have = m()
	for id, v := range got {
		out[id] = v
		if keep {
			have[id] = v
		}
	}
	c.mu.Unlock()
	return out, nil
}

// Records is store.GetPosts through the linked-record cache.
func (rn *Renderer) Records(ctx context.Context, ids []int64) (map[int64]*repository.Record, error) {
	return cachedRecords(ctx, &rn.links, ids, func() map[int64]*repository.Record { return rn.links.posts }, rn.store.GetRecords)
}

// linkedTerms is store.GetTerms through the linked-record cache.
func (rn *Renderer) linkedTerms(ctx context.Context, ids []int64) (map[int64]*repository.Label, error) {
	return cachedRecords(ctx, &rn.links, ids, func() map[int64]*repository.Label { return rn.links.terms }, rn.store.GetLabels)
}

// rendered returns the value build makes for k, reused while it was built
// from the same decoded records (src and img, compared by identity: an
// entry holds its records, so an equal pointer is the very record it was
// built from, and records are never changed in place) and the same count:
// a reused value is always the one build would make now. Entries go with
// the records when the generation moves or ttl passes. Kept values
// (frozen: written from their kept encoding) are shared by every response
// that embeds them: they are only read (written out, or read by json_ld
// and feeds), never changed; a response that changes one (ListedEvent's
// heads) changes a copy.
func rendered[T any](c *linkedRecords, k renderedKey, src, img any, count int, build func() T) T {
	c.mu.Lock()
	gen := c.current()
	if e, ok := c.renders[k]; ok && e.src == src && e.img == img && e.count == count {
		if v, ok := e.v.(T); ok {
			c.mu.Unlock()
			return v
		}
	}
	c.mu.Unlock()
	v := build()
	c.mu.Lock()
	if c.current() == gen && len(c.renders) < maxLinkedRecords {
		c.renders[k] = renderedEntry{src: src, img: img, count: count, v: v}
	}
	c.mu.Unlock()
	return v
}

// TermRefKey names a term reference as a list filter gave it: the
// taxonomy, the request's language, the reference (ID, slug or name) and
// its value as a whole number (Num false when it is none).
type TermRefKey struct {
	Tax  repository.LabelKind
	Lang string
	Ref  string
	ID   int64
	Num  bool
}

// maxTermRefs bounds the kept term references, unknown ones included: past
// it the kept references start over, so a caller sending ever new names
// cannot grow memory without bound.
const maxTermRefs = 4096

// ResolveTermRef returns the ID of the term k names (0: none), as resolve
// finds it, through rn's linked-record cache: a list filter's categories=
// and tags= would otherwise read and decode the store on every request.
// The answers (unknown ones too) are dropped with the linked records: when
// the write generation moves (every write route moves it before and after
// its write, so a category renamed, deleted or created on this replica is
// seen at once) and after the record TTL (writes by other replicas). An
// answer is kept only when no write intervened while resolve ran; an error
// from resolve is returned and never kept. A nil rn resolves every time.
func ResolveTermRef(rn *Renderer, k TermRefKey, resolve func() (int64, error)) (int64, error) {
	if rn == nil {
		return resolve()
	}
	c := &rn.links
	c.mu.Lock()
	gen := c.current()
	id, ok := c.refs[k]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := resolve()
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.current() == gen {
		if len(c.refs) >= maxTermRefs {
			c.refs = map[TermRefKey]int64{}
		}
		c.refs[k] = id
	}
	c.mu.Unlock()
	return id, nil
}

// keptTermRefs is how many term references c keeps (for tests).
func (c *linkedRecords) keptTermRefs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.refs)
}
