package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// sourceUsage lists the source commands.
const sourceUsage = `Usage: %[1]s source COMMAND [flags]

  source add --url URL [--format auto|ics|tec] [--name N] [--schedule S] [--status S]
             [--category X]... [--tag X]... [--on-removed trash|keep]
                           register a calendar source; prints its ID
  source list              list the sources with their last run
  source run ID            run a source now, to its end; prints what it did
                           (exit status 1 when the run failed)
  source runs ID [--limit 20]
                           show a source's runs, newest first

A source is an iCalendar feed (format ics), a site running The Events
Calendar (format tec, by its REST root), or either (auto, the default).
Schedules: %[2]s.
Imported events get --status (default draft: nothing appears publicly
unreviewed); --category and --tag name existing labels by ID, slug or name.
The commands write through the same rules as the API's /sources routes.
`

// sourceCommands runs the "source" commands.
type sourceCommands struct{ *cli }

// source runs "source SUBCOMMAND": calendar sources on the store (like
// webhook, with or without a running service).
func (c *sourceCommands) source(args []string) int {
	return commandGroup{
		name: "source",
		usage: func(w io.Writer) {
			fmt.Fprintf(w, sourceUsage, programName, feed.ScheduleHelp)
		},
		known: "add, list, run, runs",
		subcommands: map[string]func([]string) int{
			"add": c.sourceAdd, "list": c.sourceList, "run": c.sourceRun, "runs": c.sourceRuns,
		},
	}.run(c.cli, args)
}

// repeated is a flag that may be given several times (--category X
// --category Y); a value with commas counts as several.
type repeated struct {
	values []string
	set    bool
}

func (r *repeated) String() string { return strings.Join(r.values, ",") }

func (r *repeated) Set(v string) error {
	r.set = true
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			r.values = append(r.values, x)
		}
	}
	return nil
}

// sourcesService is the sources service over store, with cfg's
// SOURCES_ALLOW_PRIVATE.
func sourcesService(cfg *config.Config, store repository.Store) *sources.Sources {
	return sources.NewSources(sources.SourcesDeps{Store: store, DefaultLanguage: cfg.DefaultLanguage, AllowPrivate: cfg.SourcesAllowPrivate})
}

func (c *sourceCommands) sourceAdd(args []string) int {
	fs := c.flagSet("source add", "source add --url URL [--format auto|ics|tec] [--name N] [--schedule S] [--status S] [--category X]... [--tag X]... [--on-removed trash|keep]")
	url := fs.String("url", "", "the feed's address, or the REST root of a site running The Events Calendar (http or https; required)")
	format := fs.String("format", "auto", "ics, tec or auto (tell them apart on the first run)")
	name := fs.String("name", "", "the editors' name for the source (default: the URL's host)")
	schedule := fs.String("schedule", "", `when it runs: "" (on demand only), @hourly, @daily, @weekly, "@every 6h" or a five-field cron expression`)
	status := fs.String("status", "draft", "the status imported events get: draft, pending, publish or private")
	onRemoved := fs.String("on-removed", "trash", "what happens to an event that left the feed: trash or keep")
	var cats, tags repeated
	fs.Var(&cats, "category", "a category added to every imported event: ID, slug or name of an existing one (repeatable)")
	fs.Var(&tags, "tag", "a tag added to every imported event: ID, slug or name of an existing one (repeatable)")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	if *url == "" {
		fmt.Fprintln(c.stderr, "source add: --url is required")
		return exitUsage
	}
	in := &sources.SourceInput{URL: url, Format: format, Schedule: schedule, Status: status, OnRemoved: onRemoved}
	if *name != "" {
		in.Name = name
	}
	if cats.set {
		in.Categories = &cats.values
	}
	if tags.set {
		in.Tags = &tags.values
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		src, err := sourcesService(cfg, store).Create(ctx, calendar.Operator, in)
		if err != nil {
			return c.refused("source add", err)
		}
		fmt.Fprintln(c.stdout, src.ID)
		fmt.Fprintf(c.stderr, "Source %d (%s) registered; 'eventcal source run %d' runs it now.\n", src.ID, src.Name, src.ID)
		return exitOK
	})
}

