package indexing

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// Worker consumes index marks in batches: it re-reads the marked items,
// expands their dependencies (a venue's events, an event's venues...),
// indexes or deletes documents, and clears the marks only after the engine
// confirmed the batch. Marks survive crashes in the store, so a restarted
// worker drains what was left. A mark whose item the engine refuses is
// found by bisecting its batch and put off with backoff, while the others
// are indexed (backoff.go).
//
// The cascade steps are declared on cascadeRunner (dependents.go), which
// Worker embeds; init points it back at the worker.
type Worker struct {
	cascadeRunner

	Store  repository.Store
	Engine search.Engine
	Docs   *DocBuilder
	Log    *slog.Logger
	// BatchSize is the number of marks taken per batch (default 256).
	BatchSize int
	// BatchBytes bounds the size of the documents one batch builds
	// (SYNC_BATCH_BYTES, default DefaultBatchBytes; see documentBytes and
	// fitBatch): a batch takes its marks smallest post first while they
	// fit, and always at least one; a post whose documents alone exceed it
	// is indexed in a batch of its own, after the marks queued with it.
	BatchBytes int
	// PollInterval bounds how long marks written by another process wait
	// (default 500 ms); local writes call Notify and are picked up at once.
	PollInterval time.Duration
	// Now is the clock (time.Now when nil). It decides which marks are
	// due and when a failed mark is retried (backoff.go).
	Now func() time.Time
	// Jitter returns the random part of a failed mark's backoff, in
	// [0, 1) (math/rand when nil; see markBackoff).
	Jitter func() float64
	// CascadeChunk is the number of events a step re-indexes for changed
	// venues and terms (default 256); MaxCascades the number of such
	// dependent re-indexes that run in the background at once (default
	// 64). See dependents.go.
	CascadeChunk int
	MaxCascades  int
	// Changes, when set, sees every batch of marks before it is indexed
	// (the webhooks queue their messages there); an error fails the batch,
	// which is retried with its marks.
	Changes ChangeObserver

	wake   chan struct{}
	stepMu sync.Mutex
	once   sync.Once
	// metrics are created by init; see Metrics (metrics.go).
	metrics *Metrics
	// dual, while a rebuild runs, also receives every batch and records
	// what the worker wrote (reindex.go); guarded by stepMu.
	dual *dualWrite
	// cascades are the running dependent re-indexes, started in
	// cascadeOrder (dependents.go); guarded by stepMu.
	cascades     map[cascadeKey]*cascade
	cascadeOrder []cascadeKey
	// textSizes holds the text size of the posts of the marks that the
	// last batch left pending (choose), so that a backlog of large posts
	// is read once for the choice, not at every batch; guarded by stepMu.
	textSizes map[markVersion]int
	// deferred is the over-budget mark the last batch left for the small
	// marks queued beside it (fitBatch): it goes, alone, in the next
	// batch; guarded by stepMu.
	deferred markVersion
	// scanPage is the number of posts per page of a full scan (0:
	// scanPageSize; a test lowers it to cross pages with fewer posts).
	scanPage int

	statsMu workerStats
}

// workerStats holds the worker's figures, for the admin and status views.
type workerStats struct {
	mu            sync.Mutex
	lastBatchAt   time.Time
	lastBatchSize int
	lastError     string
	dependents    []CascadeProgress
}

// Stats are the worker's recent figures.
type Stats struct {
	LastBatchAt   time.Time
	LastBatchSize int
	LastError     string
	// Dependents are the running re-indexes of the events of changed
	// venues and terms.
	Dependents []CascadeProgress
}

// Stats returns the worker's recent figures.
func (w *Worker) Stats() Stats {
	w.statsMu.mu.Lock()
	defer w.statsMu.mu.Unlock()
	return Stats{LastBatchAt: w.statsMu.lastBatchAt, LastBatchSize: w.statsMu.lastBatchSize, LastError: w.statsMu.lastError,
		Dependents: slices.Clone(w.statsMu.dependents)}
}

