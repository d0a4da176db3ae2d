package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/calendar/eventcal/config/currency"
	"github.com/calendar/eventcal/config/limits"
)

// Type names the kind of value an option holds. It is shown by --help.
type Type string

// The option types.
const (
	TypeString   Type = "string"
	TypeSecret   Type = "secret"
	TypeAddress  Type = "host:port"
	TypePath     Type = "path"
	TypeURL      Type = "url"
	TypeURLPath  Type = "url path"
	TypeTimezone Type = "timezone"
	TypeList     Type = "list"
	TypeLanguage Type = "language"
	TypeEnum     Type = "enum"
	TypeDuration Type = "duration"
	TypeCron     Type = "cron"
	TypeBool     Type = "bool"
	TypeInteger  Type = "integer"
	TypeNumber   Type = "number"
)

// Option describes one setting read from the environment: its variable name,
// default, type, whether it is secret, and a one-line description. Its
// validator parses the raw text, normalises it and stores it in a Config.
//
// The registry (see Options) is the single place where a setting is declared,
// in the manner of Miniflux's internal/config/options.go: Load, --help and
// Redacted are all driven by it, so a new setting cannot be forgotten in one
// of them.
type Option struct {
	// Name is the environment variable, e.g. "LISTEN_ADDR".
	Name string
	// Default is the raw value used when the variable is unset or empty.
	Default string
	// Type is the kind of value, for documentation.
	Type Type
	// Secret options are never printed (Redacted shows "***") and their
	// values are never echoed in error messages.
	Secret bool
	// Description is a one-line explanation for --help.
	Description string

	// parse validates the trimmed raw value and stores the normalised value
	// in c. Options parse in registry order, so a validator may read fields
	// set by earlier options (DEFAULT_LANGUAGE reads Languages).
	parse func(c *Config, raw string) error
	// format returns the normalised value held by c, as text.
	format func(c *Config) string
	// dependsOn names the options parse reads from c. When one of them is
	// invalid, Load does not check this option against it.
	dependsOn []string
	// derive, when set, computes the default from the options parsed
	// before this one (SITE_URL from LISTEN_ADDR); Default then documents
	// its value with every other option at its default.
	derive func(c *Config) string
}

