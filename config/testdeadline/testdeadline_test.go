package testdeadline

import (
	"testing"
	"time"
)

type fakeT struct {
	testing.TB
	end time.Time
	ok  bool
}

func (f fakeT) Deadline() (time.Time, bool) { return f.end, f.ok }

func TestOf(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		end      time.Time
		ok       bool
		min, max time.Duration // bounds of Of - now
	}{
		{"no deadline: a day", time.Time{}, false, noDeadline - time.Minute, noDeadline + time.Minute},
		{"10 minutes left: margin before", now.Add(10 * time.Minute), true, 10*time.Minute - margin - time.Minute, 10*time.Minute - margin + time.Second},
		{"20 seconds left: half of it", now.Add(20 * time.Second), true, 9 * time.Second, 11 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Of(fakeT{end: tc.end, ok: tc.ok}).Sub(now)
			if got < tc.min || got > tc.max {
				t.Errorf("Of - now = %s, want in [%s, %s]", got, tc.min, tc.max)
			}
		})
	}
	if got := Timeout(t); got <= 0 {
		t.Errorf("Timeout of the running test = %s, want > 0", got)
	}
	ctx := Context(t)
	if _, ok := ctx.Deadline(); !ok {
		t.Error("Context has no deadline")
	}
}
