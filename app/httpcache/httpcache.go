// Package httpcache is the HTTP caching layer of the service: a cache of
// rendered GET responses bounded by bytes, strong ETags with If-None-Match
// revalidation (304), Cache-Control and Vary, and gzip or brotli compression
// by Accept-Encoding, with compressed bodies kept beside the cached body so
// that a hit costs no compression.
//
// It knows nothing about what it caches: the caller names each cacheable
// response by a key that holds everything the body depends on (route,
// normalised parameters, language, what the caller may see) and makes every
// entry stale at once after a write (Invalidate). An optional external
// version (the search engine's write generation) is checked on every hit,
// and a TTL bounds the staleness of writes made by other processes, which
// this one cannot see.
package httpcache

import (
	"container/list"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/calendar/eventcal/config/metric"
)

// Options configure a Cache.
type Options struct {
	// MaxBytes bounds the memory held by entries (keys, bodies, headers and
	// compressed bodies). Zero or less stores nothing: ETags, 304s and
	// compression still apply.
	MaxBytes int64
	// TTL is the longest an entry is served; zero or less means no limit
	// (only Invalidate and Version make entries stale).
	TTL time.Duration
	// Version, when set, is read before each render and on each hit: an
	// entry rendered under another version is stale.
	Version func() int64
	// Now is the clock for the TTL (time.Now when nil).
	Now func() time.Time
}

// Cache holds rendered responses. Its zero value is not usable; see New.
type Cache struct {
	opts Options
	// gen counts Invalidate calls; an entry of an older generation is stale.
	gen atomic.Int64

	mu      sync.Mutex
	entries map[string]*list.Element // of *entry, most recently used first
	lru     *list.List
	bytes   int64

	hits, misses, evictions prometheus.Counter
	collectors              []prometheus.Collector
}

// entry is one rendered response.
type entry struct {
	key    string
	body   []byte
	etag   string // hex digest of body, without quotes
	header []headerField
	gen    int64
	ver    int64
	at     time.Time

	// gzip and br are the compressed bodies, made on first demand.
	gzip, br atomic.Pointer[[]byte]
	// size is what the entry counts against MaxBytes (guarded by Cache.mu).
	size int64
	// cache is nil for a response that is not stored.
	cache *Cache
	// inPlace says that body is the response's own body (an entry that is
	// not stored): write leaves it there rather than sending it again.
	inPlace bool
}

// headerField is one response header the render set.
type headerField struct{ name, value string }

// entryOverhead approximates the bookkeeping of one entry (map slot, list
// element, struct) so that many tiny entries are bounded too.
const entryOverhead = 256

// New builds a cache.
func New(opts Options) *Cache {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Cache{opts: opts, entries: map[string]*list.Element{}, lru: list.New()}
	c.hits = metric.Counter("eventcal_http_cache_hits_total", "GET responses served from the rendered-response cache.")
	c.misses = metric.Counter("eventcal_http_cache_misses_total", "Cacheable GET responses that had to be rendered.")
	c.evictions = metric.Counter("eventcal_http_cache_evictions_total",
		"Entries dropped from the rendered-response cache to stay within its byte bound.")
	c.collectors = []prometheus.Collector{c.hits, c.misses, c.evictions,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "eventcal_http_cache_bytes",
			Help: "Bytes held by the rendered-response cache (bodies, compressed bodies, headers and keys)."},
			func() float64 { return float64(c.Bytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "eventcal_http_cache_entries",
			Help: "Entries in the rendered-response cache."},
			func() float64 { return float64(c.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "eventcal_http_cache_max_bytes",
			Help: "The byte bound of the rendered-response cache."},
			func() float64 { return float64(max(c.opts.MaxBytes, 0)) }),
	}
	return c
}

// Collectors returns the cache's Prometheus metrics, for the caller's registry.
func (c *Cache) Collectors() []prometheus.Collector { return c.collectors }

// Invalidate makes every entry stale at once. Writers call it before and
// after a write, so that a render racing the write is not stored under the
// new generation.
func (c *Cache) Invalidate() { c.gen.Add(1) }

// Bytes is the memory the entries count against MaxBytes.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Len is the number of entries held (stale ones included until evicted).
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Request describes one GET for Serve.
type Request struct {
	// Key names the response among all others; "" renders without storing.
	Key string
	// Private marks a response that depends on the caller's identity:
	// Cache-Control private, where an anonymous one is public.
	Private bool
	// Vary names request headers besides Accept-Encoding and Authorization
	// that choose the representation (the Key must tell them apart).
	Vary []string
}

func (c *Cache) version() int64 {
	if c.opts.Version == nil {
		return 0
	}
	return c.opts.Version()
}

// lookup returns a fresh entry for key.
func (c *Cache) lookup(key string) *entry {
	if key == "" || c.opts.MaxBytes <= 0 {
		return nil
	}
	gen, ver := c.gen.Load(), c.version()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if e.gen != gen || e.ver != ver || (c.opts.TTL > 0 && c.opts.Now().Sub(e.at) >= c.opts.TTL) {
		c.removeLocked(el)
		return nil
	}
	c.lru.MoveToFront(el)
	return e
}

