package app

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/calendar/eventcal/config"
	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/search/embedded"
	"github.com/calendar/eventcal/sync/indexing"
)

// layoutEngine is an engine whose live indexes report a layout age, as
// meili.Engine does for its attribute scheme.
type layoutEngine struct {
	*embedded.Engine
	outdated bool
}

func (e *layoutEngine) Outdated(context.Context) (bool, error) { return e.outdated, nil }

// TestMigrateOutdated: the lease holder rebuilds outdated indexes (found
// through the result cache too), and leaves current ones alone.
func TestMigrateOutdated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		outdated bool
	}{
		{"outdated indexes are rebuilt", true},
		{"current indexes are left alone", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := sqlite.Open(t.Context(), filepath.Join(dir, "calendar.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close(context.Background())
			raw, err := embedded.Open(filepath.Join(dir, "index"))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			engine := search.NewCached(&layoutEngine{Engine: raw, outdated: tc.outdated}, 0)
			if err := engine.Init(t.Context()); err != nil {
				t.Fatal(err)
			}
			p := &repository.Record{Kind: repository.KindVenue, Status: repository.StatusPublish, Title: repository.Text{"en": "Hall"}}
			if err := store.CreateRecord(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			worker := newWorker(cfg, store, engine, logger)
			reindexer := indexing.NewReindexer(store, engine, worker, logger, nil, nil)
			defer reindexer.Close()

			migrateOutdated(t.Context(), engine, reindexer, logger)
			job, err := reindexer.Wait(testdeadline.Context(t))
			if !tc.outdated {
				if _, ran := reindexer.Last(); ran {
					t.Errorf("a rebuild ran on current indexes: %+v", job)
				}
				return
			}
			if err != nil || job.State != indexing.JobSucceeded || job.Trigger != migrationTrigger {
				t.Fatalf("migration job %+v, %v; want a succeeded %q job", job, err, migrationTrigger)
			}
			if n, err := engine.CountPlaces(t.Context(), search.Venues); err != nil || n != 1 {
				t.Errorf("venues indexed by the migration: %d, %v; want 1", n, err)
			}
		})
	}
}
