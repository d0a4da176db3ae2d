// Package wpimport imports a calendar from a WordPress site running The
// Events Calendar (TEC) through its REST API into a repository.Store,
// keeping every record's ID, slug, dates, links and flags (eventcal
// import; docs/wordpress.md).
//
// An import reads everything first (categories, tags, venues, organizers
// and events of every status the credentials may read; hidden events
// through WordPress's own wp/v2 route; password-protected events as the
// lists show them), maps it to store records, checks that no other record
// of the store holds one of the source's IDs (it stops before writing
// anything when one does), then writes: terms (parents before children),
// images, venues, organizers, events, each in ID order. Every record is
// stamped with its repository.Origin (source site, source ID, source
// modification time, a hash of the record as imported), so a second run
// finds each record unchanged and writes nothing, a run after changes at
// the source rewrites exactly the records whose hash changed, and a run
// killed at any point and started again ends with the same store.
//
// Every record goes through the API's own rules before it is stored, as
// if an author (a caller without unfiltered_html) had sent it: titles,
// names, costs and address fields keep no markup (htmlpolicy.Plain, after
// the source's entities are decoded into text); descriptions and excerpts
// keep what wp_kses_post allows an author (htmlpolicy.Rich); e-mail,
// phone and website follow the API's contact rules (input.LineBreaking,
// input.PlainEmail, values.WebURL) and an image URL the API's image rule;
// a record the API would refuse is not stored but listed as failed, with
// the field at fault. A slug WordPress could not have made is stored as
// the API normalises a slug (repository.NormalizeSlug) and listed in the
// summary (Report.Sanitized); IDs above repository.MaxExplicitID are
// refused. A source's error text is shown with the credentials removed,
// control characters escaped and its length bounded.
//
// A run is bounded by its Caps (pages per list, requests, bytes read,
// bytes held, categories and tags created, records read one by one): one
// that reaches a cap stops before writing anything (*CapError). The
// records are mapped as each page arrives; the source's bodies are not
// kept, so what a run holds is the records as they will be stored,
// counted against Caps.HeldBytes (a quarter of the bytes cap by default).
//
// Events, venues, organizers and images are checked by the calendar
// service (calendar.Service.CheckImported) as they are mapped, and written
// through it (calendar.Service.Import, which keeps their IDs, slugs, dates
// and authors); categories and tags are written to the store directly.
// Every write goes through the store like the API's writes do, so each
// records its index mark in the same write: a running service's sync
// worker indexes the records within its usual lag, and with no service
// running the next "serve" indexes them at start.
//
// ReadPublic reads the other way a site can be used, as a calendar
// source (package app/sources/tec): anonymously, only the upcoming
// published events its list shows, mapped by the same rules but claiming
// no ID and writing nothing.
//
// The package has no HTTP serving; the CLI (app, "eventcal import")
// only parses flags and prints progress and the Report.
package wpimport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Defaults of Options.
const (
	// DefaultRate is the default request rate (requests a second): a
	// full page of 50 events every 100 ms keeps a small WordPress host
	// responsive and reads 10,000 events in about 20 seconds.
	DefaultRate = 10
	// DefaultRetries is how often a failed request is retried.
	DefaultRetries = 5
	// DefaultTimeout bounds one request.
	DefaultTimeout = 60 * time.Second
)

// Options configure an import.
type Options struct {
	// Source is the REST namespace root of the site,
	// https://example.org/wp-json/tribe/events/v1.
	Source string
	// User and AppPassword are the WordPress login and an application
	// password, sent as HTTP Basic; empty imports public records only.
	User, AppPassword string
	// Language is the language code the text is stored in (required).
	Language string
	// Rate is the request rate limit, requests a second (0: DefaultRate;
	// negative: no limit).
	Rate float64
	// Retries is how often a request failing with a timeout, 429 or 5xx
	// is retried (0: DefaultRetries; negative: never).
	Retries int
	// RetryBase is the first backoff wait, doubled per retry (0: 1 s).
	RetryBase time.Duration
	// Timeout bounds one request (0: DefaultTimeout).
	Timeout time.Duration
	// SiteZone is the site's time zone, for drafts' dates (nil: read from
	// the site's REST index, else UTC).
	SiteZone *time.Location
	// DryRun reads the source and compares, but writes nothing.
	DryRun bool
	// Prune deletes the records imported earlier from this source that
	// the source no longer has (otherwise they are only reported).
	Prune bool
	// Users imports the source's users (WordPress's wp/v2/users, which
	// needs an administrator's credentials) with their logins, e-mail
	// addresses and roles, without passwords, so that each record keeps
	// its author. Without it, authors map to the users an earlier
	// import with Users brought over (else none).
	Users bool
	// HTTPClient sends the requests (nil: a client with Timeout).
	HTTPClient *http.Client
	// Logger receives retries and phase lines (nil: discarded).
	Logger *slog.Logger
	// Progress is told about each phase (nil: none).
	Progress Progress
	// Caps bound the run (zero fields: the defaults).
	Caps Caps
	// Calendar checks and writes the events, venues, organizers and
	// images (nil: a calendar over the store with the default settings).
	Calendar *calendar.Service
}