// DefaultIn returns the default the option takes in the environment that
// getenv reads (nil: os.Getenv): Default, or for an option whose default
// is derived from others (SITE_URL from LISTEN_ADDR), the value derived
// from their settings there. An invalid setting it derives from counts as
// its default. --help shows this value.
func (o Option) DefaultIn(getenv func(string) string) string {
	if o.derive == nil {
		return o.Default
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Default()
	for _, dep := range registry {
		if !slices.Contains(o.dependsOn, dep.Name) {
			continue
		}
		if dep.parse(c, valueOrDefault(dep, getenv(dep.Name))) != nil {
			_ = dep.parse(c, dep.Default)
		}
	}
	return o.derive(c)
}

// Validate reports whether raw is an acceptable value for the option on its
// own (ignoring checks that involve other options, such as DEFAULT_LANGUAGE
// having to be one of LANGUAGES, which Load performs). An empty raw value
// stands for the default.
func (o Option) Validate(raw string) error {
	c := Default()
	if err := o.parse(c, valueOrDefault(o, raw)); err != nil {
		return &Error{Name: o.Name, Err: err}
	}
	return nil
}

// Error reports an invalid setting. It names the environment variable.
type Error struct {
	// Name is the environment variable.
	Name string
	// Err says what is wrong with the value.
	Err error
}

// Error implements error.
func (e *Error) Error() string { return "invalid " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the underlying reason.
func (e *Error) Unwrap() error { return e.Err }

// registry lists every setting, in the order --help shows them. Options that
// depend on another one come after it.
var registry = []Option{
	{
		Name: "LISTEN_ADDR", Default: ":8080", Type: TypeAddress,
		Description: "address the HTTP server listens on",
		parse: func(c *Config, raw string) error {
			if err := validateListenAddr(raw); err != nil {
				return err
			}
			c.ListenAddr = raw
			return nil
		},
		format: func(c *Config) string { return c.ListenAddr },
	},
	{
		Name: "DATA_DIR", Default: "./data", Type: TypePath,
		Description: "directory of the embedded store and search index (created if missing)",
		parse: func(c *Config, raw string) error {
			c.DataDir = raw
			return nil
		},
		format: func(c *Config) string { return c.DataDir },
	},
	{
		Name: "MONGO_URI", Default: "", Type: TypeURL, Secret: true,
		Description: "MongoDB connection string (mongodb:// or mongodb+srv://); empty uses the embedded SQLite store in DATA_DIR",
		parse: func(c *Config, raw string) error {
			if raw != "" {
				if err := validateMongoURI(raw); err != nil {
					return err
				}
			}
			c.MongoURI = raw
			return nil
		},
		format: func(c *Config) string { return c.MongoURI },
	},
	{
		Name: "MONGO_DATABASE", Default: "calendar", Type: TypeString,
		Description: "MongoDB database name (used only with MONGO_URI)",
		parse: func(c *Config, raw string) error {
			if len(raw) > 63 {
				return errors.New("must be at most 63 bytes long")
			}
			if i := strings.IndexAny(raw, "/\\. \"$*<>:|?\x00"); i >= 0 {
				return fmt.Errorf("must not contain %q", raw[i:i+1])
			}
			c.MongoDatabase = raw
			return nil
		},
		format: func(c *Config) string { return c.MongoDatabase },
	},
	{
		Name: "MEILI_URL", Default: "", Type: TypeURL,
		Description: "Meilisearch base URL, e.g. http://meilisearch:7700; empty uses the embedded Bleve index in DATA_DIR",
		parse: func(c *Config, raw string) error {
			if raw == "" {
				c.MeiliURL = ""
				return nil
			}
			u, err := parseHTTPURL(raw)
			if err != nil {
				return err
			}
			c.MeiliURL = u
			return nil
		},
		format: func(c *Config) string { return c.MeiliURL },
	},
	{
		Name: "MEILI_API_KEY", Default: "", Type: TypeSecret, Secret: true,
		Description: "Meilisearch API key (the master key or an admin key)",
		parse: func(c *Config, raw string) error {
			c.MeiliAPIKey = raw
			return nil
		},
		format: func(c *Config) string { return c.MeiliAPIKey },
	},
	{
		Name: "METRICS_ADDR", Default: "", Type: TypeAddress,
		Description: "address of a separate listener serving /metrics without authentication (keep it on a private network); empty serves /metrics on LISTEN_ADDR to admin tokens only",
		parse: func(c *Config, raw string) error {
			if raw != "" {
				if err := validateListenAddr(raw); err != nil {
					return err
				}
			}
			c.MetricsAddr = raw
			return nil
		},
		format: func(c *Config) string { return c.MetricsAddr },
	},
	{
		Name: "ADMIN_TOKEN", Default: "", Type: TypeSecret, Secret: true,
		Description: "bearer token with admin rights, in addition to tokens created with 'token create'; empty disables it",
		parse: func(c *Config, raw string) error {
			c.AdminToken = raw
			return nil
		},
		format: func(c *Config) string { return c.AdminToken },
	},
	{
		Name: "REST_ROOT", Default: "", Type: TypeURLPath,
		Description: "path prefix of the REST API, e.g. /wp-json; empty serves it at the root",
		parse: func(c *Config, raw string) error {
			p, err := normalisePath(raw)
			if err != nil {
				return err
			}
			if p != "" {
				p = "/" + p
			}
			c.RestRoot = p
			return nil
		},
		format: func(c *Config) string { return c.RestRoot },
	},
	{
		Name: "API_NAMESPACE", Default: "calendar/events/v1", Type: TypeURLPath,
		Description: "namespace of the API below REST_ROOT",
		parse: func(c *Config, raw string) error {
			p, err := normalisePath(raw)
			if err != nil {
				return err
			}
			if p == "" {
				return errors.New("must contain at least one path segment")
			}
			c.APINamespace = p
			return nil
		},
		format: func(c *Config) string { return c.APINamespace },
	},
	{
		Name: "SITE_URL", Default: "http://localhost:8080", Type: TypeURL,
		Description: "public base URL of the site, used for links in responses; by default http://localhost (or LISTEN_ADDR's host) at LISTEN_ADDR's port",
		dependsOn:   []string{"LISTEN_ADDR"},
		derive:      func(c *Config) string { return localSiteURL(c.ListenAddr) },
		parse: func(c *Config, raw string) error {
			u, err := parseHTTPURL(raw)
			if err != nil {
				return err
			}
			c.SiteURL = u
			return nil
		},
		format: func(c *Config) string { return c.SiteURL },
	},
	{
		Name: "TIMEZONE", Default: "UTC", Type: TypeTimezone,
		Description: "site time zone (IANA name, e.g. Europe/Brussels) for events without their own",
		parse: func(c *Config, raw string) error {
			loc, err := time.LoadLocation(raw)
			if err != nil || raw == "Local" {
				// "Local" would make the service depend on the host's zone.
				return fmt.Errorf("unknown time zone %q (use an IANA name such as Europe/Brussels)", raw)
			}
			c.TimezoneName = raw
			c.Location = loc
			return nil
		},
		format: func(c *Config) string { return c.TimezoneName },
	},
	{
		Name: "LANGUAGES", Default: "nl,en,fr,de,it,pl,es", Type: TypeList,
		Description: "comma-separated language codes the content may be written in",
		parse: func(c *Config, raw string) error {
			var langs []string
			for _, part := range strings.Split(raw, ",") {
				l := strings.ToLower(strings.TrimSpace(part))
				if l == "" {
					return errors.New("must not contain empty entries")
				}
				if !languagePattern.MatchString(l) {
					return fmt.Errorf("%q is not a language code (two or three letters, optionally -xx)", l)
				}
				if slices.Contains(langs, l) {
					return fmt.Errorf("%q is listed twice", l)
				}
				langs = append(langs, l)
			}
			c.Languages = langs
			return nil
		},
		format: func(c *Config) string { return strings.Join(c.Languages, ",") },
	},
	{
		Name: "DEFAULT_LANGUAGE", Default: "en", Type: TypeLanguage,
		Description: "language used when a request names none; must be one of LANGUAGES",
		dependsOn:   []string{"LANGUAGES"},
		parse: func(c *Config, raw string) error {
			l := strings.ToLower(raw)
			if !c.IsLanguage(l) {
				return fmt.Errorf("%q is not one of LANGUAGES (%s)", l, strings.Join(c.Languages, ","))
			}
			c.DefaultLanguage = l
			return nil
		},
		format: func(c *Config) string { return c.DefaultLanguage },
	},
	{
		Name: "LOG_LEVEL", Default: "info", Type: TypeEnum,
		Description: "minimum log level: debug, info, warn or error",
		parse: func(c *Config, raw string) error {
			l, ok := logLevels[strings.ToLower(raw)]
			if !ok {
				return fmt.Errorf("%q is not one of debug, info, warn, error", raw)
			}
			c.LogLevel = l
			return nil
		},
		format: func(c *Config) string { return strings.ToLower(c.LogLevel.String()) },
	},
	{
		Name: "LOG_FORMAT", Default: "text", Type: TypeEnum,
		Description: "log format: text or json",
		parse: func(c *Config, raw string) error {
			f := strings.ToLower(raw)
			if f != "text" && f != "json" {
				return fmt.Errorf("%q is not one of text, json", raw)
			}
			c.LogFormat = f
			return nil
		},
		format: func(c *Config) string { return c.LogFormat },
	},
	{
		Name: "CORS_ALLOWED_ORIGINS", Default: "*", Type: TypeList,
		Description: "comma-separated origins allowed to call the API from a browser (scheme://host[:port]), or * for any",
		parse: func(c *Config, raw string) error {
			origins, err := parseOrigins(raw)
			if err != nil {
				return err
			}
			c.CORSAllowedOrigins = origins
			return nil
		},
		format: func(c *Config) string { return strings.Join(c.CORSAllowedOrigins, ",") },
	},
	{
		Name: "TRUSTED_PROXIES", Default: "", Type: TypeList,
		Description: "comma-separated IP addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client (request logs) and whose connections MAX_CONNECTIONS_PER_ADDRESS does not bound; empty trusts none (set it behind a proxy)",
		parse: func(c *Config, raw string) error {
			c.TrustedProxies = nil
			for _, part := range strings.Split(raw, ",") {
				part = strings.TrimSpace(part)
				if part == "" {
					continue
				}
				if !strings.Contains(part, "/") {
					a, err := netip.ParseAddr(part)
					if err != nil {
						return fmt.Errorf("%q is not an IP address or CIDR range", part)
					}
					part = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String()
				}
				p, err := netip.ParsePrefix(part)
				if err != nil {
					return fmt.Errorf("%q is not an IP address or CIDR range", part)
				}
				c.TrustedProxies = append(c.TrustedProxies, p.Masked())
			}
			return nil
		},
		format: func(c *Config) string {
			out := make([]string, len(c.TrustedProxies))
			for i, p := range c.TrustedProxies {
				out[i] = p.String()
			}
			return strings.Join(out, ",")
		},
	},
	{
		Name: "HEADER_TIMEOUT", Default: "5s", Type: TypeDuration,
		Description: "how long a client may take to send a request's line and headers before the connection is closed (Go duration or whole seconds, at most 1m); the body then has 15s of its own",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d <= 0 || d > maxHeaderTimeout {
				return fmt.Errorf("must be positive and at most %s", maxHeaderTimeout)
			}
			c.HeaderTimeout = d
			return nil
		},
		format: func(c *Config) string { return c.HeaderTimeout.String() },
	},
	{
		Name: "MAX_CONNECTIONS", Default: strconv.Itoa(limits.DefaultMaxConnections), Type: TypeInteger,
		Description: "how many connections the server holds open at once; at the bound a new connection closes one that is not serving a request (idle, silent or still sending its request; from the address holding the most connections first), and is refused with 503 only when every connection is serving one",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxConnections {
				return fmt.Errorf("must be a whole number from 1 to %d", maxConnections)
			}
			c.MaxConnections = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MaxConnections) },
	},
	{
		Name: "MAX_CONNECTIONS_PER_ADDRESS", Default: "256", Type: TypeInteger,
		Description: "how many connections one client IP address (IPv6: one /64) may hold open at once; more are refused with 429 (0: no bound; connections from TRUSTED_PROXIES are never bounded)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 || n > maxConnections {
				return fmt.Errorf("must be a whole number from 0 to %d", maxConnections)
			}
			c.MaxConnectionsPerAddress = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MaxConnectionsPerAddress) },
	},
	{
		Name: "WRITE_RATE", Default: "10", Type: TypeNumber,
		Description: "how many writes a second one contributor or author may make on average (a token bucket per user, refilled at this rate; a write costs one more per 32 KiB of body); more are refused with 429 and Retry-After (0: no bound; editors and admins are never bounded)",
		parse: func(c *Config, raw string) error {
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 10000 {
				return errors.New("must be a number from 0 to 10000")
			}
			c.WriteRate = f
			return nil
		},
		format: func(c *Config) string { return strconv.FormatFloat(c.WriteRate, 'g', -1, 64) },
	},
	{
		Name: "WRITE_BURST", Default: "100", Type: TypeInteger,
		Description: "how many writes one contributor or author may make at once before WRITE_RATE applies",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > 100000 {
				return errors.New("must be a whole number from 1 to 100000")
			}
			c.WriteBurst = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.WriteBurst) },
	},
	{
		Name: "BODY_MEMORY_MIB", Default: "64", Type: TypeInteger,
		Description: "MiB of request bodies the process holds at once while they arrive and are handled, every role included; a body that would pass it is refused with 503 and Retry-After",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxBodyMemoryMiB {
				return fmt.Errorf("must be a whole number from 1 to %d", maxBodyMemoryMiB)
			}
			c.BodyMemory = int64(n) << 20
			return nil
		},
		format: func(c *Config) string { return strconv.FormatInt(c.BodyMemory>>20, 10) },
	},
	{
		Name: "BODY_MEMORY_PER_CALLER_MIB", Default: "4", Type: TypeInteger,
		Description: "MiB of request bodies one caller (an account; without one, a client address) may have in BODY_MEMORY_MIB at once; a body that would pass it is refused with 429 and Retry-After (a value over BODY_MEMORY_MIB counts as BODY_MEMORY_MIB)",
		dependsOn:   []string{"BODY_MEMORY_MIB"},
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxBodyMemoryMiB {
				return fmt.Errorf("must be a whole number from 1 to %d", maxBodyMemoryMiB)
			}
			c.BodyMemoryPerCaller = min(int64(n)<<20, c.BodyMemory)
			return nil
		},
		format: func(c *Config) string { return strconv.FormatInt(c.BodyMemoryPerCaller>>20, 10) },
	},
	{
		Name: "SHUTDOWN_TIMEOUT", Default: "10s", Type: TypeDuration,
		Description: "how long in-flight requests may run after SIGINT/SIGTERM (Go duration, e.g. 10s, or whole seconds)",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d <= 0 {
				return errors.New("must be positive")
			}
			c.ShutdownTimeout = d
			return nil
		},
		format: func(c *Config) string { return c.ShutdownTimeout.String() },
	},
	{
		Name: "REINDEX_CRON", Default: "", Type: TypeCron,
		Description: "cron expression (5 fields, or @daily, @every 6h...) evaluated in TIMEZONE for full rebuilds of the search indexes, e.g. 30 3 * * 0; empty disables them",
		dependsOn:   []string{"TIMEZONE"},
		parse: func(c *Config, raw string) error {
			if err := validateCron(raw, c.Location); err != nil {
				return err
			}
			c.ReindexCron = raw
			return nil
		},
		format: func(c *Config) string { return c.ReindexCron },
	},
	{
		Name: "BACKUP_SCHEDULE", Default: "", Type: TypeCron,
		Description: "cron expression (5 fields, or @daily, @every 6h...) evaluated in TIMEZONE for backups of the embedded store into BACKUP_DIR, e.g. 15 3 * * *; empty disables them (with MONGO_URI, use mongodump instead)",
		dependsOn:   []string{"TIMEZONE", "MONGO_URI"},
		parse: func(c *Config, raw string) error {
			if err := validateCron(raw, c.Location); err != nil {
				return err
			}
			if raw != "" && c.MongoURI != "" {
				return errors.New("backs up the embedded store only: with MONGO_URI set, back MongoDB up with mongodump --oplog")
			}
			c.BackupSchedule = raw
			return nil
		},
		format: func(c *Config) string { return c.BackupSchedule },
	},
	{
		Name: "BACKUP_KEEP", Default: "7", Type: TypeInteger,
		Description: "how many backups BACKUP_SCHEDULE keeps in BACKUP_DIR: after each scheduled backup the oldest beyond this many are removed (only files named eventcal-<time>.db)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxBackupKeep {
				return fmt.Errorf("must be a whole number from 1 to %d", maxBackupKeep)
			}
			c.BackupKeep = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.BackupKeep) },
	},
	{
		Name: "BACKUP_DIR", Default: "./data/backups", Type: TypePath,
		Description: "directory of the backups the schedule and POST /admin/backups write (created if missing); by default backups under DATA_DIR",
		dependsOn:   []string{"DATA_DIR"},
		derive:      func(c *Config) string { return strings.TrimRight(c.DataDir, "/") + "/backups" },
		parse: func(c *Config, raw string) error {
			c.BackupDir = raw
			return nil
		},
		format: func(c *Config) string { return c.BackupDir },
	},
	{
		Name: "LEASE_TTL", Default: "15s", Type: TypeDuration,
		Description: "with MongoDB, how long the process running the sync worker and scheduled jobs keeps the lead without renewing it (a crashed leader is replaced after this)",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d < minLeaseTTL {
				return fmt.Errorf("must be at least %s", minLeaseTTL)
			}
			c.LeaseTTL = d
			return nil
		},
		format: func(c *Config) string { return c.LeaseTTL.String() },
	},
	{
		Name: "STORE_TIMEOUT", Default: "10s", Type: TypeDuration,
		Description: "with MongoDB, the deadline of each operation the service sends (the driver's timeoutMS, also sent to the server as maxTimeMS; overrides a timeoutMS in MONGO_URI): a request whose store does not answer in time gets 503 store_unavailable",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d < minStoreTimeout {
				return fmt.Errorf("must be at least %s", minStoreTimeout)
			}
			c.StoreTimeout = d
			return nil
		},
		format: func(c *Config) string { return c.StoreTimeout.String() },
	},
	{
		Name: "CURRENCY_SYMBOL", Default: "", Type: TypeString,
		Description: "currency symbol shown with the cost of events that have no currency of their own (e.g. $ or €); empty: none, a bare number stays bare",
		parse: func(c *Config, raw string) error {
			if msg := currency.CheckSymbol(raw); msg != "" {
				return errors.New(msg)
			}
			c.CurrencySymbol = raw
			return nil
		},
		format: func(c *Config) string { return c.CurrencySymbol },
	},
	{
		Name: "CURRENCY_CODE", Default: "", Type: TypeString,
		Description: "ISO 4217 code of the site currency (e.g. USD), for events without their own: JSON-LD priceCurrency and cost_details; empty: none",
		parse: func(c *Config, raw string) error {
			code, msg := currency.CheckCode(raw)
			if msg != "" {
				return errors.New(msg)
			}
			c.CurrencyCode = code
			return nil
		},
		format: func(c *Config) string { return c.CurrencyCode },
	},
	{
		Name: "CURRENCY_POSITION", Default: "", Type: TypeEnum,
		Description: "where the site currency symbol stands: prefix ($10) or suffix (10€); empty means prefix",
		parse: func(c *Config, raw string) error {
			p, msg := currency.CheckPosition(raw)
			if msg != "" {
				return fmt.Errorf("%q %s", raw, msg)
			}
			c.CurrencyPosition = p
			return nil
		},
		format: func(c *Config) string { return c.CurrencyPosition },
	},
	{
		Name: "TEC_COMPAT", Default: "false", Type: TypeBool,
		Description: "also serve the API under /wp-json/tribe/events/v1 (The Events Calendar's root), with links under that root in its responses",
		parse: func(c *Config, raw string) error {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return errors.New("must be true or false")
			}
			c.TECCompat = b
			return nil
		},
		format: func(c *Config) string { return strconv.FormatBool(c.TECCompat) },
	},
	{
		Name: "WEBHOOK_ALLOW_PRIVATE", Default: "false", Type: TypeBool,
		Description: "let webhook endpoints be (or resolve to) private, loopback and link-local addresses; off, the service cannot be made to reach internal hosts",
		parse: func(c *Config, raw string) error {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return errors.New("must be true or false")
			}
			c.WebhookAllowPrivate = b
			return nil
		},
		format: func(c *Config) string { return strconv.FormatBool(c.WebhookAllowPrivate) },
	},
	{
		Name: "WEBHOOK_TIMEOUT", Default: "10s", Type: TypeDuration,
		Description: "how long one webhook delivery attempt may take; a delivery a stopped replica had claimed is sent again by the next lease holder after three times this plus up to 5s (Go duration or whole seconds; 1s to 1m)",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d < time.Second || d > time.Minute {
				return errors.New("must be from 1s to 1m")
			}
			c.WebhookTimeout = d
			return nil
		},
		format: func(c *Config) string { return c.WebhookTimeout.String() },
	},
	{
		Name: "SOURCES_ALLOW_PRIVATE", Default: "false", Type: TypeBool,
		Description: "let calendar sources be (or resolve or redirect to) private, loopback, link-local and reserved addresses; off, a source cannot make the service reach internal hosts",
		parse: func(c *Config, raw string) error {
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return errors.New("must be true or false")
			}
			c.SourcesAllowPrivate = b
			return nil
		},
		format: func(c *Config) string { return strconv.FormatBool(c.SourcesAllowPrivate) },
	},
	{
		Name: "SOURCE_FETCH_TIMEOUT", Default: "60s", Type: TypeDuration,
		Description: "how long one fetch of a calendar source may take, headers and body together; a slower source fails its run (Go duration or whole seconds; 1s to 1h)",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d < time.Second || d > time.Hour {
				return errors.New("must be from 1s to 1h")
			}
			c.SourceFetchTimeout = d
			return nil
		},
		format: func(c *Config) string { return c.SourceFetchTimeout.String() },
	},
	{
		Name: "SOURCE_MAX_BYTES", Default: "20971520", Type: TypeInteger,
		Description: "bytes of one calendar source's body the service reads at most, counted after decompression; a larger feed fails its run (at least 1024, at most 1073741824)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || n < minSourceBytes || n > maxSourceBytes {
				return fmt.Errorf("must be a whole number of bytes from %d to %d", minSourceBytes, maxSourceBytes)
			}
			c.SourceMaxBytes = n
			return nil
		},
		format: func(c *Config) string { return strconv.FormatInt(c.SourceMaxBytes, 10) },
	},
	{
		Name: "SOURCE_MAX_EVENTS", Default: "50000", Type: TypeInteger,
		Description: "events one calendar source's feed may hold; a feed with more fails its run (1 to 1000000)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxSourceEvents {
				return fmt.Errorf("must be a whole number from 1 to %d", maxSourceEvents)
			}
			c.SourceMaxEvents = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.SourceMaxEvents) },
	},
	{
		Name: "DRAIN_DELAY", Default: "5s", Type: TypeDuration,
		Description: "after SIGINT/SIGTERM, how long /readyz answers 503 while requests are still served, so that load balancers stop sending traffic before the listener closes; after SIGINT (Ctrl-C) it also ends as soon as no connection is open (Go duration or whole seconds; 0 closes at once)",
		parse: func(c *Config, raw string) error {
			d, err := parseDuration(raw)
			if err != nil {
				return err
			}
			if d < 0 {
				return errors.New("must not be negative")
			}
			c.DrainDelay = d
			return nil
		},
		format: func(c *Config) string { return c.DrainDelay.String() },
	},
	{
		Name: "REPLICA_ID", Default: "", Type: TypeString,
		Description: "stable identity of this replica in the MongoDB lease (letters, digits, '.', '-', '_'; at most 128); empty means the host name. A replica restarted under the same identity takes its lease back at once",
		parse: func(c *Config, raw string) error {
			if err := validateReplicaID(raw); err != nil {
				return err
			}
			c.ReplicaID = raw
			return nil
		},
		format: func(c *Config) string { return c.ReplicaID },
	},
	{
		Name: "RECURRENCE_HORIZON", Default: "730", Type: TypeInteger,
		Description: "how many days ahead of now recurring events are expanded into occurrences (1 to 3650); the scheduler rolls it forward daily",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > 3650 {
				return errors.New("must be a whole number of days from 1 to 3650")
			}
			c.RecurrenceHorizon = time.Duration(n) * 24 * time.Hour
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(int(c.RecurrenceHorizon / (24 * time.Hour))) },
	},
	{
		Name: "MAX_SERIES_OCCURRENCES", Default: "1000", Type: TypeInteger,
		Description: "occurrences one recurring event may have up to RECURRENCE_HORIZON (each is a search document), and changed occurrences it may keep; a write past it is refused with 400 (1 to 10000)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 1 || n > maxSeriesOccurrences {
				return fmt.Errorf("must be a whole number from 1 to %d", maxSeriesOccurrences)
			}
			c.MaxSeriesOccurrences = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MaxSeriesOccurrences) },
	},
	{
		Name: "MAX_SERIES_OVERRIDE_TEXT", Default: "2097152", Type: TypeInteger,
		Description: "bytes of text (titles, descriptions and excerpts, every language) the changed occurrences of one series may hold together; a change past it is refused with 400 (0: no bound)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 || n > maxSeriesOverrideText {
				return fmt.Errorf("must be a whole number of bytes from 0 to %d", maxSeriesOverrideText)
			}
			c.MaxSeriesOverrideText = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MaxSeriesOverrideText) },
	},
	{
		Name: "MAX_ACCOUNT_DOCUMENTS", Default: "50000", Type: TypeInteger,
		Description: "search-index documents (one per single event, one per occurrence of a series, every status) the events of one contributor or author may make together; a write past it is refused with 400 (0: no bound; editors and admins are never bounded)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 || n > maxAccountDocuments {
				return fmt.Errorf("must be a whole number from 0 to %d", maxAccountDocuments)
			}
			c.MaxAccountDocuments = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MaxAccountDocuments) },
	},
	{
		Name: "SYNC_BATCH_BYTES", Default: "262144", Type: TypeInteger,
		Description: "bytes of search documents one sync batch builds (text in every language, times a series' occurrences, and its changed occurrences' text); a post over it is indexed in a batch of its own, after the small writes queued with it (at least 4096)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < minSyncBatchBytes || n > maxSyncBatchBytes {
				return fmt.Errorf("must be a whole number of bytes from %d to %d", minSyncBatchBytes, maxSyncBatchBytes)
			}
			c.SyncBatchBytes = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.SyncBatchBytes) },
	},
	{
		Name: "MEILI_MASTER_KEY", Default: "", Type: TypeSecret, Secret: true,
		Description: "Meilisearch master key: when set and MEILI_API_KEY is empty, the service creates (or finds) its own scoped API key with it at start and uses only that key",
		parse: func(c *Config, raw string) error {
			c.MeiliMasterKey = raw
			return nil
		},
		format: func(c *Config) string { return c.MeiliMasterKey },
	},
	{
		Name: "MEILI_MAX_REQUEST_BYTES", Default: "20971520", Type: TypeInteger,
		Description: "bytes of JSON one Meilisearch document addition sends at most (documents are cut by encoded size as well as by count); must stay under the server's payload limit (100 MB by default). A single document over it is not indexed and its event's write fails with an error naming it (at least 1048576, at most 100000000)",
		parse: func(c *Config, raw string) error {
			n, err := strconv.Atoi(raw)
			if err != nil || n < minMeiliRequestBytes || n > maxMeiliRequestBytes {
				return fmt.Errorf("must be a whole number of bytes from %d to %d (Meilisearch refuses bodies over its payload limit, 100 MB by default)", minMeiliRequestBytes, maxMeiliRequestBytes)
			}
			c.MeiliMaxRequestBytes = n
			return nil
		},
		format: func(c *Config) string { return strconv.Itoa(c.MeiliMaxRequestBytes) },
	},
}

