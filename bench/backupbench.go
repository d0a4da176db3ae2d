package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// backupBench is the -backup flag.
var backupBench bool

func init() {
	flag.BoolVar(&backupBench, "backup", false, "with the embedded store: time backups (eventcal backup's code) while anonymous readers list events, and compare the list's p99 with a quiet run (backupbench.go)")
}

// backupRows measures issue 36's backups while the service serves: the
// anonymous default list quiet, then while backups of the store run back
// to back (each written, checked and renamed as "eventcal backup" does,
// then removed), side by side; and each backup's size and time. The
// target is a list p99 during backups within 2 × the quiet p99.
func (s *stack) backupRows(tw *tabwriter.Writer, st repository.Store, dir, uncachedBase string, conc int, dur time.Duration) error {
	sq, ok := st.(*sqlite.Store)
	if !ok {
		fmt.Fprintln(tw, "backups: the embedded store only (-store sqlite)\t\t\t\t\t")
		return nil
	}
	list := func(*rand.Rand) string { return "/events" }
	quiet := s.load(uncachedBase, list, conc, dur)
	out := filepath.Join(dir, "bench-backups")
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	defer os.RemoveAll(out)
	var size, events int64
	backupOnce := exportPhase{name: "backup", run: func(ctx context.Context, i int) (string, error) {
		path := filepath.Join(out, fmt.Sprintf("b%d.db", i))
		res, err := backup.Write(ctx, sq, path, time.Now())
		if err != nil {
			return "", err
		}
		size, events = res.Size, res.Counts.Records["event"]
		_ = os.Remove(path)
		return "", nil
	}}
	took, _, during, err := backToBack(context.Background(), backupOnce, func() loadResult { return s.load(uncachedBase, list, conc, dur) })
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	var sum, longest time.Duration
	for _, d := range took {
		sum += d
		longest = max(longest, d)
	}
	n := max(len(took), 1)
	fmt.Fprintf(tw, "backup of the store (%d events, %.1f MiB), %d back to back: mean / longest s\t\t%.2f\t%.2f\t\t\t\n",
		events, float64(size)/(1<<20), len(took), (sum / time.Duration(n)).Seconds(), longest.Seconds())
	fmt.Fprintf(tw, "GET /events (default), quiet / during backups\t%.0f / %.0f\t%.2f / %.2f\t%.2f / %.2f\t\t\n",
		quiet.rate, during.rate, quiet.lat.pct(50), during.lat.pct(50), quiet.lat.pct(99), during.lat.pct(99))
	if quiet.errors+during.errors > 0 {
		fmt.Fprintf(tw, "  (errors: %d / %d)\t\t\t\t\t\n", quiet.errors, during.errors)
	}
	return nil
}
