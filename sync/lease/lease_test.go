package lease

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/sync/internal/testkit"
)

// TestRunWhileLeader: fn runs while the lease is held, its context ends
// when the lease is lost, and it runs again when the lease is regained.
func TestRunWhileLeader(t *testing.T) {
	t.Parallel()
	lease := testkit.NewFakeLease(false)
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan context.Context, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunWhileLeader(ctx, lease, func(runCtx context.Context) {
			started <- runCtx
			<-runCtx.Done()
		})
	}()
	recv := func(what string) context.Context {
		t.Helper()
		select {
		case c := <-started:
			return c
		case <-testdeadline.After(t):
			t.Fatalf("%s: fn did not start", what)
			return nil
		}
	}
	ended := func(what string, c context.Context) {
		t.Helper()
		select {
		case <-c.Done():
		case <-testdeadline.After(t):
			t.Fatalf("%s: fn's context did not end", what)
		}
	}

	steps := []struct {
		name string
		held bool
	}{
		{"acquired", true}, {"lost", false}, {"regained", true}, {"lost again", false}, {"regained again", true},
	}
	var running context.Context
	for _, st := range steps {
		lease.Set(st.held)
		if st.held {
			running = recv(st.name)
			continue
		}
		ended(st.name, running)
		if cause := context.Cause(running); !errors.Is(cause, ErrNotLeader) {
			t.Errorf("%s: cause %v, want ErrNotLeader", st.name, cause)
		}
	}
	cancel()
	ended("shut down", running)
	select {
	case <-done:
	case <-testdeadline.After(t):
		t.Fatal("RunWhileLeader did not return")
	}
	select {
	case <-started:
		t.Error("fn started after the shutdown")
	default:
	}
}

func TestHeld(t *testing.T) {
	t.Parallel()
	l := Held()
	if err := l.IsLeader(t.Context()); err != nil {
		t.Errorf("IsLeader = %v", err)
	}
	if l.Changed() != nil {
		t.Errorf("Held changes")
	}
	if err := l.Release(t.Context()); err != nil {
		t.Errorf("Release = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l.Keep(ctx) // returns at once
}

// TestLogChanges: every transition of the lease is logged once, at
// Info when it is gained and Warn when it is lost, and a lease held again
// after a loss (a store outage, say) is logged as taken back.
func TestLogChanges(t *testing.T) {
	t.Parallel()
	lease := testkit.NewFakeLease(false)
	var out testkit.LogBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		LogChanges(ctx, lease, log, "lease", "leader")
	}()
	count := func(msg string) int { return strings.Count(out.String(), "msg=\""+msg+"\"") }
	steps := []struct {
		held bool
		// msg is the message the transition logs, times how many lines
		// of it there are then, and line the text of the last one.
		msg   string
		times int
		line  string
	}{
		{true, "lease acquired", 1, `level=INFO msg="lease acquired" lease=leader`},
		{false, "lease lost", 1, `level=WARN msg="lease lost" lease=leader err="fake lease: held elsewhere"`},
		{true, "lease taken back", 1, `level=INFO msg="lease taken back" lease=leader times=1`},
		{false, "lease lost", 2, `level=WARN msg="lease lost" lease=leader`},
		{true, "lease taken back", 2, `level=INFO msg="lease taken back" lease=leader times=2`},
	}
	for _, st := range steps {
		lease.Set(st.held)
		// The next transition only once this one is logged, so that none
		// is coalesced.
		testkit.Eventually(t, st.line, func() bool { return count(st.msg) == st.times })
		if !strings.Contains(out.String(), st.line) {
			t.Errorf("no line %s in\n%s", st.line, out.String())
		}
	}
	cancel()
	select {
	case <-done:
	case <-testdeadline.After(t):
		t.Fatal("LogChanges did not return")
	}
	// Once per transition: 1 acquired, 2 lost, 2 taken back, nothing else
	// (not even for the shutdown).
	if got := strings.Count(out.String(), "\n"); got != 5 || count("lease acquired") != 1 || count("lease lost") != 2 || count("lease taken back") != 2 {
		t.Errorf("%d lines:\n%s", got, out.String())
	}
}

// TestLogChangesHeld: a lease that never changes logs nothing.
func TestLogChangesHeld(t *testing.T) {
	t.Parallel()
	var out testkit.LogBuffer
	LogChanges(t.Context(), Held(), slog.New(slog.NewTextHandler(&out, nil)))
	if out.String() != "" {
		t.Errorf("logged %q", out.String())
	}
}
