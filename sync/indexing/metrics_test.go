package indexing_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// newMetricsWorker returns a worker (not running) on a fresh embedded stack
// and a registry serving its metrics.
func newMetricsWorker(t *testing.T) (*indexing.Worker, *prometheus.Registry) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	eng, err := embedded.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	if err := eng.Init(ctx); err != nil {
		t.Fatal(err)
	}
	w := &indexing.Worker{Store: st, Engine: eng, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Docs: &indexing.DocBuilder{Store: st, Languages: []string{"en"}, DefaultLanguage: "en", Location: time.UTC}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.Metrics())
	return w, reg
}

// sample is one scraped value: a gauge or counter value, or a histogram's
// sample count and sum.
type sample struct {
	value, count, sum float64
	found             bool
}

// gather scrapes reg and returns the sample of name whose labels include
// every pair of labels ("index", "events").
func gather(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) sample {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return find(families, name, labels...)
}

func find(families []*dto.MetricFamily, name string, labels ...string) sample {
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				ok := false
				for _, lp := range m.GetLabel() {
					ok = ok || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
				}
				if !ok {
					continue metrics
				}
			}
			switch {
			case m.Histogram != nil:
				return sample{count: float64(m.Histogram.GetSampleCount()), sum: m.Histogram.GetSampleSum(), found: true}
			case m.Counter != nil:
				return sample{value: m.Counter.GetValue(), found: true}
			default:
				return sample{value: m.Gauge.GetValue(), found: true}
			}
		}
	}
	return sample{}
}

func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	w, reg := newMetricsWorker(t)
	ctx := context.Background()
	steps := []struct {
		name string
		do   func(t *testing.T)
		// want maps a metric (name plus label pairs, space separated) to
		// its expected sample.
		want map[string]sample
	}{
		{
			name: "idle",
			do:   func(t *testing.T) {},
			want: map[string]sample{
				"eventcal_sync_pending_marks":                   {found: true},
				"eventcal_sync_oldest_pending_mark_age_seconds": {found: true},
				"eventcal_sync_batch_marks":                     {found: true},
				"eventcal_sync_lag_seconds":                     {found: true},
				"eventcal_search_documents index events":        {found: true},
				"eventcal_search_documents index venues":        {found: true},
				"eventcal_search_documents index organizers":    {found: true},
				"eventcal_reindex_duration_seconds":             {found: true},
				"eventcal_reindex_documents_total":              {found: true},
			},
		},
		{
			name: "marks written",
			do: func(t *testing.T) {
				if err := w.Store.MarkForIndexing(ctx, repository.MarkPost, []int64{101, 102, 103}); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]sample{
				"eventcal_sync_pending_marks": {value: 3, found: true},
				"eventcal_sync_batch_marks":   {found: true},
			},
		},
		{
			name: "flushed",
			do: func(t *testing.T) {
				if err := w.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]sample{
				"eventcal_sync_pending_marks":                   {found: true},
				"eventcal_sync_oldest_pending_mark_age_seconds": {found: true},
				"eventcal_sync_batch_marks":                     {count: 1, sum: 3, found: true},
				"eventcal_sync_lag_seconds":                     {count: 3, sum: -1, found: true},
			},
		},
		{
			name: "document indexed",
			do: func(t *testing.T) {
				if err := w.Engine.IndexPlaces(ctx, []search.PlaceDocument{{ID: 7, Kind: search.Venues, Status: "publish"}}); err != nil {
					t.Fatal(err)
				}
			},
			want: map[string]sample{
				"eventcal_search_documents index venues":     {value: 1, found: true},
				"eventcal_search_documents index organizers": {found: true},
			},
		},
		{
			name: "rebuild observed",
			do:   func(t *testing.T) { w.Metrics().ObserveReindex(90*time.Second, 1200) },
			want: map[string]sample{
				"eventcal_reindex_duration_seconds": {count: 1, sum: 90, found: true},
				"eventcal_reindex_documents_total":  {value: 1200, found: true},
				"eventcal_reindex_failures_total":   {found: true},
			},
		},
		{
			name: "rebuild failed",
			do:   func(t *testing.T) { w.Metrics().ObserveReindexFailure() },
			want: map[string]sample{"eventcal_reindex_failures_total": {value: 1, found: true}},
		},
		{
			name: "a webhook observer fails a batch",
			do: func(t *testing.T) {
				if err := w.Store.MarkForIndexing(ctx, repository.MarkPost, []int64{104}); err != nil {
					t.Fatal(err)
				}
				w.Changes = failingObserver{}
				if _, err := w.Step(ctx); err == nil {
					t.Fatal("the batch did not fail")
				}
				w.Changes = nil
			},
			want: map[string]sample{
				"eventcal_sync_errors_total kind webhooks": {value: 1, found: true},
				"eventcal_sync_errors_total kind index":    {found: true},
				"eventcal_sync_errors_total kind store":    {found: true},
			},
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.do(t)
			for key, want := range st.want {
				f := strings.Fields(key)
				got := gather(t, reg, f[0], f[1:]...)
				if want.sum < 0 {
					// Lag depends on the clock: only require it non-negative.
					if got.sum < 0 {
						t.Errorf("%s sum = %v, want >= 0", key, got.sum)
					}
					want.sum, got.sum = 0, 0
				}
				if got != want {
					t.Errorf("%s = %+v, want %+v", key, got, want)
				}
			}
		})
	}
}

func TestMetricsNilSafe(t *testing.T) {
	t.Parallel()
	var m *indexing.Metrics
	m.ObserveReindex(time.Second, 10) // must not panic
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatalf("register nil metrics: %v", err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// failingMarks is a store whose PendingMarks fails.
type failingMarks struct{ repository.Store }

func (failingMarks) PendingMarks(context.Context, int) ([]repository.IndexMark, error) {
	return nil, errors.New("store down")
}

func TestMetricsStoreDown(t *testing.T) {
	t.Parallel()
	w, _ := newMetricsWorker(t)
	down := &indexing.Worker{Store: failingMarks{w.Store}, Engine: w.Engine}
	reg := prometheus.NewRegistry()
	reg.MustRegister(down.Metrics())
	families, err := reg.Gather()
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("gather error = %v, want the store's", err)
	}
	// The other metrics are still gathered.
	if got := find(families, "eventcal_search_documents", "index", "events"); !got.found {
		t.Errorf("documents gauge missing when the store is down")
	}
	if got := find(families, "eventcal_sync_pending_marks"); got.found {
		t.Errorf("pending gauge present although the store failed: %+v", got)
	}
}

// failingObserver fails every batch.
type failingObserver struct{}

func (failingObserver) Observe(context.Context, []repository.IndexMark) error {
	return errors.New("webhook queue unavailable")
}