// Upper ends of the content bounds' settings: far above any calendar's
// need, below what would let one account or series exhaust memory.
const (
	maxSeriesOccurrences  = 10_000
	maxSeriesOverrideText = 1 << 30
	maxAccountDocuments   = 100_000_000
	minSyncBatchBytes     = 4 << 10
	maxSyncBatchBytes     = 1 << 30
	// A request must hold one document at the limits (a 200,000-character
	// description in a few languages) and stay under Meilisearch's
	// default http_payload_size_limit.
	minMeiliRequestBytes = 1 << 20
	maxMeiliRequestBytes = 100_000_000
	// A calendar source's body is held in memory while it is parsed.
	minSourceBytes  = 1 << 10
	maxSourceBytes  = 1 << 30
	maxSourceEvents = 1_000_000
)

// maxReplicaID bounds REPLICA_ID (and the host name used in its place).
const maxReplicaID = 128

// validateReplicaID checks a REPLICA_ID: empty, or at most maxReplicaID
// letters, digits, '.', '-' and '_' (what host names and container names
// are made of).
func validateReplicaID(raw string) error {
	if len(raw) > maxReplicaID {
		return fmt.Errorf("must be at most %d characters", maxReplicaID)
	}
	for _, r := range raw {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("%q: only letters, digits, '.', '-' and '_' are allowed", raw)
		}
	}
	return nil
}

