package sources

import (
	"context"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/repository"
)

// Reader reads a source: fetches its feed and decodes it into a
// feed.Calendar. NewReader builds the real one; tests hand the runner
// their own.
type Reader interface {
	// Read reads the source src (its URL, format, validators and last
	// content hash). An error fails the run and changes nothing; its text
	// is the run's error ("the source answered HTTP 500", "not a
	// calendar (text/html)", "truncated: ...").
	Read(ctx context.Context, src *repository.Source) (*ReadResult, error)
}

// ReadResult is what a Reader read.
type ReadResult struct {
	// Calendar is the feed's events (nil when NotModified).
	Calendar *feed.Calendar
	// NotModified reports a 304 answer to the source's validators: the
	// feed did not change since the last successful run.
	NotModified bool
	// ETag and LastModified are the validators of this answer, kept for
	// the next run's conditional GET.
	ETag, LastModified string
	// ContentHash is a digest of the body read; a body with the digest
	// of the last successful run changes nothing.
	ContentHash string
	// Format is what the source turned out to be (repository.SourceICS or
	// repository.SourceTEC), kept as the source's DetectedFormat.
	Format string
}
