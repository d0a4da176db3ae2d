package api

import (
	"log/slog"
	"runtime"
	"strconv"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/calendar/eventcal/app/access"
	"github.com/calendar/eventcal/config/metric"
	"github.com/calendar/eventcal/sync/indexing"
)

// metricsPath serves the Prometheus metrics, outside the API namespace and
// without authentication: like /healthz it is meant for the private network
// the service runs in (a scraper on the same network, or a proxy that does
// not route it from outside).
const metricsPath = "/metrics"

// unmatchedRoute is the route label of requests no route answered (404s,
// CORS preflights answered by the middleware): the raw path would make the
// label set unbounded.
const unmatchedRoute = "unmatched"

// metricsSource is what an Indexer implements to have its metrics served
// with the app's (the sync worker does).
type metricsSource interface{ Metrics() *indexing.Metrics }

// appMetrics are the Prometheus metrics of one app instance, on a registry of
// its own: tests build many apps in one process, and the default global
// registry would panic on the second registration.
//
//	eventcal_http_request_duration_seconds{method,route,status}  histogram
//	eventcal_http_connections_refused_total                      counter
//	eventcal_http_connections_closed_total{state}                counter
//	eventcal_write_rate_limited_total                            counter
//	eventcal_write_rate_tokens_total                             counter
//	eventcal_request_body_bytes                                  gauge
//	eventcal_request_bodies_refused_total{bound}                 counter
//	go_* and process_*                                           runtime and process collectors
//	eventcal_sync_* and eventcal_search_documents                the Indexer's, when it has metrics (indexing.Metrics)
type appMetrics struct {
	registry        *prometheus.Registry
	requestDuration *prometheus.HistogramVec
	inFlight        prometheus.Gauge
	// authFailures counts refused bearer tokens by reason.
	authFailures *prometheus.CounterVec
	// connectionsRefused counts connections over the per-address share or
	// refused at MAX_CONNECTIONS (Metrics.Listener).
	connectionsRefused prometheus.Counter
	// connectionsClosed counts connections closed to make room, by the
	// state they were in.
	connectionsClosed *prometheus.CounterVec
	// writesRateLimited counts writes refused by WRITE_RATE (writerate.go);
	// writeTokens the tokens writes were charged.
	writesRateLimited prometheus.Counter
	writeTokens       prometheus.Counter
	// bodyBytes is the memory held by request bodies; bodiesRefused
	// counts bodies refused for it, by bound (bodies.go).
	bodyBytes     prometheus.Gauge
	bodiesRefused *prometheus.CounterVec
	log           *slog.Logger

	// routes holds every route that is not middleware, read from the app
	// on the first request (all routes exist by then).
	routesOnce sync.Once
	routes     map[routeKey]bool
}

// routeKey identifies a route by method and pattern.
type routeKey struct{ method, path string }

// newAppMetrics builds the registry of one app, with the metrics of indexer
// when it has any.
func newAppMetrics(log *slog.Logger, indexer Notifier) *appMetrics {
	m := &appMetrics{
		registry: prometheus.NewRegistry(),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "eventcal_http_request_duration_seconds",
			Help:    "Duration of HTTP requests by method, route pattern and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		inFlight: metric.Gauge("eventcal_http_requests_in_flight", "HTTP requests being served now."),
		authFailures: metric.CounterVec("eventcal_auth_failures_total",
			"Refused authentications by reason (malformed, unknown, expired, disabled).",
			"reason", authFailureReasons...),
		connectionsRefused: metric.Counter("eventcal_http_connections_refused_total",
			"Connections refused: with 429 because their client address already held MAX_CONNECTIONS_PER_ADDRESS connections, or with 503 because all MAX_CONNECTIONS were serving requests."),
		connectionsClosed: metric.CounterVec("eventcal_http_connections_closed_total",
			"Connections closed to make room for a new one at MAX_CONNECTIONS, by the state they were in (new: nothing sent; sending: a request begun, not complete; idle: between requests).",
			"state", "new", "sending", "idle"),
		writesRateLimited: metric.Counter("eventcal_write_rate_limited_total",
			"Writes by contributors and authors refused with 429 because they exceeded WRITE_RATE and WRITE_BURST."),
		writeTokens: metric.Counter("eventcal_write_rate_tokens_total",
			"Tokens taken from contributors' and authors' write buckets: 1 per write and 1 more per 32 KiB of body read."),
		bodyBytes: metric.Gauge("eventcal_request_body_bytes",
			"Bytes of memory held now by request bodies being read or handled, counted against BODY_MEMORY_MIB."),
		bodiesRefused: metric.CounterVec("eventcal_request_bodies_refused_total",
			"Request bodies refused for memory, by bound: caller (429, BODY_MEMORY_PER_CALLER_MIB) or process (503, BODY_MEMORY_MIB).",
			"bound", "caller", "process"),
		log: log,
	}
	version, revision := BuildVersion()
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "eventcal_build_info",
		Help: "Always 1; the labels name the running build: module version, VCS revision and Go version.",
	}, []string{"version", "revision", "go"})
	buildInfo.WithLabelValues(version, revision, runtime.Version()).Set(1)
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requestDuration,
		m.inFlight,
		buildInfo,
		m.authFailures,
		m.connectionsRefused,
		m.connectionsClosed,
		m.writesRateLimited,
		m.writeTokens,
		m.bodyBytes,
		m.bodiesRefused,
	)
	if src, ok := indexer.(metricsSource); ok {
		m.registry.MustRegister(src.Metrics())
	}
	return m
}

