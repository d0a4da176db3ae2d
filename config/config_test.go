package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// env returns a getenv function that reads m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(nil))
	if err != nil {
		t.Fatalf("Load with an empty environment: %v", err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"ListenAddr", c.ListenAddr, ":8080"},
		{"DataDir", c.DataDir, "./data"},
		{"MongoURI", c.MongoURI, ""},
		{"MongoDatabase", c.MongoDatabase, "calendar"},
		{"MeiliURL", c.MeiliURL, ""},
		{"MeiliAPIKey", c.MeiliAPIKey, ""},
		{"AdminToken", c.AdminToken, ""},
		{"RestRoot", c.RestRoot, ""},
		{"APINamespace", c.APINamespace, "calendar/events/v1"},
		{"SiteURL", c.SiteURL, "http://localhost:8080"},
		{"TimezoneName", c.TimezoneName, "UTC"},
		{"Location", c.Location.String(), "UTC"},
		{"Languages", c.Languages, []string{"nl", "en", "fr", "de", "it", "pl", "es"}},
		{"DefaultLanguage", c.DefaultLanguage, "en"},
		{"LogLevel", c.LogLevel, slog.LevelInfo},
		{"LogFormat", c.LogFormat, "text"},
		{"CORSAllowedOrigins", c.CORSAllowedOrigins, []string{"*"}},
		{"ShutdownTimeout", c.ShutdownTimeout, 10 * time.Second},
		{"ReindexCron", c.ReindexCron, ""},
		{"BackupSchedule", c.BackupSchedule, ""},
		{"BackupKeep", c.BackupKeep, 7},
		{"BackupDir", c.BackupDir, "./data/backups"},
		{"LeaseTTL", c.LeaseTTL, 15 * time.Second},
		{"StoreTimeout", c.StoreTimeout, 10 * time.Second},
		{"DrainDelay", c.DrainDelay, 5 * time.Second},
		{"ReplicaID", c.ReplicaID, ""},
		{"MeiliMasterKey", c.MeiliMasterKey, ""},
		{"APIRoot()", c.APIRoot(), "/calendar/events/v1"},
		{"Embedded()", c.Embedded(), true},
		{"EmbeddedSearch()", c.EmbeddedSearch(), true},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
	if d := Default(); !reflect.DeepEqual(d, c) {
		t.Errorf("Default() = %+v, want %+v", d, c)
	}
}

