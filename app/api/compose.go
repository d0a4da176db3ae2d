package api

import (
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/handlers"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// newHandlers composes the handlers of one API root (cfg names it): the
// renderer and the calendar service they call, over the server's store,
// search engine and clock. The calendar drops the renderer's term counts
// of what it writes; the response cache and the sync worker are told of
// every write route by the route wrapper (registerRoutes).
func (s *Server) newHandlers(cfg *config.Config, opts Options, recordTTL, countTTL time.Duration) *handlers.API {
	render := s.renderer(cfg, recordTTL, countTTL)
	cal := calendar.New(calendar.Deps{Config: cfg, Store: s.store, Logger: s.log, Now: s.now,
		Zone: render.EventZone, Expansions: render.Expansions,
		Changed: func(posts ...*repository.Record) {
			if ids := present.EventLabels(posts...); len(ids) > 0 {
				render.Counts.Invalidate(ids...)
			}
		}})
	// The sources service (the /sources routes, on the API's own root).
	srcs := sources.NewSources(sources.SourcesDeps{Store: s.store, DefaultLanguage: cfg.DefaultLanguage, Now: s.now,
		AllowPrivate: cfg.SourcesAllowPrivate})
	return handlers.New(handlers.Deps{Config: cfg, Store: s.store, Search: s.search, Indexer: s.indexer,
		Reindexer: opts.Reindexer, Webhooks: opts.Webhooks, Backups: opts.Backups, Logger: s.log, Now: s.now,
		Render: render, Calendar: cal, AdminChanged: s.forgetAdmin, Version: s.identity.Version,
		Sources: srcs, SourceRunner: opts.SourceRunner})
}
