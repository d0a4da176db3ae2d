package handlers

import (
	"log/slog"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/present"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// Notifier is told that new index marks were written.
type Notifier interface{ Notify() }

// Deps are what the handlers use; the root app fills them from its Options.
type Deps struct {
	Config *config.Config
	Store  repository.Store
	// Search serves the lists; nil answers them with 503.
	Search search.Engine
	// Indexer is the sync worker (its Stats feed /admin/sync); may be nil.
	Indexer Notifier
	// Reindexer runs full rebuilds; nil answers the admin routes with 503.
	Reindexer Reindexer
	// Webhooks sends test pings; nil answers them with 503.
	Webhooks WebhookSender
	Logger   *slog.Logger
	Now      func() time.Time
	// Render turns records into the response shapes.
	Render *present.Renderer
	// AdminChanged is called when the stored "admin" user changes (the
	// root app caches the ADMIN_TOKEN user); may be nil.
	AdminChanged func()
	// Version is the build's version, the interface document's
	// info.version; empty means config.Version.
	Version string
	// Calendar writes events, venues and organizers (every write route
	// of theirs calls it).
	Calendar *calendar.Service
	// Backups takes and lists backups; nil answers their routes with 503.
	Backups Backups
	// Sources manages the calendar sources (the /sources routes, on the
	// API's own root only); nil answers them with 503.
	Sources *sources.Sources
	// SourceRunner starts source runs (POST /sources/{id}/run); nil
	// answers that route with 503.
	SourceRunner SourceRunner
}

// API is the handlers of every route (Routes) with what they use.
type API struct {
	cfg   *config.Config
	store repository.Store
	// search serves lists; indexer is the sync worker.
	search       search.Engine
	indexer      Notifier
	reindexer    Reindexer
	webhooks     WebhookSender
	backups      Backups
	log          *slog.Logger
	now          func() time.Time
	render       *present.Renderer
	adminChanged func()
	// version is the interface document's info.version (Deps.Version).
	version string
	// routes is every route, for the namespace index and the docs.
	routes []*Route
	// cal is the calendar service the write routes call.
	cal *calendar.Service
	// sources and sourceRunner serve the /sources routes.
	sources      *sources.Sources
	sourceRunner SourceRunner
}

// New returns the handlers; Logger and Now must be set.
func New(d Deps) *API {
	return &API{cfg: d.Config, store: d.Store, search: d.Search, indexer: d.Indexer, reindexer: d.Reindexer,
		webhooks: d.Webhooks, backups: d.Backups, log: d.Logger, now: d.Now, render: d.Render, adminChanged: d.AdminChanged, version: d.Version, cal: d.Calendar,
		sources: d.Sources, sourceRunner: d.SourceRunner}
}

// docVersion is the interface document's info.version: the build's
// version (Deps.Version), else config.Version.
func (s *API) docVersion() string {
	if s.version != "" {
		return s.version
	}
	return config.Version
}
