package sources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/datetext"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/webhooks"
)

// idRenderer renders every item as {"id": ID}.
type idRenderer struct{}

func (idRenderer) RenderRecord(_ context.Context, p *repository.Record) (json.RawMessage, error) {
	return json.Marshal(map[string]int64{"id": p.ID})
}

func (idRenderer) RenderLabel(_ context.Context, t *repository.Label) (json.RawMessage, error) {
	return json.Marshal(map[string]int64{"id": t.ID})
}

// TestRunWebhooks: what a run creates, updates and trashes reaches the
// webhooks, through the index marks of its writes (the dispatcher's
// Observe, as the sync worker calls it); an unchanged run sends nothing.
func TestRunWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	ctx := t.Context()
	hook := &repository.Webhook{URL: "https://hooks.example/in", Events: []string{"*"}, Secret: webhooks.NewSecret(), Active: true}
	if err := e.store.CreateWebhook(ctx, hook); err != nil {
		t.Fatal(err)
	}
	d := &webhooks.Dispatcher{Store: e.store, Log: slog.New(slog.DiscardHandler), Render: idRenderer{}, Now: func() time.Time { return now }}
	seen := map[string]bool{}
	// observe hands the pending marks to the dispatcher and returns the
	// new messages about events, as "type id".
	observe := func() []string {
		t.Helper()
		marks, err := e.store.PendingMarks(ctx, 10000)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Observe(ctx, marks); err != nil {
			t.Fatal(err)
		}
		if err := e.store.ClearMarks(ctx, marks); err != nil {
			t.Fatal(err)
		}
		ds, err := e.store.ListDeliveries(ctx, hook.ID, 10000)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, dl := range ds {
			if seen[dl.ID] || !strings.HasPrefix(dl.Type, "event.") {
				continue
			}
			seen[dl.ID] = true
			out = append(out, dl.Type+" "+strings.TrimPrefix(dl.Item, string(repository.MarkPost)+":"))
		}
		slices.Sort(out)
		return out
	}
	a, b := single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC))
	e.feed(a, b)
	e.run()
	idA, idB := e.get("a").ID, e.get("b").ID
	want := func(what string, got []string, lines ...string) {
		t.Helper()
		slices.Sort(lines)
		if !slices.Equal(got, lines) {
			t.Errorf("%s: messages %q, want %q", what, got, lines)
		}
	}
	want("created", observe(), fmt.Sprint("event.created ", idA), fmt.Sprint("event.created ", idB))
	e.run()
	want("unchanged", observe())
	a.Title = "A, changed"
	e.feed(a)
	e.run()
	want("updated and removed", observe(), fmt.Sprint("event.updated ", idA), fmt.Sprint("event.trashed ", idB))
}

