package handlers

import (
	"context"
	"errors"
	"time"

	"github.com/calendar/eventcal/app/apierr"
	"github.com/calendar/eventcal/app/backup"
	"github.com/calendar/eventcal/app/present"
)

// Backups takes and lists the backups of the embedded store in
// BACKUP_DIR (backup.Dir). With MongoDB both answer backup.ErrNotEmbedded.
type Backups interface {
	Create(ctx context.Context) (*backup.Result, error)
	List() ([]backup.Entry, error)
}

// backupError maps the backup directory's refusals to the API's errors:
// 501 with MongoDB (whose own tools back it up), 409 while another backup
// runs or when its name is taken.
func backupError(err error) error {
	switch {
	case errors.Is(err, backup.ErrNotEmbedded):
		return apierr.New(501, "backup_not_supported", "This service stores its data in MongoDB: back it up with mongodump --oplog on a replica set (and restore with mongorestore --oplogReplay).")
	case errors.Is(err, backup.ErrRunning):
		return apierr.New(409, "backup_running", "A backup is already running; try again when it has finished.")
	case errors.Is(err, backup.ErrExists):
		return apierr.New(409, "backup_exists", "A backup was taken this second; try again in a second.")
	}
	return err
}

// createBackup serves POST /admin/backups: it takes a backup into
// BACKUP_DIR and answers 201 with its name, size, time and counts once it
// is written and checked.
func (h *admin) createBackup(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	if h.backups == nil {
		return apierr.New(503, "backup_unavailable", "Backups are not available in this process.")
	}
	res, err := h.backups.Create(r.ctx)
	if err != nil {
		return backupError(err)
	}
	return present.SendJSON(r.c, 201, present.NewObj().Set("name", res.Name).Set("size", res.Size).
		Set("created", res.Created.UTC().Format(present.TimeRFC3339)).Set("counts", res.Counts))
}

// listBackups serves GET /admin/backups: BACKUP_DIR's backups, newest
// first.
func (h *admin) listBackups(r *Request) error {
	if err := r.requireAdmin(); err != nil {
		return err
	}
	if h.backups == nil {
		return apierr.New(503, "backup_unavailable", "Backups are not available in this process.")
	}
	entries, err := h.backups.List()
	if err != nil {
		return backupError(err)
	}
	items := make([]any, 0, len(entries))
	for _, e := range entries {
		items = append(items, present.NewObj().Set("name", e.Name).Set("size", e.Size).Set("created", e.Created.UTC().Format(time.RFC3339)))
	}
	return present.SendJSON(r.c, 200, present.NewObj().Set("backups", items))
}