// Progress follows an import's phases: fetching each list, then writing
// each kind.
type Progress interface {
	// Start begins a phase; total is -1 when unknown.
	Start(phase string, total int)
	// Total sets the total of the phase once known.
	Total(total int)
	// Add counts n more items done.
	Add(n int)
	// Finish ends the phase.
	Finish()
}

type noProgress struct{}

func (noProgress) Start(string, int) {}
func (noProgress) Total(int)         {}
func (noProgress) Add(int)           {}
func (noProgress) Finish()           {}

// Run imports the source into store and returns what it did. The error
// is set when the import could not run to its end: the source failed
// (after retries), the store failed, ctx ended, the store holds other
// records under source IDs (*CollisionError; nothing was written), or the
// run reached one of its caps (*CapError; nothing was written). Failed
// records do not stop the run: they are in the report.
func Run(ctx context.Context, store repository.Store, opts Options) (*Report, error) {
	root, err := parseSource(opts.Source)
	if err != nil {
		return nil, err
	}
	if opts.Language == "" {
		return nil, errors.New("wpimport: no language")
	}
	caps := opts.Caps.withDefaults()
	c := newClient(root, caps, sending{http: opts.HTTPClient, rate: opts.Rate, retries: opts.Retries,
		retryBase: opts.RetryBase, timeout: opts.Timeout, logger: opts.Logger})
	c.wpRoot, c.user, c.password = wpRootOf(root), opts.User, opts.AppPassword
	c.redact = newRedactor(opts.User, opts.AppPassword)
	progress := opts.Progress
	if progress == nil {
		progress = noProgress{}
	}
	if !strings.HasSuffix(root.Path, "/"+tecNamespace) {
		found, err := c.discoverRoot(ctx, root)
		if err != nil {
			return &Report{Source: root.String(), DryRun: opts.DryRun, Stopped: true}, err
		}
		root, c.root, c.wpRoot = found, found, wpRootOf(found)
	}
	if err := c.checkCredentials(ctx); err != nil {
		return &Report{Source: root.String(), DryRun: opts.DryRun, Stopped: true}, err
	}
	site := root.String()
	if c.authenticated() && root.Scheme == "http" && !isLoopback(root.Hostname()) {
		c.logger.Warn("the credentials go to the source over plain http; use https", "source", site)
	}
	rep := &Report{Source: site, DryRun: opts.DryRun}
	for _, k := range kinds {
		rep.kind(k)
	}
	cal := opts.Calendar
	if cal == nil {
		cal = calendar.New(calendar.Deps{Config: config.Default(), Store: store, Logger: c.logger})
	}
	r := &importRun{c: c, store: store, cal: cal, opts: opts,
		labels: calendar.NewLabels(calendar.LabelsDeps{Store: store}), accounts: calendar.NewAccounts(calendar.AccountsDeps{Store: store}), caps: caps, m: &mapper{site: site, lang: opts.Language, zone: opts.SiteZone}, rep: rep, progress: progress, log: c.logger}
	c.holdFn = r.hold
	err = r.run(ctx)
	rep.Requests, rep.BytesRead, rep.Stopped = c.requests, c.bytes, err != nil
	return rep, err
}

// sameOrigin refuses a redirect to another scheme, host or port: the
// credentials must not follow it (to plain http, or to another site);
// the operator passes the final URL as --from instead.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("the source redirected to %s://%s; pass that address as --from", req.URL.Scheme, req.URL.Host)
	}
	if len(via) >= 10 {
		return errors.New("more than 10 redirects")
	}
	return nil
}

// isLoopback reports whether host is a loopback name or address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