func (w *Worker) init() {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.BatchSize <= 0 {
			w.BatchSize = 256
		}
		if w.BatchBytes <= 0 {
			w.BatchBytes = DefaultBatchBytes
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
		if w.CascadeChunk <= 0 {
			w.CascadeChunk = defaultCascadeChunk
		}
		if w.MaxCascades <= 0 {
			w.MaxCascades = defaultMaxCascades
		}
		w.cascades = map[cascadeKey]*cascade{}
		w.cascadeRunner = cascadeRunner{w}
		w.metrics = newMetrics(w.Store, w.Engine, w.Now)
	})
}

// ChangeObserver sees the marks of a batch before they are indexed and
// cleared (webhooks.Dispatcher).
type ChangeObserver interface {
	Observe(ctx context.Context, marks []repository.IndexMark) error
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
		case n >= w.BatchSize || w.runningCascades():
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

// Step runs one batch and then one chunk of the running dependent
// re-indexes (dependents.go). It returns the number of marks it cleared
// plus the number of dependent events it indexed: 0 means nothing is left.
func (w *Worker) Step(ctx context.Context) (int, error) {
	w.init()
	w.stepMu.Lock()
	defer w.stepMu.Unlock()
	// Running cascades hold their marks: read that many more so that they
	// never crowd ordinary marks out of the batch.
	pending, err := w.Store.DueMarks(ctx, w.Now(), w.BatchSize+len(w.cascades))
	if err != nil {
		if ctx.Err() == nil {
			w.metrics.observeSyncError(syncErrStore)
		}
		return 0, err
	}
	marks := make([]repository.IndexMark, 0, len(pending))
	for _, m := range pending {
		if !w.heldBy(m) && len(marks) < w.BatchSize {
			marks = append(marks, m)
		}
	}
	did := 0
	if len(marks) > 0 {
		chosen, posts, err := w.choose(ctx, marks)
		if err != nil {
			if ctx.Err() == nil {
				w.metrics.observeSyncError(syncErrStore)
			}
			return 0, err
		}
		// Marks written while this batch is sent are indexed between its
		// requests (interleave.go).
		n, err := w.batch(search.WithYield(ctx, w.interleaving(chosen)), chosen, posts)
		if err != nil {
			return 0, err
		}
		did += n
	}
	n, err := w.stepCascades(ctx)
	if err != nil {
		w.statsMu.mu.Lock()
		w.statsMu.lastError = err.Error()
		w.statsMu.mu.Unlock()
	}
	return did + n, err
}

// batch applies marks, starts the dependent re-indexes they call for and
// clears them (except the marks the new re-indexes hold). The caller holds
// stepMu.
func (w *Worker) batch(ctx context.Context, marks []repository.IndexMark, posts map[int64]*repository.Record) (int, error) {
	start := w.Now()
	if w.Changes != nil {
		if err := w.Changes.Observe(ctx, marks); err != nil {
			w.metrics.observeSyncError(syncErrWebhooks)
			w.statsMu.mu.Lock()
			w.statsMu.lastError = err.Error()
			w.statsMu.mu.Unlock()
			return 0, err
		}
	}
	// A refused item fails only its own mark (backoff.go).
	done, deps, failed, err := w.applyIsolating(ctx, marks, posts)
	var held map[cascadeKey]bool
	if err == nil {
		held, err = w.startCascades(ctx, deps)
	}
	if err != nil {
		w.metrics.observeSyncError(syncErrIndex)
		w.statsMu.mu.Lock()
		w.statsMu.lastError = err.Error()
		w.statsMu.mu.Unlock()
		return 0, err
	}
	if len(failed) > 0 {
		w.metrics.observeSyncError(syncErrIndex)
		if err := w.recordFailures(ctx, failed); err != nil {
			w.metrics.observeSyncError(syncErrStore)
			return 0, err
		}
	}
	clear := done
	if len(held) > 0 {
		clear = slices.DeleteFunc(slices.Clone(done), func(m repository.IndexMark) bool { return held[cascadeKey{m.Kind, m.ID}] })
	}
	if err := w.Store.ClearMarks(ctx, clear); err != nil {
		w.metrics.observeSyncError(syncErrStore)
		return 0, err
	}
	now := w.Now()
	lastError := ""
	if len(failed) > 0 {
		lastError = fmt.Sprintf("%d of %d marks failed; first: %s %d: %s", len(failed), len(marks),
			failed[0].mark.Kind, failed[0].mark.ID, markErrorText(failed[0].err))
	}
	w.statsMu.mu.Lock()
	w.statsMu.lastBatchAt, w.statsMu.lastBatchSize, w.statsMu.lastError = now, len(done), lastError
	w.statsMu.mu.Unlock()
	// Every mark of the batch is visible now (a held venue mark too: only
	// its dependents wait).
	w.metrics.observeBatch(done, now)
	// duration_ms is fractional milliseconds, as in the request log lines.
	w.Log.Info("sync batch", "marks", len(done), "failed", len(failed), "duration_ms", float64(now.Sub(start).Microseconds())/1000)
	// The failed marks count as handled: they wait for their next attempt.
	return len(marks), nil
}

// apply indexes what the marks name: events, venues and organizers (a
// place is rebuilt once however many of the batch's events link it), and
// the places of the batch's events. posts holds the marked posts as Step
// read them (it decides the kinds and links; the documents are built from
// a fresh read). It returns the venue and term marks, whose linked events
// need indexing again (dependents.go).
func (w *Worker) apply(ctx context.Context, marks []repository.IndexMark, posts map[int64]*repository.Record) ([]repository.IndexMark, error) {
	var deps []repository.IndexMark
	for _, m := range marks {
		if m.Kind == repository.MarkTerm {
			deps = append(deps, m)
		}
	}
	events := map[int64]bool{}
	places := map[int64]bool{}
	var gone []int64
	for _, m := range marks {
		if m.Kind == repository.MarkTerm {
			continue
		}
		id := m.ID
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
				deps = append(deps, m)
			}
		}
	}
	dsts := w.destinations(events, places, gone)
	if err := w.indexEvents(ctx, keys(events), dsts); err != nil {
		return nil, err
	}
	if err := w.indexPlaces(ctx, keys(places), dsts); err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		for _, dst := range dsts {
			if err := dst.DeleteEvents(ctx, gone); err != nil {
				return nil, err
			}
			for _, k := range []search.PlaceKind{search.Venues, search.Organizers} {
				if err := dst.DeletePlaces(ctx, k, gone); err != nil {
					return nil, err
				}
			}
		}
	}
	return deps, nil
}

