// Package app is the eventcal application and its command (main.go at the repository root):
// the event-calendar REST service and its administration commands.
//
//	eventcal [serve]                             run the HTTP service
//	eventcal user add --login NAME --role ROLE   create a user
//	eventcal token create --login NAME           create an API token
//	eventcal token list | token revoke ID        list or revoke API tokens
//	eventcal user list | role | disable | enable manage users
//	eventcal healthcheck                         probe a running service
//	eventcal import --from URL                   import a WordPress site running The Events Calendar
//	eventcal help                                list commands and settings
//
// Every command reads its settings from the environment (see package
// config). The administration commands open only the store, never the
// search index, so they can run next to a serving process on the same
// DATA_DIR (SQLite allows several processes) or MongoDB.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/api"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/mongo"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/search/meili"
	"github.com/calendar/eventcal/sync/indexing"
	"github.com/calendar/eventcal/sync/lease"
	"github.com/calendar/eventcal/sync/schedule"
	"github.com/calendar/eventcal/sync/webhooks"
)

// programName is how the usage text calls the binary.
const programName = "eventcal"

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (duplicate login, store down)
	exitUsage   = 2 // bad command line or invalid configuration
)

// Main runs the command line args (without the program name) with the
// environment getenv and returns the exit status.
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return run(args, getenv, stdout, stderr)
}

// cli carries what every command needs: the environment and the output
// streams. Results meant for scripts go to stdout; everything else to stderr.
// The commands are declared on one type per command group, each holding
// the cli back: accountCommands (cli.go, cli_accounts.go), webhookCommands
// (cli_webhooks.go), sourceCommands (cli_sources.go), importCommands
// (cli_import.go) and opsCommands (cli_ops.go, meilikey.go); cli declares "serve", "help", "version" and
// the steps they share.
type cli struct {
	accountCommands
	webhookCommands
	sourceCommands
	importCommands
	opsCommands

	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// newCLI returns the cli of these environment and streams.
func newCLI(getenv func(string) string, stdout, stderr io.Writer) *cli {
	c := &cli{getenv: getenv, stdout: stdout, stderr: stderr}
	c.accountCommands, c.webhookCommands, c.sourceCommands = accountCommands{c}, webhookCommands{c}, sourceCommands{c}
	c.importCommands, c.opsCommands = importCommands{c}, opsCommands{c}
	return c
}

// run executes the command line args (without the program name) and returns
// the exit status.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c := newCLI(getenv, stdout, stderr)
	if len(args) == 0 {
		return c.serve(nil)
	}
	cmd, ok := c.commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q; run '%s --help' for the commands\n", programName, args[0], programName)
		return exitUsage
	}
	return cmd(args[1:])
}

// help runs "help": the commands and the settings.
func (c *cli) help([]string) int {
	c.usage(c.stdout)
	return exitOK
}

// version runs "version".
func (c *cli) version([]string) int {
	version, revision := api.BuildVersion()
	fmt.Fprintf(c.stdout, "%s %s (revision %s, %s)\n", programName, version, revision, runtime.Version())
	return exitOK
}

