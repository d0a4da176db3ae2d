package metric

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestCounterVecExportsValuesAtZero: every named label value is a series
// (at 0) before anything is counted, and only those.
func TestCounterVecExportsValuesAtZero(t *testing.T) {
	v := CounterVec("test_total", "Test counter.", "kind", "a", "b")
	want := `
# HELP test_total Test counter.
# TYPE test_total counter
test_total{kind="a"} 0
test_total{kind="b"} 0
`
	if err := testutil.CollectAndCompare(v, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// TestConstructors: each constructor names its metric, with its help,
// type and buckets.
func TestConstructors(t *testing.T) {
	for _, tt := range []struct {
		c    prometheus.Collector
		want string
	}{
		{Counter("c_total", "A counter."), "# HELP c_total A counter.\n# TYPE c_total counter\nc_total 0\n"},
		{Gauge("g", "A gauge."), "# HELP g A gauge.\n# TYPE g gauge\ng 0\n"},
		{Histogram("h", "A histogram.", []float64{1}), "# HELP h A histogram.\n# TYPE h histogram\n" +
			"h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"},
	} {
		if err := testutil.CollectAndCompare(tt.c, strings.NewReader(tt.want)); err != nil {
			t.Error(err)
		}
	}
}
