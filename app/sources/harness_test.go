package sources_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/calendar"
	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/repository/sqlite/sqlitetest"
)

// now is the fixed clock of the tests.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// countingStore counts the record and label writes that reach the
// store.
type countingStore struct {
	repository.Store
	writes atomic.Int64
	// lookups counts the categories and tags looked up by name or slug.
	lookups atomic.Int64
}

func (s *countingStore) FindLabels(ctx context.Context, q repository.LabelQuery) ([]*repository.Label, error) {
	s.lookups.Add(1)
	return s.Store.FindLabels(ctx, q)
}

func (s *countingStore) CreateRecord(ctx context.Context, p *repository.Record) error {
	s.writes.Add(1)
	return s.Store.CreateRecord(ctx, p)
}

func (s *countingStore) UpdateRecord(ctx context.Context, id int64, fn func(p *repository.Record) error) (*repository.Record, error) {
	s.writes.Add(1)
	return s.Store.UpdateRecord(ctx, id, fn)
}

func (s *countingStore) DeleteRecord(ctx context.Context, id int64) error {
	s.writes.Add(1)
	return s.Store.DeleteRecord(ctx, id)
}

func (s *countingStore) CreateLabel(ctx context.Context, t *repository.Label) error {
	s.writes.Add(1)
	return s.Store.CreateLabel(ctx, t)
}

// fakeReader hands the runner the feed a test set (or an error), and
// counts its reads.
type fakeReader struct {
	mu    sync.Mutex
	cal   *feed.Calendar
	err   error
	hash  string
	reads int
	// gate, when set, holds each read until it is closed.
	gate chan struct{}
}

func (f *fakeReader) set(cal *feed.Calendar) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cal, f.err = cal, nil
}

func (f *fakeReader) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cal, f.err = nil, err
}

func (f *fakeReader) Read(ctx context.Context, _ *repository.Source) (*sources.ReadResult, error) {
	f.mu.Lock()
	gate := f.gate
	f.reads++
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	// A deep copy: the runner must not depend on the reader's memory.
	c := *f.cal
	c.Events = slices.Clone(f.cal.Events)
	return &sources.ReadResult{Calendar: &c, Format: repository.SourceICS, ContentHash: f.hash}, nil
}

// env is a runner over a store, with one source.
type env struct {
	t      *testing.T
	store  *countingStore
	cal    *calendar.Service
	runner *sources.Runner
	reader *fakeReader
	cfg    *config.Config
	src    *repository.Source
}

// openSQLite opens a fresh SQLite store.
func openSQLite(t *testing.T) repository.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sources.db")
	sqlitetest.Create(t, path)
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// newEnv returns a runner over a store open returns (SQLite when nil),
// with a source (change edits it before it is stored).
func newEnv(t *testing.T, open func(t *testing.T) repository.Store, change func(s *repository.Source)) *env {
	t.Helper()
	return newEnvIn(t, open, config.Default(), change)
}

// newEnvIn is newEnv under the settings cfg.
func newEnvIn(t *testing.T, open func(t *testing.T) repository.Store, cfg *config.Config, change func(s *repository.Source)) *env {
	t.Helper()
	if open == nil {
		open = openSQLite
	}
	st := &countingStore{Store: open(t)}
	clock := func() time.Time { return now }
	cal := calendar.New(calendar.Deps{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler), Now: clock})
	e := &env{t: t, store: st, cal: cal, reader: &fakeReader{}, cfg: cfg}
	e.runner = sources.NewRunner(sources.RunnerDeps{Store: st, Calendar: cal, Reader: e.reader, Config: cfg,
		Logger: slog.New(slog.DiscardHandler), Now: clock, WritesPerSecond: -1})
	t.Cleanup(e.runner.Close)
	src := &repository.Source{URL: "https://feeds.example/cal.ics", Format: repository.SourceAuto, Name: "Partner",
		OnRemoved: repository.OnRemovedTrash, Categories: []int64{}, Tags: []int64{}, Created: now, Updated: now}
	if change != nil {
		change(src)
	}
	if err := st.CreateSource(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	e.src = src
	return e
}

// run runs the source to its end and returns the run, failing the test
// when it could not start.
func (e *env) run() *repository.SourceRun {
	e.t.Helper()
	run, err := e.runner.Run(e.t.Context(), e.src.ID, sources.TriggerCLI)
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return run
}

// feed sets the feed the next runs read.
func (e *env) feed(events ...feed.Event) { e.reader.set(&feed.Calendar{Events: events}) }

// imported returns the source's events by UID (and "UID@RECURRENCE-ID"
// for lone instances).
func (e *env) imported() map[string]*repository.Record {
	e.t.Helper()
	items, err := e.store.SourceItems(e.t.Context(), e.src.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*repository.Record{}
	for _, it := range items {
		p, err := e.store.GetRecord(e.t.Context(), it.RecordID)
		if err != nil {
			e.t.Fatal(err)
		}
		key := it.UID
		if it.RecurrenceID != "" {
			key += "@" + it.RecurrenceID
		}
		out[key] = p
	}
	return out
}

// get returns the imported event of uid, failing when there is none.
func (e *env) get(uid string) *repository.Record {
	e.t.Helper()
	p := e.imported()[uid]
	if p == nil {
		e.t.Fatalf("no imported event %q", uid)
	}
	return p
}

// counts is a run's counts.
type counts struct{ created, updated, unchanged, removed, failed int }

func countsOf(r *repository.SourceRun) counts {
	return counts{r.Created, r.Updated, r.Unchanged, r.Removed, r.Failed}
}

// wantRun checks a finished run's status and counts.
func wantRun(t *testing.T, what string, r *repository.SourceRun, status string, want counts) {
	t.Helper()
	if r.Status != status || countsOf(r) != want {
		t.Errorf("%s: run %s %+v (error %q, problems %v), want %s %+v", what, r.Status, countsOf(r), r.Error, r.Problems, status, want)
	}
}

// zone loads a time zone.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// single is a timed single event of one hour in UTC.
func single(uid, title string, start time.Time) feed.Event {
	return feed.Event{UID: uid, Title: title, Zone: "UTC", Start: start, End: start.Add(time.Hour)}
}

// errFeed is a read failure.
var errFeed = errors.New("the source answered HTTP 500")
