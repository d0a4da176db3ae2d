package sync

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
}

// ErrRebuildRunning is returned by Reindexer.Start while a rebuild runs;
// the running job is returned with it.
var ErrRebuildRunning = errors.New("sync: a rebuild is already running")
