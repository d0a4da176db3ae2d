package cli

import (
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/sync"
)

// TestWorkerBatchBytesSetting: SYNC_BATCH_BYTES reaches the sync worker,
// and its default is the worker's own.
func TestWorkerBatchBytesSetting(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want int
	}{{"", sync.DefaultBatchBytes}, {"8192", 8192}} {
		cfg, err := config.Load(func(k string) string {
			if k == "SYNC_BATCH_BYTES" {
				return c.raw
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		if w := newWorker(cfg, nil, nil, nil); w.BatchBytes != c.want {
			t.Errorf("SYNC_BATCH_BYTES=%q: worker budget %d, want %d", c.raw, w.BatchBytes, c.want)
		}
	}
}