// usage writes the commands and every setting of the config registry,
// with the value each one has in this environment where it is set
// (secrets masked).
func (c *cli) usage(w io.Writer) {
	fmt.Fprintf(w, `Usage: %[1]s [command] [flags]

The event-calendar REST service.

Commands:
  serve                               run the HTTP service (the default command)
  user add --login NAME --role ROLE   create a user and print its ID
                                      (roles: %[2]s); --init creates a new embedded store
  user list                           list the users
  user role --login NAME --role ROLE  give a user another role
  user disable|enable --login NAME    refuse (or accept again) every token of a user
  token create --login NAME           create an API token for a user and print it
                                      (shown only once; only its hash is stored;
                                      --name TEXT, --expires 30d)
  token list [--login NAME]           list tokens: ID, user, name, created, last use, expiry
  token revoke ID                     revoke a token at once
  healthcheck [--url URL]             GET /healthz of the local service; exit 0 when healthy
  reindex [--url URL] [--token T]     rebuild the search indexes without downtime: through the
                                      running service's admin API when one answers, else directly
  status [--url URL] [--token T]      print pending index marks, the last batch and document counts
  verify --against URL [--from URL]   compare two running services record by record through their API
                                      (every list, item, language; readers: anonymous and the tokens
                                      in EVENTCAL_TOKEN); exit 0 equal, 1 different, 2 not comparable
  webhook add|list|update|delete|ping|deliveries
                                      manage webhook endpoints ('webhook -h' for the flags)
  source add|list|run|runs            manage and run calendar sources: iCalendar feeds and sites
                                      running The Events Calendar ('source -h' for the flags)
  meili-key --out FILE                create (or find) the service's scoped Meilisearch key with the
                                      master key and write it to FILE (for MEILI_API_KEY_FILE)
  import --from URL                   import a WordPress site running The Events Calendar, with its IDs
                                      ('import -h' for the flags; docs/wordpress.md)
  backup --out FILE                   write a checked snapshot of the embedded store (DATA_DIR) while
                                      the service runs (with MongoDB: use mongodump --oplog)
  restore [--force] FILE              make a backup the store of DATA_DIR (service stopped); the
                                      search index is rebuilt at the next start
  export --out FILE                   write everything the store keeps to FILE in the portable format
                                      (JSON Lines, mode 0600: it holds the webhooks' secrets)
  load FILE                           load a portable export into the configured store (either engine),
                                      keeping every ID; checked whole first, idempotent
  version                             print the version (also --version)
  help                                show this help

Run '%[1]s COMMAND -h' for the flags of a command.

Settings are read from the environment; a secret one may instead be read
from the file that NAME_FILE names (MEILI_API_KEY_FILE=/run/secrets/key):

`, programName, roleList())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  VARIABLE\tDEFAULT\tSET TO\tDESCRIPTION")
	for _, o := range config.Options() {
		def := o.DefaultIn(c.getenv)
		if def == "" {
			def = `""`
		}
		desc := o.Description
		if o.Secret {
			desc += " (secret)"
		}
		cur := "-"
		if v := c.getenv(o.Name); v != "" {
			cur = v
			if o.Secret {
				cur = "***"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", o.Name, def, cur, desc)
	}
	tw.Flush()
}

// roleList returns the role names, least capable first.
func roleList() string {
	names := make([]string, len(repository.Roles))
	for i, r := range repository.Roles {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}

// flagSet returns the flag set of a command: errors go to stderr, and its
// usage (-h, or after a usage error) shows the synopsis, every flag with
// its description and default, and where the settings come from. Every
// command builds its flags here and parses them with parseFlags or
// parseArgs, so that all of them answer -h alike.
func (c *cli) flagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s %s\n", programName, synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
		fmt.Fprintf(w, "\nSettings (DATA_DIR, MONGO_URI, LISTEN_ADDR, ...) come from the environment; '%s help' lists them.\n", programName)
	}
	return fs
}

// parseFlags parses args into fs and refuses positional arguments. It
// returns -1 when the command should go on, else the exit status.
func (c *cli) parseFlags(fs *flag.FlagSet, args []string) int {
	if _, code := c.parseArgs(fs, args, 0); code >= 0 {
		return code
	}
	return -1
}

// parseArgs parses args into fs and returns the positional arguments,
// refusing more than maxArgs of them. The status is -1 when the command
// should go on, else the exit status: help asked for (-h anywhere before
// "--") goes to standard output with status 0, errors to standard error
// with status 2.
func (c *cli) parseArgs(fs *flag.FlagSet, args []string, maxArgs int) ([]string, int) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			fs.SetOutput(c.stdout)
			fs.Usage()
			return nil, exitOK
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitUsage
	}
	if fs.NArg() > maxArgs {
		fmt.Fprintf(c.stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(maxArgs))
		fs.Usage()
		return nil, exitUsage
	}
	return fs.Args(), -1
}

