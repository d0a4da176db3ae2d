// Package lease decides which of several service processes sharing one
// store runs the background work: the indexing worker and rebuilds
// (package sync/indexing), webhook delivery (package sync/webhooks) and
// the periodic jobs (package sync/schedule). A Lease is held by one
// process at a time (with MongoDB a document in the database, see
// repository/mongo; with the embedded store always held, Held).
// RunWhileLeader and WhileLeader run work only while the lease is held,
// CheckFence confirms the hold with the store right before guarded work
// writes, and LogChanges logs every change of the hold. It imports none of
// the other sync packages; they all import it.
package lease
