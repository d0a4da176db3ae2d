package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
)

// The growth mode (-growth) measures how the cost of a write grows with
// the data: it seeds the store to each size of -growth-steps and measures
// creates per second through the HTTP API at each, in one run. Events up
// to each size are seeded directly into the store (the fast path; the
// worker indexes them like any write), the measured creates go through the
// API with -concurrency clients while the worker indexes them.

// seedKit is what generated events link to.
type seedKit struct {
	venues, orgs, cats, tags []int64
	author                   int64
	today                    time.Time
	loc                      *time.Location
	// seriesEvery makes every seriesEvery-th event a weekly series
	// (-series; 0: none).
	seriesEvery int
}

// eventPost returns generated event number i, as the API would store it.
func (k *seedKit) eventPost(i int, rng *rand.Rand) *repository.Record {
	title := fmt.Sprintf("%s %s %d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)
	start := k.today.Add(time.Duration(rng.IntN(730*24)) * time.Hour)
	local := start.In(k.loc)
	now := time.Now().UTC().Truncate(time.Second)
	p := &repository.Record{Kind: repository.KindEvent, Author: k.author, Status: repository.StatusPublish, Date: now, Modified: now,
		Title:   repository.Text{"en": title},
		Content: repository.Text{"en": fmt.Sprintf("An evening of %s and %s.", words[rng.IntN(len(words))], words[rng.IntN(len(words))])},
		Slug:    repository.Text{"en": repository.Slugify(title)},
		Event: &repository.EventFields{
			StartLocal: local.Format(time.DateTime), EndLocal: local.Add(2 * time.Hour).Format(time.DateTime),
			StartUTC: start, EndUTC: start.Add(2 * time.Hour), ShowMap: true, ShowMapLink: true,
			Featured: rng.IntN(5) == 0, Cost: []string{strconv.Itoa(rng.IntN(50)) + "$"},
			Venues: []int64{k.venues[rng.IntN(len(k.venues))]}, Organizers: []int64{k.orgs[rng.IntN(len(k.orgs))]},
			Categories: []int64{k.cats[rng.IntN(len(k.cats))]}, Tags: []int64{k.tags[rng.IntN(len(k.tags))]},
		},
	}
	k.makeSeries(p, i, rng)
	return p
}

// storeSeed writes n generated events straight into the store (numbered
// from first) with two writers, waking the worker as it goes, and returns
// their IDs.
func storeSeed(ctx context.Context, st repository.Store, w *indexing.Worker, k *seedKit, first, n int) ([]int64, error) {
	ids := make([]int64, n)
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(first), uint64(c)))
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				p := k.eventPost(first+i, rng)
				if err := st.CreateRecord(ctx, p); err != nil {
					firstErr.Store(err)
					return
				}
				ids[i] = p.ID
				if i%256 == 0 {
					w.Notify()
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return nil, err
	}
	w.Notify()
	return ids, nil
}

// newSeedKit reads the author the API gives items (from a seeded venue).
func newSeedKit(ctx context.Context, st repository.Store, venues, orgs, cats, tags []int64, today time.Time, loc *time.Location) (*seedKit, error) {
	v, err := st.GetRecord(ctx, venues[0])
	if err != nil {
		return nil, err
	}
	return &seedKit{venues: venues, orgs: orgs, cats: cats, tags: tags, author: v.Author, today: today, loc: loc}, nil
}

