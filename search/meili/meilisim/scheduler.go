package meilisim

import (
	"slices"
	"time"
)

// autobatchKind is a task's kind as the autobatcher sees it; it follows
// AutobatchKind in crates/index-scheduler/src/scheduler/autobatcher.rs
// (v1.18.0).
type autobatchKind int

const (
	kindDocumentImport autobatchKind = iota
	kindDocumentDeletion
	kindDocumentDeletionByFilter
	kindSettings
	kindIndexCreation
	kindIndexDeletion
	kindIndexSwap
	kindOther
)

// autobatchKindOf maps a task type to its autobatch kind.
func autobatchKindOf(typ string, byFilter bool) autobatchKind {
	switch typ {
	case "documentAdditionOrUpdate":
		return kindDocumentImport
	case "documentDeletion":
		if byFilter {
			return kindDocumentDeletionByFilter
		}
		return kindDocumentDeletion
	case "settingsUpdate":
		return kindSettings
	case "indexCreation":
		return kindIndexCreation
	case "indexDeletion":
		return kindIndexDeletion
	case "indexSwap":
		return kindIndexSwap
	}
	return kindOther
}

// batchKind is the kind of the batch being built (BatchKind in
// autobatcher.rs, restricted to the kinds the simulator registers).
type batchKind int

const (
	batchDocumentOperation batchKind = iota
	batchDocumentDeletion
	batchDocumentDeletionWithFilter
	batchSettings
	batchAlone
)

// joins reports whether a task of kind k extends a batch of kind b, and
// the batch's kind afterwards; stop reports that the batch ends with the
// task (an index deletion joins, then closes the batch). It follows
// BatchKind::accumulate in autobatcher.rs of v1.18.0:
//
//   - index creations, swaps (and updates, editions) never share a batch;
//   - an index deletion joins any batch of document or settings tasks and
//     ends it;
//   - document additions batch together, and with deletions by id;
//   - a deletion by filter never joins a batch holding document additions
//     (BatchStopReason::DocumentOperationWithDeletionByFilter), but joins
//     other deletions; before v1.45.0 additions queued after it never join
//     its batch either (DeletionByFilterWithDocumentOperation); from
//     v1.45.0 (autobatcher.rs: "we can autobatch the deletion by filter
//     and import but only if the document addition is *after* the
//     deletion", unchanged to v1.50.0) they do, and the batch becomes a
//     document operation that the next deletion by filter stops;
//   - settings batch only with settings (document operations and
//     settings stop each other: DocumentOperationWithSettings).
//
// The index-creation-rights and primary-key mismatch rules are not
// modelled: the service always lets additions create the index and sends
// one primary key per index.
//
// filterThenAdd selects the v1.45.0 rule above. The other changes to
// autobatcher.rs between v1.18.0 and v1.50.0 (DsrUpdate and DsrClear
// kinds, index compaction and network tasks in create_batch.rs) concern
// task types the simulator does not register.
func joins(b batchKind, k autobatchKind, filterThenAdd bool) (next batchKind, ok, stop bool) {
	switch k {
	case kindIndexCreation, kindIndexSwap, kindOther:
		return b, false, false
	case kindIndexDeletion:
		if b == batchAlone {
			return b, false, false
		}
		return b, true, true
	}
	switch b {
	case batchDocumentOperation:
		switch k {
		case kindDocumentImport, kindDocumentDeletion:
			return batchDocumentOperation, true, false
		}
	case batchDocumentDeletion:
		switch k {
		case kindDocumentImport:
			// The index exists or the deletion would have failed alike;
			// autobatcher.rs batches them "if index_already_exists".
			return batchDocumentOperation, true, false
		case kindDocumentDeletion:
			return batchDocumentDeletion, true, false
		case kindDocumentDeletionByFilter:
			return batchDocumentDeletionWithFilter, true, false
		}
	case batchDocumentDeletionWithFilter:
		switch k {
		case kindDocumentDeletion, kindDocumentDeletionByFilter:
			return batchDocumentDeletionWithFilter, true, false
		case kindDocumentImport:
			if filterThenAdd {
				return batchDocumentOperation, true, false
			}
		}
	case batchSettings:
		if k == kindSettings {
			return batchSettings, true, false
		}
	}
	return b, false, false
}

// firstBatchKind is the kind of a batch started by a task of kind k, and
// whether that task closes it at once.
func firstBatchKind(k autobatchKind) (batchKind, bool) {
	switch k {
	case kindDocumentImport:
		return batchDocumentOperation, false
	case kindDocumentDeletion:
		return batchDocumentDeletion, false
	case kindDocumentDeletionByFilter:
		return batchDocumentDeletionWithFilter, false
	case kindSettings:
		return batchSettings, false
	}
	return batchAlone, true
}

// scheduler processes the queued tasks in batches, in the background or
// step by step as a test drives it.
type scheduler struct{ *Server }

