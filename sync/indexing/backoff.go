package indexing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository"
	"github.com/calendar/eventcal/search"
)

// A mark that keeps failing never blocks the others.
//
// When a batch fails, the worker first asks whether the failure can be
// anybody's fault in particular (blamable). A failure to reach the
// engine (search.ErrUnavailable: connection refused, timeouts, 5xx), an
// ended context or a store error is not: the whole batch is retried, and
// the worker backs off as a whole (Run). Any other error (the engine
// refused a request: a 4xx such as payload_too_large or an invalid
// document, a failed task) is blamed on the batch's marks: the batch is
// cut in halves and each half applied again (bisection), down to single
// marks, so the healthy marks are indexed and cleared in the same step and
// each mark that fails alone is recorded with FailMark: its attempt count,
// its last error (markErrorText: one line, credentials in URLs removed,
// at most repository.MaxMarkErrorBytes) and the time of its next attempt
// (markBackoff). The store's DueMarks leaves it out of the batches until
// then, so it never holds the queue. A new write to the item renews its
// mark without the failure (its new content may index fine), so it is
// taken at once.
//
// A failed mark is counted in eventcal_sync_mark_failures_total, and the
// marks waiting for a retry in eventcal_sync_failing_marks; /admin/sync
// and `eventcal status` list them (repository.Store.FailingMarks).

// Backoff of a mark that failed alone: the n-th consecutive failure puts
// it off by markBackoffBase·2^(n-1), at most markBackoffMax, of which
// a random part up to half is taken off (jitter, so marks failing
// together do not retry together): 5 s, 10 s, 20 s ... 10 min for the
// 8th failure and after, each between half and all of that.
const (
	markBackoffBase = 5 * time.Second
	markBackoffMax  = 10 * time.Minute
)

// markBackoff returns the delay before the next attempt after the
// attempts-th failure, given jitter, a number in [0, 1).
func markBackoff(attempts int, jitter float64) time.Duration {
	d := markBackoffBase
	for i := 1; i < attempts && d < markBackoffMax; i++ {
		d *= 2
	}
	d = min(d, markBackoffMax)
	return d - time.Duration(float64(d/2)*jitter)
}

// blamable reports whether a failed write can be blamed on the marks of
// the batch (see the top of this file): not when the engine cannot be
// reached, the context ended or the store failed.
func blamable(ctx context.Context, err error) bool {
	var sf *storeFault
	switch {
	case ctx.Err() != nil,
		errors.Is(err, search.ErrUnavailable),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &sf):
		return false
	}
	return true
}

// storeFault marks an error of the store met while indexing: it is never
// blamed on a mark.
type storeFault struct{ err error }

func (s *storeFault) Error() string { return s.err.Error() }
func (s *storeFault) Unwrap() error { return s.err }

// fromStore wraps a store error as a storeFault (nil stays nil).
func fromStore(err error) error {
	if err == nil {
		return nil
	}
	return &storeFault{err}
}

// urlCredentials matches the user information of a URL.
var urlCredentials = regexp.MustCompile(`://[^/\s@]*@`)

// markErrorText is the error recorded with a failed mark, fit to show an
// operator: on one line, without credentials in URLs, cut to
// repository.MaxMarkErrorBytes.
func markErrorText(err error) string {
	s := urlCredentials.ReplaceAllString(err.Error(), "://")
	s = strings.Join(strings.Fields(s), " ")
	return repository.TruncateMarkError(s)
}

// markFailure is a mark that failed alone, with its error.
type markFailure struct {
	mark repository.IndexMark
	err  error
}

// applyIsolating applies marks (apply). When that fails for a blamable
// reason it bisects: each half is applied again, recursively, so that it
// returns the marks that were applied (done), their dependent marks, and
// the marks that failed alone. An error that is not blamable fails the
// whole call.
func (w *Worker) applyIsolating(ctx context.Context, marks []repository.IndexMark, posts map[int64]*repository.Record) (done, deps []repository.IndexMark, failed []markFailure, err error) {
	deps, err = w.apply(ctx, marks, posts)
	switch {
	case err == nil:
		return marks, deps, nil, nil
	case !blamable(ctx, err):
		return nil, nil, nil, err
	case len(marks) == 1:
		return nil, nil, []markFailure{{marks[0], err}}, nil
	}
	half := len(marks) / 2
	for _, part := range [][]repository.IndexMark{marks[:half], marks[half:]} {
		d, dp, f, err := w.applyIsolating(ctx, part, posts)
		if err != nil {
			return nil, nil, nil, err
		}
		done, deps, failed = append(done, d...), append(deps, dp...), append(failed, f...)
	}
	return done, deps, failed, nil
}

// recordFailures records each mark that failed alone with its next
// attempt (FailMark), counts and logs it.
func (w *Worker) recordFailures(ctx context.Context, failed []markFailure) error {
	now := w.Now()
	for _, f := range failed {
		m := f.mark
		m.Attempts++
		m.LastError = markErrorText(f.err)
		delay := markBackoff(m.Attempts, w.jitter())
		m.NextAttempt = now.Add(delay)
		if err := w.Store.FailMark(ctx, m); err != nil {
			return err
		}
		w.metrics.observeMarkFailure()
		w.Log.Warn("sync mark failed", "kind", m.Kind, "id", m.ID, "attempts", m.Attempts, "retry_in", delay, "err", m.LastError)
	}
	return nil
}

// jitter returns a number in [0, 1) for markBackoff (Worker.Jitter).
func (w *Worker) jitter() float64 {
	if w.Jitter != nil {
		return min(max(w.Jitter(), 0), 0.999999)
	}
	return rand.Float64()
}

// maxScanSkips bounds the posts a full scan (IndexAllInto) skips: past
// it the scan fails, since so many refusals say the engine or the new
// indexes are at fault (a full disk, a wrong setting), not the posts, and
// swapping in indexes without them would empty the lists.
const maxScanSkips = 100

// isolateIDs runs index on ids and, when that fails for a blamable reason,
// bisects as applyIsolating does: it returns the IDs that fail alone, with
// their errors. The full scan uses it to skip what cannot be indexed.
// Once more than budget IDs failed alone it stops with errTooManySkips.
func isolateIDs(ctx context.Context, ids []int64, budget int, index func([]int64) error) ([]skippedItem, error) {
	err := index(ids)
	switch {
	case err == nil:
		return nil, nil
	case !blamable(ctx, err):
		return nil, err
	case len(ids) == 1:
		if budget <= 0 {
			return nil, fmt.Errorf("%w; last: post %d: %w", errTooManySkips, ids[0], err)
		}
		return []skippedItem{{ID: ids[0], Error: markErrorText(err)}}, nil
	}
	half := len(ids) / 2
	var out []skippedItem
	for _, part := range [][]int64{ids[:half], ids[half:]} {
		s, err := isolateIDs(ctx, part, budget-len(out), index)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// errTooManySkips fails a scan that would skip more than maxScanSkips posts.
var errTooManySkips = fmt.Errorf("the search engine refused more than %d posts", maxScanSkips)

// skippedItem is a post a full rebuild could not index.
type skippedItem struct {
	ID    int64
	Error string
}