// parseSteps reads -growth-steps.
func parseSteps(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-growth-steps: want increasing positive counts, got %q", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// growthRow is the measurement at one size.
type growthRow struct {
	stored    int
	rate      float64
	p50, p99  float64
	indexedIn time.Duration
	seedTook  time.Duration
	// cpuPer is the process CPU time (user+system, clients included) per
	// measured create, until all were indexed: unlike the rates it hardly
	// depends on what else runs on the machine.
	cpuPer time.Duration
}

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runGrowth seeds to each size and measures creates there. creates is the
// number of measured creates per size; the CPU profile (-cpuprofile), when
// asked for, covers the measured creates at the last size and their
// indexing.
func runGrowth(ctx context.Context, s *stack, st repository.Store, w *indexing.Worker, k *seedKit, steps []int, creates, conc int) error {
	var rows []growthRow
	stored := 0
	for si, size := range steps {
		t0 := time.Now()
		if size > stored {
			fmt.Fprintf(os.Stderr, "seeding the store to %d events...\n", size)
			if _, err := storeSeed(ctx, st, w, k, stored, size-stored); err != nil {
				return err
			}
			stored = size
		}
		if err := flushWithin(ctx, w, 20*time.Minute); err != nil {
			return err
		}
		seedTook := time.Since(t0)
		last := si == len(steps)-1
		stop := func() {}
		if last {
			var err error
			if stop, err = startProfile(cpuProfile); err != nil {
				return err
			}
		}
		fmt.Fprintf(os.Stderr, "measuring %d creates at %d events...\n", creates, stored)
		rng := rand.New(rand.NewPCG(uint64(size), 9))
		var mu sync.Mutex
		var lat latencies
		cpu0 := cpuTime()
		start := time.Now()
		if _, err := s.seed(creates, conc, func(i int) map[string]any {
			mu.Lock()
			defer mu.Unlock()
			return apiEvent(k, stored+i, rng)
		}, "events", &lat); err != nil {
			return err
		}
		took := time.Since(start)
		if err := flushWithin(ctx, w, 5*time.Minute); err != nil {
			return err
		}
		indexed := time.Since(start)
		cpuPer := (cpuTime() - cpu0) / time.Duration(creates)
		stop()
		stored += creates
		rows = append(rows, growthRow{stored: size, rate: float64(creates) / took.Seconds(), p50: lat.pct(50), p99: lat.pct(99),
			indexedIn: indexed, seedTook: seedTook, cpuPer: cpuPer})
	}
	fmt.Fprintln(os.Stderr, "measuring sync lag while 100 writes/s arrive...")
	lag, paced, err := s.pacedLag(100, 100, k)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(os.Stdout, "\ngrowth: creates through the API, %d per size, %d clients, GOMAXPROCS=%d\n\n", creates, conc, maxProcs())
	fmt.Fprintln(tw, "stored events\tcreates/s\tof the first\tp50 ms\tp99 ms\tall indexed after s\tCPU ms/create\tseed+index s\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%.0f\t\n", r.stored, r.rate, r.rate/rows[0].rate, r.p50, r.p99,
			r.indexedIn.Seconds(), float64(r.cpuPer.Microseconds())/1000, r.seedTook.Seconds())
	}
	fmt.Fprintf(tw, "sync lag at %d events, %.0f writes/s arriving (ms)\t\t\tp50 %.1f\tp99 %.1f\t\t\t\t\n", stored, paced, lag.pct(50), lag.pct(99))
	return tw.Flush()
}

// apiEvent is the JSON body of generated event i.
func apiEvent(k *seedKit, i int, rng *rand.Rand) map[string]any {
	p := k.eventPost(i, rng)
	e := p.Event
	return map[string]any{"title": p.Title["en"], "description": p.Content["en"],
		"start_date": e.StartLocal, "end_date": e.EndLocal, "venue": e.Venues[0], "organizer": []any{e.Organizers[0]},
		"categories": []any{e.Categories[0]}, "tags": []any{e.Tags[0]}, "featured": e.Featured, "cost": e.Cost[0]}
}

// flushWithin waits until the worker has indexed every pending mark.
func flushWithin(ctx context.Context, w *indexing.Worker, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return w.Flush(ctx)
}

// pacedFor is the shortest time the sync lag is measured while writes
// arrive at a steady rate.
const pacedFor = 30 * time.Second

// pacedLag measures the sync lag of probe writes (at least samples of
// them, one after the other, for at least pacedFor) while a background
// writer creates events through the API at rate per second. It returns the
// lag and the background rate reached.
func (s *stack) pacedLag(rate, samples int, k *seedKit) (*latencies, float64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var written atomic.Int64
	var bgErr atomic.Value
	start := time.Now()
	// Four writers share the ticks, so one slow answer does not lower the rate.
	ticks := make(chan int)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ticks)
		t := time.NewTicker(time.Second / time.Duration(rate))
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case ticks <- i:
				default: // every writer busy: the tick is lost, and the rate shows it
				}
			}
		}
	}()
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(77, uint64(c)))
			for i := range ticks {
				if _, err := s.create("events", apiEvent(k, 1_000_000+i, rng)); err != nil {
					bgErr.Store(err)
					return
				}
				written.Add(1)
			}
		}()
	}
	// At least samples writes, over at least pacedFor of writes arriving.
	lag := &latencies{}
	var err error
	for err == nil && (len(lag.ms) < samples || time.Since(start) < pacedFor) {
		var more *latencies
		if more, err = s.syncLag(min(10, samples), k.today); err == nil {
			lag.ms = append(lag.ms, more.ms...)
		}
	}
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	if err == nil {
		if e, ok := bgErr.Load().(error); ok {
			err = e
		}
	}
	return lag, float64(written.Load()) / elapsed.Seconds(), err
}