// TestValid checks that valid values are accepted and normalised.
func TestValid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   map[string]string
		field func(c *Config) any
		want  any
	}{
		{"listen host:port", map[string]string{"LISTEN_ADDR": "127.0.0.1:9000"}, func(c *Config) any { return c.ListenAddr }, "127.0.0.1:9000"},
		{"listen ipv6", map[string]string{"LISTEN_ADDR": "[::1]:0"}, func(c *Config) any { return c.ListenAddr }, "[::1]:0"},
		{"listen trimmed", map[string]string{"LISTEN_ADDR": "  :80 \n"}, func(c *Config) any { return c.ListenAddr }, ":80"},
		{"empty means default", map[string]string{"LISTEN_ADDR": "   "}, func(c *Config) any { return c.ListenAddr }, ":8080"},
		{"metrics addr", map[string]string{"METRICS_ADDR": "127.0.0.1:9090"}, func(c *Config) any { return c.MetricsAddr }, "127.0.0.1:9090"},
		{"metrics addr default", map[string]string{}, func(c *Config) any { return c.MetricsAddr }, ""},
		{"data dir", map[string]string{"DATA_DIR": "/var/lib/calendar"}, func(c *Config) any { return c.DataDir }, "/var/lib/calendar"},
		{"mongo uri", map[string]string{"MONGO_URI": "mongodb://u:p@db:27017/?replicaSet=rs0"}, func(c *Config) any { return c.MongoURI }, "mongodb://u:p@db:27017/?replicaSet=rs0"},
		{"mongo seed list", map[string]string{"MONGO_URI": "mongodb://u:p%40ss@h1:27017,h2,[::1]:27018/cal?replicaSet=rs0"}, func(c *Config) any { return c.Embedded() }, false},
		{"mongo socket", map[string]string{"MONGO_URI": "mongodb://%2Ftmp%2Fmongodb-27017.sock"}, func(c *Config) any { return c.Embedded() }, false},
		{"mongo srv uri", map[string]string{"MONGO_URI": "mongodb+srv://cluster.example.org"}, func(c *Config) any { return c.Embedded() }, false},
		{"mongo database", map[string]string{"MONGO_DATABASE": "cal_prod-2"}, func(c *Config) any { return c.MongoDatabase }, "cal_prod-2"},
		{"meili url trailing slash", map[string]string{"MEILI_URL": "http://meilisearch:7700/"}, func(c *Config) any { return c.MeiliURL }, "http://meilisearch:7700"},
		{"meili url sets engine", map[string]string{"MEILI_URL": "https://search.example.org"}, func(c *Config) any { return c.EmbeddedSearch() }, false},
		{"meili key", map[string]string{"MEILI_API_KEY": "k3y"}, func(c *Config) any { return c.MeiliAPIKey }, "k3y"},
		{"admin token", map[string]string{"ADMIN_TOKEN": "s3cret"}, func(c *Config) any { return c.AdminToken }, "s3cret"},
		{"rest root plain", map[string]string{"REST_ROOT": "wp-json"}, func(c *Config) any { return c.RestRoot }, "/wp-json"},
		{"rest root slashes", map[string]string{"REST_ROOT": "//api//v2/"}, func(c *Config) any { return c.RestRoot }, "/api/v2"},
		{"rest root only slash", map[string]string{"REST_ROOT": "/"}, func(c *Config) any { return c.RestRoot }, ""},
		{"namespace slashes", map[string]string{"API_NAMESPACE": "/tribe/events/v1/"}, func(c *Config) any { return c.APINamespace }, "tribe/events/v1"},
		{"api root", map[string]string{"REST_ROOT": "/wp-json/", "API_NAMESPACE": "tribe/events/v1"}, func(c *Config) any { return c.APIRoot() }, "/wp-json/tribe/events/v1"},
		{"site url trailing slash", map[string]string{"SITE_URL": "https://example.org/agenda/"}, func(c *Config) any { return c.SiteURL }, "https://example.org/agenda"},
		{"timezone", map[string]string{"TIMEZONE": "Europe/Brussels"}, func(c *Config) any { return c.Location.String() }, "Europe/Brussels"},
		{"timezone name", map[string]string{"TIMEZONE": "America/New_York"}, func(c *Config) any { return c.TimezoneName }, "America/New_York"},
		{"languages normalised", map[string]string{"LANGUAGES": " EN, nl ,pt-BR,fil", "DEFAULT_LANGUAGE": "NL"}, func(c *Config) any { return c.Languages }, []string{"en", "nl", "pt-br", "fil"}},
		{"default language lower-cased", map[string]string{"LANGUAGES": "en,nl", "DEFAULT_LANGUAGE": "NL"}, func(c *Config) any { return c.DefaultLanguage }, "nl"},
		{"single language", map[string]string{"LANGUAGES": "en"}, func(c *Config) any { return c.Languages }, []string{"en"}},
		{"log level debug", map[string]string{"LOG_LEVEL": "DEBUG"}, func(c *Config) any { return c.LogLevel }, slog.LevelDebug},
		{"log level warning", map[string]string{"LOG_LEVEL": "warning"}, func(c *Config) any { return c.LogLevel }, slog.LevelWarn},
		{"log level error", map[string]string{"LOG_LEVEL": "error"}, func(c *Config) any { return c.LogLevel }, slog.LevelError},
		{"log format json", map[string]string{"LOG_FORMAT": "JSON"}, func(c *Config) any { return c.LogFormat }, "json"},
		{"currency none by default", nil, func(c *Config) any { return c.CurrencySymbol + c.CurrencyCode + c.CurrencyPosition }, ""},
		{"currency symbol", map[string]string{"CURRENCY_SYMBOL": "€"}, func(c *Config) any { return c.CurrencySymbol }, "€"},
		{"currency code upper-cased", map[string]string{"CURRENCY_CODE": "eur"}, func(c *Config) any { return c.CurrencyCode }, "EUR"},
		{"currency position lower-cased", map[string]string{"CURRENCY_POSITION": "Suffix"}, func(c *Config) any { return c.CurrencyPosition }, "suffix"},
		{"cors list", map[string]string{"CORS_ALLOWED_ORIGINS": "https://A.example.org/, http://localhost:3000,https://a.example.org"}, func(c *Config) any { return c.CORSAllowedOrigins }, []string{"https://a.example.org", "http://localhost:3000"}},
		{"cors star", map[string]string{"CORS_ALLOWED_ORIGINS": " * "}, func(c *Config) any { return c.CORSAllowedOrigins }, []string{"*"}},
		{"shutdown duration", map[string]string{"SHUTDOWN_TIMEOUT": "1m30s"}, func(c *Config) any { return c.ShutdownTimeout }, 90 * time.Second},
		{"shutdown seconds", map[string]string{"SHUTDOWN_TIMEOUT": "25"}, func(c *Config) any { return c.ShutdownTimeout }, 25 * time.Second},
		{"reindex cron", map[string]string{"REINDEX_CRON": " 30 3 * * 0 "}, func(c *Config) any { return c.ReindexCron }, "30 3 * * 0"},
		{"reindex cron ranges and names", map[string]string{"REINDEX_CRON": "*/15 1-5 * JAN-MAR MON,FRI"}, func(c *Config) any { return c.ReindexCron }, "*/15 1-5 * JAN-MAR MON,FRI"},
		{"reindex cron descriptor", map[string]string{"REINDEX_CRON": "@daily"}, func(c *Config) any { return c.ReindexCron }, "@daily"},
		{"backup schedule", map[string]string{"BACKUP_SCHEDULE": " 15 3 * * * "}, func(c *Config) any { return c.BackupSchedule }, "15 3 * * *"},
		{"backup schedule descriptor", map[string]string{"BACKUP_SCHEDULE": "@every 6h"}, func(c *Config) any { return c.BackupSchedule }, "@every 6h"},
		{"backup keep", map[string]string{"BACKUP_KEEP": "30"}, func(c *Config) any { return c.BackupKeep }, 30},
		{"backup dir follows DATA_DIR", map[string]string{"DATA_DIR": "/var/lib/calendar/"}, func(c *Config) any { return c.BackupDir }, "/var/lib/calendar/backups"},
		{"backup dir", map[string]string{"DATA_DIR": "/var/lib/calendar", "BACKUP_DIR": "/mnt/backups"}, func(c *Config) any { return c.BackupDir }, "/mnt/backups"},
		{"reindex cron every", map[string]string{"REINDEX_CRON": "@every 6h"}, func(c *Config) any { return c.ReindexCron }, "@every 6h"},
		{"reindex cron with a time zone", map[string]string{"REINDEX_CRON": "0 3 * * *", "TIMEZONE": "Europe/Brussels"}, func(c *Config) any { return c.ReindexCron }, "0 3 * * *"},
		{"lease ttl", map[string]string{"LEASE_TTL": "1m"}, func(c *Config) any { return c.LeaseTTL }, time.Minute},
		{"lease ttl seconds", map[string]string{"LEASE_TTL": "5"}, func(c *Config) any { return c.LeaseTTL }, 5 * time.Second},
		{"lease ttl minimum", map[string]string{"LEASE_TTL": "1s"}, func(c *Config) any { return c.LeaseTTL }, time.Second},
		{"store timeout", map[string]string{"STORE_TIMEOUT": "30s"}, func(c *Config) any { return c.StoreTimeout }, 30 * time.Second},
		{"store timeout seconds", map[string]string{"STORE_TIMEOUT": "3"}, func(c *Config) any { return c.StoreTimeout }, 3 * time.Second},
		{"webhook private default", map[string]string{}, func(c *Config) any { return c.WebhookAllowPrivate }, false},
		{"trusted proxies", map[string]string{"TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.7 ,::1"}, func(c *Config) any {
			out := ""
			for _, p := range c.TrustedProxies {
				out += p.String() + " "
			}
			return out
		}, "10.0.0.0/8 192.168.1.7/32 ::1/128 "},
		{"webhook private on", map[string]string{"WEBHOOK_ALLOW_PRIVATE": "true"}, func(c *Config) any { return c.WebhookAllowPrivate }, true},
		{"sources private default", nil, func(c *Config) any { return c.SourcesAllowPrivate }, false},
		{"sources private on", map[string]string{"SOURCES_ALLOW_PRIVATE": "true"}, func(c *Config) any { return c.SourcesAllowPrivate }, true},
		{"source fetch timeout default", nil, func(c *Config) any { return c.SourceFetchTimeout }, time.Minute},
		{"source fetch timeout", map[string]string{"SOURCE_FETCH_TIMEOUT": "2m"}, func(c *Config) any { return c.SourceFetchTimeout }, 2 * time.Minute},
		{"source fetch timeout seconds", map[string]string{"SOURCE_FETCH_TIMEOUT": "1"}, func(c *Config) any { return c.SourceFetchTimeout }, time.Second},
		{"webhook timeout", map[string]string{"WEBHOOK_TIMEOUT": "2s"}, func(c *Config) any { return c.WebhookTimeout }, 2 * time.Second},
		{"webhook timeout default", nil, func(c *Config) any { return c.WebhookTimeout }, 10 * time.Second},
		{"source max bytes default", nil, func(c *Config) any { return c.SourceMaxBytes }, int64(20 << 20)},
		{"source max bytes", map[string]string{"SOURCE_MAX_BYTES": "1048576"}, func(c *Config) any { return c.SourceMaxBytes }, int64(1 << 20)},
		{"source max events default", nil, func(c *Config) any { return c.SourceMaxEvents }, 50000},
		{"source max events", map[string]string{"SOURCE_MAX_EVENTS": "10"}, func(c *Config) any { return c.SourceMaxEvents }, 10},
		{"drain delay", map[string]string{"DRAIN_DELAY": "15s"}, func(c *Config) any { return c.DrainDelay }, 15 * time.Second},
		{"drain delay off", map[string]string{"DRAIN_DELAY": "0"}, func(c *Config) any { return c.DrainDelay }, time.Duration(0)},
		{"replica id", map[string]string{"REPLICA_ID": "calendar-1.eu_west"}, func(c *Config) any { return c.ReplicaID }, "calendar-1.eu_west"},
		{"header timeout default", nil, func(c *Config) any { return c.HeaderTimeout }, 5 * time.Second},
		{"header timeout", map[string]string{"HEADER_TIMEOUT": "250ms"}, func(c *Config) any { return c.HeaderTimeout }, 250 * time.Millisecond},
		{"connections per address default", nil, func(c *Config) any { return c.MaxConnectionsPerAddress }, 256},
		{"connections per address", map[string]string{"MAX_CONNECTIONS_PER_ADDRESS": "16"}, func(c *Config) any { return c.MaxConnectionsPerAddress }, 16},
		{"write rate", map[string]string{"WRITE_RATE": "0.5"}, func(c *Config) any { return c.WriteRate }, 0.5},
		{"write rate default", map[string]string{}, func(c *Config) any { return c.WriteRate }, 10.0},
		{"write burst", map[string]string{"WRITE_BURST": "7"}, func(c *Config) any { return c.WriteBurst }, 7},
		{"connections default", nil, func(c *Config) any { return c.MaxConnections }, 4096},
		{"connections", map[string]string{"MAX_CONNECTIONS": "64"}, func(c *Config) any { return c.MaxConnections }, 64},
		{"body memory default", nil, func(c *Config) any { return c.BodyMemory }, int64(64 << 20)},
		{"body memory", map[string]string{"BODY_MEMORY_MIB": "2"}, func(c *Config) any { return c.BodyMemory }, int64(2 << 20)},
		{"body memory per caller default", nil, func(c *Config) any { return c.BodyMemoryPerCaller }, int64(4 << 20)},
		{"body memory per caller", map[string]string{"BODY_MEMORY_PER_CALLER_MIB": "2"}, func(c *Config) any { return c.BodyMemoryPerCaller }, int64(2 << 20)},
		{"body memory per caller over the whole", map[string]string{"BODY_MEMORY_MIB": "2"}, func(c *Config) any { return c.BodyMemoryPerCaller }, int64(2 << 20)},
		{"series occurrences default", nil, func(c *Config) any { return c.MaxSeriesOccurrences }, 1000},
		{"series occurrences", map[string]string{"MAX_SERIES_OCCURRENCES": "300"}, func(c *Config) any { return c.MaxSeriesOccurrences }, 300},
		{"series override text default", nil, func(c *Config) any { return c.MaxSeriesOverrideText }, 2 << 20},
		{"series override text", map[string]string{"MAX_SERIES_OVERRIDE_TEXT": "0"}, func(c *Config) any { return c.MaxSeriesOverrideText }, 0},
		{"account documents default", nil, func(c *Config) any { return c.MaxAccountDocuments }, 50000},
		{"account documents", map[string]string{"MAX_ACCOUNT_DOCUMENTS": "1200"}, func(c *Config) any { return c.MaxAccountDocuments }, 1200},
		{"sync batch bytes default", nil, func(c *Config) any { return c.SyncBatchBytes }, 256 << 10},
		{"sync batch bytes", map[string]string{"SYNC_BATCH_BYTES": "1048576"}, func(c *Config) any { return c.SyncBatchBytes }, 1 << 20},
		{"meili max request bytes default", nil, func(c *Config) any { return c.MeiliMaxRequestBytes }, 20 << 20},
		{"meili max request bytes", map[string]string{"MEILI_MAX_REQUEST_BYTES": "52428800"}, func(c *Config) any { return c.MeiliMaxRequestBytes }, 50 << 20},
		{"connections per address unbounded", map[string]string{"MAX_CONNECTIONS_PER_ADDRESS": "0"}, func(c *Config) any { return c.MaxConnectionsPerAddress }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(env(tt.env))
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := tt.field(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestInvalid checks every validator's rejections: Load fails with an
// *Error naming the variable, and secrets are not echoed.
func TestInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		varName string
		// msg is a fragment of the expected message.
		msg string
	}{
		{"listen no port", map[string]string{"LISTEN_ADDR": "localhost"}, "LISTEN_ADDR", "host:port"},
		{"listen bad port", map[string]string{"LISTEN_ADDR": ":http"}, "LISTEN_ADDR", "port"},
		{"metrics addr bad", map[string]string{"METRICS_ADDR": "nohost"}, "METRICS_ADDR", "host:port"},
		{"listen port range", map[string]string{"LISTEN_ADDR": ":70000"}, "LISTEN_ADDR", "65535"},
		{"mongo scheme", map[string]string{"MONGO_URI": "postgres://u:hunter2@db"}, "MONGO_URI", "mongodb://"},
		{"mongo no host", map[string]string{"MONGO_URI": "mongodb://"}, "MONGO_URI", "host"},
		{"mongo no host after user", map[string]string{"MONGO_URI": "mongodb://u:hunter2@/db"}, "MONGO_URI", "host"},
		{"mongo empty seed", map[string]string{"MONGO_URI": "mongodb://u:hunter2@a,,b/?replicaSet=rs0"}, "MONGO_URI", "empty host"},
		{"mongo database dot", map[string]string{"MONGO_DATABASE": "cal.prod"}, "MONGO_DATABASE", `"."`},
		{"mongo database long", map[string]string{"MONGO_DATABASE": strings.Repeat("d", 64)}, "MONGO_DATABASE", "63"},
		{"meili relative", map[string]string{"MEILI_URL": "meilisearch:7700"}, "MEILI_URL", "absolute"},
		{"meili ftp", map[string]string{"MEILI_URL": "ftp://meili"}, "MEILI_URL", "absolute"},
		{"rest root dotdot", map[string]string{"REST_ROOT": "/api/../x"}, "REST_ROOT", `".."`},
		{"rest root space", map[string]string{"REST_ROOT": "/my api"}, "REST_ROOT", "segment"},
		{"rest root query", map[string]string{"REST_ROOT": "/api?x=1"}, "REST_ROOT", "segment"},
		{"namespace only slashes", map[string]string{"API_NAMESPACE": "///"}, "API_NAMESPACE", "at least one"},
		{"namespace dot", map[string]string{"API_NAMESPACE": "calendar/./v1"}, "API_NAMESPACE", `"."`},
		{"site url relative", map[string]string{"SITE_URL": "example.org"}, "SITE_URL", "absolute"},
		{"site url scheme", map[string]string{"SITE_URL": "mailto:a@example.org"}, "SITE_URL", "absolute"},
		{"site url query", map[string]string{"SITE_URL": "https://example.org/?a=1"}, "SITE_URL", "query"},
		{"timezone unknown", map[string]string{"TIMEZONE": "Mars/Olympus"}, "TIMEZONE", "Mars/Olympus"},
		{"timezone local", map[string]string{"TIMEZONE": "Local"}, "TIMEZONE", "unknown"},
		{"languages empty entry", map[string]string{"LANGUAGES": "en,,nl"}, "LANGUAGES", "empty"},
		{"languages bad code", map[string]string{"LANGUAGES": "en,english"}, "LANGUAGES", `"english"`},
		{"languages bad region", map[string]string{"LANGUAGES": "en,pt_br"}, "LANGUAGES", `"pt_br"`},
		{"languages duplicate", map[string]string{"LANGUAGES": "en,nl,EN"}, "LANGUAGES", "twice"},
		{"default language not listed", map[string]string{"LANGUAGES": "nl,fr", "DEFAULT_LANGUAGE": "en"}, "DEFAULT_LANGUAGE", "not one of LANGUAGES"},
		{"default language with default list", map[string]string{"DEFAULT_LANGUAGE": "ja"}, "DEFAULT_LANGUAGE", `"ja"`},
		{"log level", map[string]string{"LOG_LEVEL": "verbose"}, "LOG_LEVEL", "debug, info"},
		{"log format", map[string]string{"LOG_FORMAT": "logfmt"}, "LOG_FORMAT", "text, json"},
		{"currency symbol too long", map[string]string{"CURRENCY_SYMBOL": "dollars of the US"}, "CURRENCY_SYMBOL", "at most 10"},
		{"currency symbol digit", map[string]string{"CURRENCY_SYMBOL": "$1"}, "CURRENCY_SYMBOL", "digits"},
		{"currency code not iso", map[string]string{"CURRENCY_CODE": "EURO"}, "CURRENCY_CODE", "ISO 4217"},
		{"currency code digits", map[string]string{"CURRENCY_CODE": "E1R"}, "CURRENCY_CODE", "ISO 4217"},
		{"currency position", map[string]string{"CURRENCY_POSITION": "postfix"}, "CURRENCY_POSITION", "prefix or suffix"},
		{"cors star mixed", map[string]string{"CORS_ALLOWED_ORIGINS": "*,https://a.org"}, "CORS_ALLOWED_ORIGINS", "only entry"},
		{"cors path", map[string]string{"CORS_ALLOWED_ORIGINS": "https://a.org/app"}, "CORS_ALLOWED_ORIGINS", "origin"},
		{"cors bare host", map[string]string{"CORS_ALLOWED_ORIGINS": "a.org"}, "CORS_ALLOWED_ORIGINS", "origin"},
		{"cors empty entry", map[string]string{"CORS_ALLOWED_ORIGINS": "https://a.org,"}, "CORS_ALLOWED_ORIGINS", "empty"},
		{"shutdown unparsable", map[string]string{"SHUTDOWN_TIMEOUT": "soon"}, "SHUTDOWN_TIMEOUT", "duration"},
		{"shutdown zero", map[string]string{"SHUTDOWN_TIMEOUT": "0s"}, "SHUTDOWN_TIMEOUT", "positive"},
		{"shutdown negative", map[string]string{"SHUTDOWN_TIMEOUT": "-5"}, "SHUTDOWN_TIMEOUT", "positive"},
		{"shutdown overflow", map[string]string{"SHUTDOWN_TIMEOUT": "99999999999"}, "SHUTDOWN_TIMEOUT", "too long"},
		{"reindex cron four fields", map[string]string{"REINDEX_CRON": "0 3 * *"}, "REINDEX_CRON", "found 4"},
		{"reindex cron seconds field", map[string]string{"REINDEX_CRON": "0 0 3 * * *"}, "REINDEX_CRON", "found 6"},
		{"reindex cron out of range", map[string]string{"REINDEX_CRON": "0 24 * * *"}, "REINDEX_CRON", "above maximum"},
		{"reindex cron word", map[string]string{"REINDEX_CRON": "nightly"}, "REINDEX_CRON", "not a cron expression"},
		{"reindex cron descriptor", map[string]string{"REINDEX_CRON": "@fortnightly"}, "REINDEX_CRON", "unrecognized descriptor"},
		{"reindex cron never fires", map[string]string{"REINDEX_CRON": "0 0 30 2 *"}, "REINDEX_CRON", "never fires"},
		{"reindex cron own time zone", map[string]string{"REINDEX_CRON": "CRON_TZ=Asia/Tokyo 0 3 * * *"}, "REINDEX_CRON", "TIMEZONE"},
		{"backup schedule word", map[string]string{"BACKUP_SCHEDULE": "nightly"}, "BACKUP_SCHEDULE", "not a cron expression"},
		{"backup schedule never fires", map[string]string{"BACKUP_SCHEDULE": "0 0 30 2 *"}, "BACKUP_SCHEDULE", "never fires"},
		{"backup schedule own time zone", map[string]string{"BACKUP_SCHEDULE": "TZ=UTC 0 3 * * *"}, "BACKUP_SCHEDULE", "TIMEZONE"},
		{"backup schedule with MongoDB", map[string]string{"BACKUP_SCHEDULE": "@daily", "MONGO_URI": "mongodb://db:27017"}, "BACKUP_SCHEDULE", "mongodump"},
		{"backup keep zero", map[string]string{"BACKUP_KEEP": "0"}, "BACKUP_KEEP", "from 1 to 10000"},
		{"backup keep word", map[string]string{"BACKUP_KEEP": "all"}, "BACKUP_KEEP", "from 1 to 10000"},
		{"lease ttl unparsable", map[string]string{"LEASE_TTL": "long"}, "LEASE_TTL", "duration"},
		{"lease ttl too short", map[string]string{"LEASE_TTL": "500ms"}, "LEASE_TTL", "at least 1s"},
		{"lease ttl zero", map[string]string{"LEASE_TTL": "0"}, "LEASE_TTL", "at least 1s"},
		{"store timeout unparsable", map[string]string{"STORE_TIMEOUT": "soon"}, "STORE_TIMEOUT", "duration"},
		{"store timeout too short", map[string]string{"STORE_TIMEOUT": "10ms"}, "STORE_TIMEOUT", "at least 100ms"},
		{"store timeout zero", map[string]string{"STORE_TIMEOUT": "0"}, "STORE_TIMEOUT", "at least 100ms"},
		{"trusted proxies word", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"}, "TRUSTED_PROXIES", "not an IP address"},
		{"webhook private word", map[string]string{"WEBHOOK_ALLOW_PRIVATE": "sometimes"}, "WEBHOOK_ALLOW_PRIVATE", "true or false"},
		{"sources private word", map[string]string{"SOURCES_ALLOW_PRIVATE": "maybe"}, "SOURCES_ALLOW_PRIVATE", "true or false"},
		{"source fetch timeout too short", map[string]string{"SOURCE_FETCH_TIMEOUT": "500ms"}, "SOURCE_FETCH_TIMEOUT", "from 1s to 1h"},
		{"source fetch timeout zero", map[string]string{"SOURCE_FETCH_TIMEOUT": "0"}, "SOURCE_FETCH_TIMEOUT", "from 1s to 1h"},
		{"source fetch timeout too long", map[string]string{"SOURCE_FETCH_TIMEOUT": "2h"}, "SOURCE_FETCH_TIMEOUT", "from 1s to 1h"},
		{"source fetch timeout word", map[string]string{"SOURCE_FETCH_TIMEOUT": "slow"}, "SOURCE_FETCH_TIMEOUT", "duration"},
		{"webhook timeout too short", map[string]string{"WEBHOOK_TIMEOUT": "500ms"}, "WEBHOOK_TIMEOUT", "from 1s to 1m"},
		{"webhook timeout too long", map[string]string{"WEBHOOK_TIMEOUT": "2m"}, "WEBHOOK_TIMEOUT", "from 1s to 1m"},
		{"source max bytes too small", map[string]string{"SOURCE_MAX_BYTES": "100"}, "SOURCE_MAX_BYTES", "whole number of bytes from 1024 to 1073741824"},
		{"source max bytes with a unit", map[string]string{"SOURCE_MAX_BYTES": "20MiB"}, "SOURCE_MAX_BYTES", "whole number of bytes"},
		{"source max events zero", map[string]string{"SOURCE_MAX_EVENTS": "0"}, "SOURCE_MAX_EVENTS", "whole number from 1 to 1000000"},
		{"source max events too many", map[string]string{"SOURCE_MAX_EVENTS": "2000000"}, "SOURCE_MAX_EVENTS", "whole number from 1 to 1000000"},
		{"drain delay negative", map[string]string{"DRAIN_DELAY": "-1s"}, "DRAIN_DELAY", "negative"},
		{"header timeout zero", map[string]string{"HEADER_TIMEOUT": "0"}, "HEADER_TIMEOUT", "positive"},
		{"header timeout too long", map[string]string{"HEADER_TIMEOUT": "2m"}, "HEADER_TIMEOUT", "at most 1m"},
		{"header timeout unparsable", map[string]string{"HEADER_TIMEOUT": "quick"}, "HEADER_TIMEOUT", "duration"},
		{"write rate negative", map[string]string{"WRITE_RATE": "-1"}, "WRITE_RATE", "number from 0 to 10000"},
		{"write rate NaN", map[string]string{"WRITE_RATE": "NaN"}, "WRITE_RATE", "number from 0 to 10000"},
		{"write burst zero", map[string]string{"WRITE_BURST": "0"}, "WRITE_BURST", "whole number from 1 to 100000"},
		{"connections per address negative", map[string]string{"MAX_CONNECTIONS_PER_ADDRESS": "-1"}, "MAX_CONNECTIONS_PER_ADDRESS", "whole number from 0 to 1048576"},
		{"connections per address over the limit", map[string]string{"MAX_CONNECTIONS_PER_ADDRESS": "2000000"}, "MAX_CONNECTIONS_PER_ADDRESS", "whole number"},
		{"connections zero", map[string]string{"MAX_CONNECTIONS": "0"}, "MAX_CONNECTIONS", "whole number from 1 to 1048576"},
		{"connections word", map[string]string{"MAX_CONNECTIONS": "lots"}, "MAX_CONNECTIONS", "whole number"},
		{"body memory zero", map[string]string{"BODY_MEMORY_MIB": "0"}, "BODY_MEMORY_MIB", "whole number from 1 to 65536"},
		{"body memory per caller zero", map[string]string{"BODY_MEMORY_PER_CALLER_MIB": "0"}, "BODY_MEMORY_PER_CALLER_MIB", "whole number"},
		{"negative override text", map[string]string{"MAX_SERIES_OVERRIDE_TEXT": "-1"}, "MAX_SERIES_OVERRIDE_TEXT", "whole number of bytes from 0 to 1073741824"},
		{"override text with a unit", map[string]string{"MAX_SERIES_OVERRIDE_TEXT": "2MiB"}, "MAX_SERIES_OVERRIDE_TEXT", "whole number of bytes"},
		{"series occurrences zero", map[string]string{"MAX_SERIES_OCCURRENCES": "0"}, "MAX_SERIES_OCCURRENCES", "whole number from 1 to 10000"},
		{"sync batch bytes too small", map[string]string{"SYNC_BATCH_BYTES": "100"}, "SYNC_BATCH_BYTES", "whole number of bytes from 4096 to 1073741824"},
		{"meili max request bytes too small", map[string]string{"MEILI_MAX_REQUEST_BYTES": "1000"}, "MEILI_MAX_REQUEST_BYTES", "whole number of bytes from 1048576 to 100000000"},
		{"meili max request bytes over the server limit", map[string]string{"MEILI_MAX_REQUEST_BYTES": "104857600"}, "MEILI_MAX_REQUEST_BYTES", "100 MB by default"},
		{"meili max request bytes not a number", map[string]string{"MEILI_MAX_REQUEST_BYTES": "20MiB"}, "MEILI_MAX_REQUEST_BYTES", "whole number of bytes"},
		{"account documents not a number", map[string]string{"MAX_ACCOUNT_DOCUMENTS": "many"}, "MAX_ACCOUNT_DOCUMENTS", "whole number from 0 to 100000000"},
		{"connections per address word", map[string]string{"MAX_CONNECTIONS_PER_ADDRESS": "many"}, "MAX_CONNECTIONS_PER_ADDRESS", "whole number"},
		{"drain delay unparsable", map[string]string{"DRAIN_DELAY": "soon"}, "DRAIN_DELAY", "duration"},
		{"replica id with a slash", map[string]string{"REPLICA_ID": "a/b"}, "REPLICA_ID", "only letters"},
		{"replica id with a space", map[string]string{"REPLICA_ID": "a b"}, "REPLICA_ID", "only letters"},
		{"replica id too long", map[string]string{"REPLICA_ID": strings.Repeat("r", 129)}, "REPLICA_ID", "at most 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(env(tt.env))
			if err == nil {
				t.Fatalf("Load succeeded (%+v), want an error for %s", c, tt.varName)
			}
			var cerr *Error
			if !errors.As(err, &cerr) || cerr.Name != tt.varName {
				t.Fatalf("error %v does not name %s", err, tt.varName)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "invalid "+tt.varName+": ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q: want prefix %q and fragment %q", msg, "invalid "+tt.varName+": ", tt.msg)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("message %q leaks a secret", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("one invalid variable gave several errors: %q", msg)
			}
			// Option.Validate agrees with Load for settings that stand alone
			// (not DEFAULT_LANGUAGE against LANGUAGES, nor BACKUP_SCHEDULE
			// against MONGO_URI).
			if tt.varName != "DEFAULT_LANGUAGE" && tt.name != "backup schedule with MongoDB" {
				if err := lookup(t, tt.varName).Validate(tt.env[tt.varName]); err == nil {
					t.Errorf("Option.Validate(%q) accepted the value", tt.env[tt.varName])
				}
			}
		})
	}
}

// TestInvalidSeveral checks that every invalid variable is reported at once,
// and that an invalid LANGUAGES does not make DEFAULT_LANGUAGE fail too.
func TestInvalidSeveral(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{
		"LISTEN_ADDR":      "nope",
		"LANGUAGES":        "xx,,yy",
		"DEFAULT_LANGUAGE": "xx",
		"LOG_FORMAT":       "xml",
	}))
	if err == nil {
		t.Fatal("Load succeeded")
	}
	msg := err.Error()
	for _, name := range []string{"LISTEN_ADDR", "LANGUAGES", "LOG_FORMAT"} {
		if !strings.Contains(msg, "invalid "+name+":") {
			t.Errorf("message %q does not name %s", msg, name)
		}
	}
	if strings.Contains(msg, "DEFAULT_LANGUAGE") {
		t.Errorf("message %q reports DEFAULT_LANGUAGE, which depends on the invalid LANGUAGES", msg)
	}
}

