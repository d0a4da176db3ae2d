package sources

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/calendar/eventcal/config/metric"
	"github.com/calendar/eventcal/repository"
)

// runMetrics are the runner's figures (a prometheus.Collector):
//
//	eventcal_source_runs_total{outcome}     counter    finished runs: succeeded, failed
//	eventcal_source_events_total{result}    counter    feed events by what a run did: created, updated, unchanged, removed, failed
//	eventcal_source_run_seconds             histogram  how long runs took, from claim to finish
type runMetrics struct {
	runs    *prometheus.CounterVec
	events  *prometheus.CounterVec
	seconds prometheus.Histogram
}

// The results of eventcal_source_events_total.
const (
	resCreated   = "created"
	resUpdated   = "updated"
	resUnchanged = "unchanged"
	resRemoved   = "removed"
	resFailed    = "failed"
)

func newRunMetrics() *runMetrics {
	return &runMetrics{
		runs: metric.CounterVec("eventcal_source_runs_total",
			"Calendar source runs by outcome (succeeded, failed).", "outcome", repository.RunSucceeded, repository.RunFailed),
		events: metric.CounterVec("eventcal_source_events_total",
			"Events of calendar source runs by result (created, updated, unchanged, removed, failed).", "result",
			resCreated, resUpdated, resUnchanged, resRemoved, resFailed),
		seconds: metric.Histogram("eventcal_source_run_seconds",
			"How long calendar source runs took, in seconds.", []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}),
	}
}

// Describe implements prometheus.Collector.
func (m *runMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.runs.Describe(ch)
	m.events.Describe(ch)
	m.seconds.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *runMetrics) Collect(ch chan<- prometheus.Metric) {
	m.runs.Collect(ch)
	m.events.Collect(ch)
	m.seconds.Collect(ch)
}