// indexEvents (re)indexes events into every destination, deleting trashed
// or vanished ones.
func (w *Worker) indexEvents(ctx context.Context, ids []int64, dsts []search.Writer) error {
	const chunk = 500
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		part := ids[:n]
		ids = ids[n:]
		posts, err := w.Store.GetRecords(ctx, part)
		if err != nil {
			return fromStore(err)
		}
		var live []*repository.Record
		var dead []int64
		for _, id := range part {
			p := posts[id]
			if !indexedEvent(p) { // trash.go
				dead = append(dead, id)
				continue
			}
			live = append(live, p)
		}
		// A series is one document per occurrence: the documents go to
		// the engine in writes of about batchDocs, each event's whole.
		err = w.Docs.EventBatches(ctx, live, batchDocs, func(docs []search.EventDocument) error {
			for _, dst := range dsts {
				if err := dst.IndexEvents(ctx, docs); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, dst := range dsts {
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
	posts, err := w.Store.GetRecords(ctx, ids)
	if err != nil {
		return fromStore(err)
	}
	var live []*repository.Record
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
	stored, err := w.Store.CountRecords(ctx, IndexedRecords(repository.KindEvent))
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
//
// A post the engine refuses (a blamable error, backoff.go) does not fail
// the scan: its page is bisected, the other posts are indexed, and the
// refused post is skipped and marked for indexing, so that the worker
// retries it (into the live indexes, which are the new ones after a
// rebuild's swap) and, failing, lists it as a failing mark with backoff.
// More than maxScanSkips refused posts fail the scan (backoff.go).
func (w *Worker) IndexAllInto(ctx context.Context, dst search.Writer, progress func(done int)) error {
	_, err := w.indexAllInto(ctx, dst, progress)
	return err
}

// indexAllInto is IndexAllInto; it returns the posts it skipped.
//
// The pages are read ahead (scanPages): while one page is written, the
// next is read from the store and, for events, its documents are built,
// so the store's reads and the document building run beside the engine's
// writes. A page is written with the documents built ahead when it is
// written whole; the halves of a bisected page (isolateIDs) are read
// again, as the worker's batches are.
func (w *Worker) indexAllInto(ctx context.Context, dst search.Writer, progress func(done int)) ([]skippedItem, error) {
	w.init()
	var skipped []skippedItem
	dsts := []search.Writer{dst}
	done := 0
	for _, kind := range []repository.Kind{repository.KindEvent, repository.KindVenue, repository.KindOrganizer} {
		bad, err := w.scanKind(ctx, kind, dsts, maxScanSkips-len(skipped), func(pageLen int) {
			done += pageLen
			if progress != nil {
				progress(done)
			}
		})
		skipped = append(skipped, bad...)
		if err != nil {
			return skipped, err
		}
	}
	if len(skipped) > 0 {
		w.Notify()
	}
	return skipped, nil
}

// scanPageSize is the number of posts per page of a full scan
// (Worker.scanPage replaces it in tests).
const scanPageSize = 500

// scanPage is one page of a full scan, read ahead of its writing: the
// posts' IDs and, for events, the documents of the page's events (in
// engine writes of at most about batchDocs, as indexEvents makes them)
// and the IDs of the page's posts that the index does not hold.
type scanPage struct {
	ids []int64
	// built says that batches and dead hold the page's writes; false
	// (a place page, or building them failed) writes it as the worker's
	// batches are, reading its posts again.
	built   bool
	batches [][]search.EventDocument
	dead    []int64
	err     error
}

// scanPages reads the pages of kind ahead of their writing, in a
// goroutine, and sends them in order; the channel is closed after the
// last page, or after a page with an error. stop ends the reading and
// waits for the goroutine.
func (w *Worker) scanPages(ctx context.Context, kind repository.Kind) (pages <-chan scanPage, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan scanPage, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer close(out)
		limit := scanPageSize
		if w.scanPage > 0 {
			limit = w.scanPage
		}
		q := repository.RecordQuery{Kind: kind, ExcludeStatuses: unindexedStatuses(kind), Limit: limit} // trash.go
		var docs *DocBuilder
		if w.Docs != nil && kind == repository.KindEvent {
			docs = w.Docs.forScan()
		}
		for {
			page, err := w.Store.FindRecords(ctx, q)
			var pg scanPage
			switch {
			case err != nil:
				pg.err = err
			case len(page) == 0:
				return
			default:
				pg = buildPage(ctx, docs, kind, page)
				q.AfterID = page[len(page)-1].ID
			}
			select {
			case out <- pg:
			case <-ctx.Done():
				return
			}
			if pg.err != nil {
				return
			}
		}
	}()
	return out, func() {
		cancel()
		<-finished
	}
}

// buildPage returns the page of posts page, with its event documents
// built by docs (none when docs is nil: see scanPage).
func buildPage(ctx context.Context, docs *DocBuilder, kind repository.Kind, page []*repository.Record) scanPage {
	pg := scanPage{ids: make([]int64, len(page))}
	for i, p := range page {
		pg.ids[i] = p.ID
	}
	if kind != repository.KindEvent || docs == nil {
		return pg
	}
	var live []*repository.Record
	for _, p := range page {
		if !indexedEvent(p) { // trash.go
			pg.dead = append(pg.dead, p.ID)
			continue
		}
		live = append(live, p)
	}
	err := docs.EventBatches(ctx, live, batchDocs, func(d []search.EventDocument) error {
		pg.batches = append(pg.batches, d)
		return nil
	})
	pg.built = err == nil
	return pg
}

// scanKind writes every page of kind into dsts (see indexAllInto),
// calling done with each page's length once it is written. It returns
// the posts skipped (at most budget: more fail it).
func (w *Worker) scanKind(ctx context.Context, kind repository.Kind, dsts []search.Writer, budget int, done func(int)) ([]skippedItem, error) {
	pages, stop := w.scanPages(ctx, kind)
	defer stop()
	var skipped []skippedItem
	for pg := range pages {
		if pg.err != nil {
			return skipped, pg.err
		}
		index := func(ids []int64) error { return w.indexPlaces(ctx, ids, dsts) }
		if kind == repository.KindEvent {
			index = func(ids []int64) error {
				if pg.built && len(ids) == len(pg.ids) {
					return writeEventPage(ctx, pg, dsts)
				}
				return w.indexEvents(ctx, ids, dsts)
			}
		}
		bad, err := isolateIDs(ctx, pg.ids, budget-len(skipped), index)
		if err != nil {
			return skipped, err
		}
		if len(bad) > 0 {
			badIDs := make([]int64, len(bad))
			for i, b := range bad {
				badIDs[i] = b.ID
				w.Log.Warn("index scan skipped a post", "id", b.ID, "err", b.Error)
			}
			if err := w.Store.MarkForIndexing(ctx, repository.MarkPost, badIDs); err != nil {
				return skipped, err
			}
			skipped = append(skipped, bad...)
		}
		done(len(pg.ids))
	}
	return skipped, ctx.Err()
}

// writeEventPage writes the documents of a page of events built ahead
// (scanPage) into every destination, as indexEvents writes them.
func writeEventPage(ctx context.Context, pg scanPage, dsts []search.Writer) error {
	for _, docs := range pg.batches {
		for _, dst := range dsts {
			if err := dst.IndexEvents(ctx, docs); err != nil {
				return err
			}
		}
	}
	if len(pg.dead) > 0 {
		for _, dst := range dsts {
			if err := dst.DeleteEvents(ctx, pg.dead); err != nil {
				return err
			}
		}
	}
	return nil
}

// batchDocs bounds the event documents of one engine write: the
// occurrences of many series are sent in several writes (each series in
// one: see DocBuilder.EventBatches), so a batch's memory and engine task
// stay bounded whatever the series hold (at most recurrence's
// MaxOccurrences each).
const batchDocs = 2000

// DefaultBatchBytes is the default of Worker.BatchBytes (SYNC_BATCH_BYTES):
// about one event with a description at its limit (200,000 characters)
// and its document's other fields, whose indexing takes a few hundred
// milliseconds, so that the writes queued behind it wait well under the
// one-second lag target.
const DefaultBatchBytes = 256 << 10

// docOverheadBytes is what documentBytes counts for a document's fields
// other than its text (dates, IDs, statuses, keys): a series of many
// occurrences with a short title still weighs its documents.
const docOverheadBytes = 256

// documentBytes is the size of the documents a post makes, as the batch
// budget counts it: its text in every language (titles, descriptions and
// excerpts as stored) and docOverheadBytes, once per document (a series
// repeats its text in each occurrence's document), plus the text of the
// series' changed occurrences (each in its own occurrence's document).
// What indexing a post costs grows with it (tokenizing, postings, the
// stored documents, the engine's payload).
func (w *Worker) documentBytes(p *repository.Record) int {
	n := 0
	for _, t := range []repository.Text{p.Title, p.Content, p.Excerpt} {
		for _, v := range t {
			n += len(v)
		}
	}
	if p.Kind != repository.KindEvent || p.Event == nil {
		return n + docOverheadBytes
	}
	docs := 1
	if w.Docs != nil {
		docs = w.Docs.DocumentCount(p)
	}
	return (n+docOverheadBytes)*docs + p.Event.OverrideTextBytes()
}

// markVersion is one version of a mark: a new write to the post gives
// its mark a new sequence number.
type markVersion struct {
	kind repository.MarkKind
	id   int64
	seq  int64
}

// choose returns the marks a batch takes (fitBatch) and their posts (those
// of term marks excepted; a deleted post is absent). The text sizes of the
// marks it leaves pending are kept for the next batches, so each post of a
// backlog is read for the choice once, and again when it is taken.
func (w *Worker) choose(ctx context.Context, marks []repository.IndexMark) ([]repository.IndexMark, map[int64]*repository.Record, error) {
	version := func(m repository.IndexMark) markVersion { return markVersion{m.Kind, m.ID, m.Seq} }
	var unknown []int64
	for _, m := range marks {
		if _, ok := w.textSizes[version(m)]; !ok && m.Kind != repository.MarkTerm {
			unknown = append(unknown, m.ID)
		}
	}
	posts := map[int64]*repository.Record{}
	read := map[int64]bool{}
	if len(unknown) > 0 {
		got, err := w.Store.GetRecords(ctx, unknown)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(posts, got)
		for _, id := range unknown {
			read[id] = true
		}
	}
	size := func(m repository.IndexMark) int {
		if m.Kind == repository.MarkTerm {
			return 0
		}
		if n, ok := w.textSizes[version(m)]; ok {
			return n
		}
		if p := posts[m.ID]; p != nil {
			return w.documentBytes(p)
		}
		return 0
	}
	chosen, deferred := fitBatch(marks, size, w.BatchBytes, w.deferred)
	w.deferred = deferred
	taken := map[markVersion]bool{}
	var missing []int64
	for _, m := range chosen {
		taken[version(m)] = true
		if m.Kind != repository.MarkTerm && !read[m.ID] {
			missing = append(missing, m.ID)
		}
	}
	left := map[markVersion]int{}
	for _, m := range marks {
		if !taken[version(m)] && m.Kind != repository.MarkTerm {
			left[version(m)] = size(m)
		}
	}
	w.textSizes = left
	if len(missing) > 0 {
		got, err := w.Store.GetRecords(ctx, missing)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(posts, got)
	}
	return chosen, posts, nil
}

// fitBatch returns the marks a batch takes when their posts' documents
// (size) exceed limit: the oldest mark (PendingMarks returns them oldest
// first), then the others smallest post first (term marks and deleted
// posts count nothing) while they fit. The others stay pending for the
// next batches, so a backlog of large posts (drafts of 200,000
// characters) never holds the small writes behind it for longer than
// about one large post takes: each batch takes the small marks and as
// many large ones as fit.
//
// A mark whose post alone exceeds limit (a series of many occurrences
// with long texts) never shares a batch: when it is the oldest, the
// batch takes the other marks that fit instead and returns it as
// deferred; the next batch (given it back as deferred) takes it alone,
// so it is neither starved by a stream of small writes nor holds one
// back for longer than its own batch.
func fitBatch(marks []repository.IndexMark, size func(repository.IndexMark) int, limit int, deferred markVersion) ([]repository.IndexMark, markVersion) {
	total := 0
	for _, m := range marks {
		total += size(m)
	}
	if total <= limit {
		return marks, markVersion{}
	}
	oldest := marks[0]
	if size(oldest) > limit {
		if (markVersion{oldest.Kind, oldest.ID, oldest.Seq}) == deferred || len(marks) == 1 {
			return marks[:1], markVersion{}
		}
		if rest := fitRest(nil, 0, marks[1:], size, limit); len(rest) > 0 {
			return rest, markVersion{oldest.Kind, oldest.ID, oldest.Seq}
		}
		return marks[:1], markVersion{}
	}
	// The oldest mark always goes (so a large post is never starved by a
	// stream of small ones), then the others smallest first.
	return fitRest([]repository.IndexMark{oldest}, size(oldest), marks[1:], size, limit), markVersion{}
}

// fitRest appends to out the marks of rest, smallest first, while the
// total stays within limit (used is what out weighs already).
func fitRest(out []repository.IndexMark, used int, rest []repository.IndexMark, size func(repository.IndexMark) int, limit int) []repository.IndexMark {
	rest = slices.Clone(rest)
	slices.SortStableFunc(rest, func(a, b repository.IndexMark) int { return cmp.Compare(size(a), size(b)) })
	for _, m := range rest {
		if used+size(m) > limit {
			break
		}
		used += size(m)
		out = append(out, m)
	}
	return out
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
