package repository

import (
	"context"
	"time"
)

// Calendar sources: editors register other calendars (iCalendar feeds,
// sites running The Events Calendar) that the service imports on a
// schedule; each import is a run. See package app/sources.

// The formats of a source (Source.Format).
const (
	SourceICS  = "ics"
	SourceTEC  = "tec"
	SourceAuto = "auto"
)

// What happens to an imported event that left its feed
// (Source.OnRemoved).
const (
	OnRemovedTrash = "trash"
	OnRemovedKeep  = "keep"
)

// The statuses of a run (SourceRun.Status).
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// Source is a registered calendar source.
type Source struct {
	ID int64 `json:"id" bson:"_id"`
	// URL is the feed's address (http or https), or a TEC site's REST
	// root.
	URL string `json:"url" bson:"url"`
	// Format is SourceICS, SourceTEC or SourceAuto.
	Format string `json:"format" bson:"format"`
	// Name is the editor's name for the source.
	Name string `json:"name" bson:"name"`
	// Schedule is "" (runs only on demand), "@hourly", "@daily",
	// "@weekly", "@every <duration>" or a five-field cron expression.
	Schedule string `json:"schedule" bson:"schedule"`
	// Status is the status the events a run creates get (a record
	// status: draft, pending, publish, private).
	Status string `json:"status" bson:"status"`
	// Categories and Tags are label IDs added to every imported event.
	Categories []int64 `json:"categories" bson:"categories"`
	Tags       []int64 `json:"tags" bson:"tags"`
	// OnRemoved is OnRemovedTrash or OnRemovedKeep.
	OnRemoved string `json:"on_removed" bson:"on_removed"`
	// Author is the user who registered the source; imported events are
	// written in the source's name with this author (0: none).
	Author int64 `json:"author" bson:"author"`

	// ETag and LastModified are the validators of the last successful
	// fetch, sent back as If-None-Match and If-Modified-Since.
	ETag         string `json:"etag,omitempty" bson:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty" bson:"last_modified,omitempty"`
	// ContentHash is a digest of the last body a run read in full; a body
	// with the same digest changes nothing.
	ContentHash string `json:"content_hash,omitempty" bson:"content_hash,omitempty"`
	// DetectedFormat is what SourceAuto found the source to be ("" until
	// a run has found out).
	DetectedFormat string `json:"detected_format,omitempty" bson:"detected_format,omitempty"`

	// RunClaim is the token of the run in progress ("" when none) and
	// RunClaimUntil when that claim lapses (a process that died
	// mid-run): one run per source at a time, across processes.
	RunClaim      string    `json:"-" bson:"run_claim,omitempty"`
	RunClaimUntil time.Time `json:"-" bson:"run_claim_until,omitempty"`
	// LastRun is the ID of the newest run (0: never ran).
	LastRun int64 `json:"last_run,omitempty" bson:"last_run,omitempty"`

	Created time.Time `json:"created" bson:"created"`
	Updated time.Time `json:"updated" bson:"updated"`
	// Revision guards updates (read-modify-write).
	Revision int64 `json:"-" bson:"revision"`
}

// SourceRun is one import of a source.
type SourceRun struct {
	ID       int64  `json:"id" bson:"_id"`
	SourceID int64  `json:"source_id" bson:"source_id"`
	Status   string `json:"status" bson:"status"`
	// Trigger says what started the run: "schedule", "api" or "cli".
	Trigger  string    `json:"trigger" bson:"trigger"`
	Started  time.Time `json:"started" bson:"started"`
	Finished time.Time `json:"finished,omitzero" bson:"finished,omitempty"`
	// The counts of events the run created, updated, found unchanged,
	// removed (trashed, or let go with OnRemovedKeep) and could not
	// import.
	Created   int `json:"created" bson:"created"`
	Updated   int `json:"updated" bson:"updated"`
	Unchanged int `json:"unchanged" bson:"unchanged"`
	Removed   int `json:"removed" bson:"removed"`
	Failed    int `json:"failed" bson:"failed"`
	// Error says why a failed run failed ("" otherwise).
	Error string `json:"error,omitempty" bson:"error,omitempty"`
	// Problems lists the events the run could not import, each with why,
	// and those it imported in part (a category or tag left off)
	// (bounded by MaxRunProblems).
	Problems []RunProblem `json:"problems,omitempty" bson:"problems,omitempty"`
}

