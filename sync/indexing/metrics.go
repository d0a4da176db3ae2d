package indexing

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/config/metric"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/internal/scrape"
)

// pendingMarksCap bounds the pending-marks count taken on every scrape: the
// gauge eventcal_sync_pending_marks reads at most this many marks (one
// bounded, index-ordered query) instead of scanning a backlog of any size, so
// a value equal to the cap means "at least this many".
const pendingMarksCap = 10000

// Metrics are the Prometheus metrics of the sync worker and of full
// rebuilds. They are not registered anywhere by themselves: Metrics is a
// prometheus.Collector that each process (or test) registers on its own
// prometheus.Registry; the app does so for its Indexer (app.New).
//
// Names and labels:
//
//	eventcal_sync_batch_marks                       histogram  marks cleared per batch
//	eventcal_sync_lag_seconds                       histogram  per mark: from its At to the batch clearing it
//	eventcal_sync_pending_marks                     gauge      marks waiting, read on scrape (capped at pendingMarksCap)
//	eventcal_sync_oldest_pending_mark_age_seconds   gauge      age of the oldest of those marks (0 when none)
//	eventcal_search_documents{index}                gauge      documents per index (events, venues, organizers), read on scrape
//	eventcal_reindex_duration_seconds               histogram  duration of full rebuilds (ObserveReindex)
//	eventcal_reindex_documents_total                counter    documents written by full rebuilds (ObserveReindex)
//	eventcal_reindex_failures_total                 counter    full rebuilds that failed (ObserveReindexFailure)
//	eventcal_reindex_last_success_timestamp_seconds gauge      when the last full rebuild succeeded (Unix time; 0 before one did)
//	eventcal_sync_errors_total{kind}                counter    failed sync batches by kind: store, index, webhooks
//	eventcal_sync_mark_failures_total               counter    failed attempts to index one mark alone (each puts it off: backoff.go)
//	eventcal_sync_failing_marks                     gauge      marks whose last attempt failed (waiting for a retry), read on scrape
//
// Every method is safe for concurrent use and does nothing on a nil
// *Metrics, so callers need no nil checks.
type Metrics struct {
	store  repository.Store
	engine search.Engine
	now    func() time.Time

	batchMarks      prometheus.Histogram
	lag             prometheus.Histogram
	reindexDuration prometheus.Histogram
	reindexDocs     prometheus.Counter
	reindexFailures prometheus.Counter
	reindexLastOK   prometheus.Gauge
	syncErrors      *prometheus.CounterVec
	markFailures    prometheus.Counter

	pendingMarks  *prometheus.Desc
	failingMarks  *prometheus.Desc
	oldestMarkAge *prometheus.Desc
	documents     *prometheus.Desc
}

// newMetrics returns the metrics of a worker reading marks from store and
// counting documents in engine (either may be nil: their gauges are then
// left out). now is the clock of the age gauge (time.Now when nil).
func newMetrics(store repository.Store, engine search.Engine, now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	return &Metrics{
		store:  store,
		engine: engine,
		now:    now,
		// 1, 2, 4 ... 512: the default batch takes up to 256 marks.
		batchMarks: metric.Histogram("eventcal_sync_batch_marks", "Index marks cleared per sync batch.",
			prometheus.ExponentialBuckets(1, 2, 10)),
		lag: metric.Histogram("eventcal_sync_lag_seconds",
			"Time from an index mark being recorded to the sync batch that cleared it, per mark.",
			[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}),
		reindexDuration: metric.Histogram("eventcal_reindex_duration_seconds",
			"Duration of full rebuilds of the search indexes.",
			[]float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}),
		reindexDocs: metric.Counter("eventcal_reindex_documents_total",
			"Documents (events, venues, organizers) written by full rebuilds."),
		reindexFailures: metric.Counter("eventcal_reindex_failures_total",
			"Full rebuilds of the search indexes that failed."),
		reindexLastOK: metric.Gauge("eventcal_reindex_last_success_timestamp_seconds",
			"Unix time the last full rebuild succeeded (0 before one did in this process)."),
		syncErrors: metric.CounterVec("eventcal_sync_errors_total",
			"Failed sync batches by kind: store (reading or clearing marks), index (building or writing documents), webhooks (queueing messages).",
			"kind", syncErrStore, syncErrIndex, syncErrWebhooks),
		markFailures: metric.Counter("eventcal_sync_mark_failures_total",
			"Failed attempts to index one item's mark on its own (the engine refused its documents); each puts the mark off with backoff."),
		failingMarks: prometheus.NewDesc("eventcal_sync_failing_marks",
			"Index marks whose last indexing attempt failed, waiting for a retry (read on scrape).", nil, nil),
		pendingMarks: prometheus.NewDesc("eventcal_sync_pending_marks",
			"Index marks waiting for the sync worker, counted on scrape up to a cap.", nil, nil),
		oldestMarkAge: prometheus.NewDesc("eventcal_sync_oldest_pending_mark_age_seconds",
			"Age of the oldest pending index mark among those counted (0 when none).", nil, nil),
		documents: prometheus.NewDesc("eventcal_search_documents",
			"Documents in each search index.", []string{"index"}, nil),
	}
}

