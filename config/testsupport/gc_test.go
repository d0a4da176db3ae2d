package testsupport

import (
	"runtime/debug"
	"testing"
)

// TestCollectLessOften: the target is set when GOGC is not, left as it
// was when GOGC is set, and left alone under the race detector.
func TestCollectLessOften(t *testing.T) {
	const before, percent = 100, 350
	for _, tc := range []struct {
		name, gogc string
		want       int
	}{
		{"GOGC unset", "", percent},
		{"GOGC set", "150", before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			old := debug.SetGCPercent(before)
			CollectLessOften(percent)
			got := debug.SetGCPercent(old)
			want := tc.want
			if raceEnabled {
				want = before
			}
			if got != want {
				t.Errorf("the collector's target is %d, want %d (race detector %v)", got, want, raceEnabled)
			}
		})
	}
}