func (c *sourceCommands) sourceList(args []string) int {
	fs := c.flagSet("source list", "source list")
	if code := c.parseFlags(fs, args); code >= 0 {
		return code
	}
	return c.withConfigStore(func(ctx context.Context, cfg *config.Config, store repository.Store) int {
		svc := sourcesService(cfg, store)
		all, err := svc.List(ctx, calendar.Operator)
		if err != nil {
			return c.fail("source list", err)
		}
		printTable(c.stdout, "ID\tNAME\tFORMAT\tSCHEDULE\tSTATUS\tLAST RUN\tURL", func(tw io.Writer) {
			for _, src := range all {
				last := "never"
				if run, err := svc.LastRun(ctx, src); err == nil && run != nil {
					last = run.Status + " " + run.Started.UTC().Format(time.RFC3339)
				}
				format := src.Format
				if src.DetectedFormat != "" && src.DetectedFormat != src.Format {
					format += " (" + src.DetectedFormat + ")"
				}
				schedule := src.Schedule
				if schedule == "" {
					schedule = "manual"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", src.ID, src.Name, format, schedule, src.Status, last, src.URL)
			}
		})
		return exitOK
	})
}

// sourceIDArg parses a command taking one source ID and flags, before
// or after the ID ("source runs 3 --limit 5").
func (c *sourceCommands) sourceIDArg(fs *flag.FlagSet, args []string) (int64, int) {
	rest, code := c.parseArgs(fs, args, len(args))
	if code >= 0 {
		return 0, code
	}
	if len(rest) == 0 {
		fmt.Fprintf(c.stderr, "%s: a source ID is required\n", fs.Name())
		return 0, exitUsage
	}
	if _, code := c.parseArgs(fs, rest[1:], 0); code >= 0 {
		return 0, code
	}
	id, err := strconv.ParseInt(rest[0], 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintf(c.stderr, "%s: %q is not a source ID (a whole number)\n", fs.Name(), rest[0])
		return 0, exitUsage
	}
	return id, -1
}

func (c *sourceCommands) sourceRun(args []string) int {
	fs := c.flagSet("source run", "source run ID")
	id, code := c.sourceIDArg(fs, args)
	if code >= 0 {
		return code
	}
	return c.withConfigStore(func(ctx context.Context, cfg *config.Config, store repository.Store) int {
		if _, err := sourcesService(cfg, store).Get(ctx, calendar.Operator, id); err != nil {
			return c.refusedOn("source run", "source", id, err)
		}
		runner := sources.NewRunner(sources.ServiceRunnerDeps(cfg, store, slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
		defer runner.Close()
		run, err := runner.Run(ctx, id, sources.TriggerCLI)
		if errors.Is(err, sources.ErrRunning) {
			return c.fail("source run", fmt.Errorf("a run of source %d is in progress; wait for it to end ('eventcal source runs %d')", id, id))
		}
		if err != nil {
			return c.refusedOn("source run", "source", id, err)
		}
		c.printRun(run)
		if run.Status != repository.RunSucceeded {
			return exitFailure
		}
		return exitOK
	})
}

// printRun prints what a run did: its status and counts, then its error
// and the events it could not import, one a line.
func (c *sourceCommands) printRun(run *repository.SourceRun) {
	fmt.Fprintf(c.stdout, "run %d: %s; created %d, updated %d, unchanged %d, removed %d, failed %d\n",
		run.ID, run.Status, run.Created, run.Updated, run.Unchanged, run.Removed, run.Failed)
	if run.Error != "" {
		fmt.Fprintf(c.stdout, "error: %s\n", run.Error)
	}
	for _, p := range run.Problems {
		fmt.Fprintf(c.stdout, "not imported: %s: %s\n", p.UID, p.Problem)
	}
}

func (c *sourceCommands) sourceRuns(args []string) int {
	fs := c.flagSet("source runs", "source runs ID [--limit 20]")
	limit := fs.Int("limit", 20, "how many runs to show, newest first (at most "+strconv.Itoa(sources.MaxRunList)+")")
	id, code := c.sourceIDArg(fs, args)
	if code >= 0 {
		return code
	}
	return c.withConfigStore(func(ctx context.Context, cfg *config.Config, store repository.Store) int {
		runs, err := sourcesService(cfg, store).Runs(ctx, calendar.Operator, id, *limit)
		if err != nil {
			return c.refusedOn("source runs", "source", id, err)
		}
		printTable(c.stdout, "RUN\tSTATUS\tTRIGGER\tSTARTED\tFINISHED\tCREATED\tUPDATED\tUNCHANGED\tREMOVED\tFAILED\tERROR", func(tw io.Writer) {
			for _, r := range runs {
				finished := "-"
				if !r.Finished.IsZero() {
					finished = r.Finished.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", r.ID, r.Status, r.Trigger, r.Started.UTC().Format(time.RFC3339),
					finished, r.Created, r.Updated, r.Unchanged, r.Removed, r.Failed, r.Error)
			}
		})
		return exitOK
	})
}
