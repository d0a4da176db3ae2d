package sync

import (
	"context"
	"log/slog"
	gosync "sync"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// Worker consumes index marks in batches: it re-reads the marked items,
// expands their dependencies (a venue's events, an event's venues...),
// indexes or deletes documents, and clears the marks only after the engine
// confirmed the batch. Marks survive crashes in the store, so a restarted
// worker drains what was left.
type Worker struct {
	Store  repository.Store
	Engine search.Engine
	Docs   *DocBuilder
	Log    *slog.Logger
	// BatchSize is the number of marks taken per batch (default 256).
	BatchSize int
	// PollInterval bounds how long marks written by another process wait
	// (default 500 ms); local writes call Notify and are picked up at once.
	PollInterval time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	wake   chan struct{}
	stepMu gosync.Mutex
	once   gosync.Once
	// metrics are created by init; see Metrics (metrics.go).
	metrics *Metrics
	// dual, while a rebuild runs, also receives every batch and records
	// what the worker wrote (reindex.go); guarded by stepMu.
	dual *dualWrite

	statsMu workerStats
}

// workerStats holds the worker's figures, for the admin and status views.
type workerStats struct {
	mu            gosync.Mutex
	lastBatchAt   time.Time
	lastBatchSize int
	lastError     string
}

// Stats are the worker's recent figures.
type Stats struct {
	LastBatchAt   time.Time
	LastBatchSize int
	LastError     string
}

// Stats returns the worker's recent figures.
func (w *Worker) Stats() Stats {
	w.statsMu.mu.Lock()
	defer w.statsMu.mu.Unlock()
	return Stats{LastBatchAt: w.statsMu.lastBatchAt, LastBatchSize: w.statsMu.lastBatchSize, LastError: w.statsMu.lastError}
}

func (w *Worker) init() {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.BatchSize <= 0 {
			w.BatchSize = 256
		}
		if w.PollInterval <= 0 {
			w.PollInterval = 500 * time.Millisecond
		}
		if w.Log == nil {
			w.Log = slog.Default()
		}
		if w.Now == nil {
			w.Now = time.Now
		}
		w.metrics = newMetrics(w.Store, w.Engine, w.Now)
	})
}

