package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"mime"
	"strings"

	"github.com/calendar/eventcal/app/sources/feed"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/app/sources/ics"
	"github.com/calendar/eventcal/app/sources/tec"
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
	// Calendar is the feed's events (nil when NotModified, or when the
	// body's ContentHash is the source's: the feed did not change).
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
	// the address rules); its Client reads sites running The Events
	// Calendar under the same rules.
	Fetcher *fetch.Fetcher
	// MaxEvents and MaxBytes bound a feed (SOURCE_MAX_EVENTS,
	// SOURCE_MAX_BYTES; 0: the readers' defaults).
	MaxEvents int
	MaxBytes  int64
	// Language is the language a site running The Events Calendar is
	// read in (the default language; "" is "en").
	Language string
	// Logger receives what the TEC reader leaves out (nil: discarded).
	Logger *slog.Logger
	// TEC adjusts the options of the TEC reader (tests: no rate limit);
	// nil: as NewReader sets them.
	TEC func(o *tec.Options)
}

// NewReader returns the service's Reader: it reads a source by its
// format:
//
//   - "ics": a fetch with the validators of the last successful run (a
//     304 is "not modified"), the body parsed as iCalendar;
//   - "tec": a site running The Events Calendar, read through its REST
//     API (package app/sources/tec) with the fetcher's guarded client;
//   - "auto": a fetch, then by what it returned: an iCalendar body is
//     read as "ics"; a TEC REST root or a WordPress page announcing its
//     REST API as "tec" (and the next runs read it as "tec" directly,
//     Source.DetectedFormat); anything else fails the run, "not a
//     calendar (<media type>)".
func NewReader(o ReaderOptions) Reader { return &reader{o: o} }

// reader is NewReader's Reader.
type reader struct{ o ReaderOptions }

// Read implements Reader.
func (r *reader) Read(ctx context.Context, src *repository.Source) (*ReadResult, error) {
	if src.Format == repository.SourceTEC || (src.Format == repository.SourceAuto && src.DetectedFormat == repository.SourceTEC) {
		return r.readTEC(ctx, src.URL)
	}
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
		if tec.Looks(res.ContentType, res.Header, res.Body) {
			return r.readTEC(ctx, src.URL)
		}
		return nil, fmt.Errorf("not a calendar (%s)", mediaType(res.ContentType))
	}
	sum := sha256.Sum256(res.Body)
	if out.ContentHash = hex.EncodeToString(sum[:]); out.ContentHash == src.ContentHash {
		return out, nil // the body of the last successful run: not parsed again
	}
	cal, err := ics.Parse(bytes.NewReader(res.Body), ics.Options{MaxEvents: r.o.MaxEvents, MaxBytes: r.o.MaxBytes})
	if err != nil {
		return nil, err
	}
	out.Calendar = cal
	return out, nil
}

// readTEC reads a site running The Events Calendar. The read has no
// validators; its content hash is that of the events read
// (tec.ContentHash), so an unchanged site is found unchanged at once.
func (r *reader) readTEC(ctx context.Context, rawURL string) (*ReadResult, error) {
	o := tec.Options{Client: r.o.Fetcher.Client(), Language: r.o.Language, Logger: r.o.Logger,
		Caps: tec.Caps{Events: r.o.MaxEvents}}
	if r.o.TEC != nil {
		r.o.TEC(&o)
	}
	cal, err := tec.Read(ctx, rawURL, o)
	if err != nil {
		return nil, err
	}
	return &ReadResult{Calendar: cal, ContentHash: tec.ContentHash(cal), Format: repository.SourceTEC}, nil
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
