package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/calendar/eventcal/search"
	"github.com/calendar/eventcal/sync/indexing"
)

// outdatedIndex is implemented by engines whose live indexes may hold
// documents in an older layout (meili.Engine: an older attribute scheme);
// Outdated answers for the last Init.
type outdatedIndex interface {
	Outdated(ctx context.Context) (bool, error)
}

// indexOutdated asks engine, or the engine it wraps (search.Cached), whether
// its live indexes need a full rebuild.
func indexOutdated(ctx context.Context, engine search.Engine) (bool, error) {
	for {
		if o, ok := engine.(outdatedIndex); ok {
			return o.Outdated(ctx)
		}
		u, ok := engine.(interface{ Unwrap() search.Engine })
		if !ok {
			return false, nil
		}
		engine = u.Unwrap()
	}
}

// migrationTrigger is the trigger of the rebuild that migrates outdated
// indexes (Job.Trigger).
const migrationTrigger = "migration"

// migrateOutdated starts a full rebuild (the zero-downtime one) when the
// engine's live indexes are outdated; lists keep answering from them until
// the swap. It runs in the lease holder, after Init. A failed rebuild is
// logged; the next holder, or the next start, tries again.
func migrateOutdated(ctx context.Context, engine search.Engine, reindexer *indexing.Reindexer, logger *slog.Logger) {
	outdated, err := indexOutdated(ctx, engine)
	if err != nil || !outdated {
		if err != nil {
			logger.Warn("check the search index layout", "err", err)
		}
		return
	}
	logger.Warn("the search indexes were written in an older layout: rebuilding them (lists keep answering meanwhile)")
	job, err := reindexer.Start(ctx, migrationTrigger)
	switch {
	case errors.Is(err, indexing.ErrRebuildRunning):
		logger.Info("a rebuild is already running; it migrates the indexes", "job", job.ID)
	case err != nil:
		logger.Warn("start the migration rebuild", "err", err)
	}
}