// takeBatch removes the next batch from the queue and returns its task
// uids. Like create_next_batch in
// crates/index-scheduler/src/scheduler/create_batch.rs, it starts with the
// oldest enqueued task and, for a task on an index, goes on with the
// enqueued tasks of the same index in order (tasks of other indexes in
// between do not stop it) while the autobatcher lets them join; a swap
// touching the index stops it. Callers hold Mu.
func (f *scheduler) takeBatch() []int64 {
	if len(f.queue) == 0 {
		return nil
	}
	first := f.Tasks[f.queue[0]]
	batch := []int64{f.queue[0]}
	kind, stop := firstBatchKind(first.kind)
	rest := f.queue[:0:0]
	for i, uid := range f.queue[1:] {
		task := f.Tasks[uid]
		if stop {
			rest = append(rest, f.queue[1+i:]...)
			break
		}
		// A swap has no index of its own here: it stops every batch,
		// which is what create_batch.rs does for the indexes it names
		// (the simulator does not track which those are).
		if task.kind != kindIndexSwap && task.index != first.index {
			rest = append(rest, uid)
			continue
		}
		next, ok, end := joins(kind, task.kind, f.filterThenAdd)
		if !ok {
			// The batch is over; what follows stays queued.
			rest = append(rest, f.queue[1+i:]...)
			break
		}
		batch = append(batch, uid)
		kind, stop = next, end
	}
	f.queue = rest
	return batch
}

// run is the scheduler goroutine: it processes batches while the server
// is neither paused nor closed.
func (f *scheduler) run() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for {
		for !f.closed && (f.paused || f.processing || len(f.queue) == 0) {
			f.cond.Wait()
		}
		if f.closed {
			return
		}
		batch := f.startBatch()
		if d := f.delay; d > 0 {
			f.Mu.Unlock()
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-f.done:
				timer.Stop()
			}
			f.Mu.Lock()
		}
		f.finishBatch(batch)
	}
}

// startBatch takes the next batch and marks its tasks "processing".
// Callers hold Mu.
func (f *scheduler) startBatch() []int64 {
	batch := f.takeBatch()
	f.processing = true
	for _, uid := range batch {
		f.Tasks[uid].Status = "processing"
		f.Tasks[uid].Batch = f.nextBatch
	}
	f.nextBatch++
	return batch
}

// finishBatch applies every task of a batch at once — a search sees the
// state before the batch or after it, never between its tasks, as
// Meilisearch commits one write transaction per batch
// (crates/index-scheduler/src/scheduler/mod.rs, tick); within a batch
// the tasks apply in queue order, as a v1.45+ document operation applies
// its DeleteByFilter and additions in order (create_batch.rs) — and marks each
// task succeeded or failed. Callers hold Mu.
func (f *scheduler) finishBatch(batch []int64) {
	for _, uid := range batch {
		task := f.Tasks[uid]
		switch {
		case task.forced != nil:
			task.Final, task.Err = "failed", task.forced
		default:
			if e := task.apply(); e != nil {
				task.Final, task.Err = "failed", e
			}
		}
		task.Status = task.Final
	}
	f.Batches = append(f.Batches, slices.Clone(batch))
	f.processing = false
	f.cond.Broadcast()
}

// wake tells the scheduler that the queue changed. Callers hold Mu.
func (f *scheduler) wake() { f.cond.Broadcast() }

// Enqueued returns a channel closed when a task is next enqueued, so that
// a test driving a paused scheduler waits for the client's next task
// without polling. Take the channel before checking the queue, or a task
// enqueued in between is missed.
func (f *scheduler) Enqueued() <-chan struct{} {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if f.enqueued == nil {
		f.enqueued = make(chan struct{})
	}
	return f.enqueued
}

// Pause stops the scheduler after the batch in progress: tasks stay
// "enqueued" until Resume, Step or Drain.
func (f *scheduler) Pause() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.paused = true
}

// Resume lets the scheduler process the queue again.
func (f *scheduler) Resume() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.paused = false
	f.cond.Broadcast()
}

// SetTaskDelay makes the scheduler keep every batch "processing" for d
// before it applies it (0: at once). Step and Drain ignore it.
func (f *scheduler) SetTaskDelay(d time.Duration) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.delay = d
}

// Step processes the next batch in the caller's goroutine, after the
// batch in progress if any, and reports whether there was one. It works
// paused or not.
func (f *scheduler) Step() bool {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for f.processing && !f.closed {
		f.cond.Wait()
	}
	if len(f.queue) == 0 {
		return false
	}
	f.finishBatch(f.startBatch())
	return true
}

// Drain processes batches until the queue is empty and no batch is in
// progress.
func (f *scheduler) Drain() {
	for f.Step() {
	}
}

// Close stops the scheduler goroutine; queued tasks stay enqueued.
func (f *scheduler) Close() {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.done)
		f.cond.Broadcast()
	}
}