// minStoreTimeout is the shortest STORE_TIMEOUT: below it a busy server's
// ordinary commands (an index look-up, a batch of the sync worker) would
// fail.
const minStoreTimeout = 100 * time.Millisecond

// maxBackupKeep is the largest BACKUP_KEEP.
const maxBackupKeep = 10000

// minLeaseTTL is the shortest LEASE_TTL: the lease is renewed every third
// of it, with a database round trip or two each time.
const minLeaseTTL = time.Second

// validateCron checks a REINDEX_CRON expression the way the scheduler
// (gocron, with robfig/cron's standard parser) will read it, in loc; the
// empty expression disables scheduled rebuilds. The time zone is always
// TIMEZONE: a TZ= or CRON_TZ= prefix is refused.
func validateCron(raw string, loc *time.Location) error {
	if raw == "" {
		return nil
	}
	if strings.HasPrefix(raw, "TZ=") || strings.HasPrefix(raw, "CRON_TZ=") {
		return errors.New("must not name a time zone: the schedule is evaluated in TIMEZONE")
	}
	err := gocron.NewDefaultCron(false).IsValid(raw, loc, time.Now())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gocron.ErrCronJobInvalid):
		return fmt.Errorf("%q never fires", raw)
	}
	// gocron joins its own error with the parser's; the parser's says what
	// is wrong.
	reason := err.Error()
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := joined.Unwrap(); len(errs) > 0 {
			reason = errs[len(errs)-1].Error()
		}
	}
	return fmt.Errorf("%q is not a cron expression (5 fields: minute hour day-of-month month day-of-week, or a descriptor such as @daily): %s", raw, reason)
}