// outFileArgs declares on fs the --out flag of a command that writes
// one file (usage describes it), parses args and loads the
// configuration. It returns the configuration and the file, or a nil
// configuration and the exit status where the command stops: a usage
// error or help, no --out, an invalid configuration, MongoDB configured
// for a command that answers it notEmbedded (nil: either store will
// do), or --out inside the embedded store itself.
func (c *cli) outFileArgs(fs *flag.FlagSet, args []string, usage string, notEmbedded error) (*config.Config, string, int) {
	name := fs.Name()
	out := fs.String("out", "", usage)
	if code := c.parseFlags(fs, args); code >= 0 {
		return nil, "", code
	}
	if *out == "" {
		return nil, "", c.misuse(name, errors.New("--out is required"))
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return nil, "", exitUsage
	}
	if !cfg.Embedded() {
		if notEmbedded != nil {
			return nil, "", c.misuse(name, notEmbedded)
		}
		return cfg, *out, -1
	}
	if abs, err := filepath.Abs(*out); err == nil && strings.HasPrefix(abs, embeddedStorePath(cfg)) {
		return nil, "", c.misuse(name, fmt.Errorf("--out %s is the store itself (or one of its journals): write the %s elsewhere", *out, name))
	}
	return cfg, *out, -1
}

// oneFileArg parses the flags of a command that reads the one file its
// positional argument names and returns that name; the status is -1
// when the command should go on, else the exit status (missing says
// what to name when there is no argument).
func (c *cli) oneFileArg(fs *flag.FlagSet, args []string, missing string) (string, int) {
	rest, code := c.parseArgs(fs, args, 1)
	if code >= 0 {
		return "", code
	}
	if len(rest) != 1 {
		return "", c.misuse(fs.Name(), errors.New(missing))
	}
	return rest[0], -1
}

// loadConfig reads the configuration; on error it prints every invalid
// variable and returns nil.
func (c *cli) loadConfig() *config.Config {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: invalid configuration:\n", programName)
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(c.stderr, "  %s\n", line)
		}
		return nil
	}
	return cfg
}

// openStore opens the configured store: the embedded SQLite file
// DATA_DIR/calendar.db when MONGO_URI is empty (creating DATA_DIR), else
// MongoDB. The caller closes it.
func openStore(ctx context.Context, cfg *config.Config) (repository.Store, error) {
	if cfg.Embedded() {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("create DATA_DIR: %w", err)
		}
		s, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "calendar.db"))
		if err != nil {
			return nil, fmt.Errorf("open SQLite store: %w", err)
		}
		return s, nil
	}
	s, err := mongo.Open(ctx, cfg.MongoURI, cfg.MongoDatabase, mongo.WithTimeout(cfg.StoreTimeout), mongo.WithReplica(replicaID(cfg)))
	if err != nil {
		return nil, fmt.Errorf("MONGO_URI: %w", err)
	}
	return s, nil
}

// logIndexBuild logs when the MongoDB store's background index build (see
// mongo.Open) has ended: "store indexes built", or a warning with the
// error (queries still work, some by scanning; the next start retries).
func logIndexBuild(ctx context.Context, s *mongo.Store, logger *slog.Logger) {
	start := time.Now()
	err := s.WaitIndexes(ctx)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		logger.Warn("store indexes not built; queries that need them scan until the next start builds them", "err", err)
	default:
		logger.Info("store indexes built", "took", time.Since(start).Round(time.Millisecond))
	}
}

// storeEngine names the store engine in use, for logs.
func storeEngine(cfg *config.Config) string {
	if cfg.Embedded() {
		return "sqlite"
	}
	return "mongodb"
}

// searchEngine names the search engine in use, for logs.
func searchEngine(cfg *config.Config) string {
	if cfg.EmbeddedSearch() {
		return "bleve"
	}
	return "meilisearch"
}

// closeStore closes s, giving it a bounded time.
func closeStore(s repository.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Close(ctx)
}

// serve runs the HTTP service until SIGINT or SIGTERM.
func (c *cli) serve(args []string) int {
	fs := c.flagSet("serve", "serve\n\nRuns the HTTP service until SIGINT or SIGTERM (the default command).")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	logger := cfg.NewLogger(c.stderr)
	ctx, stop := shutdownSignals()
	defer stop()
	if err := serveUntilDone(ctx, cfg, logger, nil); err != nil {
		logger.Error("service stopped", "err", err)
		return exitFailure
	}
	return exitOK
}

