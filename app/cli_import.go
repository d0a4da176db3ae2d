package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/wpimport"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// Environment variables of "import": the credentials may come from them
// (or from the file that TEC_IMPORT_APP_PASSWORD_FILE names) so they stay
// out of the shell history and the process list.
const (
	envImportUser         = "TEC_IMPORT_USER"
	envImportPassword     = "TEC_IMPORT_APP_PASSWORD"
	envImportPasswordFile = "TEC_IMPORT_APP_PASSWORD_FILE"
)

// exitCap is the exit status of an import stopped by one of its caps
// (wpimport.CapError): nothing was written.
const exitCap = 3

// importCommands runs "import".
type importCommands struct{ *cli }

// importTEC runs "import --from URL": it imports a WordPress site running
// The Events Calendar into the store (package app/wpimport) and prints
// the summary on stdout. The exit status is 1 when anything failed, 3
// when the run reached one of its caps (--max-*; nothing written).
func (c *importCommands) importTEC(args []string) int {
	fs := c.flagSet("import", "import --from URL [--user LOGIN] [--app-password PASSWORD] [--dry-run] [--prune] ...\n\n"+
		"Imports events, venues, organizers, categories and tags, with their IDs, from a WordPress site running\n"+
		"The Events Calendar. URL is its REST namespace root: https://example.org/wp-json/tribe/events/v1.\n"+
		"Credentials (a WordPress application password) are best given as "+envImportUser+" and\n"+
		envImportPassword+" (or "+envImportPasswordFile+"); without them only public records are imported.\n"+
		"A second run updates what changed at the source and writes nothing else. Records go through the API's\n"+
		"validation (HTML policy, contact fields, URLs, slugs, IDs); refused ones are listed and fail the run.\n"+
		"Exit status: 0 done, 1 records failed or the source or store failed, 2 bad usage, 3 a --max-* cap\n"+
		"stopped the run (nothing written).")
	from := fs.String("from", "", "REST namespace root of the source site (required)")
	user := fs.String("user", "", "WordPress login (default: $"+envImportUser+")")
	password := fs.String("app-password", "", "WordPress application password (default: $"+envImportPassword+" or the file $"+envImportPasswordFile+"; prefer those: a flag shows in the process list)")
	language := fs.String("language", "", "language the text is stored in (default: DEFAULT_LANGUAGE)")
	rateFlag := fs.Float64("rate", wpimport.DefaultRate, "requests a second to the source at most (0: no limit)")
	retries := fs.Int("retries", wpimport.DefaultRetries, "retries of a request failing with a timeout, 429 or 5xx (with backoff; Retry-After honoured)")
	timeout := fs.Duration("timeout", wpimport.DefaultTimeout, "time limit of one request")
	dryRun := fs.Bool("dry-run", false, "read the source and print what an import would do, without writing")
	prune := fs.Bool("prune", false, "delete records imported earlier that the source no longer has")
	users := fs.Bool("users", false, "import the site's administrators, editors, authors and contributors (logins, e-mail addresses, roles; no passwords) so that records keep their authors; needs an administrator's credentials")
	initStore := fs.Bool("init", false, "create the embedded store (DATA_DIR) when it does not exist yet")
	var caps wpimport.Caps
	fs.IntVar(&caps.Pages, "max-"+wpimport.CapPages, wpimport.DefaultMaxPages, "pages read from one list of the source at most")
	fs.IntVar(&caps.Requests, "max-"+wpimport.CapRequests, wpimport.DefaultMaxRequests, "requests to the source in one run at most (retries included)")
	fs.Int64Var(&caps.Bytes, "max-"+wpimport.CapBytes, wpimport.DefaultMaxBytes, "bytes read from the source in one run at most")
	fs.Int64Var(&caps.HeldBytes, "max-"+wpimport.CapHeldBytes, 0, "bytes of records held in memory until they are written at most (default: a quarter of --max-bytes)")
	fs.IntVar(&caps.NewTerms, "max-"+wpimport.CapNewTerms, wpimport.DefaultMaxNewTerms, "categories and tags one run creates at most")
	fs.IntVar(&caps.Probes, "max-"+wpimport.CapProbes, wpimport.DefaultMaxProbes, "records of one kind read one by one (not in any list) at most")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	passwordFlag := false
	fs.Visit(func(f *flag.Flag) { passwordFlag = passwordFlag || f.Name == "app-password" })
	if passwordFlag {
		fmt.Fprintln(c.stderr, "import: warning: --app-password is visible to every user of this machine in the process list (/proc/PID/cmdline) and stays in the shell history; pass it as "+envImportPassword+" or in the file "+envImportPasswordFile+" names instead")
	}
	if strings.TrimSpace(*from) == "" {
		fmt.Fprintln(c.stderr, "import: --from is required (the source's REST namespace root, such as https://example.org/wp-json/tribe/events/v1)")
		return exitUsage
	}
	if err := wpimport.CheckSource(*from); err != nil {
		fmt.Fprintf(c.stderr, "import: %v\n", err)
		return exitUsage
	}
	if *user == "" {
		*user = strings.TrimSpace(c.getenv(envImportUser))
	}
	if *password == "" {
		p, err := c.importPassword()
		if err != nil {
			fmt.Fprintf(c.stderr, "import: %v\n", err)
			return exitUsage
		}
		*password = p
	}
	if (*user == "") != (*password == "") {
		fmt.Fprintln(c.stderr, "import: give both the login (--user or "+envImportUser+") and the application password (--app-password, "+envImportPassword+" or "+envImportPasswordFile+"), or neither")
		return exitUsage
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	lang := *language
	if lang == "" {
		lang = cfg.DefaultLanguage
	}
	if !contains(cfg.Languages, lang) {
		fmt.Fprintf(c.stderr, "import: --language %q is not one of LANGUAGES (%s)\n", lang, strings.Join(cfg.Languages, ","))
		return exitUsage
	}
	r := *rateFlag
	if r == 0 {
		r = -1 // no limit
	} else if r < 0 {
		fmt.Fprintln(c.stderr, "import: --rate must be 0 (no limit) or more")
		return exitUsage
	}
	n := *retries
	if n == 0 {
		n = -1 // never
	}
	opts := wpimport.Options{
		Source: *from, User: *user, AppPassword: *password, Language: lang,
		Rate: r, Retries: n, Timeout: *timeout, DryRun: *dryRun, Prune: *prune, Users: *users, Caps: caps,
	}
	opts.Progress = c.importProgress()
	// Every line from here on goes through the redactor: no credential
	// reaches the terminal or a log, whatever text carries it.
	c.stdout = wpimport.RedactingWriter(c.stdout, *user, *password)
	c.stderr = wpimport.RedactingWriter(c.stderr, *user, *password)
	opts.Logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	run := func(ctx context.Context, store repository.Store) int {
		opts := opts
		// The records go through the calendar with the service's settings
		// (time zone, recurrence bounds).
		opts.Calendar = calendar.New(calendar.Deps{Config: cfg, Store: store, Logger: opts.Logger})
		rep, err := wpimport.Run(ctx, store, opts)
		if rep != nil {
			rep.Print(c.stdout)
		}
		var ce *wpimport.CollisionError
		var capErr *wpimport.CapError
		switch {
		case errors.As(err, &capErr):
			fmt.Fprintf(c.stderr, "import: stopped: %v\n", err)
			return exitCap
		case errors.As(err, &ce):
			fmt.Fprintf(c.stderr, "import: %v\n", err)
			return exitFailure
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(c.stderr, "import: interrupted; run the same command again to finish (records written so far are kept and not written twice)")
			return exitFailure
		case err != nil:
			fmt.Fprintf(c.stderr, "import: %v\n", err)
			fmt.Fprintln(c.stderr, "import: run the same command again to resume (records written so far are kept and not written twice)")
			return exitFailure
		case rep.Failed():
			fmt.Fprintln(c.stderr, "import: some records failed (listed above); the others were imported")
			return exitFailure
		}
		if !*dryRun && rep.Changes() > 0 {
			fmt.Fprintln(c.stderr, "import: a running service indexes the records within its usual lag; otherwise the next 'serve' indexes them at start")
		}
		return exitOK
	}
	if *dryRun {
		return c.dryRunStore(cfg, run)
	}
	return c.withStoreInit(*initStore, "import --init", run)
}

// dryRunStore runs fn, an import's dry run, with the configured store
// when it exists. An embedded store that does not exist yet is not
// created: fn compares the source with an empty store in a temporary
// directory, removed afterwards, so that nothing is written to DATA_DIR.
func (c *importCommands) dryRunStore(cfg *config.Config, fn func(ctx context.Context, store repository.Store) int) int {
	if !cfg.Embedded() {
		return c.withStoreInit(false, "import --init", fn)
	}
	if _, err := os.Stat(embeddedStorePath(cfg)); !errors.Is(err, os.ErrNotExist) {
		return c.withStoreInit(false, "import --init", fn)
	}
	tmp, err := os.MkdirTemp("", "eventcal-dry-run-")
	if err != nil {
		return c.fail("import", err)
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(c.stderr, "Store: none yet at %s; the dry run compares the source with an empty store (nothing is written)\n", embeddedStorePath(cfg))
	empty := *cfg
	empty.DataDir = tmp
	return c.withConfiguredStore(&empty, fn)
}

// importPassword reads the application password from the environment or
// the file TEC_IMPORT_APP_PASSWORD_FILE names (surrounding white space,
// such as a final newline, dropped).
func (c *importCommands) importPassword() (string, error) {
	if p := strings.TrimSpace(c.getenv(envImportPassword)); p != "" {
		return p, nil
	}
	path := strings.TrimSpace(c.getenv(envImportPasswordFile))
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", envImportPasswordFile, err)
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return "", fmt.Errorf("%s: %s is empty", envImportPasswordFile, path)
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// importProgress shows the import's phases: a progress bar on a terminal,
// plain lines otherwise.
func (c *importCommands) importProgress() wpimport.Progress {
	if fd, ok := c.stderr.(*os.File); ok && isatty.IsTerminal(fd.Fd()) {
		return &barProgress{w: c.stderr}
	}
	return &lineProgress{w: c.stderr}
}

// barProgress draws one progress bar per phase.
type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(phase string, total int) {
	// No rate and no predicted time: an import's phases are bursts (a
	// page of 50 records, then a wait for the next), and progressbar's
	// rate over such bursts read "0 it/hr" and "378078 it/s". The count
	// and the elapsed time say what is true.
	p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(phase), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }))
}

func (p *barProgress) Total(total int) {
	if p.bar != nil {
		p.bar.ChangeMax(total)
	}
}

func (p *barProgress) Add(n int) {
	if p.bar != nil {
		_ = p.bar.Add(n)
	}
}

func (p *barProgress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// lineProgress prints a line when a phase starts, every few seconds while
// it runs, and when it ends.
type lineProgress struct {
	w           io.Writer
	phase       string
	done, total int
	last        time.Time
}

func (p *lineProgress) Start(phase string, total int) {
	p.phase, p.done, p.total, p.last = phase, 0, total, time.Now()
}

func (p *lineProgress) Total(total int) { p.total = total }

func (p *lineProgress) Add(n int) {
	p.done += n
	if time.Since(p.last) >= 5*time.Second {
		p.last = time.Now()
		fmt.Fprintf(p.w, "%s: %s\n", p.phase, p.count())
	}
}

func (p *lineProgress) Finish() {
	fmt.Fprintf(p.w, "%s: %s done\n", p.phase, p.count())
}

func (p *lineProgress) count() string {
	if p.total > 0 {
		return fmt.Sprintf("%d/%d", p.done, p.total)
	}
	return fmt.Sprint(p.done)
}
