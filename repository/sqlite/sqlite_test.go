package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/storetest"
)

// openTemp opens a store on a new file in the test's temporary directory.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "calendar.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repository.Store { return openTemp(t) })
}