// openSearch opens the configured search engine: Bleve under DATA_DIR, or
// Meilisearch when MEILI_URL is set. Bleve holds a file lock, so only the
// serving process opens it (the admin commands open the store alone).
// logger receives the Meilisearch engine's notices, such as the settings
// it repairs at start-up (nil: slog's default logger).
func openSearch(ctx context.Context, cfg *config.Config, logger *slog.Logger) (search.Engine, error) {
	if cfg.EmbeddedSearch() {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, err
		}
		e, err := embedded.Open(filepath.Join(cfg.DataDir, "index"))
		if errors.Is(err, embedded.ErrLocked) {
			return nil, lockedDataDir(cfg, err)
		}
		if err != nil {
			return nil, fmt.Errorf("open search index: %w", err)
		}
		// Bleve belongs to this process alone (file lock): every write goes
		// through the cache's invalidation, so the TTL only caps memory age.
		return search.NewCached(e, embeddedCacheTTL), nil
	}
	apiKey := cfg.MeiliAPIKey
	if apiKey == "" && cfg.MeiliMasterKey != "" {
		// The master key only creates (or finds) the service's scoped key.
		key, err := meili.EnsureServiceKey(ctx, cfg.MeiliURL, cfg.MeiliMasterKey, "")
		if err != nil {
			return nil, fmt.Errorf("open meilisearch: %w", err)
		}
		apiKey = key
	}
	e, err := meili.Open(ctx, cfg.MeiliURL, apiKey, meili.Options{Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Logger: logger, MaxRequestBytes: cfg.MeiliMaxRequestBytes})
	if err != nil {
		return nil, fmt.Errorf("open meilisearch: %w", err)
	}
	return search.NewCached(e, searchCacheTTL), nil
}

// lockedDataDir explains a search index locked by another holder: the
// cause, the DATA_DIR and what to do.
func lockedDataDir(cfg *config.Config, err error) error {
	return fmt.Errorf("open search index: %w: is another process using DATA_DIR=%s? "+
		"Only one process may open a DATA_DIR: stop the other one (a running service, "+
		"or an earlier 'go run .' still serving) or set another DATA_DIR; "+
		"reindex and status can ask the running service instead (--url)", err, cfg.DataDir)
}

// searchCacheTTL bounds how long a list result is reused with Meilisearch.
// Writes through this process invalidate it at once; the TTL only matters
// for replicas whose index is written by another process (see
// search.Cached), where it adds at most this much to the sync lag.
const searchCacheTTL = 250 * time.Millisecond

// embeddedCacheTTL is the result cache TTL with the embedded Bleve index,
// which only this process writes.
const embeddedCacheTTL = time.Minute

// responseCacheTTL bounds how long a rendered response is reused: as long
// as the result cache's with the embedded stack, which only this process
// writes; searchCacheTTL when MongoDB or Meilisearch may be written by
// another replica.
func responseCacheTTL(cfg *config.Config) time.Duration {
	if cfg.Embedded() && cfg.EmbeddedSearch() {
		return embeddedCacheTTL
	}
	return searchCacheTTL
}

// newWorker builds the sync worker that moves index marks into the engine.
func newWorker(cfg *config.Config, store repository.Store, engine search.Engine, logger *slog.Logger) *indexing.Worker {
	return &indexing.Worker{Store: store, Engine: engine, Log: logger, BatchBytes: cfg.SyncBatchBytes,
		Docs: &indexing.DocBuilder{Store: store, Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Location: cfg.Location,
			Horizon: cfg.RecurrenceHorizon, MaxOccurrences: cfg.MaxSeriesOccurrences}}
}

// newWebhooks builds the webhook deliverer; the worker hands it every
// batch of marks, and the lease holder runs its delivery loop.
func newWebhooks(cfg *config.Config, store repository.Store, logger *slog.Logger) *webhooks.Dispatcher {
	return &webhooks.Dispatcher{Store: store, Log: logger, AllowPrivate: cfg.WebhookAllowPrivate, Timeout: cfg.WebhookTimeout,
		Render: api.NewItemRenderer(api.Options{Config: cfg, Store: store})}
}

