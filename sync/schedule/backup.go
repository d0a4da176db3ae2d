package schedule

import (
	"context"
	"log/slog"

	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/sync/lease"
)

// jobBackup names the scheduled backups in the schedule.
const jobBackup = "backup"

// Backups takes a scheduled backup and removes the oldest beyond the
// retention, returning the backup and the names removed (backup.Dir).
type Backups interface {
	Scheduled(ctx context.Context) (*backup.Result, []string, error)
}

// runScheduledBackup takes a backup and prunes the old ones, once the lease
// is confirmed held (lease.CheckFence).
func runScheduledBackup(ctx context.Context, b Backups, l lease.Lease, log *slog.Logger) {
	if err := lease.CheckFence(ctx, l); err != nil {
		log.Warn("scheduled backup skipped", "err", err)
		return
	}
	res, removed, err := b.Scheduled(ctx)
	if res != nil {
		log.Info("scheduled backup written", "file", res.Path, "size", res.Size, "events", res.Counts.Records["event"], "removed", removed)
	}
	if err != nil {
		log.Error("scheduled backup failed", "err", err)
	}
}
