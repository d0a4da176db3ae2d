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

// TestChildGOGC: the processes a test starts get the environment's GOGC
// when set, the default under the race detector, else the percent asked.
func TestChildGOGC(t *testing.T) {
	for _, tc := range []struct {
		name, gogc, want string
	}{
		{"GOGC unset", "", "400"},
		{"GOGC set", "150", "150"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			want := tc.want
			if raceEnabled && tc.gogc == "" {
				want = "100"
			}
			if got := ChildGOGC(400); got != want {
				t.Errorf("ChildGOGC(400) = %q, want %q (race detector %v)", got, want, raceEnabled)
			}
		})
	}
}