// runIndexer reconciles the engine's indexes (retrying with backoff while
// the engine is unreachable), then, whenever this process holds the lease,
// fills an empty index from the store, rebuilds outdated indexes
// (migrateOutdated) and runs the sync worker; while another process holds
// the lease the worker pauses. It returns when ctx ends. Lists answer 503
// until the engine answers.
func runIndexer(ctx context.Context, engine search.Engine, w *indexing.Worker, reindexer *indexing.Reindexer, ls lease.Lease, logger *slog.Logger) {
	if !retryUntilDone(ctx, logger, engine.Init) {
		return
	}
	lease.RunWhileLeader(ctx, ls, func(ctx context.Context) {
		populate := func(ctx context.Context) error {
			_, err := w.Populate(ctx)
			return err
		}
		if retryUntilDone(ctx, logger, populate) {
			migrateOutdated(ctx, engine, reindexer, logger)
			w.Run(ctx)
		}
	})
}

// retryUntilDone calls fn until it succeeds, with backoff (200 ms doubling
// up to 30 s) between failures; false means ctx ended first.
func retryUntilDone(ctx context.Context, logger *slog.Logger, fn func(context.Context) error) bool {
	backoff := 200 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		logger.Warn("search engine not ready", "err", err, "retry_in", backoff.String())
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// leaseName names the lease of the service processes sharing a store.
const leaseName = "leader"

// newLease returns the lease deciding which process runs the sync worker
// and the scheduled jobs: a lease document in MongoDB, which several
// processes may share, or always held with SQLite, which one process
// serves (the Bleve index in DATA_DIR is locked by it).
func newLease(cfg *config.Config, store repository.Store, logger *slog.Logger) lease.Lease {
	if s, ok := store.(*mongo.Store); ok {
		return s.Lease(leaseName, replicaID(cfg), cfg.LeaseTTL, logger)
	}
	return lease.Held()
}

// replicaID is this replica's stable identity in the lease: REPLICA_ID,
// else the host name (a container keeps its host name across restarts),
// so that a replica restarted after a crash takes its lease back at once.
// The lease adds a random instance ID per process to detect two live
// processes with one identity (mongo.ErrDuplicateReplica).
func replicaID(cfg *config.Config) string {
	if cfg.ReplicaID != "" {
		return cfg.ReplicaID
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return host
}

// refuseDuplicates returns a context that ends, with cause
// mongo.ErrDuplicateReplica, when lease finds another live process with
// this replica's identity; stop releases its resources.
func refuseDuplicates(ctx context.Context, ls lease.Lease) (_ context.Context, stop func()) {
	ml, ok := ls.(*mongo.Lease)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-ml.Conflict():
			cancel(mongo.ErrDuplicateReplica)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// serveUntilDone opens the store, the search engine and the lease, builds
// the app and serves on cfg.ListenAddr until ctx is done (see serve). It
// then releases the lease, so that another process takes over at once,
// and closes the engine and the store. ready, when not nil, is called with
// the bound address once the listener accepts connections (tests listen on
// port 0).
func serveUntilDone(ctx context.Context, cfg *config.Config, logger *slog.Logger, ready func(net.Addr)) (err error) {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeStore(store); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}()
	if ms, ok := store.(*mongo.Store); ok {
		go logIndexBuild(ctx, ms, logger)
	}

	engine, err := openSearch(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := engine.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close search: %w", cerr))
		}
	}()
	if !cfg.Embedded() && cfg.EmbeddedSearch() {
		logger.Warn("MongoDB with the embedded Bleve index: only the process holding the lease updates its own index; run one process, or share Meilisearch (MEILI_URL) between several")
	}
	ls := newLease(cfg, store, logger)
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if rerr := ls.Release(rctx); rerr != nil {
			logger.Warn("release the lease", "err", rerr)
		}
	}()
	ctx, stopWatch := refuseDuplicates(ctx, ls)
	defer stopWatch()
	// The upgrade protocol of the MongoDB store (repository/mongo,
	// migrate.go): this process's replica record, the layout it writes
	// and, as leader, the migration and the sweep for stragglers.
	if ms, ok := store.(*mongo.Store); ok {
		if ml, ok := ls.(*mongo.Lease); ok {
			lctx, stopLayout := context.WithCancel(ctx)
			layoutDone := make(chan struct{})
			go func() {
				defer close(layoutDone)
				ms.KeepLayout(lctx, ml, logger)
			}()
			defer func() { stopLayout(); <-layoutDone }()
		}
	}
	if err := serve(ctx, cfg, logger, store, engine, ls, ready); err != nil {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, mongo.ErrDuplicateReplica) {
		return cause
	}
	return nil
}

