package app

import (
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/sync/indexing"
)

// TestWorkerBatchBytesSetting: SYNC_BATCH_BYTES and MAX_SERIES_OCCURRENCES
// reach the sync worker, and the former's default is the worker's own.
func TestWorkerBatchBytesSetting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want int
	}{{"", indexing.DefaultBatchBytes}, {"8192", 8192}} {
		cfg, err := config.Load(func(k string) string {
			switch k {
			case "SYNC_BATCH_BYTES":
				return c.raw
			case "MAX_SERIES_OCCURRENCES":
				return "77"
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		if w := newWorker(cfg, nil, nil, nil); w.BatchBytes != c.want {
			t.Errorf("SYNC_BATCH_BYTES=%q: worker budget %d, want %d", c.raw, w.BatchBytes, c.want)
		}
		if w := newWorker(cfg, nil, nil, nil); w.Docs.MaxOccurrences != 77 {
			t.Errorf("MAX_SERIES_OCCURRENCES=77: document builder's bound %d", w.Docs.MaxOccurrences)
		}
	}
}
