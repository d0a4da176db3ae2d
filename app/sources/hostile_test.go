package sources_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calendar/eventcal/app/sources"
	"github.com/calendar/eventcal/app/sources/fetch"
	"github.com/calendar/eventcal/repository"
)

// switchServer serves whatever handler was set last.
type switchServer struct{ h atomic.Value }

func (s *switchServer) set(h http.HandlerFunc) { s.h.Store(h) }

func (s *switchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.h.Load().(http.HandlerFunc)(w, r)
}

// withHostileServer points the env's source at a local server and runs it
// with the service's reader over a fetcher bounded by maxBytes and
// timeout, reading at most maxEvents events.
func withHostileServer(t *testing.T, e *env, maxBytes int64, timeout time.Duration, maxEvents int) *switchServer {
	t.Helper()
	s := &switchServer{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	if _, err := e.store.UpdateSource(t.Context(), e.src.ID, func(src *repository.Source) error {
		src.URL, src.Format = srv.URL+"/calendar.ics", repository.SourceAuto
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Options{AllowPrivate: true, Timeout: timeout, MaxBytes: maxBytes})
	reader := sources.NewReader(sources.ReaderOptions{Fetcher: f, MaxEvents: maxEvents, MaxBytes: maxBytes})
	e.runner.Close()
	e.runner = sources.NewRunner(sources.RunnerDeps{Store: e.store, Calendar: e.cal, Reader: reader, Config: e.cfg,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }, WritesPerSecond: -1})
	t.Cleanup(e.runner.Close)
	return s
}

// calendarBody serves body as an iCalendar feed.
func calendarBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/calendar")
		fmt.Fprint(w, body)
	}
}

// gzipBomb returns n zero bytes gzip-compressed (about n/800 bytes). At
// gzip.BestSpeed: zeros compress almost as well as at BestCompression
// (64 MB to 80 KB instead of 64 KB, far below any limit of the test) for
// a seventh of the CPU.
func gzipBomb(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zero := make([]byte, 1<<20)
	for written := 0; written < n; written += len(zero) {
		if _, err := zw.Write(zero); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileFeedsThroughTheRunner: feeds served by a local server that
// are too large (50 MB), a gzip bomb (64 MB of zeros in about 80 KB) or
// never end fail the run, say why in its error, and change nothing; the
// source's earlier import stays as it was.
func TestHostileFeedsThroughTheRunner(t *testing.T) {
	t.Parallel()
	bomb := gzipBomb(t, 64<<20)
	cases := []struct {
		name     string
		serve    http.HandlerFunc
		errorHas string
	}{
		{"50 MB body", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			chunk := bytes.Repeat([]byte("X"), 1<<20)
			for range 50 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "larger than"},
		{"gzip bomb", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}, "larger than"},
		{"never-ending body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/calendar")
			fmt.Fprint(w, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n")
			for {
				if _, err := fmt.Fprint(w, "X-FILLER:x\r\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}, "within"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, nil, nil)
			// The limits are the test's: 1 MiB, and a time limit long
			// enough for a small local feed on a busy machine; the
			// never-ending body runs into it.
			s := withHostileServer(t, e, 1<<20, 5*time.Second, 100)
			s.set(calendarBody(ics(concert, market)))
			wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: 2})
			before := dump(t, e)
			s.set(tc.serve)
			run := e.run()
			wantRun(t, tc.name, run, repository.RunFailed, counts{})
			if !strings.Contains(run.Error, tc.errorHas) {
				t.Errorf("error %q, want it to say %q", run.Error, tc.errorHas)
			}
			if after := dump(t, e); after != before {
				t.Errorf("a failed read changed the store")
			}
		})
	}
}

// envFullSize names the environment variable that runs
// TestTenThousandEventFeed at its full size.
const envFullSize = "SOURCES_FULL_SIZE"

// TestTenThousandEventFeed: a feed of 10,000 events served by a local
// server imports whole; a second run of the unchanged body (no
// validators) writes nothing; one changed event is the only write of the
// third run.
//
// At full size only when SOURCES_FULL_SIZE is set (to anything): the
// 10,000 creations are 10,000 store commits, about 5 CPU-s, most of the
// package's. Without it the feed holds 2,000 events, which take the same
// paths (the runner has no threshold between the two sizes: every event
// is created, then compared by digest, one by one; the reader's and the
// fetcher's bounds, 50,000 events and 20 MB, are far above both), so
// every go test run covers them. .ci/run runs it at full size on its
// own: SOURCES_FULL_SIZE=1 go test -count=1 ./app/sources -run
// '^TestTenThousandEventFeed$'.
func TestTenThousandEventFeed(t *testing.T) {
	t.Parallel()
	n := 2000
	if os.Getenv(envFullSize) != "" {
		n = 10000
	}
	e := newEnv(t, nil, nil)
	s := withHostileServer(t, e, 20<<20, time.Minute, 50000)
	events := manyEvents(n)
	s.set(calendarBody(ics(events...)))
	wantRun(t, "first", e.run(), repository.RunSucceeded, counts{created: n})
	items, err := e.store.SourceItems(t.Context(), e.src.ID)
	if err != nil || len(items) != n {
		t.Fatalf("%d imported events (%v), want %d", len(items), err, n)
	}
	before := e.store.writes.Load()
	wantRun(t, "unchanged", e.run(), repository.RunSucceeded, counts{unchanged: n})
	if w := e.store.writes.Load() - before; w != 0 {
		t.Errorf("the unchanged feed wrote %d times", w)
	}
	// A new body (so the content hash differs) in which one event changed.
	events[1321] = strings.Replace(events[1321], "SUMMARY:E1321", "SUMMARY:E1321 (moved)", 1)
	s.set(calendarBody(ics(events...)))
	wantRun(t, "one changed", e.run(), repository.RunSucceeded, counts{updated: 1, unchanged: n - 1})
	if got := e.get("e1321@test").Title["en"]; got != "E1321 (moved)" {
		t.Errorf("title %q", got)
	}
}