// Notify tells the worker that new marks exist; it never blocks.
func (w *Worker) Notify() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run processes marks until ctx ends, retrying failed batches with
// exponential backoff (up to 30 s).
func (w *Worker) Run(ctx context.Context) {
	w.init()
	backoff := 100 * time.Millisecond
	for {
		n, err := w.Step(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := w.PollInterval
		switch {
		case err != nil:
			w.Log.Warn("sync batch failed", "err", err, "retry_in", backoff)
			wait = backoff
			backoff = min(backoff*2, 30*time.Second)
		case n >= w.BatchSize:
			backoff = 100 * time.Millisecond
			continue
		default:
			backoff = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
			if err != nil {
				// keep backing off after a failure even when woken
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		case <-t.C:
		}
		t.Stop()
	}
}

// Flush processes batches until no mark is pending or ctx ends. Tests and
// the CLI use it to wait for the index, with a deadline on ctx.
func (w *Worker) Flush(ctx context.Context) error {
	w.init()
	for {
		n, err := w.Step(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// Step runs one batch and returns the number of marks it cleared.
func (w *Worker) Step(ctx context.Context) (int, error) {
	w.init()
	w.stepMu.Lock()
	defer w.stepMu.Unlock()
	marks, err := w.Store.PendingMarks(ctx, w.BatchSize)
	if err != nil || len(marks) == 0 {
		return 0, err
	}
	start := w.Now()
	if err := w.apply(ctx, marks); err != nil {
		w.statsMu.mu.Lock()
		w.statsMu.lastError = err.Error()
		w.statsMu.mu.Unlock()
		return 0, err
	}
	if err := w.Store.ClearMarks(ctx, marks); err != nil {
		return 0, err
	}
	now := w.Now()
	w.statsMu.mu.Lock()
	w.statsMu.lastBatchAt, w.statsMu.lastBatchSize, w.statsMu.lastError = now, len(marks), ""
	w.statsMu.mu.Unlock()
	w.metrics.observeBatch(marks, now)
	// duration_ms is fractional milliseconds, as in the request log lines.
	w.Log.Info("sync batch", "marks", len(marks), "duration_ms", float64(now.Sub(start).Microseconds())/1000)
	return len(marks), nil
}

// apply indexes what the marks name, with dependencies.
func (w *Worker) apply(ctx context.Context, marks []repository.IndexMark) error {
	var postIDs, termIDs []int64
	for _, m := range marks {
		if m.Kind == repository.MarkTerm {
			termIDs = append(termIDs, m.ID)
		} else {
			postIDs = append(postIDs, m.ID)
		}
	}
	posts, err := w.Store.GetPosts(ctx, postIDs)
	if err != nil {
		return err
	}
	events := map[int64]bool{}
	places := map[int64]bool{}
	var gone []int64
	for _, id := range postIDs {
		p := posts[id]
		switch {
		case p == nil:
			gone = append(gone, id)
		case p.Kind == repository.KindEvent:
			events[id] = true
			for _, v := range p.Event.Venues {
				places[v] = true
			}
			for _, o := range p.Event.Organizers {
				places[o] = true
			}
		case p.Kind == repository.KindVenue || p.Kind == repository.KindOrganizer:
			places[id] = true
			// Events carry their venue's geo point.
			if p.Kind == repository.KindVenue {
				evs, err := w.Store.FindPosts(ctx, repository.PostQuery{Kind: repository.KindEvent, VenueIDs: []int64{id}})
				if err != nil {
					return err
				}
				for _, e := range evs {
					events[e.ID] = true
				}
			}
		}
	}
	if len(termIDs) > 0 {
		ids, err := w.eventsOfTerms(ctx, termIDs)
		if err != nil {
			return err
		}
		for _, id := range ids {
			events[id] = true
		}
	}
	dsts := w.destinations(events, places, gone)
	if err := w.indexEvents(ctx, keys(events), dsts); err != nil {
		return err
	}
	if err := w.indexPlaces(ctx, keys(places), dsts); err != nil {
		return err
	}
	if len(gone) > 0 {
		for _, dst := range dsts {
			if err := dst.DeleteEvents(ctx, gone); err != nil {
				return err
			}
			for _, k := range []search.PlaceKind{search.Venues, search.Organizers} {
				if err := dst.DeletePlaces(ctx, k, gone); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// eventsOfTerms returns the events using the terms or their descendants.
func (w *Worker) eventsOfTerms(ctx context.Context, termIDs []int64) ([]int64, error) {
	all, err := w.Store.FindTerms(ctx, repository.TermQuery{Taxonomy: repository.TaxCategory})
	if err != nil {
		return nil, err
	}
	children := map[int64][]int64{}
	for _, t := range all {
		children[t.Parent] = append(children[t.Parent], t.ID)
	}
	set := map[int64]bool{}
	var walk func(id int64, depth int)
	walk = func(id int64, depth int) {
		if set[id] || depth > 64 {
			return
		}
		set[id] = true
		for _, c := range children[id] {
			walk(c, depth+1)
		}
	}
	for _, id := range termIDs {
		walk(id, 0)
	}
	ids := keys(set)
	evs, err := w.Store.FindPosts(ctx, repository.PostQuery{Kind: repository.KindEvent, CategoryIDs: ids})
	if err != nil {
		return nil, err
	}
	tagged, err := w.Store.FindPosts(ctx, repository.PostQuery{Kind: repository.KindEvent, TagIDs: termIDs})
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(evs)+len(tagged))
	for _, e := range append(evs, tagged...) {
		out = append(out, e.ID)
	}
	return out, nil
}

// indexEvents (re)indexes events into every destination, deleting trashed
// or vanished ones.
func (w *Worker) indexEvents(ctx context.Context, ids []int64, dsts []search.Writer) error {
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		part := ids[:n]
		ids = ids[n:]
		posts, err := w.Store.GetPosts(ctx, part)
		if err != nil {
			return err
		}
		var live []*repository.Post
		var dead []int64
		for _, id := range part {
			p := posts[id]
			if p == nil || p.Kind != repository.KindEvent || p.Status == repository.StatusTrash {
				dead = append(dead, id)
				continue
			}
			live = append(live, p)
		}
		docs, err := w.Docs.Events(ctx, live)
		if err != nil {
			return err
		}
		for _, dst := range dsts {
			if err := dst.IndexEvents(ctx, docs); err != nil {
				return err
			}
			if len(dead) > 0 {
				if err := dst.DeleteEvents(ctx, dead); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// indexPlaces (re)indexes venues and organizers into every destination,
// deleting trashed ones.
func (w *Worker) indexPlaces(ctx context.Context, ids []int64, dsts []search.Writer) error {
	if len(ids) == 0 {
		return nil
	}
	posts, err := w.Store.GetPosts(ctx, ids)
	if err != nil {
		return err
	}
	var live []*repository.Post
	dead := map[search.PlaceKind][]int64{}
	for _, id := range ids {
		p := posts[id]
		if p == nil {
			continue
		}
		kind := search.Venues
		if p.Kind == repository.KindOrganizer {
			kind = search.Organizers
		} else if p.Kind != repository.KindVenue {
			continue
		}
		if p.Status == repository.StatusTrash {
			dead[kind] = append(dead[kind], id)
			continue
		}
		live = append(live, p)
	}
	// One aggregate query per kind for the whole batch.
	docs, err := w.Docs.Places(ctx, live)
	if err != nil {
		return err
	}
	for _, dst := range dsts {
		if len(docs) > 0 {
			if err := dst.IndexPlaces(ctx, docs); err != nil {
				return err
			}
		}
		for k, ids := range dead {
			if err := dst.DeletePlaces(ctx, k, ids); err != nil {
				return err
			}
		}
	}
	return nil
}

// Populate indexes every event, venue and organizer when the event index is
// empty while the store is not (a new or lost index). It returns whether it
// ran.
func (w *Worker) Populate(ctx context.Context) (bool, error) {
	w.init()
	n, err := w.Engine.CountEvents(ctx)
	if err != nil {
		return false, err
	}
	stored, err := w.Store.CountPosts(ctx, repository.PostQuery{Kind: repository.KindEvent, ExcludeStatuses: []string{repository.StatusTrash}})
	if err != nil {
		return false, err
	}
	if n > 0 || stored == 0 {
		return false, nil
	}
	w.Log.Info("search index empty; populating", "events", stored)
	return true, w.IndexAll(ctx, nil)
}

// IndexAll indexes every stored event, venue and organizer into the engine,
// calling progress (when set) after each page.
func (w *Worker) IndexAll(ctx context.Context, progress func(done int)) error {
	return w.IndexAllInto(ctx, w.Engine, progress)
}

// IndexAllInto indexes every stored event, venue and organizer (trashed
// ones excepted) into dst, in pages by ID, calling progress (when set) with
// the number of items done after each page. Populate and full rebuilds
// (Reindexer) share it.
func (w *Worker) IndexAllInto(ctx context.Context, dst search.Writer, progress func(done int)) error {
	w.init()
	dsts := []search.Writer{dst}
	done := 0
	for _, kind := range []repository.PostKind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer} {
		q := repository.PostQuery{Kind: kind, ExcludeStatuses: []string{repository.StatusTrash}, Limit: 500}
		for {
			page, err := w.Store.FindPosts(ctx, q)
			if err != nil {
				return err
			}
			if len(page) == 0 {
				break
			}
			ids := make([]int64, len(page))
			for i, p := range page {
				ids[i] = p.ID
			}
			if kind == repository.KindEvent {
				err = w.indexEvents(ctx, ids, dsts)
			} else {
				err = w.indexPlaces(ctx, ids, dsts)
			}
			if err != nil {
				return err
			}
			done += len(page)
			if progress != nil {
				progress(done)
			}
			q.AfterID = page[len(page)-1].ID
		}
	}
	return nil
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
