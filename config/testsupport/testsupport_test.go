package testsupport

import (
	"strings"
	"sync"
	"testing"
)

// TestSyncBufferConcurrentWrites: writes from several goroutines all land,
// whole, while String reads (go test -race checks the locking).
func TestSyncBufferConcurrentWrites(t *testing.T) {
	t.Parallel()
	const writers, lines = 4, 100
	var b SyncBuffer
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lines {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
				}
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != writers*lines {
		t.Errorf("%d lines, want %d", got, writers*lines)
	}
}

// TestGoTool: the go command found runs (go test puts its toolchain first
// in PATH).
func TestGoTool(t *testing.T) {
	t.Parallel()
	if p := GoTool(t); !strings.HasSuffix(p, "go") {
		t.Errorf("GoTool = %q", p)
	}
}

// TestMemo: a remembered value is not computed again, concurrent callers
// are safe (go test -race), and a full memo starts over rather than
// growing.
func TestMemo(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := map[int]int{}
	m := Memo[int, string]{Max: 8, F: func(k int) string {
		mu.Lock()
		calls[k]++
		mu.Unlock()
		return strings.Repeat("x", k)
	}}
	for range 3 {
		if got := m.Get(2); got != "xx" {
			t.Fatalf("Get(2) = %q", got)
		}
	}
	if calls[2] != 1 {
		t.Errorf("F(2) ran %d times, want 1", calls[2])
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = m.Get(3) }()
	}
	wg.Wait()
	for k := 10; k < 30; k++ {
		m.Get(k)
	}
	m.mu.Lock()
	n := len(m.m)
	m.mu.Unlock()
	if n > m.Max {
		t.Errorf("%d results held, bound %d", n, m.Max)
	}
}
