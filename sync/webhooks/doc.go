// Package webhooks sends signed HTTP messages (Standard Webhooks) about
// changed events, venues, organizers, categories and tags to the
// endpoints admins registered, and holds the checks of an endpoint's URL,
// message types and secret (CheckURL, CheckEvents, CheckSecret) that the
// admin API and the command line apply.
//
// A Dispatcher is both ends of a transactional outbox in the store:
// Observe (webhooks.go) turns a batch of index marks into queued
// deliveries, one per change and endpoint, and Run (delivery.go) delivers
// them, each endpoint on its own line, with claims in the store so that
// two processes never attempt one message at once, retries with backoff,
// and its own Prometheus metrics.
//
// How it relates to the other sync packages: the Dispatcher is the
// indexing worker's ChangeObserver (package sync/indexing, Worker.Changes),
// so messages are queued from the same marks, in the same batches, as the
// index is updated; it does not import that package. Observe checks the
// lease (package sync/lease, Dispatcher.Lease) before it writes, and the
// caller runs Run under lease.RunWhileLeader, so only the lease holder
// queues and delivers.
package webhooks
