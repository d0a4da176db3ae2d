package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
)

// The -startup flags.
var (
	startupEvents  int
	startupProfile string
)

// runStartup measures, on a store of n events (seeded straight into the
// store as the main benchmark's bulk, unless dir holds that many already;
// -series makes some of them weekly series), the service's start-up until
// /readyz answers 200 (opening the store and the index: events.db read
// back into the in-memory index) and a full reindex as POST
// /admin/reindex runs it. With profile set, it writes CPU profiles of
// both to profile+".startup" and profile+".reindex". Keep dir (-data) to
// measure again on the same store without seeding it again.
func runStartup(n int, dir, profile string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "calendar-bench-startup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := map[string]string{"ADMIN_TOKEN": "bench-admin"}
	svc, stop, err := startService(ctx, dir, env)
	if err != nil {
		return err
	}
	stored, err := svc.store.CountRecords(ctx, indexing.IndexedRecords(repository.KindEvent))
	if err != nil {
		stop()
		return err
	}
	if stored < n {
		if err := seedStartup(ctx, svc, n-stored); err != nil {
			stop()
			return err
		}
	}
	stop()

	// Start-up: what serve does before /readyz answers 200.
	stopProfile, err := startProfile(profileName(profile, "startup"))
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	t0 := time.Now()
	svc, stop, err = startService(ctx, dir, env)
	if err != nil {
		stopProfile()
		return err
	}
	defer stop()
	if err := waitReady(ctx, "http://"+svc.ln.Addr().String()+"/readyz", 10*time.Minute); err != nil {
		stopProfile()
		return err
	}
	startup, startupCPU := time.Since(t0), processCPU()-cpu0
	stopProfile()
	docs, err := svc.rawEngine.CountEvents(ctx)
	if err != nil {
		return err
	}
	stored, err = svc.store.CountRecords(ctx, indexing.IndexedRecords(repository.KindEvent))
	if err != nil {
		return err
	}
	runtime.GC()
	rssStart := rssMiB()

	stopProfile, err = startProfile(profileName(profile, "reindex"))
	if err != nil {
		return err
	}
	rx := indexing.NewReindexer(svc.store, svc.engine, svc.worker, svc.log, nil, nil)
	cpu0 = processCPU()
	t1 := time.Now()
	if _, err := rx.Start(ctx, "bench"); err != nil {
		stopProfile()
		return err
	}
	job, err := rx.Wait(ctx)
	took, reindexCPU := time.Since(t1), processCPU()-cpu0
	stopProfile()
	if err != nil {
		return err
	}
	runtime.GC()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(os.Stdout, "\nstore: %s; %d events stored, %d event documents; GOMAXPROCS=%d\n\n", svc.storeName, stored, docs, maxProcs())
	fmt.Fprintln(tw, "measurement\twall s\tCPU s\tdocs/s\tRSS MiB after\t")
	fmt.Fprintf(tw, "start-up to ready (/readyz 200)\t%.1f\t%.1f\t%.0f\t%.0f\t\n", startup.Seconds(), startupCPU.Seconds(), float64(docs)/startup.Seconds(), rssStart)
	fmt.Fprintf(tw, "full reindex: %d documents, %s\t%.1f\t%.1f\t%.0f\t%.0f\t\n", job.Done, job.State, took.Seconds(), reindexCPU.Seconds(), float64(job.Done)/took.Seconds(), rssMiB())
	return tw.Flush()
}

// seedStartup seeds the places and terms through the API and n events
// straight into the store, and waits for the index to hold them.
func seedStartup(ctx context.Context, svc *service, n int) error {
	s := &stack{base: svc.apiBase(), token: "bench-admin", client: &http.Client{Timeout: 30 * time.Second}}
	fmt.Fprintf(os.Stderr, "seeding %d events...\n", n)
	venueIDs, err := s.seed(200, 4, func(i int) map[string]any {
		return map[string]any{"venue": fmt.Sprintf("Venue %d %s", i, words[i%len(words)]), "city": cities[i%len(cities)],
			"address": fmt.Sprintf("%d Main Street", i), "geo_lat": 48 + float64(i%100)/50, "geo_lng": 2 + float64(i%70)/35}
	}, "venues", nil)
	if err != nil {
		return err
	}
	orgIDs, err := s.seed(100, 4, func(i int) map[string]any {
		return map[string]any{"organizer": fmt.Sprintf("Organizer %d", i), "email": fmt.Sprintf("org%d@example.test", i)}
	}, "organizers", nil)
	if err != nil {
		return err
	}
	catIDs, err := s.seed(30, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("Category %d", i)} }, "categories", nil)
	if err != nil {
		return err
	}
	tagIDs, err := s.seed(50, 1, func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("tag-%d", i)} }, "tags", nil)
	if err != nil {
		return err
	}
	if err := flushWithin(ctx, svc.worker, 10*time.Minute); err != nil {
		return err
	}
	kit, err := newSeedKit(ctx, svc.store, venueIDs, orgIDs, catIDs, tagIDs, time.Now().UTC().Truncate(24*time.Hour), svc.cfg.Location)
	if err != nil {
		return err
	}
	if seriesCount > 0 {
		kit.seriesEvery = max(1, n/seriesCount)
	}
	if _, err := storeSeed(ctx, svc.store, svc.worker, kit, 0, n); err != nil {
		return err
	}
	return flushWithin(ctx, svc.worker, time.Hour)
}

// profileName is the CPU profile file of one phase ("" without -startup-profile).
func profileName(prefix, phase string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "." + phase
}

// waitReady polls url until it answers 200 or d passes.
func waitReady(ctx context.Context, url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s", url, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// processCPU returns the CPU time (user and system) this process has used
// (Linux; 0 elsewhere).
func processCPU() time.Duration {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): utime and stime are the 12th and 13th of them.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
