package sources_test

import (
	"cmp"
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
)

// now is the fixed clock of the tests.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// countingStore counts the record and label writes that reach the store,
// and holds the sources and runs (memSources) until the engines store
// them.
type countingStore struct {
	repository.Store
	*memSources
	writes atomic.Int64
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

// SourceItems lists the events whose link names the source.
func (s *countingStore) SourceItems(ctx context.Context, sourceID int64) ([]repository.SourceItem, error) {
	ps, err := s.Store.FindRecords(ctx, repository.RecordQuery{Kind: repository.KindEvent})
	if err != nil {
		return nil, err
	}
	var out []repository.SourceItem
	for _, p := range ps {
		if l := p.Source; l != nil && l.SourceID == sourceID {
			out = append(out, repository.SourceItem{RecordID: p.ID, UID: l.UID, RecurrenceID: l.RecurrenceID, Hash: l.Hash, Status: p.Status})
		}
	}
	return out, nil
}

// memSources is a SourceStore in memory (the test's double until the
// engines store sources).
type memSources struct {
	mu      sync.Mutex
	sources map[int64]*repository.Source
	runs    map[int64]*repository.SourceRun
	nextID  int64
}

func newMemSources() *memSources {
	return &memSources{sources: map[int64]*repository.Source{}, runs: map[int64]*repository.SourceRun{}}
}

func (m *memSources) CreateSource(_ context.Context, s *repository.Source) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	s.ID = m.nextID
	c := *s
	m.sources[s.ID] = &c
	return nil
}

func (m *memSources) GetSource(_ context.Context, id int64) (*repository.Source, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sources[id]
	if s == nil {
		return nil, repository.ErrNotFound
	}
	c := *s
	return &c, nil
}

func (m *memSources) ListSources(context.Context) ([]*repository.Source, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*repository.Source
	for _, s := range m.sources {
		c := *s
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *repository.Source) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (m *memSources) UpdateSource(_ context.Context, id int64, fn func(s *repository.Source) error) (*repository.Source, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sources[id]
	if s == nil {
		return nil, repository.ErrNotFound
	}
	c := *s
	if err := fn(&c); err != nil {
		return nil, err
	}
	c.Revision++
	m.sources[id] = &c
	out := c
	return &out, nil
}

func (m *memSources) DeleteSource(_ context.Context, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sources[id] == nil {
		return repository.ErrNotFound
	}
	delete(m.sources, id)
	return nil
}

func (m *memSources) CreateSourceRun(_ context.Context, r *repository.SourceRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	r.ID = m.nextID
	c := *r
	m.runs[r.ID] = &c
	return nil
}

func (m *memSources) SaveSourceRun(_ context.Context, r *repository.SourceRun) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.ID] == nil {
		return repository.ErrNotFound
	}
	c := *r
	c.Problems = slices.Clone(r.Problems)
	m.runs[r.ID] = &c
	return nil
}

func (m *memSources) ListSourceRuns(_ context.Context, sourceID int64, limit int) ([]*repository.SourceRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*repository.SourceRun
	for _, r := range m.runs {
		if r.SourceID == sourceID {
			c := *r
			out = append(out, &c)
		}
	}
	slices.SortFunc(out, func(a, b *repository.SourceRun) int { return cmp.Compare(b.ID, a.ID) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memSources) PruneSourceRuns(ctx context.Context, sourceID int64, keep int) error {
	runs, _ := m.ListSourceRuns(ctx, sourceID, 0)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range runs {
		if i >= keep {
			delete(m.runs, r.ID)
		}
	}
	return nil
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
	f.cal, f.err, f.hash = cal, nil, ""
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
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sources.db"))
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
	if open == nil {
		open = openSQLite
	}
	st := &countingStore{Store: open(t), memSources: newMemSources()}
	cfg := config.Default()
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
