// Package config reads the service's settings from the environment.
//
// Every setting is declared once, in the registry returned by Options, with
// its environment variable, default, type, validator, secret flag and a
// one-line description (the design of Miniflux's internal/config/options.go).
// Load reads them all into a Config once at start; the rest of the program
// only reads the typed fields of that Config.
//
// An unset or empty variable takes its default. Values are trimmed of
// surrounding white space. An invalid value makes Load fail with an error
// that names the variable, and the process stops before serving anything.
package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	// The time zone database is embedded so that TIMEZONE works the same in
	// a minimal container image (which may have no /usr/share/zoneinfo) as
	// on a developer's machine. It costs about 450 KB of binary.
	_ "time/tzdata"
)

// Config holds every setting, validated and normalised. Build it with Load
// (or Default in tests); the zero value is not a usable configuration.
type Config struct {
	// ListenAddr is the HTTP listen address (LISTEN_ADDR), e.g. ":8080".
	ListenAddr string
	// MetricsAddr is the address of a separate listener for /metrics
	// (METRICS_ADDR); empty serves /metrics on ListenAddr to admins only.
	MetricsAddr string
	// DataDir holds the embedded store and search index (DATA_DIR).
	DataDir string
	// MongoURI is the MongoDB connection string (MONGO_URI); empty means
	// the embedded SQLite store. Secret: it may hold a password.
	MongoURI string
	// MongoDatabase is the MongoDB database name (MONGO_DATABASE).
	MongoDatabase string
	// MeiliURL is the Meilisearch base URL without trailing slash
	// (MEILI_URL); empty means the embedded Bleve index.
	MeiliURL string
	// MeiliAPIKey is the Meilisearch API key (MEILI_API_KEY). Secret.
	MeiliAPIKey string
	// AdminToken is a bearer token with admin rights (ADMIN_TOKEN); empty
	// disables it. Secret.
	AdminToken string
	// RestRoot is the REST path prefix (REST_ROOT): "" or "/x/y", with a
	// leading slash and no trailing slash.
	RestRoot string
	// APINamespace is the API namespace below RestRoot (API_NAMESPACE),
	// e.g. "calendar/events/v1": non-empty segments, no slash at either end.
	APINamespace string
	// SiteURL is the public base URL (SITE_URL), absolute http(s), without
	// trailing slash.
	SiteURL string
	// TimezoneName is the site time zone's IANA name (TIMEZONE).
	TimezoneName string
	// Location is the loaded TimezoneName.
	Location *time.Location
	// Languages are the content languages (LANGUAGES), lower-case, without
	// duplicates, in the configured order.
	Languages []string
	// DefaultLanguage is one of Languages (DEFAULT_LANGUAGE).
	DefaultLanguage string
	// LogLevel is the minimum log level (LOG_LEVEL).
	LogLevel slog.Level
	// LogFormat is "text" or "json" (LOG_FORMAT).
	LogFormat string
	// CORSAllowedOrigins are the allowed browser origins
	// (CORS_ALLOWED_ORIGINS): either exactly ["*"] or lower-case
	// "scheme://host[:port]" values.
	CORSAllowedOrigins []string
	// TrustedProxies are the proxies whose X-Forwarded-For is believed
	// (TRUSTED_PROXIES).
	TrustedProxies []netip.Prefix
	// HeaderTimeout bounds the time a client may take to send a request's
	// line and headers (HEADER_TIMEOUT); the body then has
	// limits.ReadTimeout of its own.
	HeaderTimeout time.Duration
	// MaxConnectionsPerAddress is how many connections one client address
	// may hold open at once (MAX_CONNECTIONS_PER_ADDRESS); 0 is no bound.
	// Connections from TrustedProxies are not bounded.
	MaxConnectionsPerAddress int
	// WriteRate is how many writes a second one contributor or author may
	// make on average (WRITE_RATE); 0 is no bound. Editors and admins are
	// not bounded.
	WriteRate float64
	// WriteBurst is how many writes such a user may make at once before
	// WriteRate applies (WRITE_BURST).
	WriteBurst int
	// MaxConnections is how many connections the server holds open at once
	// (MAX_CONNECTIONS). At the bound a new connection closes one that is
	// not serving a request (app/connlimit); when all are serving it is
	// refused with 503.
	MaxConnections int
	// BodyMemory bounds the bytes of request bodies being read or handled
	// at once, in the whole process (BODY_MEMORY_MIB, in bytes here).
	BodyMemory int64
	// BodyMemoryPerCaller bounds the same bytes for one caller: one
	// account, or one client address for requests without one
	// (BODY_MEMORY_PER_CALLER_MIB, in bytes here); at most BodyMemory.
	BodyMemoryPerCaller int64
	// ShutdownTimeout bounds the graceful shutdown (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
	// ReindexCron is the cron expression of scheduled full rebuilds
	// (REINDEX_CRON), evaluated in Location; empty disables them.
	ReindexCron string
	// BackupSchedule is the cron expression of scheduled backups of the
	// embedded store (BACKUP_SCHEDULE), evaluated in Location; empty
	// disables them.
	BackupSchedule string
	// BackupKeep is how many scheduled backups are kept (BACKUP_KEEP).
	BackupKeep int
	// BackupDir is where backups are written (BACKUP_DIR; by default
	// DATA_DIR/backups).
	BackupDir string
	// LeaseTTL is how long the leader lease lasts without renewal
	// (LEASE_TTL), with MongoDB.
	LeaseTTL time.Duration
	// StoreTimeout is the deadline of each MongoDB operation
	// (STORE_TIMEOUT): the driver's timeoutMS, sent to the server as
	// maxTimeMS.
	StoreTimeout time.Duration
	// WebhookAllowPrivate lets webhook endpoints reach private addresses
	// (WEBHOOK_ALLOW_PRIVATE).
	WebhookAllowPrivate bool
	// WebhookTimeout bounds one webhook delivery attempt
	// (WEBHOOK_TIMEOUT); a claim on a delivery holds for three times it
	// plus the grace (sync/webhooks Dispatcher.Timeout).
	WebhookTimeout time.Duration
	// SourcesAllowPrivate lets calendar sources reach private addresses
	// (SOURCES_ALLOW_PRIVATE).
	SourcesAllowPrivate bool
	// SourceFetchTimeout bounds one fetch of a calendar source, headers
	// and body (SOURCE_FETCH_TIMEOUT).
	SourceFetchTimeout time.Duration
	// SourceMaxBytes bounds the bytes of a calendar source's body, after
	// decompression (SOURCE_MAX_BYTES).
	SourceMaxBytes int64
	// SourceMaxEvents bounds the events of one calendar source's feed
	// (SOURCE_MAX_EVENTS).
	SourceMaxEvents int
	// TECCompat also serves the API under the original plugin's root,
	// TECRoot (TEC_COMPAT).
	TECCompat bool
	// CurrencySymbol, CurrencyCode and CurrencyPosition are the site's
	// currency (CURRENCY_SYMBOL, CURRENCY_CODE, CURRENCY_POSITION), shown
	// with the cost of events that have none of their own; "" for none
	// (CurrencyPosition is "prefix" or "suffix").
	CurrencySymbol, CurrencyCode, CurrencyPosition string
	// DrainDelay is how long /readyz fails before the listener closes on
	// shutdown (DRAIN_DELAY).
	DrainDelay time.Duration
	// RecurrenceHorizon is how far ahead of now recurring events are
	// expanded (RECURRENCE_HORIZON, in days; default 730).
	RecurrenceHorizon time.Duration
	// MaxSeriesOccurrences bounds the occurrences of one series up to the
	// horizon, and its changed occurrences (MAX_SERIES_OCCURRENCES).
	MaxSeriesOccurrences int
	// MaxSeriesOverrideText bounds the bytes of text (titles,
	// descriptions, excerpts, every language) of one series' changed
	// occurrences together (MAX_SERIES_OVERRIDE_TEXT); 0 is no bound.
	MaxSeriesOverrideText int
	// MaxAccountDocuments bounds the search-index documents the events of
	// one contributor or author make together (MAX_ACCOUNT_DOCUMENTS); 0
	// is no bound. Editors and admins are not bounded.
	MaxAccountDocuments int
	// SyncBatchBytes bounds the size of the search documents one sync
	// batch builds (SYNC_BATCH_BYTES); a post over it is indexed alone.
	SyncBatchBytes int
	// ReplicaID is the replica's identity in the lease (REPLICA_ID); empty
	// means the host name.
	ReplicaID string
	// MeiliMasterKey is the Meilisearch master key (MEILI_MASTER_KEY), used
	// at start to create the service's scoped key when MeiliAPIKey is empty.
	MeiliMasterKey string
	// MeiliMaxRequestBytes bounds the JSON body of one Meilisearch
	// document addition (MEILI_MAX_REQUEST_BYTES).
	MeiliMaxRequestBytes int
}