// observe records one finished request.
func (m *appMetrics) observe(method, route string, status int, seconds float64) {
	m.requestDuration.WithLabelValues(method, route, strconv.Itoa(status)).Observe(seconds)
}

// serve answers GET /metrics in the Prometheus text format (or OpenMetrics
// and compressed forms when the scraper asks for them). A collector that
// fails (store or engine unreachable) is logged and left out; the other
// metrics are still served.
func (m *appMetrics) serve() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}))
}

// routeLabel is the route pattern that answered the request (Fiber syntax,
// e.g. /calendar/events/v1/events/:id), or unmatchedRoute when only
// middleware ran: c.Route() is then a middleware's route ("/" for the final
// rest_no_route handler), which Fiber does not mark publicly, hence the set
// of real routes. Route patterns are strings of the app, never request
// memory, so they are safe to keep as label values.
func (m *appMetrics) routeLabel(c *fiber.Ctx) string {
	m.routesOnce.Do(func() {
		m.routes = map[routeKey]bool{}
		for _, rt := range c.App().GetRoutes(true) {
			m.routes[routeKey{rt.Method, rt.Path}] = true
		}
	})
	rt := c.Route()
	if !m.routes[routeKey{rt.Method, rt.Path}] {
		return unmatchedRoute
	}
	return rt.Path
}

// methodLabel maps the request method onto a constant string: Fiber's
// c.Method() aliases request memory, which a label value must not, and
// unknown methods must not grow the label set.
func methodLabel(method string) string {
	for _, known := range labeledMethods {
		if method == known {
			return known
		}
	}
	return "OTHER"
}

// labeledMethods are the methods methodLabel names; any other is "OTHER".
var labeledMethods = []string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut,
	fiber.MethodPatch, fiber.MethodDelete, fiber.MethodOptions}

// authFailureReasons are the reason labels of eventcal_auth_failures_total.
var authFailureReasons = []string{"malformed", "unknown", "expired", "disabled"}

// Metrics is the Prometheus registry of one app, created before the app
// when /metrics is served on a listener of its own (METRICS_ADDR).
type Metrics struct{ m *appMetrics }

// NewMetrics builds the registry of an app, with the metrics of indexer
// when it has any (pass the same indexer to New).
func NewMetrics(log *slog.Logger, indexer Notifier) *Metrics {
	if log == nil {
		log = slog.Default()
	}
	return &Metrics{m: newAppMetrics(log, indexer)}
}

// Register adds collectors kept outside the app (the calendar sources'
// runner and schedule) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.m.registry.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// App is a Fiber app answering GET /metrics without authentication, for
// the separate METRICS_ADDR listener (a private network only).
func (m *Metrics) App() *fiber.App {
	f := fiber.New(fiber.Config{DisableStartupMessage: true})
	f.Get(metricsPath, m.m.serve())
	return f
}

// serveMetrics answers /metrics on the API listener: only to admins
// (ADMIN_TOKEN or an admin's token), 401 anonymous, 403 others.
func (s *Server) serveMetrics(m *appMetrics) fiber.Handler {
	h := m.serve()
	return func(c *fiber.Ctx) error {
		u, err := s.authenticate(c.UserContext(), c.Get(fiber.HeaderAuthorization))
		if err != nil {
			return err
		}
		if !access.IsAdmin(u) {
			return access.Forbidden(u)
		}
		return h(c)
	}
}