// store keeps e unless the cache was invalidated since the render began or
// e alone would take more than a quarter of the bound.
func (c *Cache) store(e *entry) {
	e.size = int64(len(e.key)+len(e.body)+len(e.etag)) + entryOverhead
	for _, h := range e.header {
		e.size += int64(len(h.name) + len(h.value))
	}
	if e.size > c.opts.MaxBytes/4 || c.gen.Load() != e.gen || c.version() != e.ver {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[e.key]; ok {
		c.removeLocked(old)
	}
	e.cache = c
	c.entries[e.key] = c.lru.PushFront(e)
	c.bytes += e.size
	c.evictLocked()
}

// grow counts a compressed body added to a stored entry.
func (c *Cache) grow(e *entry, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; !ok || el.Value.(*entry) != e {
		return // evicted or replaced meanwhile: nothing to count
	}
	e.size += int64(n)
	c.bytes += int64(n)
	c.evictLocked()
}

// evictLocked drops least recently used entries until the bound holds.
func (c *Cache) evictLocked() {
	for c.bytes > c.opts.MaxBytes {
		el := c.lru.Back()
		if el == nil {
			return
		}
		c.removeLocked(el)
		c.evictions.Inc()
	}
}

func (c *Cache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// Serve answers a GET (or HEAD) from the entry under req.Key, or runs
// render and, when it answers 200 without error, keeps its body and the
// headers it set. Either way the response gets an ETag, Cache-Control and
// Vary, a 304 when If-None-Match matches, and a compressed body when the
// client accepts one. Errors of render are returned untouched.
func (c *Cache) Serve(ctx *fiber.Ctx, req Request, render func() error) error {
	if e := c.lookup(req.Key); e != nil {
		c.hits.Inc()
		for _, h := range e.header {
			ctx.Response().Header.Set(h.name, h.value)
		}
		return e.write(ctx, req.Private, req.Vary...)
	}
	cacheable := req.Key != "" && c.opts.MaxBytes > 0
	if cacheable {
		c.misses.Inc()
	}
	e := &entry{key: strings.Clone(req.Key), gen: c.gen.Load(), ver: c.version(), at: c.opts.Now()}
	var before map[string]string
	if cacheable {
		before = snapshotHeaders(ctx)
	}
	if err := render(); err != nil {
		return err
	}
	res := ctx.Response()
	if res.StatusCode() != fiber.StatusOK || res.IsBodyStream() || len(res.Header.Peek(fiber.HeaderContentEncoding)) > 0 {
		return nil
	}
	if !cacheable {
		// Not kept: the body stays in the response, where the render put
		// it (no copy), and no headers need remembering.
		e.body = res.Body()
		e.etag = digest(e.body)
		e.inPlace = true
		return e.write(ctx, req.Private, req.Vary...)
	}
	e.body = append([]byte(nil), res.Body()...)
	e.etag = digest(e.body)
	e.header = changedHeaders(ctx, before)
	c.store(e)
	return e.write(ctx, req.Private, req.Vary...)
}

// Middleware gives every 200 GET or HEAD response that Serve did not answer
// (no ETag yet) an ETag, a 304 on a matching If-None-Match, and compression.
// Responses are never stored here: only Serve knows a key.
func (c *Cache) Middleware() fiber.Handler {
	return func(ctx *fiber.Ctx) error {
		if err := ctx.Next(); err != nil {
			return err
		}
		m := ctx.Method()
		res := ctx.Response()
		if (m != fiber.MethodGet && m != fiber.MethodHead) || res.StatusCode() != fiber.StatusOK ||
			res.IsBodyStream() || len(res.Header.Peek(fiber.HeaderETag)) > 0 {
			return nil
		}
		if len(res.Header.Peek(fiber.HeaderContentEncoding)) > 0 {
			// Already encoded by the handler (the Prometheus one does):
			// the ETag names this representation.
			tag := `"` + digest(res.Body()) + `"`
			ctx.Set(fiber.HeaderETag, tag)
			if matches(ctx.Get(fiber.HeaderIfNoneMatch), tag) {
				res.ResetBody()
				ctx.Status(fiber.StatusNotModified)
			}
			return nil
		}
		body := append([]byte(nil), res.Body()...)
		e := &entry{body: body, etag: digest(body)}
		return e.write(ctx, len(ctx.Request().Header.Peek(fiber.HeaderAuthorization)) > 0)
	}
}

// minCompressSize is the smallest body worth compressing.
const minCompressSize = 512

// Compression levels: brotli 5 and gzip 6 give most of the size win at a
// small fraction of the best levels' cost; a cached entry pays it once.
const (
	gzipLevel   = fasthttp.CompressDefaultCompression
	brotliLevel = 5
)

// write sends e (or 304) with the caching and encoding headers.
func (e *entry) write(ctx *fiber.Ctx, private bool, vary ...string) error {
	h := &ctx.Response().Header
	ctx.Vary(append([]string{fiber.HeaderAcceptEncoding, fiber.HeaderAuthorization}, vary...)...)
	if private {
		h.Set(fiber.HeaderCacheControl, "private, max-age=0, must-revalidate")
	} else {
		h.Set(fiber.HeaderCacheControl, "public, max-age=0, must-revalidate")
	}
	enc := ""
	if len(e.body) >= minCompressSize {
		enc = negotiate(string(ctx.Request().Header.Peek(fiber.HeaderAcceptEncoding)))
	}
	tag := `"` + e.etag + `"`
	if enc != "" {
		tag = `"` + e.etag + "-" + enc + `"`
	}
	h.Set(fiber.HeaderETag, tag)
	if inm := ctx.Request().Header.Peek(fiber.HeaderIfNoneMatch); len(inm) > 0 && e.matchesAny(string(inm)) {
		h.Del(fiber.HeaderContentType)
		ctx.Response().ResetBody()
		ctx.Status(fiber.StatusNotModified)
		return nil
	}
	ctx.Status(fiber.StatusOK)
	switch enc {
	case "br":
		h.Set(fiber.HeaderContentEncoding, "br")
		return ctx.Send(e.compressed(&e.br, func(dst, src []byte) []byte { return fasthttp.AppendBrotliBytesLevel(dst, src, brotliLevel) }))
	case "gzip":
		h.Set(fiber.HeaderContentEncoding, "gzip")
		return ctx.Send(e.compressed(&e.gzip, func(dst, src []byte) []byte { return fasthttp.AppendGzipBytesLevel(dst, src, gzipLevel) }))
	}
	if e.inPlace {
		return nil // the response holds the body already
	}
	return ctx.Send(e.body)
}

// compressed returns the body compressed by fn, made once per entry.
func (e *entry) compressed(slot *atomic.Pointer[[]byte], fn func(dst, src []byte) []byte) []byte {
	if p := slot.Load(); p != nil {
		return *p
	}
	out := fn(nil, e.body)
	if slot.CompareAndSwap(nil, &out) && e.cache != nil {
		e.cache.grow(e, len(out))
	}
	return *slot.Load()
}

// matchesAny reports whether If-None-Match names any representation of e
// (identity, gzip or brotli): the weak comparison RFC 9110 13.1.2 asks for.
func (e *entry) matchesAny(inm string) bool {
	for _, suffix := range [...]string{"", "-gzip", "-br"} {
		if matches(inm, `"`+e.etag+suffix+`"`) {
			return true
		}
	}
	return false
}

// matches reports whether an If-None-Match value lists tag (or is "*"),
// comparing weakly (a W/ prefix is ignored).
func matches(inm, tag string) bool {
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// Negotiate picks "br", "gzip" or "" (identity) from an Accept-Encoding
// value: the accepted coding with the highest q, brotli on a tie. The
// cache uses it, and so do handlers that send precompressed bodies
// (app/apidocs).
func Negotiate(accept string) string { return negotiate(accept) }

// negotiate is Negotiate.
func negotiate(accept string) string {
	if accept == "" {
		return ""
	}
	best, bestQ := "", 0.0
	star := -1.0
	qs := map[string]float64{}
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				q = f
			}
		}
		if name == "*" {
			star = q
			continue
		}
		qs[name] = q
	}
	for _, enc := range [...]string{"br", "gzip"} {
		q, ok := qs[enc]
		if !ok && star >= 0 {
			q, ok = star, true
		}
		if ok && q > bestQ {
			best, bestQ = enc, q
		}
	}
	return best
}