// Load reads every registered setting through getenv (os.Getenv in
// production, a map lookup in tests; nil means os.Getenv). It returns an
// error naming every invalid variable: errors.Join of *Error values, one per
// variable, each printing as "invalid NAME: reason". Secret values are never
// included in the messages.
func Load(getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := &Config{}
	var errs []error
	failed := map[string]bool{}
	for _, o := range registry {
		value, err := secretValue(o, getenv)
		if err != nil {
			errs = append(errs, &Error{Name: o.Name + "_FILE", Err: err})
			failed[o.Name] = true
			_ = o.parse(c, o.Default)
			continue
		}
		raw := valueOrDefault(o, value)
		if o.derive != nil && strings.TrimSpace(value) == "" {
			raw = o.derive(c)
		}
		if slices.ContainsFunc(o.dependsOn, func(name string) bool { return failed[name] }) {
			// A setting this one is checked against is already reported
			// invalid; checking against it would only add a confusing
			// second error.
			raw = o.Default
		}
		if err := o.parse(c, raw); err != nil {
			errs = append(errs, &Error{Name: o.Name, Err: err})
			failed[o.Name] = true
			// Keep the default in c for the options parsed after this one,
			// which are then checked against it. The default may itself be
			// unacceptable here (DEFAULT_LANGUAGE "en" with LANGUAGES
			// "nl,fr"); that error is already reported, c is discarded.
			_ = o.parse(c, o.Default)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// Default returns the configuration with every setting at its default, as
// Load does in an empty environment. Tests may build on it:
//
//	cfg := config.Default()
//	cfg.DataDir = t.TempDir()
func Default() *Config {
	c, err := Load(func(string) string { return "" })
	if err != nil {
		panic("config: invalid defaults: " + err.Error())
	}
	return c
}

// secretValue returns the raw value of option o: its variable, or for a
// secret option whose variable is empty, the content of the file that
// NAME_FILE names (the Docker secrets convention: docker-compose.yml hands
// the service its Meilisearch key this way, so that the key is never in
// its environment). Surrounding white space, such as a final newline, is
// dropped by valueOrDefault.
func secretValue(o Option, getenv func(string) string) (string, error) {
	raw := getenv(o.Name)
	if !o.Secret || strings.TrimSpace(raw) != "" {
		return raw, nil
	}
	path := strings.TrimSpace(getenv(o.Name + "_FILE"))
	if path == "" {
		return raw, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return string(b), nil
}

// valueOrDefault trims raw and substitutes the option's default when empty.
func valueOrDefault(o Option, raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return o.Default
	}
	return raw
}

// APIRoot returns the path under which the API is served: RestRoot + "/" +
// APINamespace, e.g. "/calendar/events/v1" or "/wp-json/tribe/events/v1".
func (c *Config) APIRoot() string { return c.RestRoot + "/" + c.APINamespace }

// TECRoot is the REST root of The Events Calendar's own namespace, under
// which TEC_COMPAT serves the API too, so that a frontend written for the
// original switches by changing its host only.
const TECRoot = "/wp-json/tribe/events/v1"

// APIRoots returns every path under which the API is served: APIRoot, and
// TECRoot with TEC_COMPAT (when it is not APIRoot already).
func (c *Config) APIRoots() []string {
	if c.TECCompat && c.APIRoot() != TECRoot {
		return []string{c.APIRoot(), TECRoot}
	}
	return []string{c.APIRoot()}
}

// IsLanguage reports whether s is one of the configured Languages. The
// comparison is exact: codes in Languages are lower-case.
func (c *Config) IsLanguage(s string) bool {
	for _, l := range c.Languages {
		if l == s {
			return true
		}
	}
	return false
}

// Embedded reports whether the embedded SQLite store is used (MONGO_URI is
// empty).
func (c *Config) Embedded() bool { return c.MongoURI == "" }

// EmbeddedSearch reports whether the embedded Bleve index is used (MEILI_URL
// is empty).
func (c *Config) EmbeddedSearch() bool { return c.MeiliURL == "" }

// NewLogger returns a logger writing to w at LogLevel, in LogFormat.
func (c *Config) NewLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Redacted returns every setting, keyed by environment variable, with its
// normalised value as text. Set secrets are shown as "***"; unset secrets as
// "" (so the log still tells whether one is configured). It is meant for a
// startup log line.
func (c *Config) Redacted() map[string]string {
	m := make(map[string]string, len(registry))
	for _, o := range registry {
		v := o.format(c)
		if o.Secret && v != "" {
			v = "***"
		}
		m[o.Name] = v
	}
	return m
}
