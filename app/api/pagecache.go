package api

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/calendar/eventcal/app/handlers"
	"github.com/calendar/eventcal/app/httpcache"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/config"
)

// DefaultResponseCacheBytes bounds the rendered-response cache when
// Options.ResponseCacheBytes is zero: some 500 default list pages.
const DefaultResponseCacheBytes = 64 << 20

// DefaultResponseCacheTTL is the response cache TTL when
// Options.ResponseCacheTTL is zero: the staleness the search result cache
// allows replicas sharing MongoDB and Meilisearch (app searchCacheTTL).
const DefaultResponseCacheTTL = 250 * time.Millisecond

// responseCacheTTL is the TTL the options ask for, or the default.
func responseCacheTTL(opts Options) time.Duration {
	if opts.ResponseCacheTTL == 0 {
		return DefaultResponseCacheTTL
	}
	return opts.ResponseCacheTTL
}

// generationer is a search engine that counts its writes (search.Cached):
// a list rendered before the index changed is stale.
type generationer interface{ Generation() int64 }

// newResponseCache builds the rendered-response cache from the options.
func newResponseCache(opts Options) *httpcache.Cache {
	o := httpcache.Options{MaxBytes: opts.ResponseCacheBytes, TTL: opts.ResponseCacheTTL}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultResponseCacheBytes
	}
	o.TTL = responseCacheTTL(opts)
	if g, ok := opts.Search.(generationer); ok {
		o.Version = g.Generation
	}
	return httpcache.New(o)
}

// serveRead runs a read handler through the response cache (ETag, 304,
// compression and, for cacheable routes, the stored rendering).
func (s *Server) serveRead(c *fiber.Ctx, r *handlers.Request, rt *handlers.Route) error {
	m := c.Method()
	if m != fiber.MethodGet && m != fiber.MethodHead {
		return rt.Handle(r)
	}
	return s.pages.Serve(c, r.CacheKey(rt), func() error { return rt.Handle(r) })
}

// renderer returns a renderer for cfg sharing the server's expansion
// cache.
func (s *Server) renderer(cfg *config.Config, recordTTL, countTTL time.Duration) *present.Renderer {
	rn := present.NewRenderer(cfg, s.store, s.writeGeneration, recordTTL, countTTL)
	rn.Expansions = s.expansions
	return rn
}

// writeGeneration moves with every write the renderer's caches (decoded
// linked records, term counts) may predate: the write routes' (the
// response cache's Invalidate, before and after each) and every write to
// the search index, whoever wrote the items it indexes: a calendar
// source's run or scheduled publishing in the background, another
// process on the same store. Both counters only grow, so their sum
// changes whenever either does. Without the index's, what the background
// wrote showed in lists at once but in the renderings kept meanwhile (a
// term's count) only after their TTL, a minute with the embedded stack.
func (s *Server) writeGeneration() int64 {
	g := s.pages.Generation()
	if idx, ok := s.search.(generationer); ok {
		g += idx.Generation()
	}
	return g
}
