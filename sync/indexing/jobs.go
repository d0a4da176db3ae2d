package indexing

import (
	"errors"
	"time"
)

// Job states.
const (
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	// JobCancelled: an admin stopped the rebuild; the live indexes were kept.
	JobCancelled = "cancelled"
)

// Job describes a full rebuild of the search indexes.
type Job struct {
	ID       string    `json:"id"`
	State    string    `json:"state"`
	Done     int       `json:"done"`
	Total    int       `json:"total"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Error    string    `json:"error,omitempty"`
	// Trigger says what started the job: "api", "schedule", "cli", or
	// "migration" (indexes in an older layout, rebuilt at start).
	Trigger string `json:"trigger"`
	// SkippedCount is the number of posts a rebuild's scan could not
	// index (the engine refused their documents); Skipped lists the first
	// of them (at most 100). They are left out of the new indexes and
	// marked for indexing, so the sync worker retries them with backoff
	// and lists them as failing marks while they fail; the rebuild itself
	// succeeds.
	SkippedCount int             `json:"skipped_count,omitempty"`
	Skipped      []SkippedRecord `json:"skipped,omitempty"`
}

// SkippedRecord is a post a rebuild could not index, with the engine's
// error (short, fit to show).
type SkippedRecord struct {
	ID    int64  `json:"id"`
	Error string `json:"error"`
}

// ErrRebuildRunning is returned by Reindexer.Start while a rebuild runs;
// the running job is returned with it.
var ErrRebuildRunning = errors.New("sync: a rebuild is already running")