// TestRunMetrics: the runner counts its runs by outcome and their
// events by result.
func TestRunMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e.runner.Metrics()); err != nil {
		t.Fatal(err)
	}
	bad := single("bad", "Hourly", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC))
	bad.Rules = []string{"FREQ=HOURLY"}
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC)), bad)
	e.run()
	e.feed(single("a", "A2", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	e.run()
	e.reader.fail(errFeed)
	e.run()
	const metadata = `
# HELP eventcal_source_events_total Events of calendar source runs by result (created, updated, unchanged, removed, failed).
# TYPE eventcal_source_events_total counter
# HELP eventcal_source_runs_total Calendar source runs by outcome (succeeded, failed).
# TYPE eventcal_source_runs_total counter
`
	wantText := metadata + `eventcal_source_events_total{result="created"} 2
eventcal_source_events_total{result="failed"} 1
eventcal_source_events_total{result="removed"} 1
eventcal_source_events_total{result="unchanged"} 0
eventcal_source_events_total{result="updated"} 1
eventcal_source_runs_total{outcome="failed"} 1
eventcal_source_runs_total{outcome="succeeded"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantText), "eventcal_source_events_total", "eventcal_source_runs_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(e.runner.Metrics(), "eventcal_source_run_seconds"); n != 1 {
		t.Errorf("eventcal_source_run_seconds: %d series, want 1", n)
	}
}

// TestCloseInterruptsPacedRun: a run paced to one write a long while
// (WritesPerSecond) is waiting for its next write when the runner
// closes; it ends as failed, interrupted, with what it wrote counted,
// and the claim is released.
func TestCloseInterruptsPacedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	slow := sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: e.reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: 0.001})
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)), single("b", "B", time.Date(2026, 7, 2, 10, 0, 0, 0, time.UTC)))
	run, err := slow.Start(t.Context(), e.src.ID, sources.TriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first event", func() bool { return len(e.imported()) == 1 })
	slow.Close()
	runs, err := e.store.ListSourceRuns(t.Context(), e.src.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].ID != run.ID {
		t.Fatalf("runs %v, %v", runs, err)
	}
	wantRun(t, "closed", runs[0], repository.RunFailed, counts{created: 1})
	if !strings.HasPrefix(runs[0].Error, "interrupted") {
		t.Errorf("error %q, want interrupted", runs[0].Error)
	}
	if s, _ := e.store.GetSource(t.Context(), e.src.ID); s.RunClaim != "" {
		t.Errorf("claim %q left after Close", s.RunClaim)
	}
	// The next run goes on from there.
	wantRun(t, "next", e.run(), repository.RunSucceeded, counts{created: 1, unchanged: 1})
}

// TestSourceLinkSystemOnly: only the system links an event to a source
// (the calendar refuses it from a user, even an admin).
func TestSourceLinkSystemOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	admin := &repository.User{ID: 1, Login: "admin", Role: repository.RoleAdmin}
	in := &calendar.EventInput{RecordInput: calendar.RecordInput{Name: calendar.Some("Mine")},
		StartDate: wallDate(t, "2026-07-01 10:00:00"), EndDate: wallDate(t, "2026-07-01 11:00:00"),
		Source: calendar.Some(&repository.SourceLink{SourceID: e.src.ID, UID: "x", Hash: "h"})}
	if _, err := e.cal.CreateEvent(t.Context(), admin, "en", in); err == nil || !strings.Contains(err.Error(), "calendar sources") {
		t.Errorf("an admin linking an event to a source: %v, want a 403", err)
	}
	p, err := e.cal.CreateEvent(t.Context(), calendar.Operator, "en", in)
	if err != nil || p.Source == nil || p.Source.UID != "x" {
		t.Errorf("the system: %+v, %v", p, err)
	}
}

// wallDate is a date field as a caller decodes it.
func wallDate(t *testing.T, s string) calendar.Opt[datetext.Value] {
	t.Helper()
	v, err := datetext.Read(s, "en", now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return calendar.Opt[datetext.Value]{Set: true, Value: v, Raw: s}
}

// TestClaimLost: a run whose claim another run took over (its renewal
// came too late: the process paused past the claim) stops, as failed,
// interrupted, and leaves the other run's claim alone.
func TestClaimLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, nil)
	r := sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: e.reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: -1,
		ClaimFor: time.Hour, RenewEvery: time.Millisecond})
	t.Cleanup(r.Close)
	e.feed(single("a", "A", time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)))
	e.reader.gate = make(chan struct{}) // the read waits until the run is cancelled
	run, err := r.Start(t.Context(), e.src.ID, sources.TriggerAPI)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(s *repository.Source) error {
		s.RunClaim = "another-run"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to stop", func() bool {
		runs, _ := e.store.ListSourceRuns(t.Context(), e.src.ID, 1)
		return len(runs) == 1 && runs[0].ID == run.ID && runs[0].Status == repository.RunFailed
	})
	runs, _ := e.store.ListSourceRuns(t.Context(), e.src.ID, 1)
	if !strings.Contains(runs[0].Error, "another run took over") {
		t.Errorf("error %q", runs[0].Error)
	}
	r.Close()
	if s, _ := e.store.GetSource(t.Context(), e.src.ID); s.RunClaim != "another-run" {
		t.Errorf("claim %q, want the other run's", s.RunClaim)
	}
}
