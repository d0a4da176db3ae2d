// Package testdeadline gives the waits of the tests one hang guard that
// follows go test's -timeout instead of a wall-clock budget of their own.
//
// A test that waits for something asynchronous (an index write becoming
// visible, a server starting, a lease changing hands) must not fail because
// the machine is busy: CI shares its cores with other builds, and -race
// slows everything down several times. So no wait has a fixed limit such as
// "30 seconds"; each gives up only shortly before the test binary itself
// would be stopped (go test -timeout, 10 minutes by default), which still
// turns a real hang into a failure naming what was awaited instead of
// go test's goroutine dump.
package testdeadline

import (
	"context"
	"testing"
	"time"
)

// margin is how long before the binary's deadline a wait gives up, so that
// the test can report it and clean up before go test panics.
const margin = 30 * time.Second

// noDeadline is the guard of a binary without a deadline (-timeout 0).
const noDeadline = 24 * time.Hour

// deadliner is the part of *testing.T that knows the binary's deadline.
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Of returns when a wait in t should give up: margin before the test
// binary's deadline (never before half the time left), or a day from now
// when the binary has none.
func Of(t testing.TB) time.Time {
	now := time.Now()
	d, ok := t.(deadliner)
	if !ok {
		return now.Add(noDeadline)
	}
	end, ok := d.Deadline()
	if !ok {
		return now.Add(noDeadline)
	}
	left := end.Sub(now)
	return now.Add(max(left-margin, left/2))
}

// Timeout returns the time left until Of(t).
func Timeout(t testing.TB) time.Duration {
	return time.Until(Of(t))
}

// Context returns a context that ends at Of(t) or when t ends.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(t.Context(), Of(t))
	t.Cleanup(cancel)
	return ctx
}

// After returns a channel that receives at Of(t): the hang guard of a
// select that waits for a signal.
func After(t testing.TB) <-chan time.Time {
	return time.After(Timeout(t))
}

// Poll calls cond every interval until it holds, failing t at Of(t) with
// what, which names the condition awaited.
func Poll(t testing.TB, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := Of(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never true", what)
		}
		time.Sleep(interval) // a poll interval, not a wait for an outcome
	}
}
