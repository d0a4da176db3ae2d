package schedule

import (
	"context"
	"errors"
	"time"

	"github.com/calendar/eventcal/repository"
)

// errNotDue aborts the update of an item that is no longer due.
var errNotDue = errors.New("sync: not due for publishing")

// PublishDue publishes the scheduled items whose publish date has come:
// every event, venue and organizer with status future and a publish date
// at or before now becomes publish, as WordPress's scheduled posts do. Each
// change goes through store.UpdatePost, which records the index mark (the
// caller wakes the worker), and the status and date are checked again
// inside the update, so an item changed meanwhile (unscheduled, moved
// later, trashed, deleted) is left alone. It returns how many items it
// published; on error, those published before it.
func PublishDue(ctx context.Context, store repository.Store, now time.Time) (n int, err error) {
	for _, kind := range []repository.Kind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer} {
		q := repository.RecordQuery{Kind: kind, Statuses: []string{repository.StatusFuture}, Limit: 500}
		for {
			page, err := store.FindRecords(ctx, q)
			if err != nil {
				return n, err
			}
			for _, p := range page {
				if p.Date.After(now) {
					continue
				}
				_, err := store.UpdateRecord(ctx, p.ID, func(p *repository.Record) error {
					if p.Status != repository.StatusFuture || p.Date.After(now) {
						return errNotDue
					}
					p.Status = repository.StatusPublish
					return nil
				})
				switch {
				case errors.Is(err, errNotDue), errors.Is(err, repository.ErrNotFound):
				case err != nil:
					return n, err
				default:
					n++
				}
			}
			if len(page) < q.Limit {
				break
			}
			q.AfterID = page[len(page)-1].ID
		}
	}
	return n, nil
}
