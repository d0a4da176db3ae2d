// Package api is the HTTP layer's composition: Options into the Fiber
// application, the middleware chain (guard, request log, metrics, response
// cache, authentication, write rates) and the registration of the routes.
//
// A request then passes downwards through app/handlers (the route table and
// one file per resource), which reads its input with app/input, decides
// access with app/access and presents records with app/present; every
// layer returns app/apierr errors, which one error handler (errorHandler)
// writes.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	_ "time/tzdata" // event time zones must resolve in a static binary

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/calendar/recurrence"
	"github.com/calendar/eventcal/app/connlimit"
	"github.com/calendar/eventcal/app/handlers"
	"github.com/calendar/eventcal/app/httpcache"
	"github.com/calendar/eventcal/app/input"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/limits"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/webhooks"
)

// Options are what New needs.
type Options struct {
	Config *config.Config
	Store  repository.Store
	Logger *slog.Logger
	// RecurrenceCache keeps series' expansions for the occurrence routes
	// and feeds of both API roots (nil: a new recurrence.NewCache(0, 0)).
	RecurrenceCache *recurrence.Cache
	// NoRecurrenceCache: every read of a series' occurrences expands it
	// (the bench's uncached rows).
	NoRecurrenceCache bool
	// Search serves the lists; nil answers lists with 503.
	Search search.Engine
	// Indexer is told after every write that index marks are waiting (the
	// sync worker); nil when another process runs the worker.
	Indexer Notifier
	// Reindexer runs full rebuilds for the admin routes; nil answers 503.
	Reindexer Reindexer
	// Now returns the current time; nil means time.Now. Tests inject a clock.
	Now func() time.Time
	// Webhooks sends the admin API's test pings (webhooks.Dispatcher); its
	// metrics are served with the app's when it has any. nil answers pings
	// with 503.
	Webhooks WebhookSender
	// Backups takes and lists the backups of the admin routes
	// (backup.Dir); nil answers them with 503.
	Backups Backups
	// ResponseCacheBytes bounds the rendered-response cache (0: the
	// default, DefaultResponseCacheBytes; negative: no cache, while ETags,
	// 304s and compression still apply).
	ResponseCacheBytes int64
	// ResponseCacheTTL bounds how long a rendered response is reused when
	// another process writes (0: DefaultResponseCacheTTL).
	ResponseCacheTTL time.Duration
	// RecordCacheTTL bounds how long decoded linked records (venues,
	// organizers, images, terms) and term counts are reused between
	// renders (0: the response cache's TTL for records, 2 s for counts;
	// negative: never, so every render reads them from the store, as the
	// command-count tests need).
	RecordCacheTTL time.Duration
	// Draining reports that the process is shutting down: /readyz then
	// answers 503 while the other routes keep serving. Nil means never.
	Draining func() bool
	// ReadyTimeout bounds each dependency check of /readyz on its own
	// (0: DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// Metrics is the app's registry (NewMetrics); nil makes a new one.
	// With METRICS_ADDR set the caller serves Metrics.App() there and the
	// API listener has no /metrics.
	Metrics *Metrics
	// Identity is what /healthz and /readyz report about this instance;
	// the zero value means NewIdentity().
	Identity Identity
	// SourceRunner starts the runs of calendar sources (POST
	// /sources/{id}/run; sources.Runner); nil answers that route with 503.
	SourceRunner SourceRunner
}

// Notifier is told that new index marks were written.
type Notifier = handlers.Notifier

// Reindexer starts and reports full rebuilds of the search indexes
// (indexing.Reindexer).
type Reindexer = handlers.Reindexer

// WebhookSender sends the admin API's test pings (webhooks.Dispatcher).
type WebhookSender = handlers.WebhookSender

// Backups takes and lists backups of the embedded store (backup.Dir).
type Backups = handlers.Backups

// SourceRunner starts the runs of calendar sources (sources.Runner).
type SourceRunner = handlers.SourceRunner

// WorkerStats reports the sync worker's recent figures (indexing.Worker).
type WorkerStats = handlers.WorkerStats

// SyncStatus is the view of GET /admin/sync (and of `eventcal status`).
type SyncStatus = handlers.SyncStatus

// ComputeSyncStatus computes the sync figures from a store, an engine (may
// be nil) and the worker's stats (may be nil), for the admin route and the
// `status` command.
func ComputeSyncStatus(ctx context.Context, store repository.Store, engine search.Engine, ws WorkerStats, now time.Time) (*SyncStatus, error) {
	return handlers.ComputeSyncStatus(ctx, store, engine, ws, now)
}