// Metrics returns the worker's metrics, created with the worker: register
// them on a prometheus.Registry to serve them, and record full rebuilds
// with ObserveReindex.
func (w *Worker) Metrics() *Metrics {
	w.init()
	return w.metrics
}

// ObserveReindex records one finished full rebuild: how long it took and how
// many documents (events, venues and organizers together) it wrote. Call it
// once per rebuild that completed; a failed rebuild is not observed.
func (m *Metrics) ObserveReindex(d time.Duration, docs int) {
	if m == nil {
		return
	}
	m.reindexDuration.Observe(d.Seconds())
	m.reindexLastOK.Set(float64(m.now().Unix()))
	if docs > 0 {
		m.reindexDocs.Add(float64(docs))
	}
}

// ObserveReindexFailure records a full rebuild that failed.
func (m *Metrics) ObserveReindexFailure() {
	if m == nil {
		return
	}
	m.reindexFailures.Inc()
}

// The kinds of eventcal_sync_errors_total.
const (
	syncErrStore    = "store"
	syncErrIndex    = "index"
	syncErrWebhooks = "webhooks"
)

// observeSyncError records a failed batch.
func (m *Metrics) observeSyncError(kind string) {
	if m == nil {
		return
	}
	m.syncErrors.WithLabelValues(kind).Inc()
}

// observeMarkFailure records a failed attempt on one mark.
func (m *Metrics) observeMarkFailure() {
	if m == nil {
		return
	}
	m.markFailures.Inc()
}

// observeBatch records a batch of marks that was cleared at now.
func (m *Metrics) observeBatch(marks []repository.IndexMark, now time.Time) {
	if m == nil {
		return
	}
	m.batchMarks.Observe(float64(len(marks)))
	for _, mk := range marks {
		// Marks written by another process's clock may be slightly ahead.
		m.lag.Observe(max(now.Sub(mk.At), 0).Seconds())
	}
}

// recorded are the metrics the worker records as it goes (the others are
// read on scrape).
func (m *Metrics) recorded() []prometheus.Collector {
	return []prometheus.Collector{m.batchMarks, m.lag, m.reindexDuration, m.reindexDocs,
		m.reindexFailures, m.reindexLastOK, m.syncErrors, m.markFailures}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	if m == nil {
		return
	}
	for _, c := range m.recorded() {
		c.Describe(ch)
	}
	ch <- m.pendingMarks
	ch <- m.oldestMarkAge
	ch <- m.failingMarks
	ch <- m.documents
}

// Collect implements prometheus.Collector. It reads the pending marks (at
// most pendingMarksCap) and the index sizes now, within a short timeout; a
// failed read is reported as an invalid metric, which the scrape handler
// logs while serving the others.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if m == nil {
		return
	}
	for _, c := range m.recorded() {
		c.Collect(ch)
	}

	ctx, cancel := context.WithTimeout(context.Background(), scrape.Timeout)
	defer cancel()
	m.collectPending(ctx, ch)
	m.collectDocuments(ctx, ch)
}

// collectPending sends the bounded pending-marks count and the oldest age.
func (m *Metrics) collectPending(ctx context.Context, ch chan<- prometheus.Metric) {
	if m.store == nil {
		return
	}
	marks, err := m.store.PendingMarks(ctx, pendingMarksCap)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(m.pendingMarks, err)
		return
	}
	age := 0.0
	if len(marks) > 0 {
		oldest := marks[0].At
		for _, mk := range marks[1:] {
			if mk.At.Before(oldest) {
				oldest = mk.At
			}
		}
		age = max(m.now().Sub(oldest), 0).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(m.pendingMarks, prometheus.GaugeValue, float64(len(marks)))
	ch <- prometheus.MustNewConstMetric(m.oldestMarkAge, prometheus.GaugeValue, age)
	_, failing, err := m.store.FailingMarks(ctx, 1)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(m.failingMarks, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(m.failingMarks, prometheus.GaugeValue, float64(failing))
}

// collectDocuments sends the number of documents in each index. Bleve
// answers from memory; Meilisearch with one stats request per index.
func (m *Metrics) collectDocuments(ctx context.Context, ch chan<- prometheus.Metric) {
	if m.engine == nil {
		return
	}
	counts := []struct {
		index string
		count func(context.Context) (int, error)
	}{
		{"events", m.engine.CountEvents},
		{"venues", func(ctx context.Context) (int, error) { return m.engine.CountPlaces(ctx, search.Venues) }},
		{"organizers", func(ctx context.Context) (int, error) { return m.engine.CountPlaces(ctx, search.Organizers) }},
	}
	for _, c := range counts {
		n, err := c.count(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(m.documents, err)
			// An unreachable engine fails every count: do not wait for each.
			return
		}
		ch <- prometheus.MustNewConstMetric(m.documents, prometheus.GaugeValue, float64(n), c.index)
	}
}