// RunProblem is one event a run could not import.
type RunProblem struct {
	// UID is the event's identity in the feed ("" when it had none).
	UID     string `json:"uid" bson:"uid"`
	Problem string `json:"problem" bson:"problem"`
}

// MaxRunProblems bounds SourceRun.Problems (the first ones are kept).
const MaxRunProblems = 50

// MaxRunsKept is how many runs a source keeps; PruneSourceRuns removes
// older ones.
const MaxRunsKept = 100

// SourceLink is set on an event imported from a source: which source
// and which event of its feed it is. An event is identified by
// (SourceID, UID, RecurrenceID).
type SourceLink struct {
	SourceID int64  `json:"id" bson:"id"`
	UID      string `json:"uid" bson:"uid"`
	// RecurrenceID is set on an event made from a lone RECURRENCE-ID
	// instance whose series the feed does not hold ("" otherwise): the
	// instance's original start as the feed wrote it.
	RecurrenceID string `json:"recurrence_id,omitempty" bson:"recurrence_id,omitempty"`
	// Hash is a digest of the feed's event as last imported (overrides
	// included): a run writes the event only when it changed, so that an
	// editor's change stays until the feed changes the event.
	Hash string `json:"hash" bson:"hash"`
}

// SourceItem is what a run needs to know of an event it imported
// earlier.
type SourceItem struct {
	RecordID     int64
	UID          string
	RecurrenceID string
	Hash         string
	// Status is the record's status (a trashed event that comes back to
	// the feed is restored).
	Status string
}

// SourceStore stores the sources, their runs, and finds the events each
// imported.
type SourceStore interface {
	// CreateSource assigns s.ID from the source sequence (when 0) and
	// stores s at revision 1. An explicit s.ID (a load) must not be held
	// by a stored source (ErrDuplicate otherwise, nothing written), is at
	// most MaxExplicitID (ErrIDRange) and moves the sequence past it;
	// with an explicit ID a Revision above 0 is kept.
	CreateSource(ctx context.Context, s *Source) error
	// GetSource returns the source or ErrNotFound.
	GetSource(ctx context.Context, id int64) (*Source, error)
	// ListSources returns every source by ID.
	ListSources(ctx context.Context) ([]*Source, error)
	// UpdateSource is UpdateRecord for sources (compare-and-swap on
	// Revision, retried; an error from fn aborts and is returned).
	UpdateSource(ctx context.Context, id int64, fn func(s *Source) error) (*Source, error)
	// DeleteSource removes the source and its runs (ErrNotFound when
	// there is none). The events it imported stay, with their
	// SourceLink.
	DeleteSource(ctx context.Context, id int64) error

	// CreateSourceRun assigns r.ID (increasing) and stores r. A run of a
	// source that does not exist (deleted meanwhile) is refused with
	// ErrNotFound and not stored. An explicit r.ID (a load) must not be
	// held by a stored run (ErrDuplicate otherwise, nothing written), is
	// at most MaxExplicitID (ErrIDRange) and moves the run sequence past
	// it.
	CreateSourceRun(ctx context.Context, r *SourceRun) error
	// SaveSourceRun stores r (an existing run) as it is; the run keeps
	// the source it was created for. ErrNotFound when the run is gone
	// (pruned, or its source deleted).
	SaveSourceRun(ctx context.Context, r *SourceRun) error
	// ListSourceRuns returns up to limit runs of the source (every run
	// when limit <= 0), newest (highest ID) first.
	ListSourceRuns(ctx context.Context, sourceID int64, limit int) ([]*SourceRun, error)
	// PruneSourceRuns removes the source's runs but the newest keep
	// (every run when keep <= 0).
	PruneSourceRuns(ctx context.Context, sourceID int64, keep int) error

	// SourceItems returns the events (of every status) whose SourceLink
	// names the source, by RecordID, whether or not the source still
	// exists. Its cost grows with the source's events, not with the
	// store (an index on the link's source ID in each engine).
	SourceItems(ctx context.Context, sourceID int64) ([]SourceItem, error)
}
