package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/calendar/eventcal/config/testdeadline"
	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/sync/indexing"
)

// running reports whether the reindexer's job is still running.
func running(r *indexing.Reindexer) bool {
	job, ok := r.Last()
	return ok && job.State == indexing.JobRunning
}

// waitRebuild waits (with a deadline) for the running rebuild and
// requires it to succeed.
func waitRebuild(t *testing.T, r *indexing.Reindexer) indexing.Job {
	t.Helper()
	ctx := testdeadline.Context(t)
	job, err := r.Wait(ctx)
	if err != nil || job.State != indexing.JobSucceeded {
		t.Fatalf("rebuild = %+v, %v; want succeeded", job, err)
	}
	return job
}

// TestRebuildWithoutDowntime runs full rebuilds of the embedded stack's
// index under list traffic and under writes through the API.
func TestRebuildWithoutDowntime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const stored = 2000
	// Inserted through the store for speed, then indexed once.
	first := time.Date(2027, 3, 1, 19, 0, 0, 0, time.UTC)
	ids := make([]int64, 0, stored)
	for i := range stored {
		start := first.Add(time.Duration(i) * time.Hour)
		p := &repository.Record{Kind: repository.KindEvent, Author: e.users["editor"].ID, Status: repository.StatusPublish,
			Date: e.now, Modified: e.now, Title: repository.Text{"en": fmt.Sprintf("Gala %d", i)},
			Slug: repository.Text{"en": fmt.Sprintf("gala-%d", i)},
			Event: &repository.EventFields{StartLocal: start.Format(time.DateTime), EndLocal: start.Add(time.Hour).Format(time.DateTime),
				StartUTC: start, EndUTC: start.Add(time.Hour), Categories: []int64{}, Tags: []int64{}, Venues: []int64{}, Organizers: []int64{}}}
		if err := e.store.CreateRecord(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	e.flush()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := indexing.NewReindexer(e.store, e.engine, e.worker, quiet, nil, nil)
	total := func(url string) float64 {
		e.t.Helper()
		return e.must(200, "GET", url, "", nil).num("total")
	}

	// (a) Lists keep answering, complete and exact, from the old index
	// while the new one is filled, during the swap and after it.
	t.Run("lists never fail", func(t *testing.T) {
		e.t = t
		job, err := r.Start(context.Background(), "test")
		if err != nil || job.Total != stored {
			t.Fatalf("Start = %+v, %v; want total %d", job, err, stored)
		}
		during := 0
		for busy := true; busy; {
			busy = running(r)
			pages := []string{"events?per_page=3", "events?per_page=2&page=400", "events?per_page=50&search=gala"}
			for _, url := range pages {
				res := e.do("GET", url, "", nil)
				if res.status != 200 || res.num("total") != stored {
					t.Fatalf("GET %s during the rebuild: status %d, total %v; want 200 and %d (%s)", url, res.status, res.num("total"), stored, res.raw)
				}
			}
			if busy {
				during++
			}
		}
		if during == 0 {
			t.Fatal("no list request ran during the rebuild")
		}
		job = waitRebuild(t, r)
		if job.Done != stored {
			t.Errorf("done = %d, want %d", job.Done, stored)
		}
		t.Logf("%d rounds of list requests during a rebuild of %d events", during, stored)
	})

	// (b) Creates, updates and trashes through the API while a rebuild
	// runs: after it and the worker's flush, every write shows in lists.
	t.Run("writes during the rebuild are kept", func(t *testing.T) {
		e.t = t
		if _, err := r.Start(context.Background(), "test"); err != nil {
			t.Fatal(err)
		}
		var created, updated, trashed []int64
		during := 0
		// At least 12 writes, at most 300 (the rebuild may outlast them).
		for i := 0; i < 300; i++ {
			busy := running(r)
			if !busy && i >= 12 {
				break
			}
			if busy {
				during++
			}
			switch i % 3 {
			case 0:
				res := e.must(201, "POST", "events", "editor", map[string]any{
					"title": fmt.Sprintf("Newcomer %d", i), "start_date": "2027-06-01 10:00", "end_date": "2027-06-01 11:00"})
				created = append(created, res.id())
			case 1:
				id := ids[i]
				e.must(200, "PATCH", "events/"+strconv.FormatInt(id, 10), "editor", map[string]any{"title": fmt.Sprintf("Retitled %d", i)})
				updated = append(updated, id)
			case 2:
				id := ids[stored-i]
				e.must(200, "DELETE", "events/"+strconv.FormatInt(id, 10), "editor", nil)
				trashed = append(trashed, id)
			}
		}
		if during == 0 {
			t.Fatal("no write happened during the rebuild")
		}
		waitRebuild(t, r)
		e.flush()
		checks := []struct {
			url  string
			want int
		}{
			{"events?per_page=1", stored + len(created) - len(trashed)},
			{"events?per_page=50&search=newcomer", len(created)},
			{"events?per_page=50&search=retitled", len(updated)},
			{"events?per_page=50&search=gala", stored - len(updated) - len(trashed)},
		}
		for _, c := range checks {
			if got := total(c.url); got != float64(c.want) {
				t.Errorf("GET %s: total %v, want %d", c.url, got, c.want)
			}
		}
		for _, id := range trashed {
			res := e.must(200, "GET", "events?per_page=1&search=gala%20"+strconv.FormatInt(int64(indexOf(ids, id)), 10), "", nil)
			if res.num("total") != 0 {
				t.Errorf("trashed event %d is still listed", id)
			}
		}
		t.Logf("%d of %d writes during the rebuild", during, len(created)+len(updated)+len(trashed))
	})
}

func indexOf(ids []int64, id int64) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}