// digest is the hex xxhash of a body: 64 bits name a representation well
// enough for revalidation, and the hash runs at memory speed.
func digest(b []byte) string {
	return strconv.FormatUint(xxhash.Sum64(b), 16)
}

// snapshotHeaders copies the response headers set before the render (by
// middleware: request ID, CORS), so that only the render's own are kept.
func snapshotHeaders(ctx *fiber.Ctx) map[string]string {
	out := map[string]string{}
	ctx.Response().Header.VisitAll(func(k, v []byte) {
		out[string(k)] = string(v)
	})
	return out
}

// changedHeaders returns the headers the render set or changed, except
// those that describe the transfer rather than the body.
func changedHeaders(ctx *fiber.Ctx, before map[string]string) []headerField {
	var out []headerField
	ctx.Response().Header.VisitAll(func(k, v []byte) {
		name := string(k)
		switch name {
		case fiber.HeaderContentLength, fiber.HeaderDate, fiber.HeaderServer, fiber.HeaderSetCookie,
			fiber.HeaderConnection, fiber.HeaderTransferEncoding, fiber.HeaderETag, fiber.HeaderVary, fiber.HeaderCacheControl:
			return
		}
		if old, ok := before[name]; ok && old == string(v) {
			return
		}
		out = append(out, headerField{name: name, value: string(v)})
	})
	return out
}

// Generation counts Invalidate calls, for callers that keep data of their
// own that every write makes stale (decoded records, for instance).
func (c *Cache) Generation() int64 { return c.gen.Load() }