// Server is the composition: the handlers (app/handlers) behind the
// middleware chain (guard, request log, metrics, response cache,
// authentication, write rates). The authentication steps are declared on
// authenticator, which Server embeds (holding the Server back).
type Server struct {
	authenticator

	cfg   *config.Config
	store repository.Store
	// api is every route's handler.
	api *handlers.API
	// compat serves the same routes under The Events Calendar's root
	// (TEC_COMPAT, teccompat.go); nil without it.
	compat *handlers.API
	// expansions keeps series' expansions for both roots' renderers.
	expansions *recurrence.Cache
	// search is checked by /readyz; indexer is woken after writes.
	search   search.Engine
	indexer  Notifier
	log      *slog.Logger
	now      func() time.Time
	draining func() bool
	// readyTimeout bounds each /readyz check.
	readyTimeout time.Duration
	// identity names this instance in /healthz and /readyz (identity.go).
	identity Identity
	// routes is every registered route, for the namespace index and docs.
	routes []*handlers.Route

	adminOnce sync.Mutex
	adminUser *repository.User

	// metrics records requests; the HTTP-layer error paths use it too.
	metrics *appMetrics
	// pages is the rendered-response cache (pagecache.go).
	pages *httpcache.Cache
	// writeRates bounds contributors' and authors' writes (writerate.go);
	// nil when WRITE_RATE is 0.
	writeRates *writeRates
	// proxyWarnAfter is when (Unix nanoseconds of now) the untrusted-proxy
	// warning may be logged again (warnUntrustedProxy).
	proxyWarnAfter atomic.Int64
	// bodies bounds the memory of request bodies (bodies.go).
	bodies *bodyBudget
}

// New builds the Fiber application.
func New(opts Options) (*fiber.App, error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("app: Config and Store are required")
	}
	s := &Server{cfg: opts.Config, store: opts.Store, search: opts.Search, indexer: opts.Indexer, log: opts.Logger, now: opts.Now, draining: opts.Draining,
		readyTimeout: opts.ReadyTimeout, expansions: opts.RecurrenceCache}
	s.authenticator = authenticator{s}
	if s.expansions == nil && !opts.NoRecurrenceCache {
		s.expansions = recurrence.NewCache(0, 0)
	}
	if s.readyTimeout <= 0 {
		s.readyTimeout = DefaultReadyTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.identity = opts.Identity
	if s.identity.Instance == "" {
		s.identity = NewIdentity()
	}
	f := fiber.New(fiber.Config{
		ErrorHandler:          s.errorHandler,
		DisableStartupMessage: true,
		// Bodies are streamed and read by bodyRead up to MaxBodyBytes, so a
		// connection announcing a large Content-Length reserves nothing
		// (limits package; docs/operators.md, "Limits").
		BodyLimit:                    limits.MaxBodyBytes,
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		// MAX_CONNECTIONS is kept by the listener (Metrics.Listener), which
		// makes room by closing connections; fasthttp's own bound is a
		// backstop above it, for the connections it still winds down.
		Concurrency:    2 * maxConnections(s.cfg),
		ReadBufferSize: limits.ReadBufferBytes,
		// The connection's read deadline until a request's headers are in;
		// readHeaders then gives the body limits.ReadTimeout.
		ReadTimeout:  s.cfg.HeaderTimeout,
		WriteTimeout: limits.WriteTimeout,
		IdleTimeout:  limits.IdleTimeout,
	})
	// Every request, probes and errors included, gets an ID, one log line
	// and one histogram sample (requestlog.go, metrics.go).
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(s.log, opts.Indexer)
	}
	metrics := opts.Metrics.m
	s.metrics = metrics
	s.writeRates = newWriteRates(s.cfg.WriteRate, s.cfg.WriteBurst, metrics.writesRateLimited, metrics.writeTokens)
	s.bodies = newBodyBudget(s.cfg.BodyMemory, s.cfg.BodyMemoryPerCaller, metrics.bodyBytes, metrics.bodiesRefused)
	if src, ok := opts.Webhooks.(interface{ Metrics() prometheus.Collector }); ok {
		metrics.registry.MustRegister(src.Metrics())
	}
	s.pages = newResponseCache(opts)
	recordTTL, countTTL := responseCacheTTL(opts), time.Duration(0)
	if opts.RecordCacheTTL != 0 {
		recordTTL, countTTL = opts.RecordCacheTTL, opts.RecordCacheTTL
	}
	s.api = s.newHandlers(s.cfg, opts, recordTTL, countTTL) // compose.go
	s.compat = s.compatAPI(opts, recordTTL, countTTL)       // teccompat.go
	metrics.registry.MustRegister(s.pages.Collectors()...)
	f.Server().HeaderReceived = readHeaders
	s.answerUnknownMethods(f)
	tellConnectionStates(f.Server())
	f.Use(s.observeRequests(metrics), s.recoverPanics, refuseLargeBodies, s.pages.Middleware())
	if s.cfg.MetricsAddr == "" {
		f.Get(metricsPath, s.serveMetrics(metrics))
	}
	f.Get("/healthz", s.health)
	f.Get("/readyz", s.ready)
	s.mountDocs(f) // docs.go
	f.Use(s.cors(), s.rewriteLanguagePrefix, s.methodOverride, s.commonHeaders)
	s.registerRoutes(f)
	f.Use(func(c *fiber.Ctx) error { return apierr.NoRoute() })
	return f, nil
}

