package testdeadline

import (
	"fmt"
	"runtime"
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

// pollT is a test whose binary ends at end and whose Fatalf records the
// message and ends the goroutine, as testing.T's does.
type pollT struct {
	testing.TB
	end    time.Time
	failed string
}

func (p *pollT) Deadline() (time.Time, bool) { return p.end, true }
func (p *pollT) Helper()                     {}
func (p *pollT) Fatalf(format string, args ...any) {
	p.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestPoll: Poll returns once cond holds (here at its third call), and
// fails naming what it awaited when the deadline passes first.
func TestPoll(t *testing.T) {
	for _, tc := range []struct {
		name      string
		end       time.Time
		holdsAt   int
		wantCalls int
		wantFail  string
	}{
		{"holds", time.Now().Add(time.Hour), 3, 3, ""},
		{"deadline passed", time.Now().Add(-time.Minute), 1 << 30, 1, "the probe: never true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pollT{TB: t, end: tc.end}
			calls := 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				Poll(p, time.Millisecond, "the probe", func() bool { calls++; return calls >= tc.holdsAt })
			}()
			<-done
			if calls != tc.wantCalls || p.failed != tc.wantFail {
				t.Errorf("cond called %d times, failure %q; want %d, %q", calls, p.failed, tc.wantCalls, tc.wantFail)
			}
		})
	}
}
