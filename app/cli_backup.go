package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// "backup" and "restore": backups of the embedded store (package
// app/backup). Both refuse MongoDB, whose own tools do this.

// backupCmd runs "backup --out FILE": a checked snapshot of the embedded
// store, taken while a service may serve and write on it; it prints the
// counts the backup holds and its size.
func (c *cli) backupCmd(args []string) int {
	fs := c.flagSet("backup", "backup --out FILE\n\nWrites a consistent, checked snapshot of the embedded store (DATA_DIR) to FILE (mode 0600),\n"+
		"while the service may run. The search index is not copied: a restored store rebuilds it.")
	cfg, out, code := c.outFileArgs(fs, args, "file to write (required; replaced once the new backup is complete and checked)", backup.ErrNotEmbedded)
	if cfg == nil {
		return code
	}
	return c.withStore(func(ctx context.Context, store repository.Store) int {
		st, ok := store.(*sqlite.Store)
		if !ok {
			return c.fail("backup", backup.ErrNotEmbedded)
		}
		start := time.Now()
		res, err := backup.Write(ctx, st, out, start)
		if err != nil {
			return c.fail("backup", err)
		}
		fmt.Fprintf(c.stderr, "Backup written and checked in %s (integrity ok; the counts equal the store's at the snapshot).\n",
			time.Since(start).Round(time.Millisecond))
		fmt.Fprintf(c.stdout, "file     %s\nsize     %d bytes (%s)\n", res.Path, res.Size, humanBytes(res.Size))
		printCounts(c.stdout, res.Counts)
		return exitOK
	})
}

// restoreCmd runs "restore [--force] FILE": FILE becomes the store of
// DATA_DIR, whose search index the service then rebuilds at its start.
func (c *cli) restoreCmd(args []string) int {
	fs := c.flagSet("restore", "restore [--force] FILE\n\nMakes the backup FILE the embedded store of DATA_DIR (the service must be stopped). "+
		"It refuses a DATA_DIR\nthat holds a store unless --force, which moves the old files aside. "+
		"The service rebuilds the search index at its next start.")
	force := fs.Bool("force", false, "move a store already in DATA_DIR aside (into DATA_DIR/before-restore-TIME) instead of refusing")
	file, code := c.oneFileArg(fs, args, "name the backup file to restore")
	if code >= 0 {
		return code
	}
	cfg := c.loadConfig()
	if cfg == nil {
		return exitUsage
	}
	if !cfg.Embedded() {
		return c.misuse("restore", backup.ErrNotEmbedded)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(c.stderr, "Store: %s\n", storeDescription(cfg))
	res, err := backup.Restore(ctx, file, backup.RestoreOptions{DataDir: cfg.DataDir, Force: *force})
	switch {
	case errors.Is(err, backup.ErrDataDirInUse):
		return c.misuse("restore", err)
	case errors.Is(err, sqlite.ErrNotStore), errors.Is(err, sqlite.ErrNewerSchema), errors.Is(err, sqlite.ErrCorrupt):
		return c.fail("restore", fmt.Errorf("refused: %w", err))
	case err != nil:
		return c.fail("restore", err)
	}
	if res.MovedAside != "" {
		fmt.Fprintf(c.stderr, "Moved the old %s aside into %s.\n", strings.Join(res.Moved, ", "), res.MovedAside)
	}
	fmt.Fprintf(c.stderr, "Restored %s (schema version %d) as %s.\n", file, res.Info.Version, embeddedStorePath(cfg))
	printCounts(c.stdout, res.Info.Counts)
	fmt.Fprintln(c.stderr, restoreIndexNote(cfg))
	return exitOK
}

// newBackups returns the service's backup directory (BACKUP_DIR, keeping
// BACKUP_KEEP) over the embedded store; with MongoDB its every call
// answers backup.ErrNotEmbedded.
func newBackups(cfg *config.Config, store repository.Store) *backup.Dir {
	st, _ := store.(*sqlite.Store)
	return &backup.Dir{Path: cfg.BackupDir, Store: st, Keep: cfg.BackupKeep}
}

// restoreIndexNote says how the search index follows a restored store.
func restoreIndexNote(cfg *config.Config) string {
	if cfg.EmbeddedSearch() {
		return "The search index is rebuilt from the store when the service starts (lists fill as it goes)."
	}
	return "MEILI_URL is set: the Meilisearch indexes still hold what they held; once the service runs, rebuild them with '" +
		programName + " reindex'."
}

// printCounts writes a backup's counts: records by kind, labels by
// taxonomy, then every table's rows.
func printCounts(w io.Writer, c *sqlite.Counts) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(section string, m map[string]int64) {
		if len(m) == 0 {
			fmt.Fprintf(tw, "%s\t-\t\n", section)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", section, k, m[k])
		}
	}
	line("records", c.Records)
	line("labels", c.Labels)
	line("table", c.Tables)
	_ = tw.Flush()
}

// humanBytes writes a size in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 2; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMG"[exp])
}