// Options returns the registry of settings, in the order --help lists them.
// The returned slice is a copy; changing it does not change the registry.
func Options() []Option { return slices.Clone(registry) }

// languagePattern matches a language code: "en", "fil", "pt-br".
var languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[a-z]{2})?$`)

// segmentPattern matches one URL path segment that needs no escaping
// (RFC 3986 unreserved characters).
var segmentPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

var logLevels = map[string]slog.Level{
	"debug":   slog.LevelDebug,
	"info":    slog.LevelInfo,
	"warn":    slog.LevelWarn,
	"warning": slog.LevelWarn,
	"error":   slog.LevelError,
}

// validateListenAddr accepts "host:port" and ":port" with a numeric port.
func validateListenAddr(raw string) error {
	_, port, err := net.SplitHostPort(raw)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. :8080 or 127.0.0.1:8080)", raw)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// localSiteURL is the default SITE_URL for a listen address: http:// and
// the address's host, or localhost when it names none or every interface
// (":9000", "0.0.0.0:9000", "[::]:9000"), at its port. A port of 0 (any
// free port) is kept as given: the address is chosen only when the
// listener opens, so set SITE_URL when links matter.
func localSiteURL(listenAddr string) string {
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return "http://localhost:8080"
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// validateMongoURI checks the shape of a MongoDB connection string:
// scheme, then a non-empty comma-separated host list (after any user info).
// It does not use net/url, which rejects valid seed lists such as
// "h1:27017,h2" and percent-encoded socket paths; the driver checks the
// rest when the store opens. The value is secret (it may hold a password),
// so messages never include it.
func validateMongoURI(raw string) error {
	rest, ok := strings.CutPrefix(raw, "mongodb://")
	if !ok {
		rest, ok = strings.CutPrefix(raw, "mongodb+srv://")
	}
	if !ok {
		return errors.New("must start with mongodb:// or mongodb+srv://")
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	hosts := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hosts = rest[:i]
	}
	if hosts == "" {
		return errors.New("must name a host")
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return errors.New("has an empty host in its host list")
		}
	}
	return nil
}

// parseHTTPURL accepts an absolute http(s) URL without query or fragment
// and returns it without trailing slashes.
func parseHTTPURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q must not have a query, fragment or user info", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// normalisePath turns "/a//b/" into "a/b": segments without slashes at
// either end. Every segment must be URL-safe and neither "." nor "..".
func normalisePath(raw string) (string, error) {
	var segs []string
	for _, s := range strings.Split(raw, "/") {
		if s == "" {
			continue
		}
		if s == "." || s == ".." || !segmentPattern.MatchString(s) {
			return "", fmt.Errorf("%q has an invalid path segment %q (use letters, digits, '-', '_', '.', '~')", raw, s)
		}
		segs = append(segs, s)
	}
	return strings.Join(segs, "/"), nil
}

// parseOrigins accepts "*" alone or a list of scheme://host[:port] origins.
func parseOrigins(raw string) ([]string, error) {
	var origins []string
	for _, part := range strings.Split(raw, ",") {
		o := strings.TrimSpace(part)
		switch {
		case o == "":
			return nil, errors.New("must not contain empty entries")
		case o == "*":
			if len(strings.Split(raw, ",")) > 1 {
				return nil, errors.New("* must be the only entry")
			}
		default:
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
				strings.TrimRight(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
				return nil, fmt.Errorf("%q is not an origin (scheme://host[:port])", o)
			}
			o = strings.ToLower(u.Scheme + "://" + u.Host)
		}
		if !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	return origins, nil
}

// maxConnections bounds MAX_CONNECTIONS: each connection costs a
// goroutine and its buffers, about 20 KiB.
const maxConnections = 1 << 20

// maxBodyMemoryMiB bounds BODY_MEMORY_MIB (64 GiB).
const maxBodyMemoryMiB = 1 << 16

// maxHeaderTimeout bounds HEADER_TIMEOUT: a longer wait for headers would
// let slow clients hold connections as long as before the option existed.
const maxHeaderTimeout = time.Minute

// parseDuration accepts a Go duration ("10s", "1m30s") or whole seconds ("10").
func parseDuration(raw string) (time.Duration, error) {
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		if n > math.MaxInt64/int64(time.Second) {
			return 0, fmt.Errorf("%q seconds is too long", raw)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 10s, 1m30s)", raw)
	}
	return d, nil
}
