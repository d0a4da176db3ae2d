// Package testsupport holds the helpers that the tests of several packages
// share. Only tests import it.
package testsupport

import (
	"bytes"
	"os/exec"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer safe for concurrent use: a logger or a
// child process writes to it from its goroutines while the test reads it.
// The zero value is an empty buffer ready to use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns a copy of what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// GoTool returns the go command of the toolchain running the tests, for
// tests that build or list packages: go test puts that toolchain's
// GOROOT/bin first in the PATH of the test binaries it runs.
func GoTool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not in PATH: %v", err)
	}
	return p
}
