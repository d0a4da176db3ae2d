// Package indexing keeps the search engine in step with the store. Every
// write records an index mark in the store in the same write; the Worker
// takes the marks in batches, re-reads the marked items, builds their
// documents (DocBuilder: one per occurrence for a series, expanded up to
// the recurrence horizon, text per language) and indexes or deletes them,
// and clears the marks only after the engine confirmed the batch. It queues
// IDs, never documents: every batch re-reads the store, so a stale payload
// can never be indexed (Gitea's IndexerMetadata design), and marks survive
// a crash in the store.
//
// The files by concern:
//
//   - worker.go: the batch loop (Run, Step, Flush), how a batch is chosen
//     within BatchBytes, and the full scans (Populate, IndexAll).
//   - documents.go, words.go: stored records to search documents.
//   - dependents.go: the events to index again when a venue, organizer or
//     term they copy changed, in chunks in the background of the batches.
//   - backoff.go: a mark the engine refuses is found by bisecting its
//     batch and put off with backoff, so it never blocks the others.
//   - reindex.go, jobs.go: full rebuilds into new indexes beside the live
//     ones (Reindexer, Job), with the worker writing to both meanwhile.
//   - trash.go: which posts the index holds.
//   - metrics.go: the worker's Prometheus metrics (Metrics).
//
// How it relates to the other sync packages: the worker and rebuilds run
// only in the process holding the lease (package sync/lease: the caller
// runs the worker under lease.RunWhileLeader; Reindexer checks the lease
// with the store before a rebuild starts and aborts the rebuild when the
// lease is lost). Before a batch is indexed, Worker.Changes sees its
// marks: package sync/webhooks queues its messages there
// (ChangeObserver), without this package knowing of webhooks. Package
// sync/schedule starts the scheduled rebuilds (Reindexer) and, every day,
// marks the series whose occurrences up to the horizon changed, which the
// worker then indexes as any other write. This package imports neither
// of them.
package indexing
