package sync

import (
	"context"
	"errors"
	"testing"

	"github.com/calendar/eventcal/config/testdeadline"
)

// TestRunWhileLeader: fn runs while the lease is held, its context ends
// when the lease is lost, and it runs again when the lease is regained.
func TestRunWhileLeader(t *testing.T) {
	lease := newFakeLease(false)
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
		lease.set(st.held)
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
