package embedded

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestInUse: InUse finds the lock of an open engine, and none in a
// directory without an index or after the engine closed.
func TestInUse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "index")
	if err := InUse(dir); err != nil {
		t.Errorf("no index: InUse = %v", err)
	}
	e, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := InUse(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("open engine: InUse = %v, want ErrLocked", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := InUse(dir); err != nil {
		t.Errorf("closed engine: InUse = %v", err)
	}
}