// maxConnections is cfg's MAX_CONNECTIONS (its default for a Config not
// built by config.Load).
func maxConnections(cfg *config.Config) int {
	if cfg.MaxConnections > 0 {
		return cfg.MaxConnections
	}
	return limits.DefaultMaxConnections
}

// tellConnectionStates tells the listener (connlimit) which connections
// are serving a request, so that only the others are closed to make room:
// a request whose body is in hand when its handler starts is serving from
// then (bodyRead tells it for the others, once their body is read), and
// every connection is idle once its response is written.
func tellConnectionStates(srv *fasthttp.Server) {
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		if n := fctx.Request.Header.ContentLength(); n >= 0 && n <= limits.BodyPrefetchBytes {
			connlimit.Serving(fctx.Conn())
		}
		next(fctx)
	}
	srv.ConnState = func(c net.Conn, state fasthttp.ConnState) {
		if state == fasthttp.StateIdle {
			connlimit.Idle(c)
		}
	}
}

// rewriteLanguagePrefix maps /{lang}{REST_ROOT}/{namespace}/... onto the
// unprefixed route and remembers the language (docs/decisions.md,
// "Addresses").
func (s *Server) rewriteLanguagePrefix(c *fiber.Ctx) error {
	p := c.Path()
	if len(p) > 3 && p[0] == '/' {
		if i := strings.IndexByte(p[1:], '/'); i > 0 {
			lang := p[1 : i+1]
			rest := p[i+1:]
			if s.cfg.IsLanguage(lang) && s.underAPIRoot(rest) {
				c.Locals(localPrefixLang, strings.Clone(lang))
				c.Path(rest)
			}
		}
	}
	return c.Next()
}

// methodOverride honours ?_method= and X-HTTP-Method-Override on POST, as
// the WordPress REST server does.
func (s *Server) methodOverride(c *fiber.Ctx) error {
	if c.Method() == fiber.MethodPost {
		m := c.Get("X-HTTP-Method-Override")
		if m == "" {
			m = c.Query("_method")
		}
		switch strings.ToUpper(m) {
		case fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete, fiber.MethodGet:
			c.Method(strings.ToUpper(m))
		}
	}
	return c.Next()
}

// commonHeaders adds the headers every API response carries.
func (s *Server) commonHeaders(c *fiber.Ctx) error {
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Robots-Tag", "noindex")
	return c.Next()
}

const localPrefixLang = "prefix-lang"

