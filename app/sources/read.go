package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime"
	"strings"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/app/sources/ics"
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

// ReaderOptions configure NewReader.
type ReaderOptions struct {
	// Fetcher fetches sources (conditional GET, size and time limits,
	// the address rules).
	Fetcher *fetch.Fetcher
	// MaxEvents and MaxBytes bound a feed (SOURCE_MAX_EVENTS,
	// SOURCE_MAX_BYTES; 0: the readers' defaults).
	MaxEvents int
	MaxBytes  int64
}

// NewReader returns the service's Reader: it fetches a source with
// o.Fetcher (sending the validators of the last successful run) and
// decodes the body by the source's format: "ics" as iCalendar; "auto"
// by what the fetch returned (an iCalendar body: ics; anything else:
// "not a calendar (<media type>)").
func NewReader(o ReaderOptions) Reader { return &reader{o: o} }

// reader is NewReader's Reader.
type reader struct{ o ReaderOptions }

// Read implements Reader.
func (r *reader) Read(ctx context.Context, src *repository.Source) (*ReadResult, error) {
	res, err := r.o.Fetcher.Get(ctx, src.URL, fetch.Validators{ETag: src.ETag, LastModified: src.LastModified})
	if err != nil {
		return nil, err
	}
	out := &ReadResult{ETag: res.Validators.ETag, LastModified: res.Validators.LastModified, Format: repository.SourceICS}
	if res.NotModified {
		out.NotModified = true
		return out, nil
	}
	if src.Format == repository.SourceAuto && !ics.Looks(res.Body) {
		return nil, fmt.Errorf("not a calendar (%s)", mediaType(res.ContentType))
	}
	cal, err := ics.Parse(bytes.NewReader(res.Body), ics.Options{MaxEvents: r.o.MaxEvents, MaxBytes: r.o.MaxBytes})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(res.Body)
	out.Calendar, out.ContentHash = cal, hex.EncodeToString(sum[:])
	return out, nil
}

// mediaType is the media type of a Content-Type header, for a run's
// error ("text/html"; "no content type" when there is none).
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	switch {
	case strings.TrimSpace(contentType) == "":
		return "no content type"
	case err != nil:
		return "an unreadable content type"
	}
	return mt
}
