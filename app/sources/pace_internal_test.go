package sources

import (
	"log/slog"
	"testing"
)

// TestPacingSpreadsWrites checks that a run's writes are paced one at a
// time at every rate: a burst larger than one lets a run that fell
// behind write that many events back to back, which the anonymous
// readers wait behind (the sources bench's list rows).
func TestPacingSpreadsWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		wps  float64
	}{
		{"default", 0},
		{"slow", 20},
		{"fast", 5000},
		{"unbounded", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRunner(RunnerDeps{Logger: slog.New(slog.DiscardHandler), WritesPerSecond: tc.wps})
			defer r.Close()
			if b := r.limiter.Burst(); b != 1 {
				t.Errorf("burst %d, want 1", b)
			}
		})
	}
}