// handlerOf adapts a request handler of api (the API, or its TEC_COMPAT
// twin) to Fiber: it parses the parameter bag, resolves the language and
// the caller, and refuses before any validation, from the headers alone,
// anonymous writes (docs/decisions.md, "Writes") and every caller a route
// with Allow does not serve (the admin routes and the sources).
func (s *Server) handlerOf(api *handlers.API, rt *handlers.Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// A write's caller is known from its headers before its body is
		// read: an anonymous or refused caller's body is never read or
		// parsed (see readHeaders).
		var user *repository.User
		var err error
		var body bodyRead
		// An admin or sources route (rt.Allow) refuses its other callers
		// from the headers too, reads and writes alike.
		early := rt.Write || rt.Allow != nil
		if early {
			if user, err = s.caller(c); err != nil {
				return err
			}
			if rt.Allow != nil && !rt.Allow(user) {
				return access.Forbidden(user)
			}
		}
		if rt.Write {
			if user == nil {
				return apierr.Forbidden(401)
			}
			// The real clock: the bound is on the machine's work per second.
			// The announced length is charged now, the bytes read as they
			// arrive (writeCharge).
			charge, e := s.writeRates.start(user, s.now, c.Request().Header.ContentLength())
			if e != nil {
				return withRetryAfter(c, e)
			}
			body.charge = charge
		}
		body.budget, body.caller = s.bodies, bodyCaller(c, user, s.cfg.TrustedProxies)
		defer body.release()
		b, err := input.NewBag(c, body.read)
		if err != nil {
			return err
		}
		if !early {
			if user, err = s.caller(c); err != nil {
				return err
			}
		}
		if mediaType, ok := b.Unreadable(); ok {
			// After the 401: an anonymous write learns nothing more.
			return input.UnsupportedBody(c, mediaType)
		}
		if b.JSONAsForm() {
			return input.JSONSentAsForm(c)
		}
		prefixLang, _ := c.Locals(localPrefixLang).(string)
		r, err := api.Prepare(c, b, user, prefixLang, rt)
		if err != nil {
			return err
		}
		if !rt.Write {
			return s.serveRead(c, r, rt)
		}
		// Cached renderings are stale from the moment a write may change
		// what they show (before and after: see httpcache.Invalidate).
		s.pages.Invalidate()
		err = rt.Handle(r)
		s.pages.Invalidate()
		if rt.Write && s.indexer != nil {
			// Wake the sync worker even after a failed write: linked items
			// it created may have left marks.
			s.indexer.Notify()
		}
		return err
	}
}

// authenticator resolves the caller of a request: bearer tokens, the
// built-in admin's Basic credentials and the failures' answers.
type authenticator struct{ *Server }

// caller authenticates the request's bearer token (nil when anonymous) and
// records the user for the request log.
func (s *authenticator) caller(c *fiber.Ctx) (*repository.User, error) {
	user, err := s.authenticate(c.UserContext(), c.Get(fiber.HeaderAuthorization))
	if err != nil {
		return nil, err
	}
	if user != nil {
		c.Locals(localUserID, user.ID)
	}
	return user, nil
}

// cors answers browser preflights and exposes the paging headers
// (CORS exposes X-TEC-Total, X-TEC-TotalPages, X-WP-Total and
// X-WP-TotalPages: docs/decisions.md, "Reads").
func (s *Server) cors() fiber.Handler {
	return cors.New(cors.Config{
		AllowOrigins: strings.Join(s.cfg.CORSAllowedOrigins, ","),
		AllowMethods: "GET,HEAD,OPTIONS,POST,PUT,PATCH,DELETE",
		// X-WP-Nonce and X-Requested-With are what WordPress frontends
		// (wp.apiFetch, jQuery) send: preflights naming them must pass.
		AllowHeaders:  "Authorization, Content-Type, X-HTTP-Method-Override, X-Request-ID, X-WP-Nonce, X-Requested-With",
		ExposeHeaders: "X-TEC-Total, X-TEC-TotalPages, X-WP-Total, X-WP-TotalPages, X-Request-ID, Link",
		MaxAge:        600,
	})
}

// authenticate resolves "Authorization: Bearer <token>" to a user. No header
// is an anonymous caller; a token that matches nobody, has expired or
// belongs to a disabled user is 401, counted in
// eventcal_auth_failures_total. The store is read on every call (no
// cache), so a revocation or a disabled user takes effect at once on every
// replica.
func (s *authenticator) authenticate(ctx context.Context, header string) (*repository.User, error) {
	if header == "" {
		return nil, nil
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	login := ""
	if ok && s.cfg.TECCompat && strings.EqualFold(scheme, "Basic") {
		login, token, ok = basicCredentials(token)
		if !ok {
			s.authFailed("malformed")
			return nil, apierr.New(401, "rest_invalid_authorization", "Use an Authorization header of the form 'Basic base64(login:token)' or 'Bearer <token>'.")
		}
	} else if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		s.authFailed("malformed")
		return nil, apierr.New(401, "rest_invalid_authorization", "Use an Authorization header of the form 'Bearer <token>'.")
	}
	token = strings.TrimSpace(token)
	if login != "" {
		return s.authenticateBasic(ctx, login, token)
	}
	if s.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) == 1 {
		return s.builtinAdmin(ctx)
	}
	return s.tokenUser(ctx, token, func() error {
		return apierr.New(401, "rest_invalid_token", "The token is not valid.")
	})
}

