// Package metric builds the Prometheus metrics of the service's
// collectors (the app's HTTP metrics, the sync worker's, the webhook
// deliveries') in one line each: a name, a help text and, for vectors,
// the one label and its values, which are exported at 0 from the start
// so that a scraper sees every series before the first event.
package metric

import "github.com/prometheus/client_golang/prometheus"

// Counter returns a counter named name.
func Counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

// Gauge returns a gauge named name.
func Gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// Histogram returns a histogram named name with the given buckets.
func Histogram(name, help string, buckets []float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
}

// CounterVec returns a counter vector named name with one label, whose
// series for each of values exist (at 0) from the start.
func CounterVec(name, help, label string, values ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	for _, value := range values {
		v.WithLabelValues(value)
	}
	return v
}