func lookup(t *testing.T, name string) Option {
	t.Helper()
	for _, o := range Options() {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no option %s", name)
	return Option{}
}

// TestRegistry checks that every option is documented, its default is valid
// on its own, and names are unique.
func TestRegistry(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, o := range Options() {
		if seen[o.Name] {
			t.Errorf("%s registered twice", o.Name)
		}
		seen[o.Name] = true
		if o.Description == "" || o.Type == "" {
			t.Errorf("%s lacks a description or type", o.Name)
		}
		if strings.Contains(o.Description, "\n") {
			t.Errorf("%s: description is not one line", o.Name)
		}
		if err := o.Validate(o.Default); err != nil {
			t.Errorf("%s: default %q is invalid: %v", o.Name, o.Default, err)
		}
	}
	want := []string{"LISTEN_ADDR", "DATA_DIR", "MONGO_URI", "MONGO_DATABASE", "MEILI_URL", "MEILI_API_KEY",
		"ADMIN_TOKEN", "REST_ROOT", "API_NAMESPACE", "SITE_URL", "TIMEZONE", "LANGUAGES", "DEFAULT_LANGUAGE",
		"LOG_LEVEL", "LOG_FORMAT", "CORS_ALLOWED_ORIGINS", "SHUTDOWN_TIMEOUT", "REINDEX_CRON", "LEASE_TTL",
		"WEBHOOK_ALLOW_PRIVATE", "TRUSTED_PROXIES", "METRICS_ADDR"}
	want = append(want, "DRAIN_DELAY", "REPLICA_ID", "MEILI_MASTER_KEY", "HEADER_TIMEOUT", "MAX_CONNECTIONS_PER_ADDRESS", "WRITE_RATE", "WRITE_BURST", "TEC_COMPAT", "RECURRENCE_HORIZON",
		"MAX_CONNECTIONS", "BODY_MEMORY_MIB", "BODY_MEMORY_PER_CALLER_MIB",
		"MAX_SERIES_OCCURRENCES", "MAX_SERIES_OVERRIDE_TEXT", "MAX_ACCOUNT_DOCUMENTS", "SYNC_BATCH_BYTES", "STORE_TIMEOUT", "MEILI_MAX_REQUEST_BYTES",
		"CURRENCY_SYMBOL", "CURRENCY_CODE", "CURRENCY_POSITION", "BACKUP_SCHEDULE", "BACKUP_KEEP", "BACKUP_DIR",
		"SOURCES_ALLOW_PRIVATE", "SOURCE_FETCH_TIMEOUT", "SOURCE_MAX_BYTES", "SOURCE_MAX_EVENTS", "WEBHOOK_TIMEOUT")
	for _, name := range want {
		if !seen[name] {
			t.Errorf("%s is not registered", name)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d options registered, want %d (update this test when adding one)", len(seen), len(want))
	}
	secrets := map[string]bool{"MONGO_URI": true, "MEILI_API_KEY": true, "ADMIN_TOKEN": true, "MEILI_MASTER_KEY": true}
	for _, o := range Options() {
		if o.Secret != secrets[o.Name] {
			t.Errorf("%s: Secret = %v", o.Name, o.Secret)
		}
	}
	// Options returns a copy.
	Options()[0].Name = "CHANGED"
	if Options()[0].Name == "CHANGED" {
		t.Error("Options exposes the registry itself")
	}
}

func TestRedacted(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{
		"MONGO_URI":     "mongodb://user:hunter2@db:27017",
		"ADMIN_TOKEN":   "hunter2-admin",
		"MEILI_URL":     "http://meili:7700/",
		"LANGUAGES":     "en,nl",
		"LOG_LEVEL":     "warn",
		"LOG_FORMAT":    "json",
		"REST_ROOT":     "wp-json/",
		"MEILI_API_KEY": "",
		"REINDEX_CRON":  "15 2 * * *",
		"LEASE_TTL":     "20",
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redacted()
	if len(r) != len(Options()) {
		t.Errorf("Redacted has %d settings, want %d", len(r), len(Options()))
	}
	tests := []struct{ name, want string }{
		{"MONGO_URI", "***"},
		{"ADMIN_TOKEN", "***"},
		{"MEILI_API_KEY", ""},
		{"MEILI_URL", "http://meili:7700"},
		{"LANGUAGES", "en,nl"},
		{"LOG_LEVEL", "warn"},
		{"LOG_FORMAT", "json"},
		{"REST_ROOT", "/wp-json"},
		{"SHUTDOWN_TIMEOUT", "10s"},
		{"CORS_ALLOWED_ORIGINS", "*"},
		{"TIMEZONE", "UTC"},
		{"REINDEX_CRON", "15 2 * * *"},
		{"LEASE_TTL", "20s"},
	}
	for _, tt := range tests {
		if got := r[tt.name]; got != tt.want {
			t.Errorf("Redacted()[%s] = %q, want %q", tt.name, got, tt.want)
		}
	}
	for k, v := range r {
		if strings.Contains(v, "hunter2") {
			t.Errorf("Redacted()[%s] leaks a secret: %q", k, v)
		}
	}
	// Every formatted value loads back to the same configuration.
	back, err := Load(func(k string) string {
		if k == "MONGO_URI" || k == "ADMIN_TOKEN" {
			return map[string]string{"MONGO_URI": c.MongoURI, "ADMIN_TOKEN": c.AdminToken}[k]
		}
		return r[k]
	})
	if err != nil {
		t.Fatalf("reloading Redacted values: %v", err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("reloaded %+v, want %+v", back, c)
	}
}

func TestIsLanguage(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"LANGUAGES": "en,pt-br"}))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want bool
	}{{"en", true}, {"pt-br", true}, {"EN", false}, {"nl", false}, {"", false}}
	for _, tt := range tests {
		if got := c.IsLanguage(tt.in); got != tt.want {
			t.Errorf("IsLanguage(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       map[string]string
		wantDebug bool
		wantInfo  bool
		json      bool
	}{
		{"default", nil, false, true, false},
		{"debug text", map[string]string{"LOG_LEVEL": "debug"}, true, true, false},
		{"error json", map[string]string{"LOG_LEVEL": "error", "LOG_FORMAT": "json"}, false, false, true},
		{"info json", map[string]string{"LOG_FORMAT": "json"}, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			log := c.NewLogger(&buf)
			log.Debug("d-line")
			log.Info("i-line", "k", "v")
			out := buf.String()
			if got := strings.Contains(out, "d-line"); got != tt.wantDebug {
				t.Errorf("debug logged = %v, want %v (%q)", got, tt.wantDebug, out)
			}
			if got := strings.Contains(out, "i-line"); got != tt.wantInfo {
				t.Errorf("info logged = %v, want %v (%q)", got, tt.wantInfo, out)
			}
			if tt.wantInfo {
				lines := strings.Split(strings.TrimSpace(out), "\n")
				line := lines[len(lines)-1]
				var m map[string]any
				isJSON := json.Unmarshal([]byte(line), &m) == nil
				if isJSON != tt.json {
					t.Errorf("line %q: JSON = %v, want %v", line, isJSON, tt.json)
				}
			}
		})
	}
}

// TestAPIRoots: TEC_COMPAT adds the original plugin's root, unless the
// API is served there already.
func TestAPIRoots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"/calendar/events/v1"}},
		{map[string]string{"TEC_COMPAT": "true"}, []string{"/calendar/events/v1", "/wp-json/tribe/events/v1"}},
		{map[string]string{"TEC_COMPAT": "true", "REST_ROOT": "/wp-json", "API_NAMESPACE": "tribe/events/v1"}, []string{"/wp-json/tribe/events/v1"}},
	} {
		c, err := Load(func(k string) string { return tc.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if got := c.APIRoots(); !slices.Equal(got, tc.want) {
			t.Errorf("%v: APIRoots() = %v, want %v", tc.env, got, tc.want)
		}
	}
	if _, err := Load(func(k string) string { return map[string]string{"TEC_COMPAT": "maybe"}[k] }); err == nil || !strings.Contains(err.Error(), "TEC_COMPAT") {
		t.Errorf("TEC_COMPAT=maybe: %v", err)
	}
}

// TestSiteURLDefault: without SITE_URL, links point at the address the
// service listens on: LISTEN_ADDR's port, on its host when it names one,
// else on localhost; an explicit SITE_URL wins, and --help shows the
// derived default (DefaultIn).
func TestSiteURLDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"default", map[string]string{}, "http://localhost:8080"},
		{"port only", map[string]string{"LISTEN_ADDR": ":9000"}, "http://localhost:9000"},
		{"every IPv4 interface", map[string]string{"LISTEN_ADDR": "0.0.0.0:9000"}, "http://localhost:9000"},
		{"every IPv6 interface", map[string]string{"LISTEN_ADDR": "[::]:9000"}, "http://localhost:9000"},
		{"loopback", map[string]string{"LISTEN_ADDR": "127.0.0.1:9001"}, "http://127.0.0.1:9001"},
		{"IPv6 loopback", map[string]string{"LISTEN_ADDR": "[::1]:9002"}, "http://[::1]:9002"},
		{"host name", map[string]string{"LISTEN_ADDR": "events.internal:8081"}, "http://events.internal:8081"},
		{"empty SITE_URL", map[string]string{"LISTEN_ADDR": ":9000", "SITE_URL": "  "}, "http://localhost:9000"},
		{"explicit SITE_URL wins", map[string]string{"LISTEN_ADDR": ":9000", "SITE_URL": "https://events.example.org/"}, "https://events.example.org"},
	}
	var siteURL Option
	for _, o := range Options() {
		if o.Name == "SITE_URL" {
			siteURL = o
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if c.SiteURL != tt.want {
				t.Errorf("SiteURL = %q, want %q", c.SiteURL, tt.want)
			}
			if _, set := tt.env["SITE_URL"]; !set {
				if got := siteURL.DefaultIn(func(k string) string { return tt.env[k] }); got != tt.want {
					t.Errorf("DefaultIn = %q, want %q", got, tt.want)
				}
			}
		})
	}
	// An invalid LISTEN_ADDR is reported once, not again as SITE_URL.
	_, err := Load(func(k string) string { return map[string]string{"LISTEN_ADDR": "nope"}[k] })
	if err == nil || strings.Contains(err.Error(), "SITE_URL") {
		t.Errorf("invalid LISTEN_ADDR: %v", err)
	}
	if got := siteURL.DefaultIn(func(k string) string { return map[string]string{"LISTEN_ADDR": "nope"}[k] }); got != "http://localhost:8080" {
		t.Errorf("DefaultIn with an invalid LISTEN_ADDR = %q", got)
	}
}