// authenticateBasic resolves HTTP Basic credentials, accepted with
// TEC_COMPAT so that a client written for WordPress's application
// passwords keeps working with only its password changed: the login of a
// user and one of that user's API tokens as the password.
// Spaces in the password are ignored, as WordPress ignores them in an
// application password (it shows them in groups of four). A login that
// does not own the token, or a token that matches nobody, is WordPress's
// 401 incorrect_password; the answer is the same whether the login exists
// or not, so it does not tell which logins there are. The built-in admin
// token (ADMIN_TOKEN) is not accepted here: it belongs to no login.
func (s *authenticator) authenticateBasic(ctx context.Context, login, password string) (*repository.User, error) {
	password = strings.Join(strings.Fields(password), "")
	wrong := func() error {
		return apierr.New(401, "incorrect_password", "The provided password is an invalid application password.")
	}
	if password == "" {
		s.authFailed("unknown")
		return nil, wrong()
	}
	u, err := s.tokenUser(ctx, password, wrong)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(u.Login, login) {
		s.authFailed("unknown")
		return nil, wrong()
	}
	return u, nil
}

// basicCredentials decodes the value of a Basic authorization header
// ("base64(login:password)"); ok is false when it is not one.
func basicCredentials(value string) (login, password string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil {
		return "", "", false
	}
	login, password, ok = strings.Cut(string(raw), ":")
	if !ok || strings.TrimSpace(login) == "" {
		return "", "", false
	}
	return strings.TrimSpace(login), password, true
}

// tokenUser resolves an API token secret to its usable, enabled user.
// unknown makes the error for a token that matches nobody.
func (s *authenticator) tokenUser(ctx context.Context, token string, unknown func() error) (*repository.User, error) {
	hash := repository.HashToken(token)
	tok, err := s.store.TokenByHash(ctx, hash)
	if errors.Is(err, repository.ErrNotFound) {
		s.authFailed("unknown")
		return nil, unknown()
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if !tok.Usable(now) {
		s.authFailed("expired")
		return nil, apierr.New(401, "rest_invalid_token", "The token has expired.")
	}
	u, err := s.store.GetUser(ctx, tok.UserID)
	if errors.Is(err, repository.ErrNotFound) {
		s.authFailed("unknown")
		return nil, unknown()
	}
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		s.authFailed("disabled")
		return nil, apierr.New(401, "rest_user_disabled", "The token's user is disabled.")
	}
	if now.Sub(tok.LastUsed) >= repository.TokenTouchInterval {
		// Best effort: a failed write only leaves LastUsed older.
		if err := s.store.TouchToken(ctx, hash, now.UTC()); err != nil {
			s.log.Warn("record token use", "err", err)
		}
	}
	return u, nil
}

// authFailed counts one refused authentication.
func (s *authenticator) authFailed(reason string) {
	if s.metrics != nil {
		s.metrics.authFailures.WithLabelValues(reason).Inc()
	}
}

// forgetAdmin drops the cached ADMIN_TOKEN user after the stored "admin"
// user changed (the admin API's user update): the token keeps the admin
// role whatever is stored (the token is configuration).
func (s *authenticator) forgetAdmin() {
	s.adminOnce.Lock()
	s.adminUser = nil
	s.adminOnce.Unlock()
}

// builtinAdmin returns the user that ADMIN_TOKEN authenticates: the stored
// user "admin", created with the admin role on first use.
func (s *authenticator) builtinAdmin(ctx context.Context) (*repository.User, error) {
	s.adminOnce.Lock()
	defer s.adminOnce.Unlock()
	if s.adminUser != nil {
		return s.adminUser, nil
	}
	u, err := s.store.GetUserByLogin(ctx, "admin")
	if errors.Is(err, repository.ErrNotFound) {
		accounts := calendar.NewAccounts(calendar.AccountsDeps{Store: s.store, Now: s.now})
		u, err = accounts.CreateUser(ctx, calendar.Operator, &calendar.NewUserInput{Login: "admin", Role: repository.RoleAdmin})
		var refused *apierr.Error
		if errors.As(err, &refused) && refused.Code == "existing_user_login" {
			// Another replica created it meanwhile.
			u, err = s.store.GetUserByLogin(ctx, "admin")
		}
	}
	if err != nil {
		return nil, err
	}
	admin := *u
	admin.Role = repository.RoleAdmin
	s.adminUser = &admin
	return s.adminUser, nil
}

// NewItemRenderer returns the renderer webhook messages use (webhooks.Dispatcher).
func NewItemRenderer(opts Options) webhooks.ItemRenderer {
	return handlers.NewItemRenderer(opts.Config, opts.Store)
}
