package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/portable"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
)

// exportBench is the -export flag.
var exportBench bool

func init() {
	flag.BoolVar(&exportBench, "export", false, "time portable exports and loads (eventcal export and load's code) of the seeded store while anonymous readers list events, and compare the list's p99 with a quiet run (exportbench.go)")
}

// exportPhase is one kind of work the -export rows run back to back
// while the readers list events.
type exportPhase struct {
	// name says what the rows measure.
	name string
	// run does the work once; it returns what to print of it.
	run func(ctx context.Context, i int) (string, error)
}

// exportRows measures issue 36's portable export and load while the
// service serves: the anonymous default list quiet, then while each of
// these runs back to back, side by side with the time each took:
//
//   - an export of the serving store into a file (fsynced, as "eventcal
//     export" writes it; from the embedded store's snapshot);
//   - a load of that file into a new embedded store beside the serving
//     one (the target of a move, on the same machine);
//   - a load of the same file into the serving store itself, where
//     everything is unchanged (a second load: every item read and
//     compared, nothing written).
//
// The target is a list p99 within 2 × the quiet p99 during each.
func (s *stack) exportRows(tw *tabwriter.Writer, cfg *config.Config, st repository.Store, dir, uncachedBase string, conc int, dur time.Duration) error {
	ctx := context.Background()
	out := filepath.Join(dir, "bench-export")
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	defer os.RemoveAll(out)
	quietLog := slog.New(slog.DiscardHandler)
	loadOpts := func(target repository.Store) portable.LoadOptions {
		return portable.LoadOptions{
			Calendar:  calendar.New(calendar.Deps{Config: cfg, Store: target, Logger: quietLog}),
			Labels:    calendar.NewLabels(calendar.LabelsDeps{Store: target}),
			Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Timezone: cfg.TimezoneName,
		}
	}
	file := filepath.Join(out, "export.jsonl")
	var size int64
	var counts portable.Counts
	exportOnce := func(ctx context.Context, i int) (string, error) {
		tmp := fmt.Sprintf("%s.%d", file, i)
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		opts := portable.ExportOptions{Languages: cfg.Languages, DefaultLanguage: cfg.DefaultLanguage, Timezone: cfg.TimezoneName, TempDir: out}
		res, err := portable.Export(ctx, st, bw, opts)
		if err == nil {
			err = bw.Flush()
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
			return "", err
		}
		fi, err := os.Stat(tmp)
		if err != nil {
			return "", err
		}
		size, counts = fi.Size(), res.Counts
		return "", os.Rename(tmp, file)
	}
	loadInto := func(target repository.Store) (*portable.LoadReport, error) {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return portable.Load(ctx, target, f, loadOpts(target))
	}
	phases := []exportPhase{
		{name: "export of the serving store", run: exportOnce},
		{name: "load into a new embedded store", run: func(ctx context.Context, i int) (string, error) {
			d := filepath.Join(out, fmt.Sprintf("load-%d", i))
			if err := os.Mkdir(d, 0o750); err != nil {
				return "", err
			}
			target, err := sqlite.Open(ctx, filepath.Join(d, "calendar.db"))
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(d)
			defer target.Close(context.Background())
			rep, err := loadInto(target)
			if err != nil {
				return "", err
			}
			return tallies(rep, func(t *portable.Tally) int64 { return t.Created }, "created"), nil
		}},
		{name: "load again into the serving store (all unchanged)", run: func(ctx context.Context, i int) (string, error) {
			rep, err := loadInto(st)
			if err != nil {
				return "", err
			}
			return tallies(rep, func(t *portable.Tally) int64 { return t.Unchanged }, "unchanged"), nil
		}},
	}
	// The file the loads read, written once before the measurements.
	if _, err := exportOnce(ctx, -1); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(tw, "export file: %.1f MiB; %s\t\t\t\t\t\t\n", float64(size)/(1<<20), counts)
	list := func(*rand.Rand) string { return "/events" }
	quiet := s.load(uncachedBase, list, conc, dur)
	fmt.Fprintf(tw, "GET /events (default), quiet\t%.0f\t%.2f\t%.2f\t\t\t\n", quiet.rate, quiet.lat.pct(50), quiet.lat.pct(99))
	for _, ph := range phases {
		took, note, during, err := backToBack(ctx, ph, func() loadResult { return s.load(uncachedBase, list, conc, dur) })
		if err != nil {
			return fmt.Errorf("%s: %w", ph.name, err)
		}
		var sum, longest time.Duration
		for _, d := range took {
			sum += d
			longest = max(longest, d)
		}
		n := max(len(took), 1)
		fmt.Fprintf(tw, "%s, %d back to back: mean / longest s\t\t%.2f\t%.2f\t\t\t\n", ph.name, len(took), (sum / time.Duration(n)).Seconds(), longest.Seconds())
		if note != "" {
			fmt.Fprintf(tw, "  (%s)\t\t\t\t\t\t\n", note)
		}
		fmt.Fprintf(tw, "GET /events (default), during: p99 %.1f × quiet\t%.0f\t%.2f\t%.2f\t\t\t\n",
			during.lat.pct(99)/max(quiet.lat.pct(99), 0.001), during.rate, during.lat.pct(50), during.lat.pct(99))
		if during.errors > 0 {
			fmt.Fprintf(tw, "  (errors: %d)\t\t\t\t\t\t\n", during.errors)
		}
	}
	if quiet.errors > 0 {
		fmt.Fprintf(tw, "  (errors while quiet: %d)\t\t\t\t\t\t\n", quiet.errors)
	}
	return nil
}

// backToBack runs ph again and again while measure runs, and returns how
// long each completed run took, what the last one said, and what measure
// returned. A run still going when measure ends finishes before
// backToBack returns (and is counted).
func backToBack(ctx context.Context, ph exportPhase, measure func() loadResult) ([]time.Duration, string, loadResult, error) {
	stop := make(chan struct{})
	var (
		wg   sync.WaitGroup
		took []time.Duration
		note string
		err  error
	)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			n, e := ph.run(ctx, i)
			if e != nil {
				err = e
				return
			}
			took, note = append(took, time.Since(t0)), n
		}
	})
	during := measure()
	close(stop)
	wg.Wait()
	return took, note, during, err
}

// tallies sums one column of a load's report over its types: "N created".
func tallies(rep *portable.LoadReport, col func(*portable.Tally) int64, what string) string {
	var n, all int64
	for _, t := range rep.Types {
		n += col(t)
		all += t.Created + t.Replaced + t.Unchanged
	}
	return fmt.Sprintf("%d of %d items %s", n, all, what)
}
