package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/portable"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
)

// "export" and "load": the portable export of everything the service
// keeps (package app/portable), from and into either store.

// exportCmd runs "export --out FILE": the portable export of the
// configured store, written to a temporary file beside FILE (mode 0600:
// it holds the webhooks' signing secrets), flushed and renamed to FILE.
// It prints the lines of each type, the size and the time taken.
func (c *cli) exportCmd(args []string) int {
	fs := c.flagSet("export", "export --out FILE\n\nWrites everything the store keeps (records in every status, labels, users, token hashes, webhooks\n"+
		"with their signing secrets, sources, the ID sequences) to FILE in the portable format (JSON Lines, mode 0600:\n"+
		"keep it as a secret). From the embedded store it is one point in time while the service runs; from MongoDB,\n"+
		"stop the writers first (or export from a restored mongodump). '"+programName+" load FILE' loads it into either store.")
	cfg, out, code := c.outFileArgs(fs, args, "file to write (required; replaced once the new export is complete)", nil)
	if cfg == nil {
		return code
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		start := time.Now()
		res, size, err := writeExport(ctx, cfg, store, out)
		if err != nil {
			return c.fail("export", err)
		}
		fmt.Fprintf(c.stderr, "Export written in %s from the %s store. It holds the webhooks' signing secrets: keep it as a secret.\n",
			time.Since(start).Round(time.Millisecond), res.Header.Store)
		fmt.Fprintf(c.stdout, "file     %s\nsize     %d bytes (%s)\n", out, size, humanBytes(size))
		tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
		for _, t := range portable.Types[:len(portable.Types)-1] {
			fmt.Fprintf(tw, "%s\t%d\n", t, res.Counts[t])
		}
		_ = tw.Flush()
		return exitOK
	})
}

// writeExport exports store into path through a temporary file beside
// it (mode 0600), flushed to disk before it is renamed; it returns the
// result and the file's size.
func writeExport(ctx context.Context, cfg *config.Config, store repository.Store, path string) (*portable.ExportResult, int64, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, 0, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, 0, err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return nil, 0, err
	}
	opts := portable.ExportOptions{Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Timezone: cfg.TimezoneName}
	if cfg.Embedded() {
		opts.TempDir = cfg.DataDir
	}
	res, err := portable.Export(ctx, store, f, opts)
	if err != nil {
		return nil, 0, err
	}
	if err := f.Sync(); err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if err := f.Close(); err != nil {
		return nil, 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, 0, err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		err = errors.Join(d.Sync(), d.Close())
		if err != nil {
			return nil, 0, err
		}
	}
	return res, st.Size(), nil
}

// loadCmd runs "load FILE": it loads a portable export into the
// configured store, checking the whole file before writing anything, and
// prints what it created, replaced and left unchanged of each type.
func (c *cli) loadCmd(args []string) int {
	fs := c.flagSet("load", "load FILE\n\nLoads a portable export (written by '"+programName+" export') into the configured store (DATA_DIR, or MONGO_URI),\n"+
		"keeping every ID. The whole file is checked first (format version, every line, every link, the languages,\n"+
		"the trailer); a refused file writes nothing. Items already stored as the file has them are left alone, so\n"+
		"loading a file twice changes nothing the second time. The search index follows from the writes' marks.\n"+
		"An embedded store that does not exist yet is created.")
	file, code := c.oneFileArg(fs, args, "name the export file to load")
	if code >= 0 {
		return code
	}
	f, err := os.Open(file)
	if err != nil {
		return c.fail("load", err)
	}
	defer f.Close()
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	created := cfg.Embedded() && !fileExists(embeddedStorePath(cfg))
	return c.withStoreInit(true, "", func(ctx context.Context, store repository.Store) int {
		if created {
			fmt.Fprintf(c.stderr, "load: created a new store at %s\n", embeddedStorePath(cfg))
		}
		start := time.Now()
		log := cfg.NewLogger(c.stderr)
		rep, err := portable.Load(ctx, store, f, portable.LoadOptions{
			Calendar:  calendar.New(calendar.Deps{Config: cfg, Store: store, Logger: log}),
			Labels:    calendar.NewLabels(calendar.LabelsDeps{Store: store}),
			Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Timezone: cfg.TimezoneName,
		})
		if rep != nil {
			for _, n := range rep.Notes {
				fmt.Fprintf(c.stderr, "load: note: %s\n", n)
			}
		}
		if err != nil {
			if rep != nil {
				c.printLoad(rep)
				fmt.Fprintln(c.stderr, "load: stopped part way: what is listed above was written; load the file again to complete it")
			}
			return c.fail("load", err)
		}
		fmt.Fprintf(c.stderr, "Loaded %s (format version %d, exported %s from %s by eventcal %s) in %s.\n", file, rep.Header.Version,
			rep.Header.Created.Format(time.RFC3339), rep.Header.Store, rep.Header.Eventcal, time.Since(start).Round(time.Millisecond))
		c.printLoad(rep)
		fmt.Fprintln(c.stderr, loadIndexNote(cfg))
		return exitOK
	})
}

// printLoad writes a load's tallies, one line per type.
func (c *cli) printLoad(rep *portable.LoadReport) {
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tCREATED\tREPLACED\tUNCHANGED")
	for _, t := range portable.Types[:len(portable.Types)-1] {
		if n := rep.Types[t]; n != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", t, n.Created, n.Replaced, n.Unchanged)
		}
	}
	_ = tw.Flush()
}

// loadIndexNote says how the search index follows a load.
func loadIndexNote(cfg *config.Config) string {
	if cfg.EmbeddedSearch() {
		return "The search index follows from the store: a running service indexes the loaded items now, a stopped one when it starts."
	}
	return "The Meilisearch indexes follow from the store: the service's sync worker indexes the loaded items (check with '" + programName + " status')."
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