// serve runs the service on an open store and engine: the lease keeper,
// the sync worker and the schedule (both only while the lease is held),
// and the app on cfg.ListenAddr until ctx is done. It then drains (see
// drain), stops accepting connections, lets in-flight requests finish
// within cfg.ShutdownTimeout,
// stops the schedule, ends the source runs in progress, aborts a running
// rebuild and stops the worker. It
// neither releases the lease nor closes the store or engine: a test
// cancelling ctx thus simulates a crashed process.
func serve(ctx context.Context, cfg *config.Config, logger *slog.Logger, store repository.Store, engine search.Engine, ls lease.Lease, ready func(net.Addr)) error {
	worker := newWorker(cfg, store, engine, logger)
	hooks := newWebhooks(cfg, store, logger)
	hooks.Lease = ls
	worker.Changes = hooks
	reindexer := indexing.NewReindexer(store, engine, worker, logger, nil, ls)
	backups := newBackups(cfg, store)
	// The calendar sources' runner: the API starts runs with it (POST
	// /sources/{id}/run) and the schedule runs the scheduled sources.
	runner := sources.NewRunner(sources.ServiceRunnerDeps(cfg, store, logger))
	sched, err := schedule.New(schedule.Options{
		ReindexCron: cfg.ReindexCron, Location: cfg.Location, Reindexer: reindexer,
		Store: store, Notifier: worker, Lease: ls, Log: logger, Docs: worker.Docs,
		BackupCron: cfg.BackupSchedule, Backups: backups,
		Sources: store, SourceRunner: runner, SourceBusy: sources.ErrRunning,
	})
	if err != nil {
		runner.Close()
		return err
	}
	backgroundCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	leaseDone, workerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(leaseDone)
		ls.Keep(backgroundCtx)
	}()
	leaseLogDone := make(chan struct{})
	go func() {
		defer close(leaseLogDone)
		lease.LogChanges(backgroundCtx, ls, logger, "lease", leaseName)
	}()
	go func() {
		defer close(workerDone)
		runIndexer(backgroundCtx, engine, worker, reindexer, ls, logger)
	}()
	webhooksDone := make(chan struct{})
	go func() {
		defer close(webhooksDone)
		lease.RunWhileLeader(backgroundCtx, ls, hooks.Run)
	}()
	sched.Start()
	defer func() {
		if err := sched.Shutdown(); err != nil {
			logger.Warn("stop the schedule", "err", err)
		}
		// Runs the API started end as interrupted (failed) after the
		// event they are writing.
		runner.Close()
		reindexer.Close()
		stopBackground()
		<-workerDone
		<-webhooksDone
		<-leaseDone
		<-leaseLogDone
	}()

	draining := new(atomic.Bool)
	metrics := api.NewMetrics(logger, worker)
	if err := metrics.Register(runner.Metrics(), sched.Metrics()); err != nil {
		return fmt.Errorf("register the sources' metrics: %w", err)
	}
	identity := api.NewIdentity()
	fiberApp, err := api.New(api.Options{Config: cfg, Store: store, Search: engine, Indexer: worker, Reindexer: reindexer, Webhooks: hooks, Logger: logger,
		ResponseCacheTTL: responseCacheTTL(cfg), Draining: draining.Load, Metrics: metrics, Identity: identity, Backups: backups,
		SourceRunner: runner})
	if err != nil {
		return fmt.Errorf("build app: %w", err)
	}
	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, metrics, logger)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return err
	}
	settings := make([]any, 0, len(config.Options()))
	redacted := cfg.Redacted()
	for _, o := range config.Options() {
		settings = append(settings, slog.String(o.Name, redacted[o.Name]))
	}
	// The instance identifier is the one /healthz reports: whoever polls
	// the port can tell this process from another one already there.
	logger.Info("starting",
		"addr", ln.Addr().String(),
		"instance", identity.Instance,
		"version", identity.Version,
		"revision", identity.Revision,
		"pid", identity.PID,
		"store", storeEngine(cfg),
		"search", searchEngine(cfg),
		"api_root", cfg.APIRoot(),
		slog.Group("config", settings...))

	warnNoAdmin(ctx, cfg, store, logger, time.Now())

	served := make(chan error, 1)
	// The per-address share (MAX_CONNECTIONS_PER_ADDRESS) and the
	// process-wide bound (MAX_CONNECTIONS) are applied where
	// connections are accepted; ln itself is what shutdown closes.
	conns := countConns(ln)
	go func() { served <- fiberApp.Listener(metrics.Listener(conns, cfg)) }()
	if ready != nil {
		ready(ln.Addr())
	}

	select {
	case err := <-served:
		// The listener failed on its own; nothing is left to drain.
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if err := drain(ctx, cfg, logger, draining, served, conns); err != nil {
		return err
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	// ShutdownWithTimeout closes the listener, then waits for in-flight
	// requests to end, up to the timeout.
	shutdownErr := fiberApp.ShutdownWithTimeout(cfg.ShutdownTimeout)
	// Shutdown closes the listeners the server has registered; one it has
	// not registered yet (a shutdown right after the start) is closed here,
	// or Listener would never return.
	_ = ln.Close()
	if serveErr := <-served; serveErr != nil && !errors.Is(serveErr, net.ErrClosed) {
		shutdownErr = errors.Join(shutdownErr, serveErr)
	}
	if shutdownErr != nil {
		return fmt.Errorf("shutdown: %w", shutdownErr)
	}
	logger.Info("stopped")
	return nil
}

// warnNoAdmin logs a warning when nobody can administer the service:
// ADMIN_TOKEN is unset and no enabled admin user holds a token that has
// not expired at now. It says how to create one. A store error is logged
// and otherwise ignored: the service starts all the same.
func warnNoAdmin(ctx context.Context, cfg *config.Config, store repository.Store, logger *slog.Logger, now time.Time) {
	if cfg.AdminToken != "" {
		return
	}
	ok, err := adminCanLogIn(ctx, store, now)
	if err != nil {
		logger.Warn("could not check that an admin can log in", "err", err)
		return
	}
	if !ok {
		logger.Warn("no admin can log in: no enabled admin user has a valid token and ADMIN_TOKEN is unset; " +
			"create one with '" + programName + " user add --login alice --role admin' and '" + programName + " token create --login alice' " +
			"(with the service's DATA_DIR or MONGO_URI), or set ADMIN_TOKEN")
	}
}

// adminCanLogIn reports whether an enabled admin user holds a token that
// has not expired at now.
func adminCanLogIn(ctx context.Context, store repository.Store, now time.Time) (bool, error) {
	users, err := store.ListUsers(ctx)
	if err != nil {
		return false, err
	}
	for _, u := range users {
		if u.Role != repository.RoleAdmin || u.Disabled {
			continue
		}
		tokens, err := store.ListTokens(ctx, u.ID)
		if err != nil {
			return false, err
		}
		for _, t := range tokens {
			if t.Expires.IsZero() || t.Expires.After(now) {
				return true, nil
			}
		}
	}
	return false, nil
}

// serveMetrics serves /metrics, without authentication, on its own
// listener (METRICS_ADDR: a private network only). The returned function
// stops it.
func serveMetrics(addr string, metrics *api.Metrics, logger *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener: %w", err)
	}
	f := metrics.App()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.Listener(ln); err != nil {
			logger.Warn("metrics listener stopped", "err", err)
		}
	}()
	logger.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		if err := f.ShutdownWithTimeout(5 * time.Second); err != nil {
			logger.Warn("stop the metrics listener", "err", err)
		}
		<-done
	}, nil
}
