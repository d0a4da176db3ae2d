// Package testsupport holds the helpers that the tests of several packages
// share. Only tests import it.
package testsupport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// memoMax is how many results a Memo holds by default.
const memoMax = 1 << 16

// Memo remembers the results of a pure function, for the test oracles and
// simulators that recompute the same values (the words of a document's
// text) for every query they answer. It is safe for concurrent use and
// holds at most Max results (it forgets them all when full). Callers must
// not modify a value Get returns: later calls share it.
type Memo[K comparable, V any] struct {
	// F computes the value of a key; it must depend on the key only.
	F func(K) V
	// Max bounds the results held (65,536 when 0).
	Max int
	mu  sync.Mutex
	m   map[K]V
}

// Get returns F(k), computing it only when it is not remembered.
func (m *Memo[K, V]) Get(k K) V {
	m.mu.Lock()
	v, ok := m.m[k]
	m.mu.Unlock()
	if ok {
		return v
	}
	v = m.F(k)
	m.mu.Lock()
	limit := m.Max
	if limit <= 0 {
		limit = memoMax
	}
	if m.m == nil || len(m.m) >= limit {
		m.m = make(map[K]V)
	}
	m.m[k] = v
	m.mu.Unlock()
	return v
}

// envRunMain names the environment variable under which a test binary of
// a command runs the command's main instead of its tests (RunMain).
const envRunMain = "TESTSUPPORT_RUN_MAIN"

// RunMain runs main and exits when the test binary was started by the
// executable MainCommand returned; otherwise it returns at once. A
// command's TestMain calls it first:
//
//	func TestMain(m *testing.M) {
//		testsupport.RunMain(main)
//		os.Exit(m.Run())
//	}
func RunMain(main func()) {
	if os.Getenv(envRunMain) != "1" {
		return
	}
	main()
	os.Exit(0)
}

// MainCommand returns the path of an executable (a shell script under
// t.TempDir()) that runs the command's main in this test binary (see
// RunMain) with the arguments it is given: the tests of a command run the
// command as a process without building it again (a link costs seconds,
// the test binary holds the same main).
func MainCommand(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary's path: %v", err)
	}
	path := filepath.Join(t.TempDir(), "main")
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec %s \"$@\"\n", envRunMain, shellQuote(self))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ModuleRoot returns the directory holding go.mod, found upwards from the
// test's working directory (its package's own), so that a test of any
// package reads files of the module by their paths from its root.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// StaticResolver resolves each host name of its map to the addresses
// given, and any other name to a not-found DNS error: a name resolver
// (netguard.Resolver) for tests that need no network.
type StaticResolver map[string][]string

// LookupNetIP returns host's addresses.
func (r StaticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	ss, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// NoDNS makes the name look-ups of this process (through
// net.DefaultResolver) answer from the hosts file only: a query to a DNS
// server fails at once, as a name that does not resolve. Tests save URLs
// with made-up names (feeds.example, hooks.example) that the service
// resolves, best effort, to refuse private addresses; without NoDNS each
// such save waits on the machine's DNS server, which in a sandbox may not
// answer for seconds (the look-up's bound), and the tests would depend on
// it. A test that needs a name to resolve gives the code a resolver of
// its own. TestMain calls it before m.Run.
func NoDNS() {
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errNoDNS
	}}
}

// errNoDNS is the error of every DNS query after NoDNS.
var errNoDNS = errors.New("testsupport: no DNS server in tests")
